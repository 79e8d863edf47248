//! The ELF header and ISA identification (`hotswap-code-object`: `elf::Header`,
//! `isa`, `mach`) on arbitrary bytes, as a whole object and as the prefix of a
//! longer one (what the tool reads of a file).
//!
//! Input: the object. Total lengths tried for `parse_prefix`: the input's,
//! one less and one more, 64, 0, `u64::MAX`, and the last eight bytes read as
//! a number. Checked: only the first 64 bytes and the total length matter;
//! a longer total never turns a valid header invalid; an identified ISA name
//! is well formed and agrees with the processor, the `EF_AMDGPU_MACH` table
//! and the byte-level ISA matcher.
#![no_main]

use hotswap_code_object::elf::Header;
use hotswap_code_object::{isa, isa_name, mach, IsaError, HSA_ISA_PREFIX};
use libfuzzer_sys::fuzz_target;

fuzz_target!(init: hotswap_fuzz::init(), |data: &[u8]| {
    let len = data.len() as u64;
    let parsed = Header::parse(data);
    assert_eq!(parsed, Header::parse_prefix(data, len));

    let tail = data
        .len()
        .checked_sub(8)
        .map_or(0, |at| u64::from_le_bytes(data[at..].try_into().unwrap()));
    let mut totals = [len, len.saturating_sub(1), len + 1, 64, 0, u64::MAX, tail];
    totals.sort_unstable();
    let mut previous_ok = false;
    for total in totals {
        let header = Header::parse_prefix(data, total);
        // Constant time: the 64-byte header and the total length decide.
        if data.len() >= 64 {
            assert_eq!(header, Header::parse_prefix(&data[..64], total));
        } else {
            assert!(header.is_err());
        }
        // The header tables are checked against the total: more never hurts.
        assert!(!previous_ok || header.is_ok(), "valid at a shorter total, not at {total}");
        previous_ok = header.is_ok();
        assert_eq!(
            isa::processor_of_prefix(data, total),
            header.map_err(isa::elf_error).and_then(|h| isa::processor_from_header(&h))
        );
    }

    let name = isa::isa_name(data);
    let processor = isa::processor(data);
    match (&name, &processor) {
        (Ok(name), Ok(gfx)) => {
            let header = parsed.expect("an identified object has a valid header");
            assert!(name.starts_with(HSA_ISA_PREFIX), "{name}");
            assert_eq!(isa_name::processor_of(name), *gfx);
            assert!(isa_name::isa_is_gfx(name.as_bytes(), gfx.as_bytes()), "{name}");
            assert_eq!(mach::processor(header.flags & 0xff), Some(*gfx));
            assert_eq!(mach::mach_of(gfx), Some(header.flags & 0xff));
            // Features: at most sramecc then xnack, each explicitly on or off.
            let features: Vec<&str> = isa_name::features_of(name).collect();
            let allowed = [
                &[][..],
                &["sramecc+"],
                &["sramecc-"],
                &["xnack+"],
                &["xnack-"],
                &["sramecc+", "xnack+"],
                &["sramecc+", "xnack-"],
                &["sramecc-", "xnack+"],
                &["sramecc-", "xnack-"],
            ];
            assert!(allowed.contains(&&features[..]), "{name}");
            assert_eq!(
                name.len(),
                HSA_ISA_PREFIX.len() + gfx.len() + features.iter().map(|f| f.len() + 1).sum::<usize>()
            );
        }
        (Err(a), Err(b)) => assert_eq!(a, b),
        _ => panic!("isa_name {name:?} and processor {processor:?} disagree"),
    }
    if let Err(IsaError::InvalidCodeObject(_)) = name {
        assert!(parsed.is_err());
    }
});
