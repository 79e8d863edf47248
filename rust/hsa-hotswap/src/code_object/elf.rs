//! Bounded ELF64 little-endian reading: the file header, the program and section
//! header tables, and the notes they point to.
//!
//! Every offset and size comes from the file, so every one is checked against the
//! buffer with overflow-checked arithmetic before it is used; nothing here can
//! read out of bounds or panic on any input.

/// `\x7fELF`.
const ELF_MAGIC: [u8; 4] = *b"\x7fELF";
/// `EI_CLASS` value of ELF64.
pub const ELFCLASS64: u8 = 2;
/// `EI_DATA` value of little-endian.
pub const ELFDATA2LSB: u8 = 1;
/// `EV_CURRENT`.
const EV_CURRENT: u8 = 1;
/// Size of an ELF64 file header.
pub const EHDR_SIZE: usize = 64;
/// Size of an ELF64 program header.
const PHDR_SIZE: usize = 56;
/// Size of an ELF64 section header.
const SHDR_SIZE: usize = 64;
/// `PT_NOTE`.
const PT_NOTE: u32 = 4;
/// `SHT_NOTE`.
const SHT_NOTE: u32 = 7;

/// Why bytes are not a readable ELF64 little-endian object.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ElfError {
    /// Shorter than an ELF64 header.
    Truncated,
    /// No `\x7fELF` magic.
    BadMagic,
    /// `EI_CLASS` is not ELF64.
    NotElf64,
    /// `EI_DATA` is not little-endian.
    NotLittleEndian,
    /// `EI_VERSION` is not `EV_CURRENT`.
    BadVersion,
    /// The program header table lies (partly) outside the object, or its entry
    /// size is wrong.
    BadProgramHeaders,
    /// The section header table lies (partly) outside the object, or its entry
    /// size is wrong.
    BadSectionHeaders,
}

impl ElfError {
    /// A short English description for logs and statuses.
    pub fn reason(self) -> &'static str {
        match self {
            Self::Truncated => "shorter than an ELF64 header",
            Self::BadMagic => "no ELF magic",
            Self::NotElf64 => "not ELF64 (EI_CLASS)",
            Self::NotLittleEndian => "not little-endian (EI_DATA)",
            Self::BadVersion => "unknown ELF version (EI_VERSION)",
            Self::BadProgramHeaders => "program header table outside the object",
            Self::BadSectionHeaders => "section header table outside the object",
        }
    }
}

/// Reads a little-endian `u16` at `at`, if in bounds.
pub fn u16_at(bytes: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_le_bytes(
        bytes.get(at..at.checked_add(2)?)?.try_into().ok()?,
    ))
}

/// Reads a little-endian `u32` at `at`, if in bounds.
pub fn u32_at(bytes: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(
        bytes.get(at..at.checked_add(4)?)?.try_into().ok()?,
    ))
}

/// Reads a little-endian `u64` at `at`, if in bounds.
pub fn u64_at(bytes: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_le_bytes(
        bytes.get(at..at.checked_add(8)?)?.try_into().ok()?,
    ))
}

/// `bytes[offset..offset + len]` for file-supplied 64-bit values, if in bounds.
pub fn range(bytes: &[u8], offset: u64, len: u64) -> Option<&[u8]> {
    let start = usize::try_from(offset).ok()?;
    let end = start.checked_add(usize::try_from(len).ok()?)?;
    bytes.get(start..end)
}

/// The fields of an ELF64 file header this library uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Header {
    /// `EI_OSABI`.
    pub os_abi: u8,
    /// `EI_ABIVERSION`.
    pub abi_version: u8,
    /// `e_type`.
    pub e_type: u16,
    /// `e_machine`.
    pub machine: u16,
    /// `e_flags`.
    pub flags: u32,
    phoff: u64,
    phnum: u16,
    shoff: u64,
    shnum: u16,
}

impl Header {
    /// Parses and validates the file header of `bytes`: magic, ELF64,
    /// little-endian, version, and both header tables inside the object.
    /// Constant time: reads the first 64 bytes only.
    pub fn parse(bytes: &[u8]) -> Result<Self, ElfError> {
        let ident = bytes.get(..EHDR_SIZE).ok_or(ElfError::Truncated)?;
        if ident[..4] != ELF_MAGIC {
            return Err(ElfError::BadMagic);
        }
        if ident[4] != ELFCLASS64 {
            return Err(ElfError::NotElf64);
        }
        if ident[5] != ELFDATA2LSB {
            return Err(ElfError::NotLittleEndian);
        }
        if ident[6] != EV_CURRENT {
            return Err(ElfError::BadVersion);
        }
        // All reads below are within the 64 bytes checked above.
        let field16 = |at| u16_at(ident, at).ok_or(ElfError::Truncated);
        let field32 = |at| u32_at(ident, at).ok_or(ElfError::Truncated);
        let field64 = |at| u64_at(ident, at).ok_or(ElfError::Truncated);
        let header = Self {
            os_abi: ident[7],
            abi_version: ident[8],
            e_type: field16(16)?,
            machine: field16(18)?,
            flags: field32(48)?,
            phoff: field64(32)?,
            phnum: field16(56)?,
            shoff: field64(40)?,
            shnum: field16(60)?,
        };
        let phentsize = field16(54)?;
        let shentsize = field16(58)?;
        if header.phnum != 0
            && (usize::from(phentsize) != PHDR_SIZE
                || range(
                    bytes,
                    header.phoff,
                    u64::from(header.phnum) * PHDR_SIZE as u64,
                )
                .is_none())
        {
            return Err(ElfError::BadProgramHeaders);
        }
        if header.shnum != 0
            && (usize::from(shentsize) != SHDR_SIZE
                || range(
                    bytes,
                    header.shoff,
                    u64::from(header.shnum) * SHDR_SIZE as u64,
                )
                .is_none())
        {
            return Err(ElfError::BadSectionHeaders);
        }
        Ok(header)
    }

    /// The note areas of the object: `PT_NOTE` segments, or, in an object without
    /// program headers (a relocatable), `SHT_NOTE` sections. An area that points
    /// outside the object is reported as `Err` and skipped by the caller.
    pub fn note_areas<'a>(
        &self,
        bytes: &'a [u8],
    ) -> impl Iterator<Item = Result<&'a [u8], NoteError>> + 'a {
        let (table, count, entry, type_at, offset_at, size_at, wanted) = if self.phnum != 0 {
            (self.phoff, self.phnum, PHDR_SIZE, 0, 8, 32, PT_NOTE)
        } else {
            (self.shoff, self.shnum, SHDR_SIZE, 4, 24, 32, SHT_NOTE)
        };
        (0..usize::from(count)).filter_map(move |i| {
            let at = usize::try_from(table)
                .ok()?
                .checked_add(i.checked_mul(entry)?)?;
            if u32_at(bytes, at.checked_add(type_at)?)? != wanted {
                return None;
            }
            let offset = u64_at(bytes, at.checked_add(offset_at)?)?;
            let size = u64_at(bytes, at.checked_add(size_at)?)?;
            Some(range(bytes, offset, size).ok_or(NoteError::AreaOutOfBounds))
        })
    }
}

/// Why a note area could not be read completely.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NoteError {
    /// A note segment or section lies (partly) outside the object.
    AreaOutOfBounds,
    /// A note's name or descriptor size points past the end of its area.
    NoteOutOfBounds,
}

/// One ELF note.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Note<'a> {
    /// The owner name without its terminating NUL.
    pub name: &'a [u8],
    /// `n_type`.
    pub note_type: u32,
    /// The descriptor, exactly `n_descsz` bytes.
    pub desc: &'a [u8],
}

/// Iterates over the notes of one note area (4-byte aligned names and
/// descriptors, as AMDGPU code objects use). A note whose sizes point past the
/// end of the area yields one `Err` and ends the iteration.
pub fn notes(area: &[u8]) -> impl Iterator<Item = Result<Note<'_>, NoteError>> + '_ {
    let mut at = 0usize;
    let mut done = false;
    std::iter::from_fn(move || {
        if done || at >= area.len() {
            return None;
        }
        let note = read_note(area, at);
        match note {
            Some((note, next)) => {
                at = next;
                Some(Ok(note))
            }
            None => {
                done = true;
                Some(Err(NoteError::NoteOutOfBounds))
            }
        }
    })
}

/// Rounds `n` up to a multiple of 4, if that does not overflow.
fn align4(n: usize) -> Option<usize> {
    n.checked_add(3).map(|n| n & !3)
}

/// The note at `at` and the offset of the next one.
fn read_note(area: &[u8], at: usize) -> Option<(Note<'_>, usize)> {
    let namesz = usize::try_from(u32_at(area, at)?).ok()?;
    let descsz = usize::try_from(u32_at(area, at.checked_add(4)?)?).ok()?;
    let note_type = u32_at(area, at.checked_add(8)?)?;
    let name_at = at.checked_add(12)?;
    let name = area.get(name_at..name_at.checked_add(namesz)?)?;
    let desc_at = name_at.checked_add(align4(namesz)?)?;
    let desc = area.get(desc_at..desc_at.checked_add(descsz)?)?;
    let next = desc_at.checked_add(align4(descsz)?)?;
    let name = name.strip_suffix(&[0]).unwrap_or(name);
    Some((
        Note {
            name,
            note_type,
            desc,
        },
        next,
    ))
}
