//! One code object, parsed once: the view that identification, policy,
//! analysis and rewriting share.
//!
//! [`CodeObject::parse`] reads the 64-byte ELF header only (constant time), so
//! building a view costs nothing on a load that is not rewritten. Everything
//! else — the section and program header tables, the address map, the symbol
//! tables, the metadata note and its decoded document — is read the first
//! time someone asks and kept for the next one, so a rewrite walks each table
//! once however many steps look at it. Every read is bounded by the object.

use std::cell::OnceCell;

use crate::elf::{self, AddressMap, Header, Section, Segment, Symbol};
use crate::isa::{self, IsaError};
use crate::metadata::{self, Metadata, MetadataError};

/// A code object and what has been read out of it so far.
#[derive(Debug)]
pub struct CodeObject<'a> {
    bytes: &'a [u8],
    header: Header,
    sections: OnceCell<Vec<Section<'a>>>,
    segments: OnceCell<Vec<Segment>>,
    map: OnceCell<AddressMap>,
    symtab: OnceCell<Vec<Symbol<'a>>>,
    dynsym: OnceCell<Vec<Symbol<'a>>>,
    metadata_note: OnceCell<Result<Option<&'a [u8]>, MetadataError>>,
    metadata: OnceCell<Result<Metadata<'a>, MetadataError>>,
}

impl<'a> CodeObject<'a> {
    /// The view of `bytes`: its ELF header is parsed and checked (magic,
    /// ELF64, little-endian, both header tables inside the object); nothing
    /// else is read yet.
    pub fn parse(bytes: &'a [u8]) -> Result<Self, IsaError> {
        let header = Header::parse(bytes).map_err(isa::elf_error)?;
        Ok(Self {
            bytes,
            header,
            sections: OnceCell::new(),
            segments: OnceCell::new(),
            map: OnceCell::new(),
            symtab: OnceCell::new(),
            dynsym: OnceCell::new(),
            metadata_note: OnceCell::new(),
            metadata: OnceCell::new(),
        })
    }

    /// The object's bytes.
    pub fn bytes(&self) -> &'a [u8] {
        self.bytes
    }

    /// Its ELF header.
    pub fn header(&self) -> &Header {
        &self.header
    }

    /// The processor its header names (`gfx1250`, `gfx12-5-generic`):
    /// constant time and allocation-free. `UnknownProcessor` when the
    /// `EF_AMDGPU_MACH` value is not in the table (the tool then asks COMGR).
    pub fn processor(&self) -> Result<&'static str, IsaError> {
        isa::processor_from_header(&self.header)
    }

    /// Its ISA name as COMGR gives it (`amdgcn-amd-amdhsa--gfx942:xnack-`).
    pub fn isa_name(&self) -> Result<String, IsaError> {
        isa::isa_name_from_header(&self.header)
    }

    /// The section header table, names resolved (empty without one).
    pub fn sections(&self) -> &[Section<'a>] {
        self.sections
            .get_or_init(|| self.header.sections(self.bytes))
    }

    /// The first section named `name`.
    pub fn section_by_name(&self, name: &[u8]) -> Option<&Section<'a>> {
        self.sections().iter().find(|s| s.name == name)
    }

    /// The program header table (empty without one).
    pub fn segments(&self) -> &[Segment] {
        self.segments
            .get_or_init(|| self.header.segments(self.bytes))
    }

    /// Virtual address to file offset, through the loadable segments (or the
    /// allocated sections of an object without program headers).
    pub fn address_map(&self) -> &AddressMap {
        self.map.get_or_init(|| {
            AddressMap::from_tables(&self.header, self.bytes, self.segments(), self.sections())
        })
    }

    /// The symbols of the first table of type `table_type`
    /// ([`elf::SHT_SYMTAB`] or [`elf::SHT_DYNSYM`]); empty without one.
    pub fn symbols(&self, table_type: u32) -> &[Symbol<'a>] {
        let cell = match table_type {
            elf::SHT_SYMTAB => &self.symtab,
            elf::SHT_DYNSYM => &self.dynsym,
            _ => return &[],
        };
        cell.get_or_init(|| elf::symbols_in(self.bytes, self.sections(), table_type))
    }

    /// The descriptor of the first `NT_AMDGPU_METADATA` note, `None` when the
    /// object has none; an error when a note area or note lies outside it.
    pub fn metadata_note(&self) -> Result<Option<&'a [u8]>, MetadataError> {
        *self
            .metadata_note
            .get_or_init(|| metadata::find_note(&self.header, self.bytes))
    }

    /// The decoded metadata document (decoded once).
    pub fn metadata(&self) -> Result<&Metadata<'a>, MetadataError> {
        self.metadata
            .get_or_init(|| match self.metadata_note()? {
                Some(desc) => metadata::decode_document(desc),
                None => Err(MetadataError::Missing),
            })
            .as_ref()
            .map_err(|e| *e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_probe_reads_as_the_free_functions_read_it() {
        let bytes = crate::GFX1250_PROBE;
        let object = CodeObject::parse(bytes).unwrap();
        assert_eq!(object.processor(), isa::processor(bytes));
        assert_eq!(object.isa_name(), isa::isa_name(bytes));
        let header = Header::parse(bytes).unwrap();
        assert_eq!(object.sections(), header.sections(bytes).as_slice());
        assert_eq!(object.segments(), header.segments(bytes).as_slice());
        assert_eq!(object.address_map(), &AddressMap::new(&header, bytes));
        for table in [elf::SHT_SYMTAB, elf::SHT_DYNSYM] {
            assert_eq!(
                object.symbols(table),
                header.symbols(bytes, table).as_slice()
            );
        }
        assert!(!object.symbols(elf::SHT_SYMTAB).is_empty());
        assert_eq!(object.metadata().cloned(), metadata::read(bytes));
        assert!(object.metadata().unwrap().kernels.len() == 1);
        assert_eq!(object.symbols(elf::SHT_NOBITS), &[]);
    }

    #[test]
    fn a_malformed_header_gives_no_view() {
        assert!(CodeObject::parse(&[]).is_err());
        assert!(CodeObject::parse(&crate::GFX1250_PROBE[..63]).is_err());
        let mut bad = crate::GFX1250_PROBE.to_vec();
        bad[0] = 0;
        assert!(CodeObject::parse(&bad).is_err());
    }

    #[test]
    fn an_object_without_a_note_has_no_metadata() {
        // The probe's header without its header tables: no note at all.
        let bytes = crate::GFX1250_PROBE;
        let mut cut = bytes[..64].to_vec();
        cut[32..40].fill(0); // e_phoff
        cut[56..58].fill(0); // e_phnum
        cut[40..48].fill(0); // e_shoff
        cut[60..62].fill(0); // e_shnum
        let object = CodeObject::parse(&cut).unwrap();
        assert_eq!(object.metadata_note(), Ok(None));
        assert_eq!(object.metadata().unwrap_err(), MetadataError::Missing);
        assert!(object.sections().is_empty() && object.segments().is_empty());
    }
}
