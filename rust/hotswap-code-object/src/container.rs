//! Every code object in a byte buffer: a bare AMDGPU ELF; a clang offload
//! bundle; a compressed offload bundle (`CCOB`, versions 2 and 3, zlib or
//! zstd); or a host ELF (executable or shared library) whose `.hip_fatbin`
//! section holds one or more of those bundles, possibly padded apart.
//!
//! Formats (facts from clang's `clang/lib/Driver/OffloadBundler.cpp`, LLVM
//! project; described here, not copied):
//! - offload bundle: the 24-byte magic `__CLANG_OFFLOAD_BUNDLE__`, a u64 entry
//!   count, then per entry a u64 offset (from the bundle's start), a u64 size,
//!   a u64 id length and the id (`hipv4-amdgcn-amd-amdhsa--gfx1250`,
//!   `host-x86_64-unknown-linux-gnu-`...); all little-endian;
//! - compressed bundle: the magic `CCOB`, a u16 version, a u16 method
//!   (0 zlib, 1 zstd, LLVM's `compression::Format`), then version 2: u32 total
//!   size, u32 uncompressed size, u64 hash; version 3: u64 total size, u64
//!   uncompressed size, u64 hash (version 1 has no total size and is refused
//!   here: its end cannot be bounded). The compressed stream follows the header;
//!   the total size counts the header. The decompressed bytes are an offload
//!   bundle. The hash (the low 64 bits of an MD5 of the decompressed bytes) is
//!   not checked: clang itself checks it only in verbose mode.
//!
//! Bounds: every offset and size is checked against the buffer; decompression
//! stops at [`Limits::max_decompressed`] bytes (256 MiB by default) and must
//! produce exactly the size the header states. Malformed input gives a
//! [`ContainerError`], never a panic; an error in one bundle does not hide the
//! others.

use std::borrow::Cow;
use std::io::Read;

use crate::elf::{self, Header};
use crate::isa::EM_AMDGPU;

/// The magic of an offload bundle.
pub const BUNDLE_MAGIC: &[u8; 24] = b"__CLANG_OFFLOAD_BUNDLE__";
/// The magic of a compressed offload bundle.
pub const CCOB_MAGIC: &[u8; 4] = b"CCOB";
/// The name of the host ELF section holding HIP fat binaries.
pub const HIP_FATBIN_SECTION: &[u8] = b".hip_fatbin";

/// The compression of a `CCOB`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Compression {
    /// zlib (method 0).
    Zlib,
    /// Zstandard (method 1).
    Zstd,
}

/// Where a code object was found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// The whole input is the code object.
    Bare,
    /// An entry of an uncompressed offload bundle.
    Bundle,
    /// An entry of a compressed offload bundle.
    CompressedBundle {
        /// The `CCOB` version (2 or 3).
        version: u16,
        /// Its compression.
        compression: Compression,
    },
}

/// One code object found in the input.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Found<'a> {
    /// How it is contained.
    pub kind: Kind,
    /// Whether it came from a host ELF's `.hip_fatbin` section.
    pub in_host_elf: bool,
    /// The bundle entry id (`None` for a bare code object).
    pub bundle_id: Option<String>,
    /// Offset in the input of the bundle (or `CCOB`) holding it, or of the code
    /// object itself when bare.
    pub container_offset: u64,
    /// Offset in the input of the code object's bytes (`None` when compressed).
    pub offset: Option<u64>,
    /// The code object's bytes: borrowed from the input, or owned when
    /// decompressed.
    pub bytes: Cow<'a, [u8]>,
}

/// Why (part of) the input could not be read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ContainerError {
    /// Not a code object, bundle, compressed bundle or ELF.
    NotAContainer,
    /// A host ELF that is not readable.
    BadElf(&'static str),
    /// A host ELF without a readable `.hip_fatbin` section.
    NoFatbinSection,
    /// A bundle header or entry table cut short (offset of the bundle).
    BundleTruncated(u64),
    /// A bundle entry pointing outside the bundle's bytes (bundle offset, entry index).
    BundleEntryOutOfBounds(u64, u64),
    /// A compressed bundle header cut short.
    CcobTruncated(u64),
    /// A compressed bundle version other than 2 and 3.
    CcobUnsupportedVersion(u64, u16),
    /// A compressed bundle method other than zlib and zstd.
    CcobUnknownMethod(u64, u16),
    /// A compressed bundle whose total size is smaller than its header or runs
    /// past the end of the input.
    CcobBadSize(u64),
    /// A stated uncompressed size above [`Limits::max_decompressed`].
    CcobTooLarge(u64, u64),
    /// The compressed stream is corrupt, or decompresses to a size other than
    /// the one stated.
    CcobDecompression(u64, String),
}

impl std::fmt::Display for ContainerError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::NotAContainer => {
                f.write_str("not a code object, offload bundle, compressed bundle or ELF")
            }
            Self::BadElf(why) => write!(f, "unreadable host ELF: {why}"),
            Self::NoFatbinSection => f.write_str("host ELF without a .hip_fatbin section"),
            Self::BundleTruncated(at) => write!(f, "offload bundle at {at:#x}: truncated header"),
            Self::BundleEntryOutOfBounds(at, i) => {
                write!(
                    f,
                    "offload bundle at {at:#x}: entry {i} lies outside the bundle"
                )
            }
            Self::CcobTruncated(at) => write!(f, "compressed bundle at {at:#x}: truncated header"),
            Self::CcobUnsupportedVersion(at, v) => {
                write!(f, "compressed bundle at {at:#x}: unsupported version {v}")
            }
            Self::CcobUnknownMethod(at, m) => {
                write!(
                    f,
                    "compressed bundle at {at:#x}: unknown compression method {m}"
                )
            }
            Self::CcobBadSize(at) => {
                write!(
                    f,
                    "compressed bundle at {at:#x}: total size outside the input"
                )
            }
            Self::CcobTooLarge(at, size) => write!(
                f,
                "compressed bundle at {at:#x}: uncompressed size {size} above the limit"
            ),
            Self::CcobDecompression(at, why) => {
                write!(f, "compressed bundle at {at:#x}: {why}")
            }
        }
    }
}

impl std::error::Error for ContainerError {}

/// Bounds on what reading a container may cost.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// The largest uncompressed size a `CCOB` may state (and produce).
    pub max_decompressed: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_decompressed: 256 << 20,
        }
    }
}

/// What the input holds.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Contents<'a> {
    /// Every non-empty code object (bundle entries of every target, including
    /// host entries when they have bytes), in input order.
    pub objects: Vec<Found<'a>>,
    /// What could not be read; the objects found elsewhere are still listed.
    pub errors: Vec<ContainerError>,
}

/// [`find_with`] with the default [`Limits`].
pub fn find(input: &[u8]) -> Contents<'_> {
    find_with(input, Limits::default())
}

/// Finds every code object in `input`: bare AMDGPU ELF, offload bundle(s),
/// compressed bundle(s), or a host ELF's `.hip_fatbin` section.
pub fn find_with(input: &[u8], limits: Limits) -> Contents<'_> {
    let mut contents = Contents::default();
    if input.starts_with(BUNDLE_MAGIC) || input.starts_with(CCOB_MAGIC) {
        scan(input, 0, false, limits, &mut contents);
        return contents;
    }
    if !input.starts_with(b"\x7fELF") {
        contents.errors.push(ContainerError::NotAContainer);
        return contents;
    }
    let header = match Header::parse(input) {
        Ok(h) => h,
        Err(e) => {
            contents.errors.push(ContainerError::BadElf(e.reason()));
            return contents;
        }
    };
    if header.machine == EM_AMDGPU {
        contents.objects.push(Found {
            kind: Kind::Bare,
            in_host_elf: false,
            bundle_id: None,
            container_offset: 0,
            offset: Some(0),
            bytes: Cow::Borrowed(input),
        });
        return contents;
    }
    let fatbin = header
        .sections(input)
        .into_iter()
        .find(|s| s.name == HIP_FATBIN_SECTION && s.sh_type != elf::SHT_NOBITS);
    let Some((section, offset)) = fatbin.and_then(|s| Some((s.data(input)?, s.offset))) else {
        contents.errors.push(ContainerError::NoFatbinSection);
        return contents;
    };
    scan(section, offset, true, limits, &mut contents);
    contents
}

/// Reads every bundle and compressed bundle in `region` (at `base` in the
/// input), skipping whatever lies between them.
fn scan<'a>(region: &'a [u8], base: u64, host: bool, limits: Limits, out: &mut Contents<'a>) {
    let mut at = 0usize;
    while let Some(start) = next_magic(region, at) {
        let abs = base + start as u64;
        let rest = &region[start..];
        let end = if rest.starts_with(BUNDLE_MAGIC) {
            match read_bundle(rest, abs) {
                Ok((entries, extent)) => {
                    for (id, offset, size) in entries {
                        out.objects.push(Found {
                            kind: Kind::Bundle,
                            in_host_elf: host,
                            bundle_id: Some(id),
                            container_offset: abs,
                            offset: Some(abs + offset as u64),
                            bytes: Cow::Borrowed(&rest[offset..offset + size]),
                        });
                    }
                    Some(extent)
                }
                Err(e) => {
                    out.errors.push(e);
                    None
                }
            }
        } else {
            match read_ccob(rest, abs, limits) {
                Ok((kind, bundle, extent)) => {
                    match read_bundle(&bundle, abs) {
                        Ok((entries, _)) => {
                            for (id, offset, size) in entries {
                                out.objects.push(Found {
                                    kind,
                                    in_host_elf: host,
                                    bundle_id: Some(id),
                                    container_offset: abs,
                                    offset: None,
                                    bytes: Cow::Owned(bundle[offset..offset + size].to_vec()),
                                });
                            }
                        }
                        Err(e) => out.errors.push(e),
                    }
                    Some(extent)
                }
                Err(e) => {
                    out.errors.push(e);
                    // Past the stated total size when it is plausible: the
                    // compressed stream may hold bytes that look like a magic.
                    ccob_extent(rest)
                }
            }
        };
        // After a readable container, go on past its end; after an error, past its magic.
        at = start + end.unwrap_or(4).max(4);
    }
}

/// The offset of the next bundle or `CCOB` magic at or after `from`.
fn next_magic(region: &[u8], from: usize) -> Option<usize> {
    let rest = region.get(from..)?;
    (0..rest.len())
        .find(|&i| rest[i..].starts_with(CCOB_MAGIC) || rest[i..].starts_with(BUNDLE_MAGIC))
        .map(|i| from + i)
}

/// The total size a `CCOB` v2/v3 header states, if it lies within `ccob`.
fn ccob_extent(ccob: &[u8]) -> Option<usize> {
    let (header_len, total) = match elf::u16_at(ccob, 4)? {
        2 => (24, u64::from(elf::u32_at(ccob, 8)?)),
        3 => (32, elf::u64_at(ccob, 8)?),
        _ => return None,
    };
    usize::try_from(total)
        .ok()
        .filter(|&t| t >= header_len && t <= ccob.len())
}

/// A bundle's entries (id, offset, size), non-empty ones only, and its extent
/// (the end of its header or of its last entry, whichever is further).
#[allow(clippy::type_complexity)]
fn read_bundle(
    bundle: &[u8],
    abs: u64,
) -> Result<(Vec<(String, usize, usize)>, usize), ContainerError> {
    let truncated = ContainerError::BundleTruncated(abs);
    let count = elf::u64_at(bundle, 24).ok_or(truncated.clone())?;
    let mut at = 32usize;
    let mut extent = at;
    let mut entries = Vec::new();
    for i in 0..count {
        // Each entry takes at least 24 bytes: a count beyond that is a lie.
        let offset = elf::u64_at(bundle, at).ok_or(truncated.clone())?;
        let size = elf::u64_at(bundle, at + 8).ok_or(truncated.clone())?;
        let id_len = elf::u64_at(bundle, at + 16).ok_or(truncated.clone())?;
        let id = elf::range(bundle, at as u64 + 24, id_len).ok_or(truncated.clone())?;
        at += 24 + id.len();
        let end = offset
            .checked_add(size)
            .filter(|&end| end <= bundle.len() as u64)
            .ok_or(ContainerError::BundleEntryOutOfBounds(abs, i))?;
        extent = extent.max(end as usize);
        if size != 0 {
            entries.push((
                String::from_utf8_lossy(id).into_owned(),
                offset as usize,
                size as usize,
            ));
        }
    }
    Ok((entries, extent.max(at)))
}

/// Decompresses the `CCOB` at the start of `ccob`: its kind, the bundle it
/// holds, and its total size.
fn read_ccob(
    ccob: &[u8],
    abs: u64,
    limits: Limits,
) -> Result<(Kind, Vec<u8>, usize), ContainerError> {
    let truncated = ContainerError::CcobTruncated(abs);
    let version = elf::u16_at(ccob, 4).ok_or(truncated.clone())?;
    let method = elf::u16_at(ccob, 6).ok_or(truncated.clone())?;
    let (header_len, total, uncompressed) = match version {
        2 => (
            24u64,
            u64::from(elf::u32_at(ccob, 8).ok_or(truncated.clone())?),
            u64::from(elf::u32_at(ccob, 12).ok_or(truncated.clone())?),
        ),
        3 => (
            32u64,
            elf::u64_at(ccob, 8).ok_or(truncated.clone())?,
            elf::u64_at(ccob, 16).ok_or(truncated.clone())?,
        ),
        v => return Err(ContainerError::CcobUnsupportedVersion(abs, v)),
    };
    if (ccob.len() as u64) < header_len {
        return Err(truncated);
    }
    let compression = match method {
        0 => Compression::Zlib,
        1 => Compression::Zstd,
        m => return Err(ContainerError::CcobUnknownMethod(abs, m)),
    };
    if total < header_len || total > ccob.len() as u64 {
        return Err(ContainerError::CcobBadSize(abs));
    }
    if uncompressed > limits.max_decompressed {
        return Err(ContainerError::CcobTooLarge(abs, uncompressed));
    }
    let data = &ccob[header_len as usize..total as usize];
    let cap = uncompressed as usize;
    let out = match compression {
        Compression::Zlib => miniz_oxide::inflate::decompress_to_vec_zlib_with_limit(data, cap)
            .map_err(|e| ContainerError::CcobDecompression(abs, format!("zlib: {:?}", e.status)))?,
        Compression::Zstd => {
            let mut source = data;
            let decoder = ruzstd::decoding::StreamingDecoder::new(&mut source)
                .map_err(|e| ContainerError::CcobDecompression(abs, format!("zstd: {e}")))?;
            let mut out = Vec::with_capacity(cap.min(64 << 20));
            // One byte more than stated, to notice a stream that is longer.
            decoder
                .take(uncompressed + 1)
                .read_to_end(&mut out)
                .map_err(|e| ContainerError::CcobDecompression(abs, format!("zstd: {e}")))?;
            out
        }
    };
    if out.len() as u64 != uncompressed {
        return Err(ContainerError::CcobDecompression(
            abs,
            format!(
                "decompressed to {} bytes, header says {uncompressed}",
                out.len()
            ),
        ));
    }
    let kind = Kind::CompressedBundle {
        version,
        compression,
    };
    Ok((kind, out, total as usize))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::GFX1250_PROBE;

    const HOST_ID: &str = "host-x86_64-unknown-linux-gnu-";
    const DEVICE_ID: &str = "hipv4-amdgcn-amd-amdhsa--gfx1250";

    /// An uncompressed bundle: an empty host entry and `objects` (id, bytes),
    /// each entry's bytes 8-aligned after the header, as clang lays them out.
    fn bundle(objects: &[(&str, &[u8])]) -> Vec<u8> {
        let entries: Vec<(&str, &[u8])> = std::iter::once((HOST_ID, &[][..]))
            .chain(objects.iter().copied())
            .collect();
        let header_len: usize = 32 + entries.iter().map(|(id, _)| 24 + id.len()).sum::<usize>();
        let mut data_at = header_len.next_multiple_of(8);
        let mut out = Vec::new();
        out.extend_from_slice(BUNDLE_MAGIC);
        out.extend_from_slice(&(entries.len() as u64).to_le_bytes());
        let mut layout = Vec::new();
        for (id, bytes) in &entries {
            let offset = if bytes.is_empty() { 0 } else { data_at };
            out.extend_from_slice(&(offset as u64).to_le_bytes());
            out.extend_from_slice(&(bytes.len() as u64).to_le_bytes());
            out.extend_from_slice(&(id.len() as u64).to_le_bytes());
            out.extend_from_slice(id.as_bytes());
            if !bytes.is_empty() {
                layout.push((offset, *bytes));
                data_at = (data_at + bytes.len()).next_multiple_of(8);
            }
        }
        for (offset, bytes) in layout {
            out.resize(offset, 0);
            out.extend_from_slice(bytes);
        }
        out
    }

    /// A compressed bundle of `inner` (an uncompressed bundle).
    fn ccob(version: u16, compression: Compression, inner: &[u8]) -> Vec<u8> {
        let data = match compression {
            Compression::Zlib => miniz_oxide::deflate::compress_to_vec_zlib(inner, 6),
            Compression::Zstd => ruzstd::encoding::compress_to_vec(
                inner,
                ruzstd::encoding::CompressionLevel::Fastest,
            ),
        };
        let method: u16 = match compression {
            Compression::Zlib => 0,
            Compression::Zstd => 1,
        };
        let mut out = Vec::new();
        out.extend_from_slice(CCOB_MAGIC);
        out.extend_from_slice(&version.to_le_bytes());
        out.extend_from_slice(&method.to_le_bytes());
        if version == 2 {
            out.extend_from_slice(&((24 + data.len()) as u32).to_le_bytes());
            out.extend_from_slice(&(inner.len() as u32).to_le_bytes());
        } else {
            out.extend_from_slice(&((32 + data.len()) as u64).to_le_bytes());
            out.extend_from_slice(&(inner.len() as u64).to_le_bytes());
        }
        out.extend_from_slice(&0x1234_5678_9abc_def0u64.to_le_bytes()); // hash, unchecked
        out.extend_from_slice(&data);
        out
    }

    /// A minimal x86-64 host ELF with a `.hip_fatbin` section holding `fatbin`.
    fn host_elf(fatbin: &[u8]) -> Vec<u8> {
        let names = b"\0.shstrtab\0.hip_fatbin\0";
        let mut out = vec![0u8; 64];
        out[..4].copy_from_slice(b"\x7fELF");
        out[4] = 2;
        out[5] = 1;
        out[6] = 1;
        out[16..18].copy_from_slice(&3u16.to_le_bytes()); // ET_DYN
        out[18..20].copy_from_slice(&62u16.to_le_bytes()); // EM_X86_64
        let fatbin_at = 0x1000usize;
        out.resize(fatbin_at, 0);
        out.extend_from_slice(fatbin);
        let names_at = out.len();
        out.extend_from_slice(names);
        while out.len() % 8 != 0 {
            out.push(0);
        }
        let shoff = out.len();
        let sh = |name: u32, sh_type: u32, offset: usize, size: usize| {
            let mut s = [0u8; 64];
            s[..4].copy_from_slice(&name.to_le_bytes());
            s[4..8].copy_from_slice(&sh_type.to_le_bytes());
            s[24..32].copy_from_slice(&(offset as u64).to_le_bytes());
            s[32..40].copy_from_slice(&(size as u64).to_le_bytes());
            s
        };
        let table = [
            sh(0, 0, 0, 0),
            sh(1, 3, names_at, names.len()),
            sh(11, 1, fatbin_at, fatbin.len()),
        ];
        for s in table {
            out.extend_from_slice(&s);
        }
        out[40..48].copy_from_slice(&(shoff as u64).to_le_bytes());
        out[58..60].copy_from_slice(&64u16.to_le_bytes());
        out[60..62].copy_from_slice(&3u16.to_le_bytes());
        out[62..64].copy_from_slice(&1u16.to_le_bytes());
        out
    }

    fn ids(contents: &Contents<'_>) -> Vec<(Kind, String, usize)> {
        contents
            .objects
            .iter()
            .map(|f| {
                (
                    f.kind,
                    f.bundle_id.clone().unwrap_or_default(),
                    f.bytes.len(),
                )
            })
            .collect()
    }

    #[test]
    fn bare_code_object() {
        let c = find(GFX1250_PROBE);
        assert!(c.errors.is_empty());
        assert_eq!(c.objects.len(), 1);
        assert_eq!(c.objects[0].kind, Kind::Bare);
        assert_eq!(&*c.objects[0].bytes, GFX1250_PROBE);
    }

    #[test]
    fn uncompressed_bundle() {
        let b = bundle(&[
            (DEVICE_ID, GFX1250_PROBE),
            ("hipv4-amdgcn-amd-amdhsa--gfx942", b"other"),
        ]);
        let c = find(&b);
        assert!(c.errors.is_empty(), "{:?}", c.errors);
        assert_eq!(
            ids(&c),
            vec![
                (Kind::Bundle, DEVICE_ID.to_string(), GFX1250_PROBE.len()),
                (
                    Kind::Bundle,
                    "hipv4-amdgcn-amd-amdhsa--gfx942".to_string(),
                    5
                )
            ]
        );
        assert_eq!(&*c.objects[0].bytes, GFX1250_PROBE);
        let at = c.objects[0].offset.unwrap() as usize;
        assert_eq!(&b[at..at + GFX1250_PROBE.len()], GFX1250_PROBE);
    }

    #[test]
    fn compressed_bundles_v2_v3_zlib_zstd() {
        let inner = bundle(&[(DEVICE_ID, GFX1250_PROBE)]);
        for version in [2, 3] {
            for compression in [Compression::Zlib, Compression::Zstd] {
                let input = ccob(version, compression, &inner);
                let c = find(&input);
                assert!(
                    c.errors.is_empty(),
                    "{version} {compression:?}: {:?}",
                    c.errors
                );
                assert_eq!(c.objects.len(), 1);
                assert_eq!(
                    c.objects[0].kind,
                    Kind::CompressedBundle {
                        version,
                        compression
                    }
                );
                assert_eq!(&*c.objects[0].bytes, GFX1250_PROBE);
            }
        }
    }

    #[test]
    fn host_elf_with_padded_bundles() {
        let plain = bundle(&[(DEVICE_ID, GFX1250_PROBE)]);
        let zstd = ccob(3, Compression::Zstd, &plain);
        let zlib = ccob(2, Compression::Zlib, &plain);
        let mut fatbin = plain.clone();
        fatbin.resize(fatbin.len().next_multiple_of(4096), 0);
        fatbin.extend_from_slice(&zstd);
        fatbin.resize(fatbin.len() + 100, 0);
        fatbin.extend_from_slice(&zlib);
        let elf = host_elf(&fatbin);
        let c = find(&elf);
        assert!(c.errors.is_empty(), "{:?}", c.errors);
        assert_eq!(c.objects.len(), 3);
        assert!(c
            .objects
            .iter()
            .all(|f| f.in_host_elf && &*f.bytes == GFX1250_PROBE));
        assert_eq!(c.objects[0].container_offset, 0x1000);
    }

    #[test]
    fn container_errors() {
        assert_eq!(find(b"garbage").errors, vec![ContainerError::NotAContainer]);
        assert_eq!(
            find(&host_elf(b"")[..70]).errors,
            vec![ContainerError::BadElf(
                "section header table outside the object"
            )]
        );
        let mut no_fatbin = host_elf(b"xx");
        let name_at = no_fatbin
            .windows(11)
            .position(|w| w == b".hip_fatbin")
            .unwrap();
        no_fatbin[name_at + 1] = b'X';
        assert_eq!(
            find(&no_fatbin).errors,
            vec![ContainerError::NoFatbinSection]
        );

        let b = bundle(&[(DEVICE_ID, GFX1250_PROBE)]);
        assert_eq!(
            find(&b[..30]).errors,
            vec![ContainerError::BundleTruncated(0)]
        );
        let mut lying = b.clone();
        lying[24..32].copy_from_slice(&u64::MAX.to_le_bytes());
        assert_eq!(
            find(&lying).errors,
            vec![ContainerError::BundleTruncated(0)]
        );
        let mut outside = b.clone();
        // The device entry's size (second entry: 32 + 24 + host id, then offset, size).
        let size_at = 32 + 24 + HOST_ID.len() + 8;
        outside[size_at..size_at + 8].copy_from_slice(&u64::MAX.to_le_bytes());
        assert_eq!(
            find(&outside).errors,
            vec![ContainerError::BundleEntryOutOfBounds(0, 1)]
        );

        let z = ccob(3, Compression::Zstd, &b);
        assert_eq!(
            find(&z[..20]).errors,
            vec![ContainerError::CcobTruncated(0)]
        );
        let mut v1 = z.clone();
        v1[4] = 1;
        // Version 1 states no total size: the scan goes on inside its stream.
        assert_eq!(
            find(&v1).errors[0],
            ContainerError::CcobUnsupportedVersion(0, 1)
        );
        let mut method = z.clone();
        method[6] = 7;
        assert_eq!(
            find(&method).errors,
            vec![ContainerError::CcobUnknownMethod(0, 7)]
        );
        let mut size = z.clone();
        size[8..16].copy_from_slice(&(z.len() as u64 + 1).to_le_bytes());
        assert_eq!(find(&size).errors[0], ContainerError::CcobBadSize(0));
        let small = Limits {
            max_decompressed: 100,
        };
        assert_eq!(
            find_with(&z, small).errors,
            vec![ContainerError::CcobTooLarge(0, b.len() as u64)]
        );
        let mut stated = z.clone();
        stated[16..24].copy_from_slice(&(b.len() as u64 - 1).to_le_bytes());
        assert!(matches!(
            find(&stated).errors[..],
            [ContainerError::CcobDecompression(0, _)]
        ));
        let mut corrupt = ccob(2, Compression::Zlib, &b);
        let n = corrupt.len();
        corrupt[30..n - 8].fill(0xA5);
        assert!(matches!(
            find(&corrupt).errors[..],
            [ContainerError::CcobDecompression(0, _)]
        ));
    }

    #[test]
    fn one_bad_bundle_does_not_hide_the_next() {
        let good = bundle(&[(DEVICE_ID, GFX1250_PROBE)]);
        let mut bad = ccob(3, Compression::Zstd, &good);
        bad[6] = 9;
        let mut fatbin = bad;
        fatbin.extend_from_slice(&good);
        let elf = host_elf(&fatbin);
        let c = find(&elf);
        assert_eq!(c.errors, vec![ContainerError::CcobUnknownMethod(0x1000, 9)]);
        assert_eq!(c.objects.len(), 1);
    }
}
