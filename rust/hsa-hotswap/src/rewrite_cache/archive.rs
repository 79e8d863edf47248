//! The archive `hotswap cache export` writes and `hotswap cache import` reads:
//! cache entries moved between machines as one file, each with its SHA-256,
//! and the whole with one (no I/O in the reader, no FFI; fuzzed by
//! `fuzz/fuzz_targets/cache_archive.rs`).
//!
//! Layout (little endian):
//!
//! | size | field |
//! | --- | --- |
//! | 8 | magic `HSWPARC\0` |
//! | 4 | archive version (1) |
//! | 4 | entry format version ([`super::entry::VERSION`]) |
//! | 4 | member count |
//! | per member: 2 | name size, then the name (`<64 hex digits>.entry`) |
//! | 8 | entry size, then 32: its SHA-256, then the entry |
//! | 32 | SHA-256 of every byte before it |
//!
//! A member is accepted only when its name is an entry name, its size fits,
//! its SHA-256 matches, and the entry itself passes every check the cache
//! makes before use (header, sizes, checksum, an AMDGPU ELF output) and
//! answers the key its name says. One bad member refuses the whole archive:
//! an import writes nothing from it.

use sha2::{Digest, Sha256};

use super::entry::{Header88, HEADER_LEN, VERSION as ENTRY_VERSION};

/// The file's first 8 bytes.
pub const MAGIC: &[u8; 8] = b"HSWPARC\0";
/// The archive layout version.
pub const VERSION: u32 = 1;
/// More members than this is not an archive this build wrote.
const MAX_MEMBERS: u32 = 1 << 24;

/// One entry in an archive.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Member<'a> {
    /// Its file name in a cache directory.
    pub name: &'a str,
    /// The entry's bytes, verified.
    pub entry: &'a [u8],
}

/// Why an archive is refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Refused {
    /// Not an archive (magic), or of another version.
    Format(String),
    /// Cut short, or bytes after its end.
    Size,
    /// The whole-archive checksum does not match.
    Checksum,
    /// Member `index` is not valid, with why.
    Member(usize, String),
}

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Refused::Format(why) => write!(f, "not a cache archive of this version: {why}"),
            Refused::Size => f.write_str("truncated, or bytes after its end"),
            Refused::Checksum => f.write_str("its checksum does not match (corrupted)"),
            Refused::Member(i, why) => write!(f, "member {i}: {why}"),
        }
    }
}

/// The key an entry file name names (`<64 hex>.entry`), if it is one.
pub fn key_of_name(name: &str) -> Option<[u8; 32]> {
    let hex = name.strip_suffix(".entry")?;
    if hex.len() != 64
        || !hex
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    {
        return None;
    }
    let mut key = [0u8; 32];
    for (i, k) in key.iter_mut().enumerate() {
        *k = u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).ok()?;
    }
    Some(key)
}

/// Checks a whole entry as the cache does before use, and that it answers the
/// key of `name`.
pub fn check_entry(name: &str, entry: &[u8]) -> Result<(), String> {
    let key = key_of_name(name).ok_or_else(|| format!("{name:?} is not an entry name"))?;
    let header = Header88::parse_any(entry, entry.len() as u64).map_err(|e| e.to_string())?;
    if header.key != key {
        return Err("its key is not the one its name says".to_owned());
    }
    let reason_end = HEADER_LEN + header.reason_size as usize;
    let (reason, output) = (&entry[HEADER_LEN..reason_end], &entry[reason_end..]);
    header
        .verify(reason, output)
        .map(drop)
        .map_err(|e| e.to_string())
}

struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], Refused> {
        let end = self.at.checked_add(n).ok_or(Refused::Size)?;
        let b = self.bytes.get(self.at..end).ok_or(Refused::Size)?;
        self.at = end;
        Ok(b)
    }
    fn u16(&mut self) -> Result<u16, Refused> {
        Ok(u16::from_le_bytes(
            self.take(2)?.try_into().map_err(|_| Refused::Size)?,
        ))
    }
    fn u32(&mut self) -> Result<u32, Refused> {
        Ok(u32::from_le_bytes(
            self.take(4)?.try_into().map_err(|_| Refused::Size)?,
        ))
    }
    fn u64(&mut self) -> Result<u64, Refused> {
        Ok(u64::from_le_bytes(
            self.take(8)?.try_into().map_err(|_| Refused::Size)?,
        ))
    }
}

/// Parses and verifies a whole archive.
pub fn parse(bytes: &[u8]) -> Result<Vec<Member<'_>>, Refused> {
    let mut r = Reader { bytes, at: 0 };
    if r.take(8).map_err(|_| Refused::Format("too short".into()))? != MAGIC {
        return Err(Refused::Format("no HSWPARC magic".into()));
    }
    let version = r.u32()?;
    let entry_version = r.u32()?;
    if version != VERSION || entry_version != ENTRY_VERSION {
        return Err(Refused::Format(format!(
            "archive version {version}, entry format {entry_version} (this build: {VERSION}, {ENTRY_VERSION})"
        )));
    }
    let count = r.u32()?;
    if count > MAX_MEMBERS {
        return Err(Refused::Format(format!("{count} members")));
    }
    // The whole-archive checksum first: a corrupted archive is named as such.
    let body_len = bytes.len().checked_sub(32).ok_or(Refused::Size)?;
    if body_len < r.at {
        return Err(Refused::Size);
    }
    let sum: [u8; 32] = Sha256::digest(&bytes[..body_len]).into();
    if sum[..] != bytes[body_len..] {
        return Err(Refused::Checksum);
    }
    let mut body = Reader {
        bytes: &bytes[..body_len],
        at: r.at,
    };
    let mut members = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for i in 0..count as usize {
        let name_len = usize::from(body.u16()?);
        let name = std::str::from_utf8(body.take(name_len)?)
            .map_err(|_| Refused::Member(i, "its name is not UTF-8".into()))?;
        let size = usize::try_from(body.u64()?).map_err(|_| Refused::Size)?;
        let digest = body.take(32)?;
        let entry = body.take(size)?;
        if Sha256::digest(entry)[..] != *digest {
            return Err(Refused::Member(i, "its SHA-256 does not match".into()));
        }
        check_entry(name, entry).map_err(|why| Refused::Member(i, why))?;
        if !seen.insert(name) {
            return Err(Refused::Member(i, format!("{name} appears twice")));
        }
        members.push(Member { name, entry });
    }
    if body.at != body_len {
        return Err(Refused::Size);
    }
    Ok(members)
}

/// Writes an archive member by member to `out`, hashing as it goes.
pub struct Writer<W: std::io::Write> {
    out: W,
    hasher: Sha256,
    members: u32,
    declared: u32,
}

impl<W: std::io::Write> std::fmt::Debug for Writer<W> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Writer({} of {} members)", self.members, self.declared)
    }
}

impl<W: std::io::Write> Writer<W> {
    /// Starts an archive of exactly `members` members.
    pub fn new(out: W, members: u32) -> std::io::Result<Self> {
        let mut w = Writer {
            out,
            hasher: Sha256::new(),
            members: 0,
            declared: members,
        };
        w.put(MAGIC)?;
        w.put(&VERSION.to_le_bytes())?;
        w.put(&ENTRY_VERSION.to_le_bytes())?;
        w.put(&members.to_le_bytes())?;
        Ok(w)
    }

    fn put(&mut self, b: &[u8]) -> std::io::Result<()> {
        self.hasher.update(b);
        self.out.write_all(b)
    }

    /// Adds the entry `entry` named `name`.
    pub fn add(&mut self, name: &str, entry: &[u8]) -> std::io::Result<()> {
        let name_len = u16::try_from(name.len()).map_err(std::io::Error::other)?;
        self.put(&name_len.to_le_bytes())?;
        self.put(name.as_bytes())?;
        self.put(&(entry.len() as u64).to_le_bytes())?;
        let digest: [u8; 32] = Sha256::digest(entry).into();
        self.put(&digest)?;
        self.put(entry)?;
        self.members += 1;
        Ok(())
    }

    /// Writes the checksum; fails when fewer or more members were added than
    /// declared.
    pub fn finish(mut self) -> std::io::Result<W> {
        if self.members != self.declared {
            return Err(std::io::Error::other(format!(
                "{} members written, {} declared",
                self.members, self.declared
            )));
        }
        let sum: [u8; 32] = self.hasher.finalize_reset().into();
        self.out.write_all(&sum)?;
        Ok(self.out)
    }
}

#[cfg(test)]
mod tests {
    use super::super::entry::{encode, Kind};
    use super::*;

    fn entry(key: [u8; 32]) -> (String, Vec<u8>) {
        let out = hotswap_code_object::GFX1250_PROBE.to_vec();
        let mut e = encode(Kind::Rewritten, &key, 100, "", &out);
        e.extend_from_slice(&out);
        let name: String = key.iter().map(|b| format!("{b:02x}")).collect::<String>() + ".entry";
        (name, e)
    }

    fn archive(members: &[(String, Vec<u8>)]) -> Vec<u8> {
        let mut w = Writer::new(Vec::new(), members.len() as u32).unwrap();
        for (n, e) in members {
            w.add(n, e).unwrap();
        }
        w.finish().unwrap()
    }

    #[test]
    fn round_trip_and_every_corruption_refused() {
        let members = vec![entry([1; 32]), entry([2; 32])];
        let a = archive(&members);
        let parsed = parse(&a).unwrap();
        assert_eq!(parsed.len(), 2);
        for (p, (n, e)) in parsed.iter().zip(&members) {
            assert_eq!((p.name, p.entry), (n.as_str(), &e[..]));
        }
        assert_eq!(parse(&archive(&[])).unwrap(), vec![]);
        for cut in [0, 7, 20, a.len() / 2, a.len() - 1] {
            assert!(parse(&a[..cut]).is_err(), "cut {cut}");
        }
        let mut longer = a.clone();
        longer.push(0);
        assert!(parse(&longer).is_err());
        for at in (0..a.len()).step_by(97) {
            let mut bad = a.clone();
            bad[at] ^= 0x01;
            assert!(parse(&bad).is_err(), "flip at {at}");
        }
    }

    #[test]
    fn members_must_be_valid_entries_under_their_names() {
        let (name, e) = entry([3; 32]);
        let (other, _) = entry([4; 32]);
        // Checksums recomputed by the writer: only the member checks can refuse.
        assert!(matches!(
            parse(&archive(&[(other, e.clone())])),
            Err(Refused::Member(0, _))
        ));
        assert!(matches!(
            parse(&archive(&[("../x.entry".into(), e.clone())])),
            Err(Refused::Member(0, _))
        ));
        let mut broken = e.clone();
        let last = broken.len() - 1;
        broken[last] ^= 1;
        assert!(matches!(
            parse(&archive(&[(name.clone(), broken)])),
            Err(Refused::Member(0, _))
        ));
        assert!(matches!(
            parse(&archive(&[(name.clone(), e.clone()), (name, e)])),
            Err(Refused::Member(1, _))
        ));
        assert!(Writer::new(Vec::new(), 1).unwrap().finish().is_err());
        let name = |hex: &str| format!("{}.entry", hex.repeat(32));
        assert_eq!(key_of_name(&name("ab")), Some([0xab; 32]));
        assert_eq!(key_of_name(&name("AB")), None);
    }
}
