//! ELF note areas and notes (`hotswap-code-object`: `Header::note_areas`,
//! `elf::notes`) over a whole object, and the input itself read as one note
//! area.
//!
//! Input: the object. Checked: every area lies inside the object and every
//! note's name and descriptor inside its area, at 4-byte aligned offsets; the
//! name never exceeds `n_namesz`; an error ends the area's iteration; the
//! number of notes is bounded by the area's size.
#![no_main]

use hotswap_code_object::elf::{self, Header};
use hotswap_fuzz::is_within;
use libfuzzer_sys::fuzz_target;

/// Walks one area and checks its notes.
fn check_area(area: &[u8]) {
    let mut count = 0usize;
    let mut ended = false;
    for note in elf::notes(area) {
        assert!(!ended, "a note after an error");
        count += 1;
        // A note takes at least its 12-byte header.
        assert!(
            count <= area.len() / 12 + 1,
            "{count} notes in {} bytes",
            area.len()
        );
        match note {
            Ok(note) => {
                assert!(is_within(note.name, area) && is_within(note.desc, area));
                let name_at = note.name.as_ptr() as usize - area.as_ptr() as usize;
                let desc_at = note.desc.as_ptr() as usize - area.as_ptr() as usize;
                assert_eq!(name_at % 4, 0);
                assert_eq!(desc_at % 4, 0);
                let namesz = elf::u32_at(area, name_at - 12).unwrap() as usize;
                let descsz = elf::u32_at(area, name_at - 8).unwrap() as usize;
                assert_eq!(elf::u32_at(area, name_at - 4), Some(note.note_type));
                assert!(note.name.len() == namesz || note.name.len() + 1 == namesz);
                assert_eq!(note.desc.len(), descsz);
            }
            Err(_) => ended = true,
        }
    }
}

fuzz_target!(init: hotswap_fuzz::init(), |data: &[u8]| {
    if let Ok(header) = Header::parse(data) {
        for area in header.note_areas(data) {
            match area {
                Ok(area) => {
                    assert!(is_within(area, data));
                    check_area(area);
                }
                Err(e) => assert_eq!(e, elf::NoteError::AreaOutOfBounds),
            }
        }
    }
    check_area(data);
});
