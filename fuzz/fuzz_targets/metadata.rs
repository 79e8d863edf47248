//! The AMDGPU metadata note (`hotswap-code-object::metadata`): `read` on an
//! object and `decode_document` on raw MessagePack.
//!
//! Input: an object (starts with `\x7fELF`: `read`, and `decode_document` on
//! each of its `AMDGPU` type-32 note descriptors) or a MessagePack document
//! (`decode_document`). Seeds: clang-22 objects and the documents of their
//! metadata notes. Checked: `read` gives what decoding the first metadata note
//! gives; every string decoded is bytes of the input (no byte scan past a
//! length, no invented text); the number of kernels is bounded by the input.
#![no_main]

use hotswap_code_object::elf::{self, Header};
use hotswap_code_object::metadata::{self, Metadata, MetadataError};
use hotswap_fuzz::contains;
use libfuzzer_sys::fuzz_target;

/// Checks a decoded document against the bytes it came from.
fn check(result: &Result<Metadata<'_>, MetadataError>, input: &[u8]) {
    let Ok(m) = result else { return };
    // Each kernel is a map of at least one byte.
    assert!(m.kernels.len() <= input.len());
    let mut strings: Vec<&str> = m.target.into_iter().collect();
    for k in &m.kernels {
        strings.extend([k.name, k.symbol, k.gfx1250_revision].into_iter().flatten());
    }
    for s in strings {
        assert!(contains(input, s.as_bytes()), "{s:?} is not in the input");
    }
}

fuzz_target!(init: hotswap_fuzz::init(), |data: &[u8]| {
    let decoded = metadata::decode_document(data);
    check(&decoded, data);
    if !data.starts_with(b"\x7fELF") {
        return;
    }
    let read = metadata::read(data);
    check(&read, data);
    // The first metadata note, as `read` must find it: areas and notes in
    // order, the first unreadable one ending the search.
    let expected = (|| {
        let header = Header::parse(data).map_err(MetadataError::Elf)?;
        for area in header.note_areas(data) {
            for note in elf::notes(area.map_err(MetadataError::Note)?) {
                let note = note.map_err(MetadataError::Note)?;
                if note.name == b"AMDGPU" && note.note_type == 32 {
                    let decoded = metadata::decode_document(note.desc);
                    check(&decoded, note.desc);
                    return decoded;
                }
            }
        }
        Err(MetadataError::Missing)
    })();
    assert_eq!(read, expected);
});
