//! The AMDGPU metadata note (`NT_AMDGPU_METADATA`, owner `AMDGPU`, type 32): one
//! MessagePack map, decoded with `rmp` and bounded by the note's descriptor size.
//!
//! Never a byte scan: MessagePack strings are length-prefixed and not
//! NUL-terminated, so searching for `"amdgcn-amd-amdhsa"` and reading to a NUL
//! runs into the following keys (upstream's Gen-1 bug). Every length here comes
//! from a decoded prefix and is checked against the bytes that remain.

use rmp::decode;
use rmp::Marker;

use crate::elf::{self, ElfError, Header, NoteError};

/// Owner name of AMDGPU v3+ notes.
const NOTE_OWNER: &[u8] = b"AMDGPU";
/// `NT_AMDGPU_METADATA`.
const NT_AMDGPU_METADATA: u32 = 32;
/// Nesting deeper than this is refused (real metadata nests 3 to 4 levels).
const MAX_DEPTH: u32 = 32;

/// What this library reads from the metadata.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Metadata {
    /// `amdhsa.version`, e.g. `[1, 2]`.
    pub version: Option<(u64, u64)>,
    /// `amdhsa.target`, e.g. `amdgcn-amd-amdhsa--gfx1250`.
    pub target: Option<String>,
    /// `amdhsa.kernels`, in order.
    pub kernels: Vec<Kernel>,
}

/// One entry of `amdhsa.kernels`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Kernel {
    /// `.name`.
    pub name: Option<String>,
    /// `.symbol`, the kernel descriptor's symbol (`<name>.kd`).
    pub symbol: Option<String>,
    /// `.gfx1250_revision` (`A0`, `B0`) when the producer wrote one.
    pub gfx1250_revision: Option<String>,
}

/// Why the metadata could not be read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MetadataError {
    /// The object is not a readable ELF64 little-endian object.
    Elf(ElfError),
    /// A note area or note points past the end of the object.
    Note(NoteError),
    /// The object has no `NT_AMDGPU_METADATA` note.
    Missing,
    /// The note's MessagePack document is malformed or truncated.
    Msgpack(&'static str),
}

impl std::fmt::Display for MetadataError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Elf(e) => write!(f, "{}", e.reason()),
            Self::Note(NoteError::AreaOutOfBounds) => {
                write!(f, "a note area lies outside the object")
            }
            Self::Note(NoteError::NoteOutOfBounds) => {
                write!(f, "a note's sizes point past its area")
            }
            Self::Missing => write!(f, "no NT_AMDGPU_METADATA note"),
            Self::Msgpack(what) => write!(f, "malformed metadata: {what}"),
        }
    }
}

/// Reads the metadata of a code object. Reads the note areas only.
pub fn read(code_object: &[u8]) -> Result<Metadata, MetadataError> {
    let header = Header::parse(code_object).map_err(MetadataError::Elf)?;
    match find_note(&header, code_object)? {
        Some(desc) => decode_document(desc),
        None => Err(MetadataError::Missing),
    }
}

/// The descriptor of the first `NT_AMDGPU_METADATA` note of `code_object`
/// (whose header is `header`), `None` when it has none; an error when a note
/// area or note before it lies outside the object.
pub fn find_note<'a>(
    header: &Header,
    code_object: &'a [u8],
) -> Result<Option<&'a [u8]>, MetadataError> {
    for area in header.note_areas(code_object) {
        for note in elf::notes(area.map_err(MetadataError::Note)?) {
            let note = note.map_err(MetadataError::Note)?;
            if note.name == NOTE_OWNER && note.note_type == NT_AMDGPU_METADATA {
                return Ok(Some(note.desc));
            }
        }
    }
    Ok(None)
}

/// Decodes one metadata document (the note's descriptor).
pub fn decode_document(desc: &[u8]) -> Result<Metadata, MetadataError> {
    let mut rd = desc;
    let mut metadata = Metadata::default();
    let entries = map_len(&mut rd)?;
    for _ in 0..entries {
        let key = string(&mut rd)?;
        match key {
            "amdhsa.target" => metadata.target = Some(string(&mut rd)?.to_owned()),
            "amdhsa.version" => {
                let n = array_len(&mut rd)?;
                let mut parts = [0u64; 2];
                for i in 0..n {
                    let v = uint(&mut rd)?;
                    if let Some(slot) = parts.get_mut(i as usize) {
                        *slot = v;
                    }
                }
                metadata.version = (n >= 2).then_some((parts[0], parts[1]));
            }
            "amdhsa.kernels" => {
                let n = array_len(&mut rd)?;
                for _ in 0..n {
                    metadata.kernels.push(kernel(&mut rd)?);
                }
            }
            _ => skip(&mut rd, 0)?,
        }
    }
    Ok(metadata)
}

fn kernel(rd: &mut &[u8]) -> Result<Kernel, MetadataError> {
    let mut kernel = Kernel::default();
    for _ in 0..map_len(rd)? {
        match string(rd)? {
            ".name" => kernel.name = Some(string(rd)?.to_owned()),
            ".symbol" => kernel.symbol = Some(string(rd)?.to_owned()),
            ".gfx1250_revision" => kernel.gfx1250_revision = Some(string(rd)?.to_owned()),
            _ => skip(rd, 1)?,
        }
    }
    Ok(kernel)
}

const TRUNCATED: MetadataError = MetadataError::Msgpack("truncated");

fn map_len(rd: &mut &[u8]) -> Result<u32, MetadataError> {
    decode::read_map_len(rd).map_err(|_| MetadataError::Msgpack("expected a map"))
}

fn array_len(rd: &mut &[u8]) -> Result<u32, MetadataError> {
    decode::read_array_len(rd).map_err(|_| MetadataError::Msgpack("expected an array"))
}

fn uint(rd: &mut &[u8]) -> Result<u64, MetadataError> {
    decode::read_int(rd).map_err(|_| MetadataError::Msgpack("expected an unsigned integer"))
}

/// A string, borrowed from the document: the length prefix is decoded and
/// checked against what remains before any byte of the string is touched.
fn string<'a>(rd: &mut &'a [u8]) -> Result<&'a str, MetadataError> {
    let len = decode::read_str_len(rd).map_err(|_| MetadataError::Msgpack("expected a string"))?;
    let bytes = take(rd, u64::from(len))?;
    std::str::from_utf8(bytes).map_err(|_| MetadataError::Msgpack("string is not UTF-8"))
}

/// Consumes `len` bytes, or fails if fewer remain.
fn take<'a>(rd: &mut &'a [u8], len: u64) -> Result<&'a [u8], MetadataError> {
    let len = usize::try_from(len).map_err(|_| TRUNCATED)?;
    if len > rd.len() {
        return Err(TRUNCATED);
    }
    let (head, tail) = rd.split_at(len);
    *rd = tail;
    Ok(head)
}

/// Skips one value of any type. Each element consumes at least one byte, so the
/// work is bounded by the document's size whatever the declared counts say.
/// Iterative (the values still to skip per nesting level on the stack), with
/// the checks of a recursive walk in the same order: a value deeper than
/// [`MAX_DEPTH`] fails when it is reached.
fn skip(rd: &mut &[u8], depth: u32) -> Result<(), MetadataError> {
    const LEVELS: usize = MAX_DEPTH as usize + 2;
    let mut pending = [0u64; LEVELS];
    pending[0] = 1;
    let mut top = 0usize;
    loop {
        while pending[top] == 0 {
            if top == 0 {
                return Ok(());
            }
            top -= 1;
        }
        pending[top] -= 1;
        if depth + top as u32 > MAX_DEPTH {
            return Err(MetadataError::Msgpack("nested too deeply"));
        }
        let (bytes, children) = value_shape(rd)?;
        take(rd, bytes)?;
        if children != 0 {
            // depth + top <= MAX_DEPTH here, so top + 1 < LEVELS.
            top += 1;
            pending[top] = children;
        }
    }
}

/// Consumes one value's marker and length field: the bytes of its payload and
/// its number of child values.
fn value_shape(rd: &mut &[u8]) -> Result<(u64, u64), MetadataError> {
    let (&byte, rest) = rd.split_first().ok_or(TRUNCATED)?;
    *rd = rest;
    let mut len = |n: usize| -> Result<u64, MetadataError> {
        let field = take(rd, n as u64)?;
        Ok(field.iter().fold(0u64, |v, &b| v << 8 | u64::from(b)))
    };
    Ok(match Marker::from_u8(byte) {
        Marker::FixPos(_) | Marker::FixNeg(_) | Marker::Null | Marker::True | Marker::False => {
            (0, 0)
        }
        Marker::Reserved => return Err(MetadataError::Msgpack("reserved marker 0xc1")),
        Marker::U8 | Marker::I8 => (1, 0),
        Marker::U16 | Marker::I16 => (2, 0),
        Marker::U32 | Marker::I32 | Marker::F32 => (4, 0),
        Marker::U64 | Marker::I64 | Marker::F64 => (8, 0),
        Marker::FixStr(n) => (u64::from(n), 0),
        Marker::Str8 | Marker::Bin8 => (len(1)?, 0),
        Marker::Str16 | Marker::Bin16 => (len(2)?, 0),
        Marker::Str32 | Marker::Bin32 => (len(4)?, 0),
        Marker::FixExt1 => (2, 0),
        Marker::FixExt2 => (3, 0),
        Marker::FixExt4 => (5, 0),
        Marker::FixExt8 => (9, 0),
        Marker::FixExt16 => (17, 0),
        Marker::Ext8 => (len(1)? + 1, 0),
        Marker::Ext16 => (len(2)? + 1, 0),
        Marker::Ext32 => (len(4)? + 1, 0),
        Marker::FixArray(n) => (0, u64::from(n)),
        Marker::Array16 => (0, len(2)?),
        Marker::Array32 => (0, len(4)?),
        Marker::FixMap(n) => (0, 2 * u64::from(n)),
        Marker::Map16 => (0, 2 * len(2)?),
        Marker::Map32 => (0, 2 * len(4)?),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A metadata document as LLVM writes it (keys abbreviated to what matters).
    fn document(target: &str) -> Vec<u8> {
        let mut d = vec![0x83]; // map of 3
        d.push(0xae);
        d.extend_from_slice(b"amdhsa.version");
        d.extend_from_slice(&[0x92, 0x01, 0x02]);
        d.push(0xad);
        d.extend_from_slice(b"amdhsa.target");
        if target.len() < 32 {
            d.push(0xa0 | target.len() as u8);
        } else {
            d.extend_from_slice(&[0xd9, target.len() as u8]); // str8
        }
        d.extend_from_slice(target.as_bytes());
        d.push(0xae);
        d.extend_from_slice(b"amdhsa.kernels");
        d.extend_from_slice(&[0x91, 0x84]); // one kernel, map of 4
        for (k, v) in [
            (".name", "k"),
            (".symbol", "k.kd"),
            (".gfx1250_revision", "B0"),
        ] {
            d.push(0xa0 | k.len() as u8);
            d.extend_from_slice(k.as_bytes());
            d.push(0xa0 | v.len() as u8);
            d.extend_from_slice(v.as_bytes());
        }
        d.push(0xab);
        d.extend_from_slice(b".vgpr_count");
        d.extend_from_slice(&[0xcd, 0x01, 0x00]);
        d
    }

    #[test]
    fn decodes_target_kernels_and_revision() {
        let m = decode_document(&document("amdgcn-amd-amdhsa--gfx1250")).unwrap();
        assert_eq!(m.target.as_deref(), Some("amdgcn-amd-amdhsa--gfx1250"));
        assert_eq!(m.version, Some((1, 2)));
        assert_eq!(m.kernels.len(), 1);
        assert_eq!(m.kernels[0].name.as_deref(), Some("k"));
        assert_eq!(m.kernels[0].symbol.as_deref(), Some("k.kd"));
        assert_eq!(m.kernels[0].gfx1250_revision.as_deref(), Some("B0"));
    }

    #[test]
    fn every_truncation_is_an_error_not_a_panic() {
        let doc = document("amdgcn-amd-amdhsa--gfx1250");
        for len in 0..doc.len() {
            assert!(
                decode_document(&doc[..len]).is_err(),
                "prefix of {len} bytes"
            );
        }
    }

    #[test]
    fn string_length_past_the_end_is_refused() {
        // amdhsa.target claims 200 bytes (str8) but the document ends.
        let mut d = vec![0x81, 0xad];
        d.extend_from_slice(b"amdhsa.target");
        d.extend_from_slice(&[0xd9, 200, b'g', b'f', b'x']);
        assert_eq!(decode_document(&d), Err(TRUNCATED));
    }

    #[test]
    fn absurd_counts_are_bounded_by_the_document() {
        // A map32 claiming 4 billion entries, then nothing.
        assert!(decode_document(&[0xdf, 0xff, 0xff, 0xff, 0xff]).is_err());
        // An unknown key whose value is an array32 of 4 billion elements.
        let mut d = vec![0x81, 0xa1, b'x', 0xdd, 0xff, 0xff, 0xff, 0xff];
        d.extend_from_slice(&[0xc0; 16]);
        assert!(decode_document(&d).is_err());
        // Deep nesting.
        let mut d = vec![0x81, 0xa1, b'x'];
        d.extend_from_slice(&[0x91; 1000]);
        assert_eq!(
            decode_document(&d),
            Err(MetadataError::Msgpack("nested too deeply"))
        );
    }

    #[test]
    fn no_string_scan_over_reads() {
        // The target string is followed directly by a key; a NUL-terminated
        // reader would absorb it.
        let m = decode_document(&document("amdgcn-amd-amdhsa--gfx942:xnack-")).unwrap();
        assert_eq!(
            m.target.as_deref(),
            Some("amdgcn-amd-amdhsa--gfx942:xnack-")
        );
    }
}

#[cfg(test)]
mod object_tests {
    use super::*;

    static PROBE: &[u8] = crate::GFX1250_PROBE;

    /// Offset of the AMDGPU metadata note's header inside the probe object.
    fn metadata_note_offset() -> usize {
        PROBE
            .windows(16)
            .position(|w| {
                w[..4] == 7u32.to_le_bytes()
                    && w[8..12] == 32u32.to_le_bytes()
                    && &w[12..16] == b"AMDG"
            })
            .expect("the probe has an AMDGPU metadata note")
    }

    #[test]
    fn reads_a_real_object() {
        let m = read(PROBE).unwrap();
        assert_eq!(m.target.as_deref(), Some("amdgcn-amd-amdhsa--gfx1250"));
        assert!(m.version.is_some());
        assert_eq!(m.kernels.len(), 1);
    }

    #[test]
    fn corrupt_note_sizes_are_errors() {
        let at = metadata_note_offset();
        for descsz in [u32::MAX, 0x7fff_ffff, 1 << 20] {
            let mut o = PROBE.to_vec();
            o[at + 4..at + 8].copy_from_slice(&descsz.to_le_bytes());
            assert_eq!(
                read(&o),
                Err(MetadataError::Note(NoteError::NoteOutOfBounds))
            );
        }
        // A descriptor one byte short: the document is truncated, never over-read.
        let mut o = PROBE.to_vec();
        let descsz = u32::from_le_bytes(o[at + 4..at + 8].try_into().unwrap());
        o[at + 4..at + 8].copy_from_slice(&(descsz - 1).to_le_bytes());
        assert!(matches!(read(&o), Err(MetadataError::Msgpack(_))));
    }

    #[test]
    fn object_without_metadata() {
        let mut o = PROBE.to_vec();
        let at = metadata_note_offset();
        o[at + 8] = 33; // another note type
        assert_eq!(read(&o), Err(MetadataError::Missing));
    }
}
