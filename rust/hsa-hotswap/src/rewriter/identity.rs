//! What names a build of a binary across machines, for the persistent cache's
//! key ([`crate::rewrite_cache::key`]): its GNU build-id note (`NT_GNU_BUILD_ID`,
//! which the linker derives from the linked content), or, for a binary linked
//! without one, the SHA-256 of its file. Never its path, inode or times: the
//! same build installed at two prefixes, on two machines, or reinstalled, has
//! one identity; a rebuilt or upgraded binary has another.
//!
//! The note parsers are plain bounded reads of untrusted bytes (no FFI); the
//! loaded object's notes come from [`crate::dl::note_segments_of`].

use std::sync::Mutex;

use sha2::{Digest, Sha256};

/// `NT_GNU_BUILD_ID`.
const NT_GNU_BUILD_ID: u32 = 3;
/// `PT_NOTE`.
const PT_NOTE: u32 = 4;
/// The longest file hashed for a binary without a build-id (larger ones get no
/// identity, so a backend in one is not cached).
const MAX_HASHED_FILE: u64 = 1 << 30;

fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(
        b.get(at..at.checked_add(4)?)?.try_into().ok()?,
    ))
}

fn u64_at(b: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_le_bytes(
        b.get(at..at.checked_add(8)?)?.try_into().ok()?,
    ))
}

fn align4(n: usize) -> Option<usize> {
    n.checked_add(3).map(|n| n & !3)
}

/// The descriptor of the first GNU build-id note in `notes` (a note segment or
/// section: records of name size, descriptor size, type, padded name and
/// padded descriptor), if there is a non-empty one.
pub fn gnu_build_id(notes: &[u8]) -> Option<&[u8]> {
    let mut at = 0usize;
    while at.checked_add(12)? <= notes.len() {
        let namesz = u32_at(notes, at)? as usize;
        let descsz = u32_at(notes, at + 4)? as usize;
        let kind = u32_at(notes, at + 8)?;
        let name_at = at + 12;
        let desc_at = name_at.checked_add(align4(namesz)?)?;
        let end = desc_at.checked_add(align4(descsz)?)?;
        let name = notes.get(name_at..name_at.checked_add(namesz)?)?;
        let desc = notes.get(desc_at..desc_at.checked_add(descsz)?)?;
        if kind == NT_GNU_BUILD_ID && name == b"GNU\0" && !desc.is_empty() {
            return Some(desc);
        }
        at = end;
    }
    None
}

/// The GNU build-id of a little-endian ELF64 file held in `file`, read from
/// its `PT_NOTE` program headers; `None` when it has none or the headers do
/// not fit the bytes.
pub fn elf_build_id(file: &[u8]) -> Option<&[u8]> {
    // ELFCLASS64, ELFDATA2LSB.
    if file.get(..6)? != b"\x7fELF\x02\x01" {
        return None;
    }
    let phoff = usize::try_from(u64_at(file, 0x20)?).ok()?;
    let phentsize = usize::from(u16::from_le_bytes(file.get(0x36..0x38)?.try_into().ok()?));
    let phnum = usize::from(u16::from_le_bytes(file.get(0x38..0x3a)?.try_into().ok()?));
    if phentsize < 56 {
        return None;
    }
    for i in 0..phnum {
        let h = phoff.checked_add(i.checked_mul(phentsize)?)?;
        if u32_at(file, h)? != PT_NOTE {
            continue;
        }
        let offset = usize::try_from(u64_at(file, h + 8)?).ok()?;
        let size = usize::try_from(u64_at(file, h + 32)?).ok()?;
        let Some(notes) = file.get(offset..offset.checked_add(size)?) else {
            continue;
        };
        if let Some(id) = gnu_build_id(notes) {
            return Some(id);
        }
    }
    None
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn of_build_id(id: &[u8]) -> String {
    format!("build-id {}", hex(id))
}

/// The identity of the file at `path`: its build-id, else the SHA-256 of its
/// content. `None` when it cannot be read (or exceeds [`MAX_HASHED_FILE`]
/// without a build-id).
pub fn file_build_identity(path: &str) -> Option<String> {
    use std::io::Read;
    let file = std::fs::File::open(path).ok()?;
    if file.metadata().ok()?.len() > MAX_HASHED_FILE {
        return None;
    }
    let mut bytes = Vec::new();
    file.take(MAX_HASHED_FILE).read_to_end(&mut bytes).ok()?;
    Some(match elf_build_id(&bytes) {
        Some(id) => of_build_id(id),
        None => format!("sha256 {}", hex(&Sha256::digest(&bytes))),
    })
}

/// The identity of the loaded object that contains `address`: its build-id
/// read from its notes in memory (no file read), else the SHA-256 of its file.
pub fn loaded_build_identity(address: usize) -> Option<String> {
    let notes = crate::dl::note_segments_of(address)?;
    if let Some(id) = notes.iter().find_map(|n| gnu_build_id(n)) {
        return Some(of_build_id(id));
    }
    file_build_identity(&crate::dl::object_of(address)?)
}

/// The identity of a backend loaded from a library: the backend's ABI name
/// (`abi`, not its path) and the build identity of the object that holds
/// `address` (one of its functions). Computed once per object per process.
/// `None` when the object cannot be identified (then the backend is not
/// cached).
pub fn library_identity(abi: &str, address: usize) -> Option<String> {
    static KNOWN: Mutex<Vec<(usize, Option<String>)>> = Mutex::new(Vec::new());
    let mut known = KNOWN.lock().unwrap_or_else(|e| e.into_inner());
    let build = match known.iter().find(|(a, _)| *a == address) {
        Some((_, build)) => build.clone(),
        None => {
            let build = loaded_build_identity(address);
            known.push((address, build.clone()));
            build
        }
    };
    Some(format!("{abi}\0{}", build?))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn note(name: &[u8], kind: u32, desc: &[u8]) -> Vec<u8> {
        let mut n = Vec::new();
        n.extend_from_slice(&(name.len() as u32).to_le_bytes());
        n.extend_from_slice(&(desc.len() as u32).to_le_bytes());
        n.extend_from_slice(&kind.to_le_bytes());
        n.extend_from_slice(name);
        n.resize(align4(n.len()).unwrap(), 0);
        n.extend_from_slice(desc);
        n.resize(align4(n.len()).unwrap(), 0);
        n
    }

    #[test]
    fn the_build_id_note_is_found_among_others() {
        let mut notes = note(b"GNU\0", 1, &[0; 16]); // an ABI tag
        notes.extend(note(b"AMDGPU\0", NT_GNU_BUILD_ID, &[9; 4])); // not GNU's
        notes.extend(note(b"GNU\0", NT_GNU_BUILD_ID, &[1, 2, 3, 4, 5]));
        assert_eq!(gnu_build_id(&notes), Some(&[1, 2, 3, 4, 5][..]));
        assert_eq!(gnu_build_id(&notes[..notes.len() - 4]), None, "cut short");
        assert_eq!(gnu_build_id(&note(b"GNU\0", NT_GNU_BUILD_ID, &[])), None);
        let mut huge = note(b"GNU\0", NT_GNU_BUILD_ID, &[1]);
        huge[4..8].copy_from_slice(&u32::MAX.to_le_bytes());
        assert_eq!(gnu_build_id(&huge), None);
    }

    #[test]
    fn this_test_binary_is_identified_by_its_loaded_notes_as_by_its_file() {
        let here =
            this_test_binary_is_identified_by_its_loaded_notes_as_by_its_file as fn() as usize;
        let loaded = loaded_build_identity(here).expect("identified");
        let path = crate::dl::object_of(here).expect("a file");
        assert_eq!(file_build_identity(&path).as_deref(), Some(loaded.as_str()));
        // Path-independent: a copy elsewhere is the same build.
        let copy = std::env::temp_dir().join(format!("hotswap-identity-{}", std::process::id()));
        std::fs::copy(&path, &copy).unwrap();
        let copied = file_build_identity(copy.to_str().unwrap());
        std::fs::remove_file(&copy).unwrap();
        assert_eq!(copied.as_deref(), Some(loaded.as_str()));
    }

    #[test]
    fn a_file_without_a_build_id_is_named_by_its_content() {
        let dir = std::env::temp_dir().join(format!("hotswap-identity-c-{}", std::process::id()));
        std::fs::write(&dir, b"not an ELF").unwrap();
        let id = file_build_identity(dir.to_str().unwrap()).unwrap();
        std::fs::write(&dir, b"not an ELF either").unwrap();
        let other = file_build_identity(dir.to_str().unwrap()).unwrap();
        std::fs::remove_file(&dir).unwrap();
        assert!(id.starts_with("sha256 ") && other.starts_with("sha256 ") && id != other);
        assert_eq!(file_build_identity("/nonexistent/hotswap"), None);
    }
}
