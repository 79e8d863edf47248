//! The AMDGPU metadata note (`NT_AMDGPU_METADATA`, owner `AMDGPU`, type 32): one
//! MessagePack map, decoded with `rmp` and bounded by the note's descriptor size.
//!
//! Never a byte scan: MessagePack strings are length-prefixed and not
//! NUL-terminated, so searching for `"amdgcn-amd-amdhsa"` and reading to a NUL
//! runs into the following keys (upstream's Gen-1 bug). Every length here comes
//! from a decoded prefix and is checked against the bytes that remain.

use rmp::decode;

use crate::elf::{self, ElfError, Header, NoteError};

/// Owner name of AMDGPU v3+ notes.
const NOTE_OWNER: &[u8] = b"AMDGPU";
/// `NT_AMDGPU_METADATA`.
const NT_AMDGPU_METADATA: u32 = 32;
/// Nesting deeper than this is refused (real metadata nests 3 to 4 levels).
const MAX_DEPTH: u32 = 32;

/// What this library reads from the metadata; its strings are borrowed from
/// the document (checked to be UTF-8), not copied.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Metadata<'a> {
    /// `amdhsa.version`, e.g. `[1, 2]`.
    pub version: Option<(u64, u64)>,
    /// `amdhsa.target`, e.g. `amdgcn-amd-amdhsa--gfx1250`.
    pub target: Option<&'a str>,
    /// `amdhsa.kernels`, in order.
    pub kernels: Vec<Kernel<'a>>,
}

/// One entry of `amdhsa.kernels`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Kernel<'a> {
    /// `.name`.
    pub name: Option<&'a str>,
    /// `.symbol`, the kernel descriptor's symbol (`<name>.kd`).
    pub symbol: Option<&'a str>,
    /// `.gfx1250_revision` (`A0`, `B0`) when the producer wrote one.
    pub gfx1250_revision: Option<&'a str>,
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
pub fn read(code_object: &[u8]) -> Result<Metadata<'_>, MetadataError> {
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
pub fn decode_document(desc: &[u8]) -> Result<Metadata<'_>, MetadataError> {
    let mut rd = desc;
    let mut metadata = Metadata::default();
    let entries = map_len(&mut rd)?;
    for _ in 0..entries {
        let key = key(&mut rd)?;
        match key {
            b"amdhsa.target" => metadata.target = Some(string(&mut rd)?),
            b"amdhsa.version" => {
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
            b"amdhsa.kernels" => {
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

fn kernel<'a>(rd: &mut &'a [u8]) -> Result<Kernel<'a>, MetadataError> {
    let mut kernel = Kernel::default();
    for _ in 0..map_len(rd)? {
        match key(rd)? {
            b".name" => kernel.name = Some(string(rd)?),
            b".symbol" => kernel.symbol = Some(string(rd)?),
            b".gfx1250_revision" => kernel.gfx1250_revision = Some(string(rd)?),
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
    std::str::from_utf8(string_bytes(rd)?).map_err(|_| NOT_UTF8)
}

/// A map key: a [`string`], as bytes (compared with the keys this module
/// reads), checked to be UTF-8 all the same.
fn key<'a>(rd: &mut &'a [u8]) -> Result<&'a [u8], MetadataError> {
    let bytes = string_bytes(rd)?;
    if !bytes.is_ascii() {
        std::str::from_utf8(bytes).map_err(|_| NOT_UTF8)?;
    }
    Ok(bytes)
}

const NOT_UTF8: MetadataError = MetadataError::Msgpack("string is not UTF-8");

/// The bytes of a string (fixstr, str8, str16, str32).
fn string_bytes<'a>(rd: &mut &'a [u8]) -> Result<&'a [u8], MetadataError> {
    const NOT_A_STRING: MetadataError = MetadataError::Msgpack("expected a string");
    let (&marker, rest) = rd.split_first().ok_or(NOT_A_STRING)?;
    let field = match marker {
        0xa0..=0xbf => 0,
        0xd9 => 1,
        0xda => 2,
        0xdb => 4,
        _ => return Err(NOT_A_STRING),
    };
    let (len, rest) = match rest.split_at_checked(field) {
        Some((len, rest)) if field > 0 => (big_endian(len), rest),
        Some(_) => (u64::from(marker & 0x1f), rest),
        None => return Err(NOT_A_STRING),
    };
    *rd = rest;
    take(rd, len)
}

/// A big-endian length field of up to 8 bytes.
fn big_endian(field: &[u8]) -> u64 {
    field.iter().fold(0u64, |v, &b| v << 8 | u64::from(b))
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
///
/// Most of a document is skipped here, one value after the other (where a value
/// starts depends on the one before it): the formats LLVM writes most (fixstr,
/// fixint, fixmap, fixarray) are tested first, by a branch each, and the
/// position is an index, so that the next value's marker is read as soon as
/// the last one's length is known.
fn skip(rd: &mut &[u8], depth: u32) -> Result<(), MetadataError> {
    // Most skipped values are scalars or short strings: skipped without the
    // stack of pending counts below (whose zeroing would cost more than the
    // value itself).
    if depth <= MAX_DEPTH {
        let leaf = match rd.first() {
            Some(0x00..=0x7f | 0xe0..=0xff | 0xc0 | 0xc2 | 0xc3) => Some(1),
            Some(&m @ 0xa0..=0xbf) => Some(1 + usize::from(m & 0x1f)),
            _ => None,
        };
        if let Some(len) = leaf {
            *rd = rd.get(len..).ok_or(TRUNCATED)?;
            return Ok(());
        }
    }
    const LEVELS: usize = MAX_DEPTH as usize + 2;
    let doc = *rd;
    let mut at = 0usize;
    let mut pending = [0u64; LEVELS];
    pending[0] = 1;
    let mut top = 0usize;
    loop {
        while pending[top] == 0 {
            if top == 0 {
                *rd = &doc[at..];
                return Ok(());
            }
            top -= 1;
        }
        pending[top] -= 1;
        if depth + top as u32 > MAX_DEPTH {
            return Err(MetadataError::Msgpack("nested too deeply"));
        }
        let &marker = doc.get(at).ok_or(TRUNCATED)?;
        at += 1;
        let children = match marker {
            0xa0..=0xbf => {
                at += usize::from(marker & 0x1f);
                if at > doc.len() {
                    return Err(TRUNCATED);
                }
                0
            }
            0x00..=0x7f | 0xe0..=0xff => 0,
            0x80..=0x8f => 2 * u64::from(marker & 0x0f),
            0x90..=0x9f => u64::from(marker & 0x0f),
            _ => {
                let mut rest = &doc[at..];
                let (bytes, children) = value_shape(marker, &mut rest)?;
                take(&mut rest, bytes)?;
                at = doc.len() - rest.len();
                children
            }
        };
        if children != 0 {
            // depth + top <= MAX_DEPTH here, so top + 1 < LEVELS.
            top += 1;
            pending[top] = children;
        }
    }
}

/// Consumes the length field of the value whose marker was just read: the
/// bytes of its payload and its number of child values.
fn value_shape(marker: u8, rd: &mut &[u8]) -> Result<(u64, u64), MetadataError> {
    let mut len = |n: u64| -> Result<u64, MetadataError> { Ok(big_endian(take(rd, n)?)) };
    Ok(match marker {
        // positive and negative fixint, nil, false, true
        0x00..=0x7f | 0xe0..=0xff | 0xc0 | 0xc2 | 0xc3 => (0, 0),
        0x80..=0x8f => (0, 2 * u64::from(marker & 0x0f)),
        0x90..=0x9f => (0, u64::from(marker & 0x0f)),
        0xa0..=0xbf => (u64::from(marker & 0x1f), 0),
        0xc1 => return Err(MetadataError::Msgpack("reserved marker 0xc1")),
        // uint and int 8, 16, 32, 64; float 32, 64
        0xcc | 0xd0 => (1, 0),
        0xcd | 0xd1 => (2, 0),
        0xce | 0xd2 | 0xca => (4, 0),
        0xcf | 0xd3 | 0xcb => (8, 0),
        // str and bin 8, 16, 32
        0xd9 | 0xc4 => (len(1)?, 0),
        0xda | 0xc5 => (len(2)?, 0),
        0xdb | 0xc6 => (len(4)?, 0),
        // fixext 1, 2, 4, 8, 16 and ext 8, 16, 32: the type byte and the data
        0xd4 => (2, 0),
        0xd5 => (3, 0),
        0xd6 => (5, 0),
        0xd7 => (9, 0),
        0xd8 => (17, 0),
        0xc7 => (len(1)? + 1, 0),
        0xc8 => (len(2)? + 1, 0),
        0xc9 => (len(4)? + 1, 0),
        // array 16, 32; map 16, 32
        0xdc => (0, len(2)?),
        0xdd => (0, len(4)?),
        0xde => (0, 2 * len(2)?),
        0xdf => (0, 2 * len(4)?),
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
        let doc = document("amdgcn-amd-amdhsa--gfx1250");
        let m = decode_document(&doc).unwrap();
        assert_eq!(m.target, Some("amdgcn-amd-amdhsa--gfx1250"));
        assert_eq!(m.version, Some((1, 2)));
        assert_eq!(m.kernels.len(), 1);
        assert_eq!(m.kernels[0].name, Some("k"));
        assert_eq!(m.kernels[0].symbol, Some("k.kd"));
        assert_eq!(m.kernels[0].gfx1250_revision, Some("B0"));
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

    /// One value of every MessagePack format, each skipped to its exact end.
    #[test]
    fn skip_sizes_every_format() {
        use rmp::encode::*;
        let mut values: Vec<Vec<u8>> = Vec::new();
        let mut add = |f: &dyn Fn(&mut Vec<u8>)| {
            let mut v = Vec::new();
            f(&mut v);
            values.push(v);
        };
        add(&|v| write_nil(v).unwrap());
        add(&|v| write_bool(v, true).unwrap());
        add(&|v| write_pfix(v, 7).unwrap());
        add(&|v| write_nfix(v, -3).unwrap());
        add(&|v| write_u8(v, 200).unwrap());
        add(&|v| write_u16(v, 300).unwrap());
        add(&|v| write_u32(v, 70000).unwrap());
        add(&|v| write_u64(v, 1 << 40).unwrap());
        add(&|v| write_i8(v, -100).unwrap());
        add(&|v| write_i16(v, -300).unwrap());
        add(&|v| write_i32(v, -70000).unwrap());
        add(&|v| write_i64(v, -(1 << 40)).unwrap());
        add(&|v| write_f32(v, 1.5).unwrap());
        add(&|v| write_f64(v, 2.5).unwrap());
        for len in [3usize, 40, 300, 70000] {
            add(&|v| write_str(v, &"s".repeat(len)).unwrap());
            add(&|v| write_bin(v, &vec![0xc1; len]).unwrap());
            add(&|v| {
                write_ext_meta(v, len as u32, 5)
                    .map(|_| v.extend(vec![0xc1; len]))
                    .unwrap()
            });
        }
        for len in [1usize, 2, 4, 8, 16] {
            add(&|v| {
                write_ext_meta(v, len as u32, 5)
                    .map(|_| v.extend(vec![0xc1; len]))
                    .unwrap()
            });
        }
        for n in [2u32, 20, 70000] {
            add(&|v| {
                write_array_len(v, n).unwrap();
                (0..n).for_each(|_| write_str(v, "x").unwrap());
            });
            add(&|v| {
                write_map_len(v, n).unwrap();
                (0..n).for_each(|_| {
                    write_str(v, "k").unwrap();
                    write_array_len(v, 1).unwrap();
                    write_u16(v, 999).unwrap();
                });
            });
        }
        for value in &values {
            let mut doc = value.clone();
            doc.push(0x2a);
            let mut rd = &doc[..];
            skip(&mut rd, 0).unwrap();
            assert_eq!(rd, &[0x2a], "{:02x?}", &value[..value.len().min(8)]);
            // Every prefix of the small values, a few of the large ones.
            let cuts = (0..value.len().min(400)).chain([value.len() / 2, value.len() - 1]);
            for cut in cuts.filter(|&c| c < value.len()) {
                assert!(skip(&mut &value[..cut], 0).is_err(), "prefix of {cut}");
            }
        }
        assert_eq!(
            skip(&mut &[0x92, 0x01, 0xc1][..], 0),
            Err(MetadataError::Msgpack("reserved marker 0xc1"))
        );
    }

    #[test]
    fn no_string_scan_over_reads() {
        // The target string is followed directly by a key; a NUL-terminated
        // reader would absorb it.
        let doc = document("amdgcn-amd-amdhsa--gfx942:xnack-");
        let m = decode_document(&doc).unwrap();
        assert_eq!(m.target, Some("amdgcn-amd-amdhsa--gfx942:xnack-"));
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
        assert_eq!(m.target, Some("amdgcn-amd-amdhsa--gfx1250"));
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
