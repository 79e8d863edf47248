//! The on-disk form of one cache entry (no I/O, no FFI; fuzzed by
//! `fuzz/fuzz_targets/cache_entry.rs`).
//!
//! Layout (little endian), version 2 (version 1 had the same layout, with
//! keys that named the tool and backends by path; its entries are ignored):
//!
//! | offset | size | field |
//! | --- | --- | --- |
//! | 0 | 8 | magic `HSWPREW\0` |
//! | 8 | 4 | format version (2) |
//! | 12 | 4 | outcome: 1 rewritten, 2 unchanged, 3 refused, 4 unsupported pair |
//! | 16 | 32 | the key (SHA-256 of what the entry answers, [`super::key`]) |
//! | 48 | 8 | input size |
//! | 56 | 8 | output size (0 unless rewritten) |
//! | 64 | 4 | reason size (refused: the rewriter's reason, UTF-8) |
//! | 68 | 4 | zero |
//! | 72 | 16 | XXH3-128 of bytes 0..72, the reason and the output's XXH3-128 |
//! | 88 | | the reason, then the output |
//!
//! An entry is accepted only when every field checks: magic, version, a known
//! outcome, the key and input size of the request, sizes that add up to the
//! file's size exactly (a truncated or extended file is refused before any
//! large read), a rewritten output that is non-empty and an AMDGPU ELF, and
//! the checksum over everything. The checksum detects corruption (a torn or
//! flipped byte); tampering is excluded by the directory's ownership and
//! mode, not by it.

use hotswap_code_object::elf::Header;
use hotswap_code_object::EM_AMDGPU;
use twox_hash::XxHash3_128;

/// The file's first 8 bytes.
pub const MAGIC: &[u8; 8] = b"HSWPREW\0";
/// The format version this build reads and writes.
pub const VERSION: u32 = 2;
/// Size of the fixed header.
pub const HEADER_LEN: usize = 88;
/// The longest refusal reason kept (longer ones are cut at a char boundary).
pub const MAX_REASON: usize = 4096;

/// What an entry answers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// New bytes follow.
    Rewritten = 1,
    /// The rewriter returned the input unchanged.
    Unchanged = 2,
    /// The rewriter refused the object (reason follows).
    Refused = 3,
    /// The rewriter does not rewrite this ISA pair.
    Unsupported = 4,
}

impl Kind {
    fn from_u32(v: u32) -> Option<Kind> {
        Some(match v {
            1 => Kind::Rewritten,
            2 => Kind::Unchanged,
            3 => Kind::Refused,
            4 => Kind::Unsupported,
            _ => return None,
        })
    }
}

/// A parsed, not yet verified header.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Header88 {
    /// The outcome.
    pub kind: Kind,
    /// The key the entry claims to answer.
    pub key: [u8; 32],
    /// Input size it answers for.
    pub input_size: u64,
    /// Bytes of output that follow the reason.
    pub output_size: u64,
    /// Bytes of reason that follow the header.
    pub reason_size: u32,
    checksum: u128,
    raw: [u8; 72],
}

/// Why an entry is not used.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Invalid {
    /// Shorter than its header, or its sizes do not add up to the file's.
    Size,
    /// Not an entry of this format (magic, version, outcome, padding).
    Format,
    /// An entry for another key or input size (a swapped or foreign entry).
    Foreign,
    /// The checksum does not match (a corrupted entry).
    Checksum,
    /// A rewritten output that is not an AMDGPU ELF, or a reason that is not
    /// UTF-8.
    Content,
}

impl std::fmt::Display for Invalid {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Invalid::Size => "its size does not match its header (truncated?)",
            Invalid::Format => "not a cache entry of this version",
            Invalid::Foreign => "it answers another key",
            Invalid::Checksum => "its checksum does not match (corrupted)",
            Invalid::Content => "its content is not a valid outcome",
        })
    }
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().unwrap_or_default())
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().unwrap_or_default())
}

impl Header88 {
    /// Parses the header in `bytes` (at least [`HEADER_LEN`]) of a file of
    /// `file_size` bytes, expected to answer `key` for an input of
    /// `input_size` bytes.
    pub fn parse(
        bytes: &[u8],
        file_size: u64,
        key: &[u8; 32],
        input_size: u64,
    ) -> Result<Header88, Invalid> {
        let header = Self::parse_any(bytes, file_size)?;
        if header.key != *key || header.input_size != input_size {
            return Err(Invalid::Foreign);
        }
        Ok(header)
    }

    /// Parses a header whatever key it answers (for listing).
    pub fn parse_any(bytes: &[u8], file_size: u64) -> Result<Header88, Invalid> {
        let Some(b) = bytes.get(..HEADER_LEN) else {
            return Err(Invalid::Size);
        };
        if &b[..8] != MAGIC || u32_at(b, 8) != VERSION || u32_at(b, 68) != 0 {
            return Err(Invalid::Format);
        }
        let kind = Kind::from_u32(u32_at(b, 12)).ok_or(Invalid::Format)?;
        let mut claimed = [0u8; 32];
        claimed.copy_from_slice(&b[16..48]);
        let header = Header88 {
            kind,
            key: claimed,
            input_size: u64_at(b, 48),
            output_size: u64_at(b, 56),
            reason_size: u32_at(b, 64),
            checksum: u128::from_le_bytes(b[72..88].try_into().unwrap_or_default()),
            raw: b[..72].try_into().unwrap_or([0; 72]),
        };
        let body = u64::from(header.reason_size).checked_add(header.output_size);
        if body.and_then(|b| b.checked_add(HEADER_LEN as u64)) != Some(file_size) {
            return Err(Invalid::Size);
        }
        let consistent = match kind {
            Kind::Rewritten => header.output_size > 0 && header.reason_size == 0,
            Kind::Refused => header.output_size == 0 && header.reason_size as usize <= MAX_REASON,
            Kind::Unchanged | Kind::Unsupported => {
                header.output_size == 0 && header.reason_size == 0
            }
        };
        if !consistent {
            return Err(Invalid::Format);
        }
        Ok(header)
    }

    /// Checks the reason and output read after the header against the
    /// checksum and their content rules; returns the reason.
    pub fn verify(&self, reason: &[u8], output: &[u8]) -> Result<String, Invalid> {
        if reason.len() as u64 != u64::from(self.reason_size)
            || output.len() as u64 != self.output_size
        {
            return Err(Invalid::Size);
        }
        if checksum(&self.raw, reason, output) != self.checksum {
            return Err(Invalid::Checksum);
        }
        if self.kind == Kind::Rewritten
            && !Header::parse(output).is_ok_and(|h| h.machine == EM_AMDGPU)
        {
            return Err(Invalid::Content);
        }
        String::from_utf8(reason.to_vec()).map_err(|_| Invalid::Content)
    }
}

/// XXH3-128 of the header's first 72 bytes, the reason and the XXH3-128 of
/// the output (the output is read once; the rest is a few hundred bytes).
fn checksum(header: &[u8], reason: &[u8], output: &[u8]) -> u128 {
    let mut small = Vec::with_capacity(header.len() + reason.len() + 16);
    small.extend_from_slice(header);
    small.extend_from_slice(reason);
    small.extend_from_slice(&XxHash3_128::oneshot(output).to_le_bytes());
    XxHash3_128::oneshot(&small)
}

/// The header and reason of a new entry (the output is written after them,
/// so a rewritten object is never copied into a second buffer).
pub fn encode(kind: Kind, key: &[u8; 32], input_size: u64, reason: &str, output: &[u8]) -> Vec<u8> {
    let mut reason = reason;
    if reason.len() > MAX_REASON {
        let mut cut = MAX_REASON;
        while !reason.is_char_boundary(cut) {
            cut -= 1;
        }
        reason = &reason[..cut];
    }
    let mut out = Vec::with_capacity(HEADER_LEN + reason.len());
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&VERSION.to_le_bytes());
    out.extend_from_slice(&(kind as u32).to_le_bytes());
    out.extend_from_slice(key);
    out.extend_from_slice(&input_size.to_le_bytes());
    out.extend_from_slice(&(output.len() as u64).to_le_bytes());
    out.extend_from_slice(&(reason.len() as u32).to_le_bytes());
    out.extend_from_slice(&0u32.to_le_bytes());
    let sum = checksum(&out, reason.as_bytes(), output);
    out.extend_from_slice(&sum.to_le_bytes());
    out.extend_from_slice(reason.as_bytes());
    out
}

/// Parses and verifies a whole entry held in memory (the fuzz target's and
/// the tests' entry point; the cache itself reads the header first, then the
/// rest into its final buffer).
#[cfg(any(test, feature = "testing"))]
pub fn parse<'a>(
    bytes: &'a [u8],
    key: &[u8; 32],
    input_size: u64,
) -> Result<(Kind, String, &'a [u8]), Invalid> {
    let header = Header88::parse(bytes, bytes.len() as u64, key, input_size)?;
    let reason_end = HEADER_LEN + header.reason_size as usize;
    let (reason, output) = (&bytes[HEADER_LEN..reason_end], &bytes[reason_end..]);
    let reason = header.verify(reason, output)?;
    Ok((header.kind, reason, output))
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEY: [u8; 32] = [7; 32];

    fn elf() -> Vec<u8> {
        hotswap_code_object::GFX1250_PROBE.to_vec()
    }

    fn whole(kind: Kind, reason: &str, output: &[u8]) -> Vec<u8> {
        let mut e = encode(kind, &KEY, 100, reason, output);
        e.extend_from_slice(output);
        e
    }

    #[test]
    fn round_trips_every_outcome() {
        let out = elf();
        let e = whole(Kind::Rewritten, "", &out);
        assert_eq!(
            parse(&e, &KEY, 100),
            Ok((Kind::Rewritten, String::new(), &out[..]))
        );
        for kind in [Kind::Unchanged, Kind::Unsupported] {
            let e = whole(kind, "", &[]);
            assert_eq!(parse(&e, &KEY, 100), Ok((kind, String::new(), &[][..])));
        }
        let e = whole(Kind::Refused, "growth at f+0x10", &[]);
        assert_eq!(
            parse(&e, &KEY, 100),
            Ok((Kind::Refused, "growth at f+0x10".into(), &[][..]))
        );
    }

    #[test]
    fn every_corruption_is_refused() {
        let e = whole(Kind::Rewritten, "", &elf());
        for cut in [0, 10, HEADER_LEN - 1, HEADER_LEN, e.len() - 1] {
            assert_eq!(
                parse(&e[..cut], &KEY, 100).unwrap_err(),
                Invalid::Size,
                "cut {cut}"
            );
        }
        let mut longer = e.clone();
        longer.push(0);
        assert_eq!(parse(&longer, &KEY, 100).unwrap_err(), Invalid::Size);
        assert_eq!(parse(&e, &[8; 32], 100).unwrap_err(), Invalid::Foreign);
        assert_eq!(parse(&e, &KEY, 101).unwrap_err(), Invalid::Foreign);
        // Every single flipped bit is caught.
        for at in 0..e.len() {
            let mut bad = e.clone();
            bad[at] ^= 0x10;
            assert!(parse(&bad, &KEY, 100).is_err(), "flip at {at}");
        }
        // A refusal turned into "unchanged" (kind flipped, sizes still fit).
        let mut refused = whole(Kind::Unchanged, "", &[]);
        refused[12] = Kind::Unsupported as u8;
        assert_eq!(parse(&refused, &KEY, 100).unwrap_err(), Invalid::Checksum);
        // A rewritten entry whose output is not an AMDGPU ELF.
        let junk = whole(Kind::Rewritten, "", b"not an elf");
        assert_eq!(parse(&junk, &KEY, 100).unwrap_err(), Invalid::Content);
    }

    #[test]
    fn long_reasons_are_cut_at_a_char_boundary() {
        let reason = "é".repeat(MAX_REASON);
        let e = whole(Kind::Refused, &reason, &[]);
        let (_, kept, _) = parse(&e, &KEY, 100).unwrap();
        assert!(kept.len() <= MAX_REASON && reason.starts_with(&kept));
    }
}
