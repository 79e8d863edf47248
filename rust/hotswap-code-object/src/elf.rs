//! Bounded ELF64 little-endian reading: the file header, the program and section
//! header tables, and the notes they point to.
//!
//! Every offset and size comes from the file, so every one is checked against the
//! buffer with overflow-checked arithmetic before it is used; nothing here can
//! read out of bounds or panic on any input.

/// `\x7fELF`.
const ELF_MAGIC: [u8; 4] = *b"\x7fELF";
/// `EI_CLASS` value of ELF64.
pub(crate) const ELFCLASS64: u8 = 2;
/// `EI_DATA` value of little-endian.
pub(crate) const ELFDATA2LSB: u8 = 1;
/// `EV_CURRENT`.
const EV_CURRENT: u8 = 1;
/// Size of an ELF64 file header.
pub(crate) const EHDR_SIZE: usize = 64;
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
        Self::parse_prefix(bytes, bytes.len() as u64)
    }

    /// [`Header::parse`] for an object of `total_len` bytes of which only a
    /// prefix (at least the 64-byte header) is in memory, e.g. the first bytes
    /// of a file read with `pread`: the header tables are checked against
    /// `total_len`.
    pub fn parse_prefix(prefix: &[u8], total_len: u64) -> Result<Self, ElfError> {
        let ident = prefix.get(..EHDR_SIZE).ok_or(ElfError::Truncated)?;
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
        let inside = |offset: u64, count: u16, entry: usize| {
            offset
                .checked_add(u64::from(count) * entry as u64)
                .is_some_and(|end| end <= total_len)
        };
        if header.phnum != 0
            && (usize::from(phentsize) != PHDR_SIZE
                || !inside(header.phoff, header.phnum, PHDR_SIZE))
        {
            return Err(ElfError::BadProgramHeaders);
        }
        if header.shnum != 0
            && (usize::from(shentsize) != SHDR_SIZE
                || !inside(header.shoff, header.shnum, SHDR_SIZE))
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

// --- Section headers, program headers, symbols, address mapping ----------------
// (Bounded like the rest: every entry, name and table is checked against the
// buffer; a malformed entry is skipped or reported, never read out of bounds.)

/// `PT_LOAD`.
pub const PT_LOAD: u32 = 1;
/// `SHT_SYMTAB`.
pub const SHT_SYMTAB: u32 = 2;
/// `SHT_NOBITS`.
pub const SHT_NOBITS: u32 = 8;
/// `SHT_DYNSYM`.
pub const SHT_DYNSYM: u32 = 11;
/// `SHF_ALLOC`.
pub const SHF_ALLOC: u64 = 0x2;
/// `SHF_EXECINSTR`.
pub const SHF_EXECINSTR: u64 = 0x4;
/// `STT_OBJECT`.
pub const STT_OBJECT: u8 = 1;
/// `STT_FUNC`.
pub const STT_FUNC: u8 = 2;
/// `SHN_UNDEF`.
pub const SHN_UNDEF: u16 = 0;
/// First reserved section index (`SHN_LORESERVE`): `SHN_ABS`, `SHN_COMMON`...
pub const SHN_LORESERVE: u16 = 0xff00;
/// Size of an ELF64 symbol.
const SYM_SIZE: usize = 24;

/// One ELF64 section header, with its name resolved through `.shstrtab`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Section<'a> {
    /// Index in the section header table.
    pub index: u16,
    /// The name (empty when `.shstrtab` is missing or the name is out of bounds).
    pub name: &'a [u8],
    /// `sh_type`.
    pub sh_type: u32,
    /// `sh_flags`.
    pub flags: u64,
    /// `sh_addr`.
    pub addr: u64,
    /// `sh_offset`.
    pub offset: u64,
    /// `sh_size`.
    pub size: u64,
    /// `sh_link`.
    pub link: u32,
    /// `sh_entsize`.
    pub entsize: u64,
}

impl<'a> Section<'a> {
    /// The section's bytes in the file: `None` for `SHT_NOBITS` or when the
    /// section lies (partly) outside the object.
    pub fn data(&self, bytes: &'a [u8]) -> Option<&'a [u8]> {
        if self.sh_type == SHT_NOBITS {
            return None;
        }
        range(bytes, self.offset, self.size)
    }

    /// Whether `vaddr` lies in this section's address range.
    pub fn contains_vaddr(&self, vaddr: u64) -> bool {
        vaddr >= self.addr && vaddr - self.addr < self.size
    }
}

/// One ELF64 program header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Segment {
    /// `p_type`.
    pub p_type: u32,
    /// `p_flags`.
    pub flags: u32,
    /// `p_offset`.
    pub offset: u64,
    /// `p_vaddr`.
    pub vaddr: u64,
    /// `p_filesz`.
    pub filesz: u64,
    /// `p_memsz`.
    pub memsz: u64,
}

/// One ELF64 symbol.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Symbol<'a> {
    /// The name (empty when out of bounds of its string table).
    pub name: &'a [u8],
    /// `ELF64_ST_TYPE(st_info)`.
    pub sym_type: u8,
    /// `ELF64_ST_BIND(st_info)`.
    pub bind: u8,
    /// `st_shndx`.
    pub shndx: u16,
    /// `st_value`.
    pub value: u64,
    /// `st_size`.
    pub size: u64,
}

impl Symbol<'_> {
    /// Defined in a real section (not undefined, absolute or common).
    pub fn is_defined(&self) -> bool {
        self.shndx != SHN_UNDEF && self.shndx < SHN_LORESERVE
    }
}

/// The NUL-terminated string at `at` in `table`; empty when out of bounds.
fn string_at(table: &[u8], at: u32) -> &[u8] {
    let Some(rest) = usize::try_from(at).ok().and_then(|at| table.get(at..)) else {
        return &[];
    };
    // The library's word-at-a-time search for the NUL (names of C++ code
    // are long), else the rest of the table.
    std::ffi::CStr::from_bytes_until_nul(rest).map_or(rest, |s| s.to_bytes())
}

impl Header {
    /// The section header table, each entry read within bounds (the table itself
    /// was checked by [`Header::parse`]), names resolved through `e_shstrndx`.
    pub fn sections<'a>(&self, bytes: &'a [u8]) -> Vec<Section<'a>> {
        let raw = |i: usize| -> Option<Section<'a>> {
            let at = usize::try_from(self.shoff)
                .ok()?
                .checked_add(i.checked_mul(SHDR_SIZE)?)?;
            let entry = bytes.get(at..at.checked_add(SHDR_SIZE)?)?;
            Some(Section {
                index: u16::try_from(i).ok()?,
                name: &[],
                sh_type: u32_at(entry, 4)?,
                flags: u64_at(entry, 8)?,
                addr: u64_at(entry, 16)?,
                offset: u64_at(entry, 24)?,
                size: u64_at(entry, 32)?,
                link: u32_at(entry, 40)?,
                entsize: u64_at(entry, 56)?,
            })
        };
        let mut sections: Vec<Section<'a>> = (0..usize::from(self.shnum)).filter_map(raw).collect();
        let names = u16_at(bytes, 62)
            .and_then(|i| sections.get(usize::from(i)))
            .and_then(|s| s.data(bytes))
            .unwrap_or(&[]);
        let name_offsets: Vec<u32> = (0..sections.len())
            .map(|i| {
                usize::try_from(self.shoff)
                    .ok()
                    .and_then(|o| o.checked_add(i * SHDR_SIZE))
                    .and_then(|at| u32_at(bytes, at))
                    .unwrap_or(u32::MAX)
            })
            .collect();
        for (section, name_at) in sections.iter_mut().zip(name_offsets) {
            section.name = string_at(names, name_at);
        }
        sections
    }

    /// The first section named `name` (e.g. `.text`, `.hip_fatbin`).
    pub fn section_by_name<'a>(&self, bytes: &'a [u8], name: &[u8]) -> Option<Section<'a>> {
        self.sections(bytes).into_iter().find(|s| s.name == name)
    }

    /// The program header table, each entry read within bounds.
    pub fn segments(&self, bytes: &[u8]) -> Vec<Segment> {
        (0..usize::from(self.phnum))
            .filter_map(|i| {
                let at = usize::try_from(self.phoff)
                    .ok()?
                    .checked_add(i.checked_mul(PHDR_SIZE)?)?;
                let entry = bytes.get(at..at.checked_add(PHDR_SIZE)?)?;
                Some(Segment {
                    p_type: u32_at(entry, 0)?,
                    flags: u32_at(entry, 4)?,
                    offset: u64_at(entry, 8)?,
                    vaddr: u64_at(entry, 16)?,
                    filesz: u64_at(entry, 32)?,
                    memsz: u64_at(entry, 40)?,
                })
            })
            .collect()
    }

    /// The symbols of the first table of type `table_type` ([`SHT_SYMTAB`] or
    /// [`SHT_DYNSYM`]), names resolved through its linked string table. Entries
    /// past the end of the object are dropped; an empty vector when there is no
    /// such table.
    pub fn symbols<'a>(&self, bytes: &'a [u8], table_type: u32) -> Vec<Symbol<'a>> {
        symbols_in(bytes, &self.sections(bytes), table_type)
    }
}

/// [`Header::symbols`] with the section table already read.
pub fn symbols_in<'a>(
    bytes: &'a [u8],
    sections: &[Section<'a>],
    table_type: u32,
) -> Vec<Symbol<'a>> {
    let Some(table) = sections.iter().find(|s| s.sh_type == table_type) else {
        return Vec::new();
    };
    let Some(data) = table.data(bytes) else {
        return Vec::new();
    };
    let strings = usize::try_from(table.link)
        .ok()
        .and_then(|i| sections.get(i))
        .and_then(|s| s.data(bytes))
        .unwrap_or(&[]);
    data.chunks_exact(SYM_SIZE)
        .filter_map(|entry| {
            let info = *entry.get(4)?;
            Some(Symbol {
                name: string_at(strings, u32_at(entry, 0)?),
                sym_type: info & 0xf,
                bind: info >> 4,
                shndx: u16_at(entry, 6)?,
                value: u64_at(entry, 8)?,
                size: u64_at(entry, 16)?,
            })
        })
        .collect()
}

/// Maps virtual addresses to file offsets: through the `PT_LOAD` segments
/// (their file-backed part), or, for an object without program headers (a
/// relocatable), through its `SHF_ALLOC` sections.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AddressMap {
    /// (vaddr, file offset, file-backed size) of each mapped range.
    ranges: Vec<(u64, u64, u64)>,
}

impl AddressMap {
    /// The map of `bytes`, whose header is `header`. Ranges that lie (partly)
    /// outside the object are left out, so every mapped offset is in bounds.
    pub fn new(header: &Header, bytes: &[u8]) -> Self {
        if header.phnum == 0 {
            Self::from_tables(header, bytes, &[], &header.sections(bytes))
        } else {
            Self::from_tables(header, bytes, &header.segments(bytes), &[])
        }
    }

    /// [`AddressMap::new`] with the header tables already read (`sections`
    /// is used only when the object has no program headers).
    pub fn from_tables(
        header: &Header,
        bytes: &[u8],
        segments: &[Segment],
        sections: &[Section<'_>],
    ) -> Self {
        let in_file = |offset: u64, size: u64| {
            offset
                .checked_add(size)
                .is_some_and(|end| end <= bytes.len() as u64)
        };
        let ranges = if header.phnum == 0 {
            sections
                .iter()
                .filter(|s| {
                    s.flags & SHF_ALLOC != 0 && s.sh_type != SHT_NOBITS && in_file(s.offset, s.size)
                })
                .map(|s| (s.addr, s.offset, s.size))
                .collect()
        } else {
            segments
                .iter()
                .filter(|s| s.p_type == PT_LOAD && in_file(s.offset, s.filesz))
                .map(|s| (s.vaddr, s.offset, s.filesz))
                .collect()
        };
        Self { ranges }
    }

    /// The file offset of `vaddr`, if some mapped range holds it.
    pub fn file_offset(&self, vaddr: u64) -> Option<u64> {
        self.ranges.iter().find_map(|&(start, offset, size)| {
            let delta = vaddr.checked_sub(start)?;
            (delta < size).then(|| offset + delta)
        })
    }

    /// The file bytes of `[vaddr, vaddr + len)` when one mapped range holds them all.
    pub fn bytes<'a>(&self, bytes: &'a [u8], vaddr: u64, len: u64) -> Option<&'a [u8]> {
        let &(start, offset, size) = self
            .ranges
            .iter()
            .find(|&&(start, _, size)| vaddr >= start && vaddr - start < size.max(1))?;
        let delta = vaddr - start;
        if len > size - delta.min(size) {
            return None;
        }
        range(bytes, offset + delta, len)
    }

    /// The file bytes from `vaddr` to the end of the mapped range that holds it.
    pub fn tail<'a>(&self, bytes: &'a [u8], vaddr: u64) -> Option<&'a [u8]> {
        let &(start, offset, size) = self
            .ranges
            .iter()
            .find(|&&(start, _, size)| vaddr >= start && vaddr - start < size)?;
        let delta = vaddr - start;
        range(bytes, offset + delta, size - delta)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An ELF64 LE gfx1250 v5 object: header, one PT_NOTE program header, then `notes`.
    fn object_with_notes(notes: &[u8]) -> Vec<u8> {
        let mut o = vec![0u8; EHDR_SIZE + PHDR_SIZE];
        o[..4].copy_from_slice(&ELF_MAGIC);
        o[4] = ELFCLASS64;
        o[5] = ELFDATA2LSB;
        o[6] = EV_CURRENT;
        o[7] = 64; // ELFOSABI_AMDGPU_HSA
        o[8] = 3; // code object v5
        o[18..20].copy_from_slice(&224u16.to_le_bytes());
        o[48..52].copy_from_slice(&0x49u32.to_le_bytes()); // gfx1250
        o[32..40].copy_from_slice(&(EHDR_SIZE as u64).to_le_bytes()); // e_phoff
        o[54..56].copy_from_slice(&(PHDR_SIZE as u16).to_le_bytes());
        o[56..58].copy_from_slice(&1u16.to_le_bytes());
        let ph = EHDR_SIZE;
        o[ph..ph + 4].copy_from_slice(&PT_NOTE.to_le_bytes());
        o[ph + 8..ph + 16].copy_from_slice(&((EHDR_SIZE + PHDR_SIZE) as u64).to_le_bytes());
        o[ph + 32..ph + 40].copy_from_slice(&(notes.len() as u64).to_le_bytes());
        o.extend_from_slice(notes);
        o
    }

    fn note(namesz: u32, descsz: u32, name: &[u8], desc: &[u8]) -> Vec<u8> {
        let mut n = Vec::new();
        n.extend_from_slice(&namesz.to_le_bytes());
        n.extend_from_slice(&descsz.to_le_bytes());
        n.extend_from_slice(&32u32.to_le_bytes());
        n.extend_from_slice(name);
        while n.len() % 4 != 0 {
            n.push(0);
        }
        n.extend_from_slice(desc);
        while n.len() % 4 != 0 {
            n.push(0);
        }
        n
    }

    /// A note's owner name and descriptor, copied.
    type OwnedNote = (Vec<u8>, Vec<u8>);

    fn all_notes(o: &[u8]) -> Vec<Result<OwnedNote, NoteError>> {
        let header = Header::parse(o).unwrap();
        let mut out = Vec::new();
        for area in header.note_areas(o) {
            match area {
                Ok(area) => {
                    for n in notes(area) {
                        out.push(n.map(|n| (n.name.to_vec(), n.desc.to_vec())));
                    }
                }
                Err(e) => out.push(Err(e)),
            }
        }
        out
    }

    #[test]
    fn reads_well_formed_notes() {
        let mut area = note(7, 3, b"AMDGPU\0", b"abc");
        area.extend(note(4, 0, b"GNU\0", b""));
        let o = object_with_notes(&area);
        assert_eq!(
            all_notes(&o),
            vec![
                Ok((b"AMDGPU".to_vec(), b"abc".to_vec())),
                Ok((b"GNU".to_vec(), Vec::new()))
            ]
        );
    }

    #[test]
    fn note_sizes_past_the_end_are_errors() {
        for (namesz, descsz) in [(7, 1000), (1000, 3), (u32::MAX, 3), (7, u32::MAX)] {
            let o = object_with_notes(&note(namesz, descsz, b"AMDGPU\0", b"abc"));
            assert_eq!(
                all_notes(&o),
                vec![Err(NoteError::NoteOutOfBounds)],
                "{namesz} {descsz}"
            );
        }
        // A note header cut short.
        let o = object_with_notes(&[7, 0, 0, 0, 3]);
        assert_eq!(all_notes(&o), vec![Err(NoteError::NoteOutOfBounds)]);
    }

    #[test]
    fn note_area_past_the_end_is_an_error() {
        let mut o = object_with_notes(&note(7, 3, b"AMDGPU\0", b"abc"));
        let size_at = EHDR_SIZE + 32;
        o[size_at..size_at + 8].copy_from_slice(&u64::MAX.to_le_bytes());
        assert_eq!(all_notes(&o), vec![Err(NoteError::AreaOutOfBounds)]);
        let offset_at = EHDR_SIZE + 8;
        o[offset_at..offset_at + 8].copy_from_slice(&(u64::MAX - 2).to_le_bytes());
        assert_eq!(all_notes(&o), vec![Err(NoteError::AreaOutOfBounds)]);
    }

    #[test]
    fn header_validation() {
        let o = object_with_notes(&[]);
        assert!(Header::parse(&o).is_ok());
        assert_eq!(Header::parse(&o[..63]), Err(ElfError::Truncated));
        let mut bad = o.clone();
        bad[56..58].copy_from_slice(&0xffffu16.to_le_bytes()); // e_phnum
        assert_eq!(Header::parse(&bad), Err(ElfError::BadProgramHeaders));
        let mut bad = o.clone();
        bad[54..56].copy_from_slice(&32u16.to_le_bytes()); // e_phentsize
        assert_eq!(Header::parse(&bad), Err(ElfError::BadProgramHeaders));
        let mut bad = o;
        bad[60..62].copy_from_slice(&1u16.to_le_bytes()); // e_shnum, e_shentsize 0
        assert_eq!(Header::parse(&bad), Err(ElfError::BadSectionHeaders));
    }

    #[test]
    fn arbitrary_bytes_never_panic() {
        // Deterministic pseudo-random objects around a valid one.
        let base = object_with_notes(&note(7, 3, b"AMDGPU\0", b"abc"));
        let mut state = 0x2545_f491_4f6c_dd1du64;
        for _ in 0..20_000 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let mut o = base.clone();
            let at = (state as usize) % o.len();
            o[at] = (state >> 32) as u8;
            o.truncate(((state >> 40) as usize) % (o.len() + 1));
            if let Ok(h) = Header::parse(&o) {
                for area in h.note_areas(&o).flatten() {
                    for _ in notes(area) {}
                }
            }
            let _ = crate::metadata::read(&o);
            let _ = crate::isa::isa_name(&o);
        }
    }
}
