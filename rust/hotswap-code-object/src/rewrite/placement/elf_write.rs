//! The ELF writer: the tables appended after the moved code (program
//! headers with the new `PT_LOAD`, section names, `.symtab` and its strings
//! with one symbol per image, the marker note, section headers with the two
//! new sections) and the ELF header's same-size edits that point at them.

use std::sync::Arc;

use super::layout::Region;
use super::moving::Moving;
use super::{
    refuse, MovedFunction, FUNCTION_ALIGN, MARKER_OWNER, MARKER_SECTION, NT_HOTSWAP_MOVED, PAGE,
    SYMBOL_SUFFIX, TEXT_SECTION,
};
use crate::elf;
use crate::object::CodeObject;
use crate::rewrite::{Patch, RewriteError};

/// What the writer made.
pub(super) struct Written {
    /// The tail: the moved code, then the tables.
    pub(super) tail: Vec<u8>,
    /// The ELF header's edits (table offsets and counts).
    pub(super) header: Vec<Patch>,
    /// The moved functions as the symbol table and the marker name them.
    pub(super) moved: Vec<MovedFunction>,
}

/// Refuses an object whose tables the growth could not replace so that the
/// output is read the same way again: the section names, the symbol table the
/// analysis reads (the first `SHT_SYMTAB`) and its strings are copied with
/// new entries, so each must be a non-allocated section of its own (a shared
/// or aliased one would get two contradicting headers); an object that
/// already holds a section of the names the growth adds (grown before, or a
/// clash) would carry two markers, and only the first would be read; every
/// section name and every `.symtab` symbol name must lie inside its table
/// (an offset at or past the table's end names nothing in the input, but in
/// the copy it would name the added entries: a fuzz mutant's section read
/// as the marker in the output, which a second rewrite then took for a
/// clash); and the two new sections and the new segment must fit the
/// header's counts.
pub(super) fn check_tables(
    bytes: &[u8],
    sections: &[elf::Section<'_>],
) -> Result<(), RewriteError> {
    let shstrndx = usize::from(elf::u16_at(bytes, 62).unwrap_or(0));
    let readable = |s: &elf::Section<'_>| s.flags & elf::SHF_ALLOC == 0 && s.data(bytes).is_some();
    let names = sections
        .get(shstrndx)
        .filter(|s| shstrndx != 0 && readable(s))
        .ok_or_else(|| {
            refuse("no .shstrtab (e_shstrndx names no non-allocated section in the file)".into())
        })?;
    let symtab = sections
        .iter()
        .find(|s| s.sh_type == elf::SHT_SYMTAB)
        .ok_or_else(|| refuse("no .symtab: the moved copies could not be named".into()))?;
    if !readable(symtab) {
        return Err(refuse(format!(
            "the symbol table (section {}) is allocated or outside the file: it cannot be \
             replaced",
            symtab.index
        )));
    }
    let strings = usize::try_from(symtab.link)
        .ok()
        .and_then(|i| sections.get(i))
        .filter(|s| s.index != 0 && readable(s))
        .ok_or_else(|| {
            refuse(".symtab links to no non-allocated string table in the file".into())
        })?;
    let distinct = [names.index, symtab.index, strings.index];
    if distinct[0] == distinct[1] || distinct[0] == distinct[2] || distinct[1] == distinct[2] {
        return Err(refuse(format!(
            "the section names (section {}), .symtab (section {}) and its strings (section {}) \
             share a section: the copies would need two different headers for it",
            names.index, symtab.index, strings.index
        )));
    }
    let name_table = names.data(bytes).map_or(0, <[u8]>::len);
    let shoff = elf::u64_at(bytes, 40).and_then(|o| usize::try_from(o).ok());
    for s in sections {
        let at = shoff.and_then(|o| o.checked_add(usize::from(s.index) * 64));
        let name = at.and_then(|at| elf::u32_at(bytes, at)).unwrap_or(u32::MAX);
        if name as usize >= name_table {
            return Err(refuse(format!(
                "section {}'s name (offset {name:#x}) lies past the end of the section names \
                 (section {}, {name_table:#x} bytes): in the copy it would name a section the \
                 growth adds",
                s.index, names.index
            )));
        }
    }
    let string_table = strings.data(bytes).map_or(0, <[u8]>::len);
    let symbol_names = symtab.data(bytes).unwrap_or_default().chunks_exact(24);
    for (i, entry) in symbol_names.enumerate() {
        let name = elf::u32_at(entry, 0).unwrap_or(u32::MAX);
        if name as usize >= string_table {
            return Err(refuse(format!(
                "symbol {i} of .symtab (section {}) has a name (offset {name:#x}) past the end of \
                 its strings (section {}, {string_table:#x} bytes): in the copy it would name a \
                 moved function's image",
                symtab.index, strings.index
            )));
        }
    }
    if let Some(s) = sections
        .iter()
        .find(|s| s.name == MARKER_SECTION.as_bytes() || s.name == TEXT_SECTION.as_bytes())
    {
        return Err(refuse(format!(
            "the object already has a section {} (grown before, or a name clash): a second \
             marker would not be found",
            String::from_utf8_lossy(s.name)
        )));
    }
    let shnum = elf::u16_at(bytes, 60).unwrap_or(u16::MAX);
    let phnum = elf::u16_at(bytes, 56).unwrap_or(u16::MAX);
    if shnum >= elf::SHN_LORESERVE - 2 || phnum >= 0xffff - 1 {
        return Err(refuse(
            "too many sections or segments to add the moved code's".into(),
        ));
    }
    Ok(())
}

/// The room the tables take after the code (an upper bound): the three
/// sections copied (the names, `.symtab` and its strings, which
/// [`check_tables`] found), each at most the object's size since it lies in
/// it (their sum is not: they may overlap, and each is copied whole), and
/// the new headers, names, symbols and marker entries.
pub(super) fn table_room(object: &CodeObject<'_>, moving: &[Moving]) -> usize {
    let (bytes, sections) = (object.bytes(), object.sections());
    // The tail is allocated with this room, so that it is never reallocated
    // (a reallocation would hold a large tail twice).
    let count = |at: usize| usize::from(elf::u16_at(bytes, at).unwrap_or(0));
    let symtab = sections.iter().find(|s| s.sh_type == elf::SHT_SYMTAB);
    let copied: usize = [
        sections.get(count(62)),
        symtab,
        symtab.and_then(|st| sections.get(st.link as usize)),
    ]
    .into_iter()
    .flatten()
    .map(|s| s.data(bytes).map_or(0, <[u8]>::len))
    .sum();
    let per_moved: usize = moving
        .iter()
        .map(|m| m.name.len() + SYMBOL_SUFFIX.len() + 1 + 24 + 32)
        .sum();
    (count(56) + 1) * 56 + (count(60) + 2) * 64 + copied + per_moved + 256
}

/// The tail as it is written: absolute file offsets follow the input's end.
struct Tail {
    /// The input's size (where the tail starts in the output).
    base: usize,
    bytes: Vec<u8>,
}

impl Tail {
    /// The output's file offset of the next byte.
    fn offset(&self) -> u64 {
        self.base as u64 + self.bytes.len() as u64
    }

    /// Zero bytes up to the next 8-byte file offset.
    fn pad8(&mut self) {
        while (self.base + self.bytes.len()) % 8 != 0 {
            self.bytes.push(0);
        }
    }

    /// `table`'s bytes and, when its last string is unterminated, a 0 (the
    /// last name keeps its end).
    fn strings(&mut self, table: &[u8]) {
        self.bytes.extend_from_slice(table);
        if table.last().is_some_and(|&b| b != 0) {
            self.bytes.push(0);
        }
    }
}

/// Where a table copy went: file offset and size.
#[derive(Clone, Copy)]
struct Placed {
    offset: u64,
    size: u64,
}

/// The section names copied, and the two new names' offsets in them.
struct Names {
    table: Placed,
    text: u32,
    marker: u32,
}

/// The symbol table and its strings copied with the new symbols.
struct Symbols {
    /// Section index, placement, `sh_info` (the first non-local symbol).
    symtab: (usize, Placed, u32),
    /// Section index and placement of its string table.
    strtab: (usize, Placed),
}

/// Appends the tables to `tail` (the padding and the moved code) and makes
/// the header's edits: program headers, section names, symbols, the marker,
/// section headers, in this order.
pub(super) fn tables(
    object: &CodeObject<'_>,
    moving: &[Moving],
    region: &Region,
    tail: Vec<u8>,
) -> Result<Written, RewriteError> {
    let bytes = object.bytes();
    let pad = (region.file_offset - bytes.len() as u64) as usize;
    let code_size = (tail.len() - pad) as u64;
    let mut tail = Tail {
        base: bytes.len(),
        bytes: tail,
    };
    tail.pad8();
    let (phoff, phnum) = program_headers(&mut tail, bytes, region, code_size);
    let names = section_names(&mut tail, object)?;
    tail.pad8();
    let shnum = usize::from(elf::u16_at(bytes, 60).unwrap_or(0));
    let symbols = symbols(&mut tail, object, moving, shnum as u16)?;
    let moved = moving
        .iter()
        .map(|m| MovedFunction {
            name: Arc::clone(&m.name),
            original_vaddr: m.vaddr,
            original_size: m.size,
            new_vaddr: m.new_vaddr,
            new_size: m.image_len,
            symbol: if symbols.is_some() {
                format!("{}{SYMBOL_SUFFIX}", m.name)
            } else {
                String::new()
            },
        })
        .collect();
    tail.pad8();
    let marker = marker(&mut tail, moving);
    tail.pad8();
    let shoff = section_headers(
        &mut tail,
        bytes,
        &names,
        symbols.as_ref(),
        region,
        code_size,
        marker,
    );
    let header = [
        (32, phoff.to_le_bytes().to_vec()),
        (40, shoff.to_le_bytes().to_vec()),
        (56, ((phnum + 1) as u16).to_le_bytes().to_vec()),
        (60, ((shnum + 2) as u16).to_le_bytes().to_vec()),
    ]
    .into_iter()
    .map(|(file_offset, bytes)| Patch { file_offset, bytes })
    .collect();
    Ok(Written {
        tail: tail.bytes,
        header,
        moved,
    })
}

/// The program header table: a copy (a `PT_PHDR`, which would describe the
/// old table, becomes `PT_NULL`) and the new `PT_LOAD`. Its offset and the
/// input's count.
fn program_headers(tail: &mut Tail, bytes: &[u8], region: &Region, code_size: u64) -> (u64, usize) {
    let phoff = elf::u64_at(bytes, 32).unwrap_or(0) as usize;
    let phnum = usize::from(elf::u16_at(bytes, 56).unwrap_or(0));
    let new_phoff = tail.offset();
    for i in 0..phnum {
        let mut ph = bytes[phoff + i * 56..phoff + (i + 1) * 56].to_vec();
        if elf::u32_at(&ph, 0) == Some(6) {
            ph.fill(0); // PT_PHDR → PT_NULL
        }
        tail.bytes.extend_from_slice(&ph);
    }
    let mut ph = Vec::with_capacity(56);
    ph.extend_from_slice(&elf::PT_LOAD.to_le_bytes());
    ph.extend_from_slice(&5u32.to_le_bytes()); // PF_R | PF_X
    ph.extend_from_slice(&region.file_offset.to_le_bytes());
    ph.extend_from_slice(&region.vaddr.to_le_bytes());
    ph.extend_from_slice(&region.vaddr.to_le_bytes());
    ph.extend_from_slice(&code_size.to_le_bytes());
    ph.extend_from_slice(&code_size.to_le_bytes());
    ph.extend_from_slice(&PAGE.to_le_bytes());
    tail.bytes.extend_from_slice(&ph);
    (new_phoff, phnum)
}

/// The section names: a copy plus [`TEXT_SECTION`] and [`MARKER_SECTION`].
fn section_names(tail: &mut Tail, object: &CodeObject<'_>) -> Result<Names, RewriteError> {
    let (bytes, sections) = (object.bytes(), object.sections());
    let shstrndx = usize::from(elf::u16_at(bytes, 62).unwrap_or(0));
    let shstr = sections
        .get(shstrndx)
        .and_then(|s| s.data(bytes))
        .ok_or_else(|| refuse("no .shstrtab".into()))?;
    let offset = tail.offset();
    tail.strings(shstr);
    let text = (tail.offset() - offset) as u32;
    tail.bytes.extend_from_slice(TEXT_SECTION.as_bytes());
    tail.bytes.push(0);
    let marker = text + TEXT_SECTION.len() as u32 + 1;
    tail.bytes.extend_from_slice(MARKER_SECTION.as_bytes());
    tail.bytes.push(0);
    Ok(Names {
        table: Placed {
            offset,
            size: tail.offset() - offset,
        },
        text,
        marker,
    })
}

/// `.symtab` and its strings: copies with one local `STT_FUNC` symbol
/// `<name>.a0` per image (section `text_index`), inserted after the existing
/// locals.
fn symbols(
    tail: &mut Tail,
    object: &CodeObject<'_>,
    moving: &[Moving],
    text_index: u16,
) -> Result<Option<Symbols>, RewriteError> {
    let (bytes, sections) = (object.bytes(), object.sections());
    // The table the analysis reads (the first `SHT_SYMTAB`), which
    // `check_tables` found static: a loaded section cannot move, and
    // `.dynsym` is left as it is.
    let Some(st) = sections.iter().find(|s| s.sh_type == elf::SHT_SYMTAB) else {
        // Without a symbol table the copies could not be named, and a second
        // analysis would find the moved code covered by no function.
        return Err(refuse(
            "no .symtab: the moved copies could not be named".into(),
        ));
    };
    if sections
        .iter()
        .any(|s| matches!(s.sh_type, 4 | 9) && s.link == u32::from(st.index))
    {
        return Err(refuse("a relocation section refers to .symtab".into()));
    }
    let data = st
        .data(bytes)
        .ok_or_else(|| refuse(".symtab outside the object".into()))?;
    let strtab = sections
        .get(st.link as usize)
        .ok_or_else(|| refuse(".symtab has no string table".into()))?;
    let strdata = strtab
        .data(bytes)
        .ok_or_else(|| refuse(".strtab outside the object".into()))?;
    let shoff = elf::u64_at(bytes, 40).unwrap_or(0) as usize;
    let info_at = shoff + usize::from(st.index) * 64 + 44;
    let info = elf::u32_at(bytes, info_at).unwrap_or(0) as usize;
    let locals = info.min(data.len() / 24) * 24;
    let str_off = tail.offset();
    tail.strings(strdata);
    let mut names = Vec::new();
    for m in moving {
        names.push((tail.offset() - str_off) as u32);
        tail.bytes.extend_from_slice(m.name.as_bytes());
        tail.bytes.extend_from_slice(SYMBOL_SUFFIX.as_bytes());
        tail.bytes.push(0);
    }
    let str_size = tail.offset() - str_off;
    tail.pad8();
    let sym_off = tail.offset();
    tail.bytes.extend_from_slice(&data[..locals]);
    for (m, &name) in moving.iter().zip(&names) {
        tail.bytes.extend_from_slice(&name.to_le_bytes());
        tail.bytes.push(elf::STT_FUNC); // STB_LOCAL
        tail.bytes.push(0);
        tail.bytes.extend_from_slice(&text_index.to_le_bytes());
        tail.bytes.extend_from_slice(&m.new_vaddr.to_le_bytes());
        tail.bytes.extend_from_slice(&m.image_len.to_le_bytes());
    }
    tail.bytes
        .extend_from_slice(&data[locals..data.len() / 24 * 24]);
    Ok(Some(Symbols {
        symtab: (
            usize::from(st.index),
            Placed {
                offset: sym_off,
                size: tail.offset() - sym_off,
            },
            (locals / 24 + moving.len()) as u32,
        ),
        strtab: (
            st.link as usize,
            Placed {
                offset: str_off,
                size: str_size,
            },
        ),
    }))
}

/// The marker note (see the module documentation).
fn marker(tail: &mut Tail, moving: &[Moving]) -> Placed {
    let offset = tail.offset();
    let desc_len = 8 + 32 * moving.len();
    let out = &mut tail.bytes;
    out.extend_from_slice(&(MARKER_OWNER.len() as u32 + 1).to_le_bytes());
    out.extend_from_slice(&(desc_len as u32).to_le_bytes());
    out.extend_from_slice(&NT_HOTSWAP_MOVED.to_le_bytes());
    out.extend_from_slice(MARKER_OWNER);
    out.push(0); // "HOTSWAP\0": 8 bytes, 4-aligned
    out.extend_from_slice(&1u32.to_le_bytes());
    out.extend_from_slice(&(moving.len() as u32).to_le_bytes());
    for m in moving {
        for v in [m.vaddr, m.size, m.new_vaddr, m.image_len] {
            out.extend_from_slice(&v.to_le_bytes());
        }
    }
    Placed {
        offset,
        size: tail.offset() - offset,
    }
}

/// The section header table: a copy pointing at the copied tables, plus
/// [`TEXT_SECTION`] and [`MARKER_SECTION`]. Its offset.
fn section_headers(
    tail: &mut Tail,
    bytes: &[u8],
    names: &Names,
    symbols: Option<&Symbols>,
    region: &Region,
    code_size: u64,
    marker: Placed,
) -> u64 {
    let shoff = elf::u64_at(bytes, 40).unwrap_or(0) as usize;
    let shnum = usize::from(elf::u16_at(bytes, 60).unwrap_or(0));
    let shstrndx = usize::from(elf::u16_at(bytes, 62).unwrap_or(0));
    let place = |sh: &mut [u8], p: Placed| {
        sh[24..32].copy_from_slice(&p.offset.to_le_bytes());
        sh[32..40].copy_from_slice(&p.size.to_le_bytes());
    };
    let new_shoff = tail.offset();
    for i in 0..shnum {
        let mut sh = bytes[shoff + i * 64..shoff + (i + 1) * 64].to_vec();
        if i == shstrndx {
            place(&mut sh, names.table);
        }
        if let Some(s) = symbols {
            if i == s.symtab.0 {
                place(&mut sh, s.symtab.1);
                sh[44..48].copy_from_slice(&s.symtab.2.to_le_bytes());
            }
            if i == s.strtab.0 {
                place(&mut sh, s.strtab.1);
            }
        }
        tail.bytes.extend_from_slice(&sh);
    }
    let section = |name: u32, ty: u32, flags: u64, addr: u64, off: u64, size: u64, align: u64| {
        let mut sh = Vec::with_capacity(64);
        sh.extend_from_slice(&name.to_le_bytes());
        sh.extend_from_slice(&ty.to_le_bytes());
        sh.extend_from_slice(&flags.to_le_bytes());
        sh.extend_from_slice(&addr.to_le_bytes());
        sh.extend_from_slice(&off.to_le_bytes());
        sh.extend_from_slice(&size.to_le_bytes());
        sh.extend_from_slice(&[0u8; 8]); // link, info
        sh.extend_from_slice(&align.to_le_bytes());
        sh.extend_from_slice(&[0u8; 8]); // entsize
        sh
    };
    tail.bytes.extend_from_slice(&section(
        names.text,
        1,
        elf::SHF_ALLOC | elf::SHF_EXECINSTR,
        region.vaddr,
        region.file_offset,
        code_size,
        FUNCTION_ALIGN,
    ));
    tail.bytes.extend_from_slice(&section(
        names.marker,
        7,
        0,
        0,
        marker.offset,
        marker.size,
        4,
    ));
    new_shoff
}
