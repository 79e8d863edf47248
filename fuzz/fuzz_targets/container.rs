//! Containers (`hotswap-code-object::container::find_with`): bare code objects,
//! offload bundles, compressed bundles (`CCOB` v2/v3, zlib and zstd) and host
//! ELFs with a `.hip_fatbin` section, then what the command line reads of each
//! code object found (ISA name, metadata).
//!
//! Input: the file. Seeds: the build's clang-22 objects, and offload bundles,
//! compressed bundles and host objects that `seeds.py` makes of them with
//! clang-offload-bundler-22 and llvm-objcopy-22. A 1 MiB decompression limit
//! keeps each input fast; the limit itself is checked. Checked: a bare object
//! is the whole input and nothing else; every code object read in place is
//! the input's bytes at its offset, inside its container; a decompressed one
//! stays within the limit; only bare objects lack a bundle id.
#![no_main]

use hotswap_code_object::container::{self, Kind, Limits};
use hotswap_code_object::{isa, metadata};
use hotswap_fuzz::is_within;
use libfuzzer_sys::fuzz_target;

const LIMIT: u64 = 1 << 20;

fuzz_target!(init: hotswap_fuzz::init(), |data: &[u8]| {
    let contents = container::find_with(
        data,
        Limits {
            max_decompressed: LIMIT,
        },
    );
    for found in &contents.objects {
        assert!(!found.bytes.is_empty(), "only non-empty code objects are listed");
        match found.kind {
            Kind::Bare => {
                assert_eq!(contents.objects.len(), 1, "a bare object is the whole input");
                assert!(contents.errors.is_empty());
                assert_eq!((&found.bytes[..], found.offset, found.container_offset), (data, Some(0), 0));
                assert!(found.bundle_id.is_none() && !found.in_host_elf);
            }
            Kind::Bundle => {
                let offset = found.offset.expect("a bundle entry is read in place") as usize;
                assert!(is_within(&found.bytes, data));
                assert_eq!(found.bytes.as_ptr() as usize - data.as_ptr() as usize, offset);
                assert!(found.container_offset as usize <= offset);
                assert!(found.bundle_id.is_some());
            }
            Kind::CompressedBundle { version, .. } => {
                assert!(matches!(version, 2 | 3), "{version}");
                assert!(found.offset.is_none());
                assert!(found.bytes.len() as u64 <= LIMIT, "decompressed past the limit");
                assert!((found.container_offset as usize) < data.len());
                assert!(found.bundle_id.is_some());
            }
        }
        // What `hotswap inspect` reads of each.
        let _ = isa::isa_name(&found.bytes);
        let _ = metadata::read(&found.bytes);
    }
    for e in &contents.errors {
        let _ = e.to_string();
    }
});
