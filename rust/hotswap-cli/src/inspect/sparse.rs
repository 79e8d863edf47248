//! Reading a file for `inspect` without reading what `inspect` never looks at.
//!
//! Most of a host binary's or bundle's bytes are code objects for processors
//! other than gfx125x, of which `inspect` reads only the ELF header, the header
//! tables and the notes (ISA, version, kernels). [`read`] returns a buffer of
//! the file's size holding the file's bytes everywhere `inspect` reads and
//! zeros elsewhere: a zeroed allocation whose untouched pages the kernel never
//! provides, filled with `pread` (no copy of the rest, no page faults for it).
//!
//! The entries of the uncompressed bundles it walks are not read with the
//! file: [`Input::deferred`] lists them, and [`Scratch::object`] reads each one
//! when it is described, into one buffer per worker whose pages are reused
//! from object to object (fresh pages cost a page fault each, more than the
//! copy of their bytes), its last contents zeroed first.
//!
//! What is read in full: small files, anything that is not a host ELF or an
//! uncompressed bundle, compressed bundles, the bytes between and around
//! bundles, bundle headers, and every code object that is gfx125x, that names a
//! processor the table lacks, or whose header is not a valid AMDGPU ELF (so
//! every reader sees exactly the file). Of the other code objects: the 64-byte
//! header, the program and section header tables, the notes (segments, or
//! sections without program headers), and the section-name table. Any read of
//! the file that fails or any layout this module does not follow falls back to
//! [`std::fs::read`].

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::Path;

use hotswap_code_object::container::{BUNDLE_MAGIC, CCOB_MAGIC, HIP_FATBIN_SECTION};
use hotswap_code_object::elf::{self, Header, SHT_NOBITS};
use hotswap_code_object::{gfx1250, isa, EM_AMDGPU};

/// Files smaller than this are read whole.
const WHOLE_BELOW: u64 = 256 << 10;
/// How far the search for the next bundle reads at a time.
const SCAN_CHUNK: usize = 64 << 10;
/// `PT_NOTE` and `SHT_NOTE`.
const PT_NOTE: u32 = 4;
const SHT_NOTE: u32 = 7;

/// A file as [`read`] reads it.
#[derive(Debug)]
pub struct Input {
    /// The file's bytes where read, zeros elsewhere; the file's size.
    pub bytes: Vec<u8>,
    /// The bundle entries left unread, as (file offset, size), sorted: each is
    /// read by [`Scratch::object`] when its code object is described.
    pub deferred: Vec<(u64, usize)>,
}

impl Input {
    /// A file read whole.
    pub fn whole(bytes: Vec<u8>) -> Self {
        Self {
            bytes,
            deferred: Vec::new(),
        }
    }

    /// Whether `[offset, offset + size)` is an entry left unread.
    pub fn is_deferred(&self, offset: u64, size: usize) -> bool {
        self.deferred.binary_search(&(offset, size)).is_ok()
    }
}

/// The file's bytes as `inspect` reads them (see the module documentation).
pub fn read(path: &Path) -> std::io::Result<Input> {
    let sparse = File::open(path).and_then(|file| {
        let len = file.metadata()?.len();
        if len < WHOLE_BELOW {
            return Ok(None);
        }
        let len = usize::try_from(len).map_err(|_| std::io::ErrorKind::OutOfMemory)?;
        let mut s = Sparse {
            file,
            buf: vec![0; len],
            deferred: Vec::new(),
        };
        s.container()?;
        s.deferred.sort_unstable();
        Ok(Some(Input {
            bytes: s.buf,
            deferred: s.deferred,
        }))
    });
    match sparse {
        Ok(Some(input)) => Ok(input),
        // Small, or not read as planned: the plain read gives the file (or the error) as it is.
        Ok(None) | Err(_) => std::fs::read(path).map(Input::whole),
    }
}

/// One worker's buffer for the code objects [`Input::deferred`] lists.
#[derive(Debug, Default)]
pub struct Scratch {
    buf: Vec<u8>,
    /// What the last object filled, zeroed where the next one does not fill.
    dirty: Vec<(usize, usize)>,
}

impl Scratch {
    /// A buffer for objects of up to `size` bytes (a larger one replaces it);
    /// its pages are provided as they are first written.
    pub fn new(size: usize) -> Self {
        Self {
            buf: vec![0; size],
            dirty: Vec::new(),
        }
    }

    /// The code object at `[start, start + size)` of `file`, as [`read`] would
    /// have read it: whole when `inspect` analyses it or cannot tell, else its
    /// headers and notes; zeros elsewhere.
    pub fn object(&mut self, file: &File, start: u64, size: usize) -> std::io::Result<&[u8]> {
        if self.buf.len() < size {
            self.buf = vec![0; size];
            self.dirty.clear();
        }
        // The reads below look only at bytes they have just filled; what the
        // last object left is zeroed after them, where this one did not fill
        // (most of a whole object's or a note's bytes are overwritten anyway).
        let stale = std::mem::take(&mut self.dirty);
        let mut object = Object {
            file,
            base: start,
            buf: &mut self.buf[..size],
            dirty: &mut self.dirty,
        };
        let read = object.read();
        zero_unfilled(&mut self.buf, &stale, &self.dirty);
        read?;
        Ok(&self.buf[..size])
    }
}

/// Zeroes the bytes of the `stale` ranges of `buf` that no `filled` range
/// covers (ranges as `(start, end)`, inside `buf`, in any order, overlapping
/// or not). Both lists are merged into sorted disjoint ranges first, so the
/// work is one sweep over them whatever an object's layout.
fn zero_unfilled(buf: &mut [u8], stale: &[(usize, usize)], filled: &[(usize, usize)]) {
    let filled = merged(filled);
    let mut next = 0;
    for (from, to) in merged(stale) {
        // Filled ranges that end before this stale one never matter again.
        while filled.get(next).is_some_and(|&(_, end)| end <= from) {
            next += 1;
        }
        let mut at = from;
        for &(start, end) in filled[next..].iter().take_while(|&&(start, _)| start < to) {
            if start > at {
                buf[at..start].fill(0);
            }
            at = at.max(end);
        }
        if at < to {
            buf[at..to].fill(0);
        }
    }
}

/// `ranges` sorted, the overlapping and touching ones joined, the empty ones dropped.
fn merged(ranges: &[(usize, usize)]) -> Vec<(usize, usize)> {
    let mut sorted: Vec<(usize, usize)> = ranges.iter().copied().filter(|(s, e)| s < e).collect();
    sorted.sort_unstable();
    let mut out: Vec<(usize, usize)> = Vec::with_capacity(sorted.len());
    for (start, end) in sorted {
        match out.last_mut() {
            Some(last) if start <= last.1 => last.1 = last.1.max(end),
            _ => out.push((start, end)),
        }
    }
    out
}

/// A code object being read into a [`Scratch`].
struct Object<'a> {
    file: &'a File,
    /// Its offset in the file.
    base: u64,
    /// Its bytes (the object's size).
    buf: &'a mut [u8],
    dirty: &'a mut Vec<(usize, usize)>,
}

impl Object<'_> {
    /// Reads `[start, end)` of the object (clipped to it).
    fn fill(&mut self, start: usize, end: usize) -> std::io::Result<()> {
        let end = end.min(self.buf.len());
        if start < end {
            self.dirty.push((start, end));
            let at = self
                .base
                .checked_add(start as u64)
                .ok_or(std::io::ErrorKind::InvalidInput)?;
            self.file.read_exact_at(&mut self.buf[start..end], at)?;
        }
        Ok(())
    }

    fn fill_len(&mut self, start: usize, len: u64) -> std::io::Result<()> {
        let len = usize::try_from(len).unwrap_or(usize::MAX);
        self.fill(start, start.saturating_add(len))
    }

    /// Whole when `inspect` analyses the object or cannot tell, else its
    /// headers and notes.
    fn read(&mut self) -> std::io::Result<()> {
        let size = self.buf.len();
        self.fill(0, 64)?;
        // A processor of the table that is not gfx125x: only the header, the
        // tables and the notes are read by inspect (`gfx1250::analyze` stops at
        // the header).
        let sparse_ok = isa::processor(self.buf).is_ok_and(|p| !gfx1250::is_gfx125(p));
        if !sparse_ok {
            return self.fill(64, size);
        }
        let (phoff, phnum) = (u64_at(self.buf, 32), u16_at(self.buf, 56));
        let (shoff, shnum) = (u64_at(self.buf, 40), u16_at(self.buf, 60));
        let names = u16_at(self.buf, 62);
        // Both tables lie inside the object (Header::parse checked them).
        self.fill_len(as_usize(phoff), u64::from(phnum) * 56)?;
        self.fill_len(as_usize(shoff), u64::from(shnum) * 64)?;
        let mut areas = Vec::new();
        let object = &*self.buf;
        for i in 0..usize::from(phnum) {
            let at = as_usize(phoff).saturating_add(i * 56);
            if u32_at(object, at) == PT_NOTE {
                areas.push((u64_at(object, at + 8), u64_at(object, at + 32)));
            }
        }
        // The notes `Header::note_areas` reads: the segments, or without
        // program headers the sections; and the section names.
        for i in 0..usize::from(shnum) {
            let at = as_usize(shoff).saturating_add(i * 64);
            if (phnum == 0 && u32_at(object, at + 4) == SHT_NOTE) || i == usize::from(names) {
                areas.push((u64_at(object, at + 24), u64_at(object, at + 32)));
            }
        }
        for (offset, len) in areas {
            // Only areas inside the object: one outside is reported from the numbers alone.
            if offset.checked_add(len).is_some_and(|e| e <= size as u64) {
                self.fill_len(offset as usize, len)?;
            }
        }
        Ok(())
    }
}

struct Sparse {
    file: File,
    buf: Vec<u8>,
    deferred: Vec<(u64, usize)>,
}

impl Sparse {
    /// Reads `[start, end)` of the file (clipped to it) into the buffer.
    fn fill(&mut self, start: usize, end: usize) -> std::io::Result<()> {
        let end = end.min(self.buf.len());
        if start < end {
            self.file
                .read_exact_at(&mut self.buf[start..end], start as u64)?;
        }
        Ok(())
    }

    fn fill_len(&mut self, start: usize, len: u64) -> std::io::Result<()> {
        let len = usize::try_from(len).unwrap_or(usize::MAX);
        self.fill(start, start.saturating_add(len))
    }

    /// The whole file, or a host ELF's `.hip_fatbin` section and its headers.
    fn container(&mut self) -> std::io::Result<()> {
        let len = self.buf.len();
        self.fill(0, 64)?;
        if self.buf.starts_with(BUNDLE_MAGIC) {
            return self.region(0, len);
        }
        let Ok(header) = Header::parse(&self.buf) else {
            // Not an ELF (or a broken one): what `container::find` reads of it
            // is in the first 64 bytes, but read it all rather than reason about it.
            return self.fill(0, len);
        };
        if header.machine == EM_AMDGPU {
            return self.fill(0, len);
        }
        let (shoff, shnum) = (u64_at(&self.buf, 40), u16_at(&self.buf, 60));
        self.fill_len(as_usize(shoff), u64::from(shnum) * 64)?;
        let names = u16_at(&self.buf, 62);
        if let Some(s) = header.sections(&self.buf).get(usize::from(names)) {
            let (offset, size) = (s.offset, s.size);
            self.fill_len(as_usize(offset), size)?;
        }
        let fatbin = header
            .sections(&self.buf)
            .into_iter()
            .find(|s| s.name == HIP_FATBIN_SECTION && s.sh_type != SHT_NOBITS)
            .and_then(|s| Some((s.data(&self.buf)?.len(), s.offset)));
        match fatbin {
            Some((size, offset)) => {
                let start = as_usize(offset);
                self.region(start, start + size)
            }
            None => Ok(()),
        }
    }

    /// The bundles in `[start, end)`, as `container::scan` walks them: the bytes
    /// up to each magic, each bundle's header, its entries; a compressed bundle,
    /// or anything not followed as planned, to the end of the region.
    fn region(&mut self, start: usize, end: usize) -> std::io::Result<()> {
        let mut at = start;
        while let Some(found) = self.next_magic(at, end)? {
            if self.buf[found..].starts_with(CCOB_MAGIC)
                && !self.buf[found..].starts_with(BUNDLE_MAGIC)
            {
                return self.fill(found, end);
            }
            match self.bundle(found, end)? {
                Some(extent) => at = found + extent.max(4),
                None => return self.fill(found, end),
            }
        }
        Ok(())
    }

    /// The next bundle or `CCOB` magic at or after `from` (before `end`),
    /// reading the bytes searched.
    fn next_magic(&mut self, from: usize, end: usize) -> std::io::Result<Option<usize>> {
        let mut at = from;
        let mut chunk = 64;
        while at < end {
            // Small at first: a bundle usually follows its predecessor directly.
            let chunk_end = (at + chunk).min(end);
            chunk = (chunk * 8).min(SCAN_CHUNK);
            // A magic starting in this chunk may end past it.
            self.fill(at, (chunk_end + BUNDLE_MAGIC.len()).min(end))?;
            let region = &self.buf[..end];
            if let Some(i) = (at..chunk_end).find(|&i| {
                region[i..].starts_with(CCOB_MAGIC) || region[i..].starts_with(BUNDLE_MAGIC)
            }) {
                return Ok(Some(i));
            }
            at = chunk_end;
        }
        Ok(None)
    }

    /// The bundle at `start` (its bytes end at `end` at the latest): its
    /// header and its entries. Its extent, or `None` when it does not read as
    /// `container::read_bundle` would accept it.
    fn bundle(&mut self, start: usize, end: usize) -> std::io::Result<Option<usize>> {
        let rest = end - start;
        self.fill(start, start + 32)?;
        let Some(count) = elf::u64_at(&self.buf[start..end], 24) else {
            return Ok(None);
        };
        let mut at = 32usize;
        let mut extent = at;
        let mut entries = Vec::new();
        for _ in 0..count {
            if at + 24 > rest {
                return Ok(None);
            }
            self.fill(start + at, start + at + 24)?;
            let b = &self.buf[start..end];
            let (Some(offset), Some(size), Some(id_len)) = (
                elf::u64_at(b, at),
                elf::u64_at(b, at + 8),
                elf::u64_at(b, at + 16),
            ) else {
                return Ok(None);
            };
            let id_end = (at as u64 + 24)
                .checked_add(id_len)
                .filter(|&e| e <= rest as u64);
            let Some(id_end) = id_end else {
                return Ok(None);
            };
            self.fill(start + at + 24, start + id_end as usize)?;
            at = id_end as usize;
            let Some(entry_end) = offset.checked_add(size).filter(|&e| e <= rest as u64) else {
                return Ok(None);
            };
            extent = extent.max(entry_end as usize);
            if size != 0 {
                entries.push(((start as u64) + offset, size as usize));
            }
        }
        self.deferred.extend(entries);
        Ok(Some(extent.max(at)))
    }
}

fn as_usize(v: u64) -> usize {
    usize::try_from(v).unwrap_or(usize::MAX)
}

fn u16_at(b: &[u8], at: usize) -> u16 {
    elf::u16_at(b, at).unwrap_or(0)
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    elf::u32_at(b, at).unwrap_or(0)
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    elf::u64_at(b, at).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use hotswap_code_object::container::BUNDLE_MAGIC;

    fn probe() -> Vec<u8> {
        std::fs::read(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../hotswap-code-object/data/gfx1250-probe.co"),
        )
        .unwrap()
    }

    /// An uncompressed offload bundle of `entries`, each at a 4 KiB boundary.
    fn bundle(entries: &[(&str, Vec<u8>)]) -> Vec<u8> {
        let header =
            BUNDLE_MAGIC.len() + 8 + entries.iter().map(|(id, _)| 24 + id.len()).sum::<usize>();
        let mut out = BUNDLE_MAGIC.to_vec();
        out.extend_from_slice(&(entries.len() as u64).to_le_bytes());
        let mut offset = header.next_multiple_of(4096);
        let mut offsets = Vec::new();
        for (id, object) in entries {
            out.extend_from_slice(&(offset as u64).to_le_bytes());
            out.extend_from_slice(&(object.len() as u64).to_le_bytes());
            out.extend_from_slice(&(id.len() as u64).to_le_bytes());
            out.extend_from_slice(id.as_bytes());
            offsets.push(offset);
            offset = (offset + object.len()).next_multiple_of(4096);
        }
        for ((_, object), at) in entries.iter().zip(offsets) {
            out.resize(at, 0);
            out.extend_from_slice(object);
        }
        out
    }

    /// A bundle of a gfx942 object padded with 1 MiB of non-zero bytes it never
    /// reads, then the gfx1250 probe, then another bundle: the sparse read
    /// leaves the padding unread, and inspect reports exactly what it reports
    /// from the whole file (read whole with --extract).
    #[test]
    fn inspect_reports_the_same_from_the_sparse_read() {
        let dir = std::env::temp_dir().join(format!("hotswap-sparse-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let mut gfx942 = probe();
        gfx942[48] = 0x4c; // EF_AMDGPU_MACH: gfx942
        gfx942.resize(gfx942.len() + (1 << 20), 0xAB);
        let mut file = bundle(&[
            ("hipv4-amdgcn-amd-amdhsa--gfx942", gfx942),
            ("hipv4-amdgcn-amd-amdhsa--gfx1250", probe()),
        ]);
        file.resize(file.len().next_multiple_of(64) + 40, 0); // padding before the next bundle
        file.extend(bundle(&[("hipv4-amdgcn-amd-amdhsa--gfx1250", probe())]));
        let path = dir.join("two.bundle");
        std::fs::write(&path, &file).unwrap();

        let sparse = super::read(&path).unwrap();
        assert_eq!(sparse.bytes.len(), file.len());
        assert_ne!(sparse.bytes, file, "the entries are not read with the file");
        // The three entries are left for the scratch buffer; the first is at 4 KiB.
        assert_eq!(sparse.deferred.len(), 3);
        let (at, size) = sparse.deferred[0];
        assert_eq!((at, size), (4096, probe().len() + (1 << 20)));
        assert!(sparse.bytes[4096..4096 + size].iter().all(|&b| b == 0));
        let padding = probe().len()..probe().len() + (1 << 20);
        let opened = std::fs::File::open(&path).unwrap();
        let mut scratch = super::Scratch::new(size);
        // The gfx1250 probe first: read whole, its bytes left in the buffer...
        let (probe_at, probe_size) = sparse.deferred[1];
        let whole = scratch.object(&opened, probe_at, probe_size).unwrap();
        assert_eq!(whole, &probe()[..]);
        // ...and zeroed where the gfx942 object's read leaves them.
        let object = scratch.object(&opened, at, size).unwrap().to_vec();
        assert_eq!(object[..64], file[4096..4096 + 64]);
        assert_ne!(object[..], file[4096..4096 + size]);
        assert!(file[4096 + padding.start..4096 + padding.end]
            .iter()
            .all(|&b| b == 0xAB));
        assert!(
            object[padding].iter().all(|&b| b == 0),
            "no byte of the padding is read"
        );
        let again = super::Scratch::new(0)
            .object(&opened, at, size)
            .unwrap()
            .to_vec();
        assert_eq!(object, again, "a reused buffer reads as a fresh one");

        let files = [PathBuf::from(&path)];
        let stream = super::super::Stream::new(Vec::new());
        let report = super::super::inspect_with(&files, None, Some(&stream));
        // The document the workers wrote object by object is serde_json's,
        // byte for byte, and so is the one written from the report after.
        let mut pretty = serde_json::to_vec_pretty(&report).unwrap();
        pretty.push(b'\n');
        let streamed = stream
            .finish(report.code_objects.len(), &report.errors)
            .unwrap();
        assert_eq!(streamed, pretty);
        assert_eq!(super::super::json_document(&report).unwrap(), pretty);
        let mut other = super::super::Report::default();
        for _ in 0..2 {
            let mut pretty = serde_json::to_vec_pretty(&other).unwrap();
            pretty.push(b'\n');
            assert_eq!(super::super::json_document(&other).unwrap(), pretty);
            other.errors.push(super::super::FileError {
                file: "x".into(),
                error: "y".into(),
            });
        }
        let from_sparse = serde_json::to_value(report).unwrap();
        let mut whole = super::super::inspect(&files, Some(&dir.join("extracted")));
        for o in &mut whole.code_objects {
            o.extracted = None;
        }
        let from_whole = serde_json::to_value(whole).unwrap();
        assert_eq!(from_sparse, from_whole);
        assert_eq!(from_sparse["code_objects"].as_array().unwrap().len(), 3);
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// Against a byte-by-byte model: after `zero_unfilled`, a byte is zero
    /// where a stale range and no filled range covers it, untouched elsewhere.
    #[test]
    fn zero_unfilled_zeroes_exactly_the_stale_bytes_left_unfilled() {
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut next = |bound: usize| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % bound as u64) as usize
        };
        for _ in 0..2000 {
            let len = 1 + next(200);
            let mut ranges = Vec::new();
            for _ in 0..2 {
                let n = next(5);
                let r: Vec<(usize, usize)> = (0..n)
                    .map(|_| {
                        let (a, b) = (next(len + 1), next(len + 1));
                        (a.min(b), a.max(b))
                    })
                    .collect();
                ranges.push(r);
            }
            let (stale, filled) = (&ranges[0], &ranges[1]);
            let mut buf = vec![0xEEu8; len];
            super::zero_unfilled(&mut buf, stale, filled);
            for (i, &b) in buf.iter().enumerate() {
                let inside = |r: &[(usize, usize)]| r.iter().any(|&(s, e)| s <= i && i < e);
                let expected = if inside(stale) && !inside(filled) {
                    0
                } else {
                    0xEE
                };
                assert_eq!(
                    b, expected,
                    "byte {i} of {len}: stale {stale:?} filled {filled:?}"
                );
            }
        }
    }
}
