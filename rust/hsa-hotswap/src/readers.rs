//! The reader registry: which bytes stand behind each code-object reader the
//! application created, so that a later load can look at them.
//!
//! - Memory readers: pointer and size only, never a copy. ROCr itself reads that
//!   memory until the reader is destroyed, so it is valid whenever the
//!   application may legally load through the reader.
//! - File readers (only when a rewrite is possible in this process): the file is
//!   read with `pread` into a buffer that
//!   backs a memory reader made with the original create-from-memory. The buffer
//!   lives while the reader lives, and while each executable that loaded from it
//!   lives ([`crate::retained::Executables`]). Only a file whose 64-byte
//!   header (read first, also with `pread`) names a processor that could be
//!   rewritten in this process is read whole.
//! - Each recorded reader remembers what its load on each agent came to, so a
//!   repeated load of a reader already decided reads none of its bytes; a
//!   rewritten object it answers with stays alive while the reader does.
//! - An entry is removed when the application destroys the reader (before
//!   ROCr's destroy runs), or with the whole session at the next `OnLoad` (ROCr
//!   destroyed every reader of its previous instance at `hsa_shut_down`).
//! - Nothing is recorded when no rewrite is possible in this process.
#![allow(unsafe_code)] // views the application's memory and reads its file descriptor

use crate::handle_map::HandleMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use crate::hsa::api::hsa_code_object_reader_t;
use crate::policy::Decision;
use crate::retained::Outcome;
use crate::stats::{Stats, STATS};

pub use crate::retained::FileBytes;

/// The bytes behind one reader: the application's memory (create-from-memory:
/// address and size, never a copy) or a file's contents read by the tool
/// (create-from-file).
///
/// A borrowed value carries no lifetime (it lives in the registry between
/// hook calls) and is `Clone`, so the compiler cannot tell when the memory
/// behind it is gone: [`ReaderBytes::view`] is `unsafe`, and each caller
/// states why the reader is still alive.
#[derive(Clone, Debug)]
pub struct ReaderBytes(Source);

#[derive(Clone, Debug)]
enum Source {
    Borrowed { addr: usize, len: usize },
    File(FileBytes),
}

impl ReaderBytes {
    /// A view of the application's memory behind a memory reader.
    ///
    /// # Safety
    /// `len` bytes at `ptr` stay readable for as long as the view is used: the
    /// reader was accepted by ROCr (the application keeps its memory valid
    /// until it destroys the reader), and the view is dropped before the
    /// reader is destroyed (the registry forgets it before the original
    /// destroy runs; a plan holds it only during the application's own load
    /// through that reader).
    pub unsafe fn borrowed(ptr: *const u8, len: usize) -> ReaderBytes {
        ReaderBytes(Source::Borrowed {
            addr: ptr as usize,
            len,
        })
    }

    /// A file's contents read by the tool.
    pub fn from_file(bytes: FileBytes) -> ReaderBytes {
        ReaderBytes(Source::File(bytes))
    }

    /// The bytes.
    ///
    /// # Safety
    /// For bytes made by [`ReaderBytes::borrowed`]: the reader they were
    /// recorded for has not been destroyed, and is not destroyed while the
    /// returned slice is used. That holds inside the application's own call
    /// that creates the reader or loads through it (ROCr's rule: the memory
    /// stays valid until the reader is destroyed, and the application does not
    /// destroy a reader it is loading through). File bytes are always valid.
    pub unsafe fn view(&self) -> &[u8] {
        match &self.0 {
            Source::Borrowed { addr, len } => {
                if *len == 0 || *addr == 0 {
                    return &[];
                }
                // SAFETY: `len` readable bytes at `addr` while the reader
                // lives (the contract of `borrowed`), which the caller
                // promises for the slice's use.
                unsafe { std::slice::from_raw_parts(*addr as *const u8, *len) }
            }
            Source::File(bytes) => bytes,
        }
    }

    /// Address of the first byte (for log lines).
    pub fn addr(&self) -> usize {
        match &self.0 {
            Source::Borrowed { addr, .. } => *addr,
            Source::File(bytes) => bytes.as_ptr() as usize,
        }
    }

    /// The file's bytes, for a file-backed entry.
    pub fn file(&self) -> Option<FileBytes> {
        match &self.0 {
            Source::File(bytes) => Some(Arc::clone(bytes)),
            Source::Borrowed { .. } => None,
        }
    }

    /// True for file-backed bytes.
    pub fn is_file(&self) -> bool {
        matches!(self.0, Source::File(_))
    }

    /// The size in bytes.
    pub fn len(&self) -> usize {
        match &self.0 {
            Source::Borrowed { len, .. } => *len,
            Source::File(bytes) => bytes.len(),
        }
    }
}

/// One recorded reader: its bytes and what its loads came to, per agent.
#[derive(Debug)]
struct Recorded {
    bytes: ReaderBytes,
    /// (agent handle, outcome) of each load decided for this reader: the
    /// decision depends only on the agent and the bytes, both fixed, so a
    /// repeated load reads none of the bytes (one entry per agent; a handful).
    by_agent: Vec<(u64, Outcome)>,
    /// (ISA pair, outcome) of each rewrite of this reader: another agent
    /// with the same pair (one object on several A0 GPUs) reads none of the
    /// bytes either.
    by_pair: Vec<(Decision, Outcome)>,
}

/// What [`Readers::lookup`] knows about a reader for one agent.
#[derive(Debug)]
pub struct Lookup {
    /// The bytes behind the reader.
    pub bytes: ReaderBytes,
    /// The outcome decided before for this agent, if any.
    pub known: Option<Outcome>,
}

/// Reader handle → bytes. One short lock per create, destroy or load; never held
/// while calling ROCr or the rewriter.
#[derive(Debug, Default)]
pub struct Readers {
    map: Mutex<HandleMap<Recorded>>,
    /// Entries in `map` (changed under its lock): lets destroy and load skip the
    /// lock while nothing is recorded.
    entries: AtomicUsize,
    /// File-backed entries in `map`.
    files: AtomicUsize,
}

impl Readers {
    /// Records the bytes behind `reader` (replacing a stale entry for a reused handle).
    pub fn remember(&self, reader: hsa_code_object_reader_t, bytes: ReaderBytes) {
        let mut map = self.lock();
        if bytes.is_file() {
            self.files.fetch_add(1, Ordering::Relaxed);
        }
        let recorded = Recorded {
            bytes,
            by_agent: Vec::new(),
            by_pair: Vec::new(),
        };
        match map.insert(reader.handle, recorded) {
            Some(old) if old.bytes.is_file() => {
                self.files.fetch_sub(1, Ordering::Relaxed);
            }
            Some(_) => {}
            None => {
                self.entries.fetch_add(1, Ordering::Release);
            }
        }
    }

    /// True when some reader may be recorded. The application creates a reader
    /// before it loads or destroys it, so a recorded reader is always seen.
    pub fn any(&self) -> bool {
        self.entries.load(Ordering::Acquire) != 0
    }

    /// True while some file-backed reader is recorded.
    pub fn has_files(&self) -> bool {
        self.files.load(Ordering::Relaxed) != 0
    }

    /// Takes the entry out (before the original destroy runs, so a handle that
    /// ROCr reuses right after cannot lose its new entry).
    pub fn forget(&self, reader: hsa_code_object_reader_t) -> Option<ReaderBytes> {
        if !self.any() {
            return None;
        }
        let old = self.lock().remove(&reader.handle)?;
        self.entries.fetch_sub(1, Ordering::Release);
        if old.bytes.is_file() {
            self.files.fetch_sub(1, Ordering::Relaxed);
        }
        Some(old.bytes)
    }

    /// A snapshot of the entry (a pointer/size copy or a reference count).
    pub fn get(&self, reader: hsa_code_object_reader_t) -> Option<ReaderBytes> {
        if !self.any() {
            return None;
        }
        self.lock().get(&reader.handle).map(|r| r.bytes.clone())
    }

    /// The entry for `reader` and what was decided before for `agent`, in one
    /// lock.
    pub fn lookup(&self, reader: hsa_code_object_reader_t, agent: u64) -> Option<Lookup> {
        if !self.any() {
            return None;
        }
        let map = self.lock();
        let recorded = map.get(&reader.handle)?;
        Some(Lookup {
            bytes: recorded.bytes.clone(),
            known: recorded
                .by_agent
                .iter()
                .find(|(a, _)| *a == agent)
                .map(|(_, o)| o.clone()),
        })
    }

    /// The outcome of rewriting `reader` with `pair` before (for another agent).
    pub fn pair_outcome(
        &self,
        reader: hsa_code_object_reader_t,
        pair: &Decision,
    ) -> Option<Outcome> {
        let map = self.lock();
        let recorded = map.get(&reader.handle)?;
        recorded
            .by_pair
            .iter()
            .find(|(d, _)| d == pair)
            .map(|(_, o)| o.clone())
    }

    /// Remembers what loading `reader` on `agent` came to, and with which ISA
    /// pair when one was chosen.
    pub fn set_outcome(
        &self,
        reader: hsa_code_object_reader_t,
        agent: u64,
        pair: Option<&Decision>,
        outcome: Outcome,
    ) {
        let mut map = self.lock();
        if let Some(recorded) = map.get_mut(&reader.handle) {
            if !recorded.by_agent.iter().any(|(a, _)| *a == agent) {
                recorded.by_agent.push((agent, outcome.clone()));
            }
            if let Some(pair) = pair {
                if !recorded.by_pair.iter().any(|(d, _)| d == pair) {
                    recorded.by_pair.push((pair.clone(), outcome));
                }
            }
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HandleMap<Recorded>> {
        self.map.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Why a file could not be read; the caller then uses the original create-from-file.
#[derive(Debug)]
pub enum FileReadError {
    /// `fstat` or `pread` failed.
    Io(std::io::Error),
    /// Not a regular file, or empty.
    NotARegularFile,
    /// The file changed size while being read.
    ShortRead,
    /// No memory for the file's bytes.
    OutOfMemory(usize),
}

impl std::fmt::Display for FileReadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Io(e) => write!(f, "{e}"),
            Self::NotARegularFile => write!(f, "not a non-empty regular file"),
            Self::ShortRead => write!(f, "file shrank while being read"),
            Self::OutOfMemory(n) => write!(f, "cannot allocate {n} bytes"),
        }
    }
}

/// Size of the ELF64 header: all the tool needs to know whether a code object
/// could be rewritten.
const ELF_HEADER_SIZE: usize = 64;

/// The start of a file: its first bytes (up to the 64-byte ELF header), for
/// identifying the code object without reading it.
#[derive(Debug)]
pub struct FileHeader {
    /// The first `min(64, size)` bytes.
    pub prefix: Vec<u8>,
}

/// `fstat` of `fd`: its size when it is a non-empty regular file.
fn regular_file_size(fd: i32) -> Result<u64, FileReadError> {
    // SAFETY: an all-zero `stat` is a valid value to be overwritten.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: `st` is a valid out-pointer; an invalid fd only makes fstat fail.
    if unsafe { libc::fstat(fd, &mut st) } != 0 {
        return Err(FileReadError::Io(std::io::Error::last_os_error()));
    }
    if st.st_mode & libc::S_IFMT != libc::S_IFREG || st.st_size <= 0 {
        return Err(FileReadError::NotARegularFile);
    }
    u64::try_from(st.st_size).map_err(|_| FileReadError::NotARegularFile)
}

/// Reads the first 64 bytes of the file behind `fd` with `pread` (one system
/// call; the descriptor's offset never moves). The file's size is not needed
/// to decide: only a file that could be rewritten is read whole, and then
/// checked whole.
pub fn read_header(fd: i32) -> Result<FileHeader, FileReadError> {
    let mut prefix = vec![0u8; ELF_HEADER_SIZE];
    let mut done = 0usize;
    while done < prefix.len() {
        // SAFETY: `prefix[done..]` is initialised, writable memory of that length.
        let n =
            unsafe { pread_once(fd, prefix.as_mut_ptr().add(done), prefix.len() - done, done) }?;
        if n == 0 {
            break;
        }
        done += n;
    }
    prefix.truncate(done);
    Ok(FileHeader { prefix })
}

/// One `pread` of at most `len` bytes at `offset` into `buffer`, retried on
/// `EINTR`; 0 at the end of the file.
///
/// # Safety
/// `buffer` is valid for writes of `len` bytes.
unsafe fn pread_once(
    fd: i32,
    buffer: *mut u8,
    len: usize,
    offset: usize,
) -> Result<usize, FileReadError> {
    let offset = libc::off_t::try_from(offset).map_err(|_| FileReadError::ShortRead)?;
    loop {
        // SAFETY: `buffer` is writable for `len` bytes (contract); a bad fd only fails.
        let n = unsafe { libc::pread(fd, buffer.cast(), len, offset) };
        if n >= 0 {
            return Ok(n as usize);
        }
        let err = std::io::Error::last_os_error();
        if err.kind() != std::io::ErrorKind::Interrupted {
            return Err(FileReadError::Io(err));
        }
    }
}

/// Moves the offset of `fd` to the end of the file, as ROCr's own
/// create-from-file leaves it (`lseek(fd, 0, SEEK_END)` in
/// `CodeObjectReaderImpl::SetFile`). A failure changes nothing and is ignored:
/// the reader is made already.
pub fn seek_to_end(fd: i32) {
    // SAFETY: lseek only moves the descriptor's offset; a bad fd only fails.
    unsafe { libc::lseek(fd, 0, libc::SEEK_END) };
}

/// Reads the whole file behind `fd` with `pread` from offset 0: the descriptor's
/// own offset is never used nor moved.
pub fn read_whole_file(fd: i32) -> Result<FileBytes, FileReadError> {
    let size = regular_file_size(fd)?;
    let size = usize::try_from(size).map_err(|_| FileReadError::OutOfMemory(usize::MAX))?;
    let mut buffer: Vec<u8> = Vec::new();
    buffer
        .try_reserve_exact(size)
        .map_err(|_| FileReadError::OutOfMemory(size))?;
    let mut done = 0usize;
    while done < size {
        let chunk = (size - done).min(1 << 30);
        // SAFETY: writes at most `chunk` bytes into the reserved, unused tail.
        let n = unsafe { pread_once(fd, buffer.as_mut_ptr().add(done), chunk, done) }?;
        if n == 0 {
            return Err(FileReadError::ShortRead);
        }
        done += n;
    }
    // SAFETY: the first `size` bytes were written by pread above.
    unsafe { buffer.set_len(size) };
    Stats::add(&STATS.copied_bytes, size);
    Ok(Arc::new(buffer.into_boxed_slice()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Seek, SeekFrom, Write};
    use std::os::fd::AsRawFd;

    #[test]
    fn pread_keeps_the_offset() {
        let _counters = crate::testing::exclusive();
        let path = std::env::temp_dir().join(format!("hotswap-readers-{}", std::process::id()));
        let mut file = std::fs::File::create(&path).unwrap();
        file.write_all(b"0123456789").unwrap();
        drop(file);
        let mut file = std::fs::File::open(&path).unwrap();
        file.seek(SeekFrom::Start(3)).unwrap();
        let bytes = read_whole_file(file.as_raw_fd()).unwrap();
        assert_eq!(&bytes[..], b"0123456789");
        assert_eq!(file.stream_position().unwrap(), 3);
        std::fs::remove_file(&path).unwrap();
        assert!(read_whole_file(-1).is_err());
    }

    #[test]
    fn registry_round_trip() {
        let _counters = crate::testing::exclusive();
        let readers = Readers::default();
        let r = hsa_code_object_reader_t { handle: 7 };
        let data = [1u8, 2, 3];
        // SAFETY: `data` outlives every use of the view.
        readers.remember(r, unsafe { ReaderBytes::borrowed(data.as_ptr(), 3) });
        let got = readers.get(r).unwrap();
        // SAFETY: `data` is still alive.
        assert_eq!(unsafe { got.view() }, &data);
        assert!(readers.forget(r).is_some());
        assert!(readers.get(r).is_none());
    }
}
