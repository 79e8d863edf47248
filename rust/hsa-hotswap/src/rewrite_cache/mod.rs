//! The persistent rewrite cache: the outcome of a rewrite, kept on disk so
//! that the next process (another GPU's, the next job's) loading the same
//! object through the same rewriter skips the rewrite and its analysis.
//!
//! What is cached: "rewritten" (the new bytes), "unchanged" and "refused" /
//! "unsupported pair" answers, per [`key`] (the input's SHA-256 with the
//! backend's build identity, the ISA pair, the COMGR flags and the tool's
//! version and build-id: nothing that depends on paths, so machines that run
//! the same builds share entries). Entries of an older format (`rewrites/v1`)
//! are removed when the cache is opened.
//! Failures that may not repeat (an error, out of memory) are never cached.
//! Backends that cannot name themselves persistently (test doubles) are never
//! cached.
//!
//! Where: `HSA_HOTSWAP_CACHE_DIR`, else `$XDG_CACHE_HOME/hotswap`, else
//! `$HOME/.cache/hotswap`; entries live in `<dir>/rewrites/v2` (the test
//! suite's downloads use `<dir>/wheels`). `HSA_HOTSWAP_CACHE=off` turns it
//! off; `HSA_HOTSWAP_CACHE_MAX` bounds its size (default [`DEFAULT_MAX`]),
//! least recently used entries go first.
//!
//! Safety ([`Store::open`], [`Store::through`]): no cache in an `AT_SECURE`
//! process; every directory (the root, `rewrites`, `v1`) is created `0700`
//! and used only when it is a directory (not a symbolic link) owned by the
//! effective user and writable by neither group nor others, else no cache and
//! one warning; names are opened relative to the directory's descriptor with
//! `O_NOFOLLOW`; an entry is written to a temporary file and renamed into
//! place; it records the key, the input and output sizes and a checksum, all
//! verified after one read through one descriptor before the bytes are used,
//! so an entry that is evicted or replaced while it is read is either read
//! whole or refused ([`entry`]); a refused entry is logged, removed and
//! rewritten. Any I/O error means "rewrite as without a cache".
//!
//! Concurrency: processes that miss the same key serialise on a lock file
//! (one of 256 stripes, `flock`) with a bounded wait
//! (`HSA_HOTSWAP_CACHE_LOCK_TIMEOUT`, default [`DEFAULT_LOCK_TIMEOUT`]); the
//! first rewrites and writes the entry, the others find it. Past the bound a
//! process rewrites without waiting any longer.

pub mod entry;
pub mod key;
mod sys;

use std::fs::File;
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant, SystemTime};

use crate::config::{
    Config, HSA_HOTSWAP_CACHE, HSA_HOTSWAP_CACHE_DIR, HSA_HOTSWAP_CACHE_LOCK_TIMEOUT,
    HSA_HOTSWAP_CACHE_MAX,
};
use crate::rewriter::{Backend, Request, RetargetError, Retargeted, Rewritten};
use entry::{Header88, Invalid, Kind, HEADER_LEN};

/// The default size bound: 4 GiB.
pub const DEFAULT_MAX: u64 = 4 << 30;
/// The default wait for another process rewriting the same object.
pub const DEFAULT_LOCK_TIMEOUT: Duration = Duration::from_secs(300);
/// Where the entries are, below the cache directory.
pub const ENTRIES_SUBDIR: [&str; 2] = ["rewrites", "v2"];
/// Directories of older entry formats below `rewrites`, whose entries no key of
/// this build can name: emptied and removed when the cache is opened.
const OLD_FORMATS: [&str; 1] = ["v1"];
const ENTRY_SUFFIX: &str = ".entry";
const TEMP_PREFIX: &str = "tmp.";
const LOCK_PREFIX: &str = "lock.";
/// A temporary file older than this is a crashed writer's; removed on eviction.
const STALE_TEMP: Duration = Duration::from_secs(3600);

/// The cache's settings, from one [`Config`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Settings {
    /// The cache directory, or why there is none.
    pub dir: Result<PathBuf, String>,
    /// The size bound in bytes.
    pub max_bytes: u64,
    /// How long to wait for another process rewriting the same object.
    pub lock_timeout: Duration,
    /// Values that were not understood (defaults used), for one warning each.
    pub warnings: Vec<String>,
}

/// Parses `4096`, `64K`, `512M`, `4G`, `1T` (powers of 1024, optional `B`/`iB`).
pub fn parse_size(text: &str) -> Option<u64> {
    let t = text.trim();
    let t = t
        .strip_suffix("iB")
        .or_else(|| t.strip_suffix('B'))
        .unwrap_or(t);
    let (digits, shift) = match t.chars().last()?.to_ascii_uppercase() {
        'K' => (&t[..t.len() - 1], 10),
        'M' => (&t[..t.len() - 1], 20),
        'G' => (&t[..t.len() - 1], 30),
        'T' => (&t[..t.len() - 1], 40),
        _ => (t, 0),
    };
    digits
        .trim()
        .parse::<u64>()
        .ok()?
        .checked_mul(1u64 << shift)
}

impl Settings {
    /// The settings `config` gives in a process whose `AT_SECURE` is `secure`.
    pub fn from_config(config: &Config, secure: bool) -> Settings {
        let mut warnings = Vec::new();
        let max_bytes = match config.cache_max.as_deref() {
            None => DEFAULT_MAX,
            Some(text) => parse_size(text).unwrap_or_else(|| {
                warnings.push(format!(
                    "{HSA_HOTSWAP_CACHE_MAX}={text:?} is not a size (e.g. 4G); using {DEFAULT_MAX} bytes"
                ));
                DEFAULT_MAX
            }),
        };
        let lock_timeout = match config.cache_lock_timeout.as_deref() {
            None => DEFAULT_LOCK_TIMEOUT,
            Some(text) => match text.trim().parse::<f64>() {
                Ok(s) if s.is_finite() && (0.0..=86400.0).contains(&s) => {
                    Duration::from_secs_f64(s)
                }
                _ => {
                    warnings.push(format!(
                        "{HSA_HOTSWAP_CACHE_LOCK_TIMEOUT}={text:?} is not a number of seconds; using {}",
                        DEFAULT_LOCK_TIMEOUT.as_secs()
                    ));
                    DEFAULT_LOCK_TIMEOUT
                }
            },
        };
        let absolute = |p: &str| Path::new(p).is_absolute().then(|| PathBuf::from(p));
        let dir = if config.cache_off {
            Err(format!("switched off ({HSA_HOTSWAP_CACHE}=off)"))
        } else if secure {
            Err("not used in a setuid/setgid process (AT_SECURE)".to_owned())
        } else if let Some(dir) = config.cache_dir.as_deref() {
            absolute(dir)
                .ok_or_else(|| format!("{HSA_HOTSWAP_CACHE_DIR}={dir:?} is not an absolute path"))
        } else if let Some(xdg) = config.xdg_cache_home.as_deref().and_then(absolute) {
            Ok(xdg.join("hotswap"))
        } else if let Some(home) = config.home.as_deref().and_then(absolute) {
            Ok(home.join(".cache").join("hotswap"))
        } else {
            Err(format!(
                "no {HSA_HOTSWAP_CACHE_DIR}, XDG_CACHE_HOME or HOME"
            ))
        };
        Settings {
            dir,
            max_bytes,
            lock_timeout,
            warnings,
        }
    }

    /// The directory holding the entries, when there is a cache directory.
    pub fn entries_dir(&self) -> Option<PathBuf> {
        let dir = self.dir.as_ref().ok()?;
        Some(ENTRIES_SUBDIR.iter().fold(dir.clone(), |d, s| d.join(s)))
    }
}

/// What this process did with the cache (for tests and the log).
#[derive(Debug)]
pub struct Counters {
    /// Answers taken from an entry.
    pub hits: AtomicU64,
    /// Lookups that found no usable entry.
    pub misses: AtomicU64,
    /// Entries written.
    pub writes: AtomicU64,
    /// Entries refused (corrupted, foreign, wrong owner, a symbolic link).
    pub refused: AtomicU64,
    /// I/O errors (each meant "as without a cache").
    pub errors: AtomicU64,
}

/// This process's counters.
pub static COUNTERS: Counters = Counters {
    hits: AtomicU64::new(0),
    misses: AtomicU64::new(0),
    writes: AtomicU64::new(0),
    refused: AtomicU64::new(0),
    errors: AtomicU64::new(0),
};

impl Counters {
    /// One line for the log.
    pub fn summary(&self) -> String {
        let get = |c: &AtomicU64| c.load(Ordering::Relaxed);
        format!(
            "rewrite cache: hits {}, misses {}, entries written {}, entries refused {}, I/O errors {}",
            get(&self.hits),
            get(&self.misses),
            get(&self.writes),
            get(&self.refused),
            get(&self.errors)
        )
    }
}

fn count(counter: &AtomicU64) {
    counter.fetch_add(1, Ordering::Relaxed);
}

/// An open, vetted cache directory.
#[derive(Debug)]
pub struct Store {
    dir: sys::Dir,
    path: PathBuf,
    max_bytes: u64,
    lock_timeout: Duration,
}

/// Checks that `dir` is a directory owned by the effective user and writable by
/// neither group nor others.
fn trusted(dir: &sys::Dir, path: &Path) -> Result<(), String> {
    use std::os::unix::fs::MetadataExt;
    let meta = dir
        .file()
        .metadata()
        .map_err(|e| format!("cannot stat {}: {e}", path.display()))?;
    if !meta.is_dir() {
        return Err(format!("{} is not a directory", path.display()));
    }
    if meta.uid() != sys::euid() {
        return Err(format!(
            "{} is owned by uid {}, not by this user (uid {})",
            path.display(),
            meta.uid(),
            sys::euid()
        ));
    }
    if meta.mode() & 0o022 != 0 {
        return Err(format!(
            "{} has mode {:04o}: writable by group or others",
            path.display(),
            meta.mode() & 0o7777
        ));
    }
    Ok(())
}

fn open_dir(path: &Path) -> Result<sys::Dir, String> {
    sys::Dir::open(path).map_err(|e| {
        let link = std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink());
        match e.raw_os_error() {
            _ if link => format!("{} is a symbolic link", path.display()),
            Some(libc::ENOTDIR) => format!("{} is not a directory", path.display()),
            _ => format!("cannot open {}: {e}", path.display()),
        }
    })
}

/// Empties and removes the directories of older entry formats below
/// `rewrites` (`parent`, at `path`): their entries can never be hit again.
/// Only names this cache writes are removed; anything else keeps the
/// directory (and is left alone).
fn remove_old_formats(parent: &sys::Dir, path: &Path) {
    for old in OLD_FORMATS {
        if !parent.lstat(old).is_ok_and(|m| m.is_dir()) {
            continue;
        }
        let Ok(dir) = parent.subdir(old, 0o700) else {
            continue;
        };
        let mut removed = 0u64;
        for name in dir.names().unwrap_or_default() {
            let ours = name.ends_with(ENTRY_SUFFIX)
                || name.starts_with(TEMP_PREFIX)
                || name.starts_with(LOCK_PREFIX);
            if ours && dir.unlink(&name).is_ok() && name.ends_with(ENTRY_SUFFIX) {
                removed += 1;
            }
        }
        let _ = parent.remove_dir(old);
        log::info!(
            "rewrite cache: removed {removed} entries of an older format from {}",
            path.join(old).display()
        );
    }
}

/// A file name of `key`.
fn entry_name(key: &[u8; 32]) -> String {
    let mut name = String::with_capacity(64 + ENTRY_SUFFIX.len());
    for b in key {
        name.push_str(&format!("{b:02x}"));
    }
    name.push_str(ENTRY_SUFFIX);
    name
}

/// What an entry answers, read and verified.
#[derive(Debug)]
enum Hit {
    Rewritten(Rewritten),
    Unchanged,
    Refused(String),
    Unsupported,
}

impl Hit {
    fn into_result(self) -> Result<Retargeted, RetargetError> {
        match self {
            Hit::Rewritten(bytes) => Ok(Retargeted::Changed(bytes)),
            Hit::Unchanged => Ok(Retargeted::Unchanged),
            Hit::Refused(why) => Err(RetargetError::Refused(why)),
            Hit::Unsupported => Err(RetargetError::Unsupported),
        }
    }
}

/// One entry as `hotswap cache list` shows it (header only, not verified).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Listed {
    /// The file name (the key in hex and `.entry`).
    pub name: String,
    /// Its size on disk.
    pub file_size: u64,
    /// The outcome it records, `None` if its header does not parse.
    pub kind: Option<Kind>,
    /// The input and output sizes it records.
    pub input_size: u64,
    /// Output bytes (rewritten only).
    pub output_size: u64,
    /// Last use (its modification time).
    pub last_use: Option<SystemTime>,
}

/// Totals of the entries (`hotswap cache stats`, doctor).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Totals {
    /// Entries.
    pub entries: u64,
    /// Bytes they take.
    pub bytes: u64,
    /// Entries per outcome: rewritten, unchanged, refused or unsupported, unreadable.
    pub rewritten: u64,
    /// Unchanged answers.
    pub unchanged: u64,
    /// Refused or unsupported answers.
    pub refused: u64,
    /// Entries whose header does not parse.
    pub unreadable: u64,
    /// Temporary files (writes in progress or crashed).
    pub temporary: u64,
}

impl Store {
    /// Opens (creating `0700` what is missing) and vets the cache of
    /// `settings`; `Err` says why there is no cache.
    pub fn open(settings: &Settings) -> Result<Store, String> {
        Self::open_with(settings, true)
    }

    /// Opens and vets the cache of `settings` without creating anything (for
    /// diagnostics); `Err` says why it is not there or not usable.
    pub fn open_existing(settings: &Settings) -> Result<Store, String> {
        Self::open_with(settings, false)
    }

    fn open_with(settings: &Settings, create: bool) -> Result<Store, String> {
        use std::os::unix::fs::DirBuilderExt;
        let root = settings.dir.clone()?;
        if !create && std::fs::symlink_metadata(&root).is_err() {
            return Err(format!("{} does not exist yet", root.display()));
        }
        if let Err(e) = std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(&root)
        {
            // A symbolic link or a file there is reported by open_dir below.
            if !root.exists() {
                return Err(format!("cannot create {}: {e}", root.display()));
            }
        }
        let mut dir = open_dir(&root)?;
        trusted(&dir, &root)?;
        let mut path = root;
        for (depth, sub) in ENTRIES_SUBDIR.into_iter().enumerate() {
            if create && depth + 1 == ENTRIES_SUBDIR.len() {
                remove_old_formats(&dir, &path);
            }
            path = path.join(sub);
            if !create && dir.lstat(sub).is_err() {
                return Err(format!("{} does not exist yet", path.display()));
            }
            dir = dir.subdir(sub, 0o700).map_err(|e| match e.raw_os_error() {
                Some(libc::ELOOP) | Some(libc::ENOTDIR) => {
                    format!("{} is not a directory (a symbolic link?)", path.display())
                }
                _ => format!("cannot open {}: {e}", path.display()),
            })?;
            trusted(&dir, &path)?;
        }
        Ok(Store {
            dir,
            path,
            max_bytes: settings.max_bytes,
            lock_timeout: settings.lock_timeout,
        })
    }

    /// The directory of the entries.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The answer for `code_object` and `request` from the backend identified
    /// by `identity`: an entry's if there is a valid one, else `rewrite()`'s,
    /// which is then stored when it is an outcome (see the module
    /// documentation). Never fails because of the cache; rewrites without it
    /// when the tool cannot be identified.
    pub fn through(
        &self,
        identity: &str,
        code_object: &[u8],
        request: &Request<'_>,
        rewrite: impl FnOnce() -> Result<Retargeted, RetargetError>,
    ) -> Result<Retargeted, RetargetError> {
        let Some(tool) = key::tool_identity() else {
            return rewrite();
        };
        let digest = key::InputDigest::of(code_object);
        self.through_digested(tool, identity, &digest, request, rewrite)
    }

    /// [`Store::through`] of the input `digest` names (hashed once by the
    /// caller) by the tool `tool` ([`key::tool_identity`]).
    pub fn through_digested(
        &self,
        tool: &str,
        identity: &str,
        digest: &key::InputDigest,
        request: &Request<'_>,
        rewrite: impl FnOnce() -> Result<Retargeted, RetargetError>,
    ) -> Result<Retargeted, RetargetError> {
        let key = key::of_digest(tool, identity, request, digest);
        let name = entry_name(&key);
        let input_size = digest.len;
        if let Some(hit) = self.lookup(&name, &key, input_size) {
            return hit.into_result();
        }
        let lock = self.lock(&key);
        if lock.is_some() {
            if let Some(hit) = self.lookup(&name, &key, input_size) {
                return hit.into_result();
            }
        }
        count(&COUNTERS.misses);
        let result = rewrite();
        let stored = match &result {
            Ok(Retargeted::Changed(bytes)) => Some((Kind::Rewritten, "", bytes.bytes())),
            Ok(Retargeted::Unchanged) => Some((Kind::Unchanged, "", &[][..])),
            Err(RetargetError::Refused(why)) => Some((Kind::Refused, why.as_str(), &[][..])),
            Err(RetargetError::Unsupported) => Some((Kind::Unsupported, "", &[][..])),
            Err(_) => None,
        };
        if let Some((kind, reason, output)) = stored {
            match self.store(&name, kind, &key, input_size, reason, output) {
                Ok(()) => {
                    count(&COUNTERS.writes);
                    log::debug!("rewrite cache: stored {}/{name}", self.path.display());
                }
                Err(e) => {
                    count(&COUNTERS.errors);
                    log::info!(
                        "rewrite cache: cannot store an entry in {} ({e}); continuing without it",
                        self.path.display()
                    );
                }
            }
        }
        drop(lock);
        result
    }

    /// A valid entry's answer, or `None` (missing, refused and removed, or an
    /// I/O error).
    fn lookup(&self, name: &str, key: &[u8; 32], input_size: u64) -> Option<Hit> {
        match self.read(name, key, input_size) {
            Ok(hit) => {
                count(&COUNTERS.hits);
                log::debug!("rewrite cache: hit {}/{name}", self.path.display());
                Some(hit)
            }
            Err(Miss::Missing) => None,
            Err(Miss::Io(e)) => {
                count(&COUNTERS.errors);
                log::info!(
                    "rewrite cache: cannot read {}/{name} ({e}); rewriting",
                    self.path.display()
                );
                None
            }
            Err(Miss::Refused(why)) => {
                count(&COUNTERS.refused);
                log::warn!(
                    "rewrite cache: entry {}/{name} ignored: {why}; rewriting",
                    self.path.display()
                );
                if self.dir.unlink(name).is_err() {
                    let _ = self.dir.remove_dir(name); // an empty directory planted there
                }
                None
            }
        }
    }

    fn read(&self, name: &str, key: &[u8; 32], input_size: u64) -> Result<Hit, Miss> {
        use std::os::unix::fs::MetadataExt;
        let mut file = match self.dir.open_read(name) {
            Ok(file) => file,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Err(Miss::Missing),
            Err(e) if e.raw_os_error() == Some(libc::ELOOP) => {
                return Err(Miss::Refused("it is a symbolic link".into()))
            }
            Err(e) => return Err(Miss::Io(e)),
        };
        let meta = file.metadata().map_err(Miss::Io)?;
        if !meta.is_file() {
            return Err(Miss::Refused("it is not a regular file".into()));
        }
        if meta.uid() != sys::euid() || meta.mode() & 0o022 != 0 {
            return Err(Miss::Refused(format!(
                "owner uid {} mode {:04o} (must be this user's and not group/other-writable)",
                meta.uid(),
                meta.mode() & 0o7777
            )));
        }
        if meta.len() > self.max_bytes {
            // Never written by a cache of this bound: not read into memory either.
            return Err(Miss::Refused(format!(
                "{} bytes exceed {HSA_HOTSWAP_CACHE_MAX}",
                meta.len()
            )));
        }
        let mut head = [0u8; HEADER_LEN];
        if meta.len() < HEADER_LEN as u64 {
            return Err(Miss::Refused(Invalid::Size.to_string()));
        }
        file.read_exact(&mut head).map_err(Miss::Io)?;
        let header = Header88::parse(&head, meta.len(), key, input_size)
            .map_err(|e| Miss::Refused(e.to_string()))?;
        let mut reason = vec![0u8; header.reason_size as usize];
        file.read_exact(&mut reason).map_err(Miss::Io)?;
        let output = match header.kind {
            Kind::Rewritten => {
                let len = usize::try_from(header.output_size)
                    .map_err(|_| Miss::Refused(Invalid::Size.to_string()))?;
                let mut failure = None;
                let bytes = Rewritten::from_fill(len, |buffer| match file.read_exact(buffer) {
                    Ok(()) => true,
                    Err(e) => {
                        failure = Some(e);
                        false
                    }
                });
                match (bytes, failure) {
                    (Ok(bytes), _) => Some(bytes),
                    (Err(_), Some(e)) if e.kind() == io::ErrorKind::UnexpectedEof => {
                        return Err(Miss::Refused(Invalid::Size.to_string()))
                    }
                    (Err(_), Some(e)) => return Err(Miss::Io(e)),
                    (Err(e), None) => return Err(Miss::Io(io::Error::other(e.to_string()))),
                }
            }
            _ => None,
        };
        let reason = header
            .verify(&reason, output.as_ref().map_or(&[][..], Rewritten::bytes))
            .map_err(|e| Miss::Refused(e.to_string()))?;
        // Least recently used: the modification time is the last use.
        let _ = file.set_modified(SystemTime::now());
        Ok(match (header.kind, output) {
            (Kind::Rewritten, Some(bytes)) => Hit::Rewritten(bytes),
            (Kind::Unchanged, _) => Hit::Unchanged,
            (Kind::Refused, _) => Hit::Refused(reason),
            _ => Hit::Unsupported,
        })
    }

    /// Takes the lock stripe of `key`, waiting at most the lock timeout;
    /// `None` when the wait ran out or locking failed (then the caller
    /// rewrites without it).
    fn lock(&self, key: &[u8; 32]) -> Option<File> {
        let name = format!("{LOCK_PREFIX}{:02x}", key[0]);
        let file = match self.dir.open_or_create(&name) {
            Ok(file) => file,
            Err(e) => {
                count(&COUNTERS.errors);
                log::info!("rewrite cache: cannot open lock {name} ({e}); rewriting without it");
                return None;
            }
        };
        let start = Instant::now();
        let mut pause = Duration::from_millis(2);
        loop {
            match sys::try_lock(&file) {
                Ok(true) => return Some(file),
                Ok(false) if start.elapsed() < self.lock_timeout => {
                    std::thread::sleep(
                        pause.min(self.lock_timeout.saturating_sub(start.elapsed())),
                    );
                    pause = (pause * 2).min(Duration::from_millis(50));
                }
                Ok(false) => {
                    log::info!(
                        "rewrite cache: another process has been rewriting this object for {:.1} s \
                         ({HSA_HOTSWAP_CACHE_LOCK_TIMEOUT}); rewriting here too",
                        start.elapsed().as_secs_f64()
                    );
                    return None;
                }
                Err(e) => {
                    count(&COUNTERS.errors);
                    log::info!("rewrite cache: cannot lock {name} ({e}); rewriting without it");
                    return None;
                }
            }
        }
    }

    /// Writes one entry: a temporary file renamed into place. No fsync: an
    /// entry torn by a crash fails its checks and is rewritten.
    fn store(
        &self,
        name: &str,
        kind: Kind,
        key: &[u8; 32],
        input_size: u64,
        reason: &str,
        output: &[u8],
    ) -> io::Result<()> {
        let head = entry::encode(kind, key, input_size, reason, output);
        let size = (head.len() + output.len()) as u64;
        if size > self.max_bytes {
            return Err(io::Error::other(format!(
                "{size} bytes exceed {HSA_HOTSWAP_CACHE_MAX} ({} bytes)",
                self.max_bytes
            )));
        }
        static SERIAL: AtomicU64 = AtomicU64::new(0);
        let temp = format!(
            "{TEMP_PREFIX}{}.{}.{}",
            std::process::id(),
            SERIAL.fetch_add(1, Ordering::Relaxed),
            &name[..16]
        );
        let written = (|| {
            fault_point("cache.create")?;
            let mut file = self.dir.create_new(&temp)?;
            fault_point("cache.write")?;
            file.write_all(&head)?;
            file.write_all(output)?;
            fault_point("cache.rename")?;
            self.dir.rename(&temp, name)
        })();
        if written.is_err() {
            let _ = self.dir.unlink(&temp);
            return written;
        }
        self.evict(name);
        Ok(())
    }

    /// Removes least recently used entries until the cache fits its bound
    /// (never `keep`, the entry just written), and stale temporary files.
    fn evict(&self, keep: &str) {
        let Ok(mut entries) = self.scan() else { return };
        let total: u64 = entries.iter().map(|e| e.file_size).sum();
        if total <= self.max_bytes {
            return;
        }
        entries.sort_by_key(|e| e.last_use);
        let mut total = total;
        for e in entries {
            if total <= self.max_bytes {
                break;
            }
            if e.name != keep && self.dir.unlink(&e.name).is_ok() {
                log::debug!("rewrite cache: evicted {} ({} bytes)", e.name, e.file_size);
                total = total.saturating_sub(e.file_size);
            }
        }
    }

    /// Every entry's size and last use (and removes stale temporary files).
    fn scan(&self) -> io::Result<Vec<Listed>> {
        let mut out = Vec::new();
        for name in self.dir.names()? {
            let Ok(meta) = self.dir.lstat(&name) else {
                continue;
            };
            let last_use = meta.modified().ok();
            if name.starts_with(TEMP_PREFIX) {
                let stale = last_use
                    .and_then(|t| t.elapsed().ok())
                    .is_some_and(|age| age > STALE_TEMP);
                if stale {
                    let _ = self.dir.unlink(&name);
                }
                continue;
            }
            if !name.ends_with(ENTRY_SUFFIX) || !meta.is_file() {
                continue;
            }
            out.push(Listed {
                name,
                file_size: meta.len(),
                kind: None,
                input_size: 0,
                output_size: 0,
                last_use,
            });
        }
        Ok(out)
    }

    /// Every entry, with what its header says (`hotswap cache list`).
    pub fn list(&self) -> io::Result<Vec<Listed>> {
        let mut entries = self.scan()?;
        for e in &mut entries {
            let mut head = [0u8; HEADER_LEN];
            let Ok(mut file) = self.dir.open_read(&e.name) else {
                continue;
            };
            if file.read_exact(&mut head).is_err() {
                continue;
            }
            if let Ok(h) = Header88::parse_any(&head, e.file_size) {
                e.kind = Some(h.kind);
                e.input_size = h.input_size;
                e.output_size = h.output_size;
            }
        }
        entries.sort_by_key(|e| std::cmp::Reverse(e.last_use));
        Ok(entries)
    }

    /// Totals over every entry (`hotswap cache stats`, doctor).
    pub fn totals(&self) -> io::Result<Totals> {
        let mut t = Totals::default();
        for name in self.dir.names()? {
            if name.starts_with(TEMP_PREFIX) {
                t.temporary += 1;
            }
        }
        for e in self.list()? {
            t.entries += 1;
            t.bytes += e.file_size;
            match e.kind {
                Some(Kind::Rewritten) => t.rewritten += 1,
                Some(Kind::Unchanged) => t.unchanged += 1,
                Some(Kind::Refused | Kind::Unsupported) => t.refused += 1,
                None => t.unreadable += 1,
            }
        }
        Ok(t)
    }

    /// Removes every entry and temporary file; returns how many entries and
    /// bytes were removed.
    pub fn clear(&self) -> io::Result<(u64, u64)> {
        let (mut n, mut bytes) = (0, 0);
        for name in self.dir.names()? {
            let size = self.dir.lstat(&name).map(|m| m.len()).unwrap_or(0);
            let ours = name.ends_with(ENTRY_SUFFIX) || name.starts_with(TEMP_PREFIX);
            if ours && self.dir.unlink(&name).is_ok() && name.ends_with(ENTRY_SUFFIX) {
                n += 1;
                bytes += size;
            }
        }
        Ok((n, bytes))
    }
}

/// Why a lookup gave nothing.
#[derive(Debug)]
enum Miss {
    Missing,
    Refused(String),
    Io(io::Error),
}

/// Test-only injected I/O errors at `cache.create`, `cache.write` and
/// `cache.rename` ([`testing::inject`], `cfg(test)` or the `testing` feature);
/// a normal build never fails here.
fn fault_point(name: &str) -> io::Result<()> {
    #[cfg(any(test, feature = "testing"))]
    if let Some(errno) = testing::injected(name) {
        return Err(io::Error::from_raw_os_error(errno));
    }
    let _ = name;
    Ok(())
}

/// The cache of this process: resolved from [`Config::process`] on first use
/// (one warning if it is unusable for a reason other than being off).
fn process_store() -> Option<&'static Store> {
    #[cfg(test)]
    {
        // Unit tests never touch a real cache.
        None
    }
    #[cfg(not(test))]
    {
        static STORE: std::sync::OnceLock<Option<Store>> = std::sync::OnceLock::new();
        STORE
            .get_or_init(|| {
                let settings = Settings::from_config(Config::process(), sys::at_secure());
                for w in &settings.warnings {
                    log::warn!("rewrite cache: {w}");
                }
                let off = Config::process().cache_off || sys::at_secure();
                match Store::open(&settings) {
                    Ok(store) => {
                        log::debug!("rewrite cache: {}", store.path.display());
                        Some(store)
                    }
                    Err(why) if off => {
                        log::debug!("rewrite cache: {why}");
                        None
                    }
                    Err(why) => {
                        log::warn!("rewrite cache not used: {why}");
                        None
                    }
                }
            })
            .as_ref()
    }
}

/// Whether this process is `AT_SECURE` (for the command line's report).
pub fn process_is_secure() -> bool {
    sys::at_secure()
}

/// The rewrite of `code_object` for `request` through `backend`, answered by
/// the process's cache when the backend and the tool have a persistent
/// identity and the cache is usable; `rewrite` is the rewrite itself.
/// `digest` is the input's, when the caller has hashed it already (the
/// in-process memo); otherwise it is computed here, only when a cache is used.
pub fn through(
    backend: &dyn Backend,
    code_object: &[u8],
    digest: Option<&key::InputDigest>,
    request: &Request<'_>,
    rewrite: impl FnOnce() -> Result<Retargeted, RetargetError>,
) -> Result<Retargeted, RetargetError> {
    let Some(store) = process_store() else {
        return rewrite();
    };
    let (Some(identity), Some(tool)) = (backend.cache_identity(), key::tool_identity()) else {
        return rewrite();
    };
    let computed;
    let digest = match digest {
        Some(digest) => digest,
        None => {
            computed = key::InputDigest::of(code_object);
            &computed
        }
    };
    store.through_digested(tool, &identity, digest, request, rewrite)
}

/// Test support: injected errors.
#[cfg(any(test, feature = "testing"))]
pub mod testing {
    thread_local! {
        /// Per thread, so that tests running in parallel do not see each other's.
        static FAULTS: std::cell::RefCell<Vec<(String, i32)>> = const { std::cell::RefCell::new(Vec::new()) };
    }

    /// Forgets this thread's injected errors.
    pub fn clear() {
        FAULTS.with(|f| f.borrow_mut().clear());
    }

    /// Makes the fault point `name` fail with `errno` on this thread until
    /// [`clear`].
    pub fn inject(name: &str, errno: i32) {
        FAULTS.with(|f| f.borrow_mut().push((name.to_owned(), errno)));
    }

    pub(super) fn injected(name: &str) -> Option<i32> {
        FAULTS.with(|f| f.borrow().iter().find(|(n, _)| n == name).map(|(_, e)| *e))
    }
}

#[cfg(test)]
mod tests;
