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
//! Read-only store ([`Store::open_read_only`], [`store_dir`]): a directory laid
//! out like the cache (`HSA_HOTSWAP_CACHE_STORE`, else
//! `<prefix>/share/hotswap/store` next to the tool library) that loads consult
//! after the cache and never write, touch or clean; filled by `hotswap cache
//! warm --into` or `import --into` ([`Store::open_store_for_writing`]). Its
//! directories must be real, owned by root or the user and writable by
//! neither group nor others, else one warning and no store; each entry is
//! checked as a cache entry is, and a bad one is ignored in place. Entries
//! move between caches and stores as one archive ([`archive`]).
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

pub mod archive;
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
    HSA_HOTSWAP_CACHE_MAX, HSA_HOTSWAP_CACHE_STORE,
};
use crate::digest::InputDigest;
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
    /// Answers taken from an entry of the cache.
    pub hits: AtomicU64,
    /// Answers taken from an entry of the read-only store.
    pub store_hits: AtomicU64,
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
    store_hits: AtomicU64::new(0),
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
            "rewrite cache: hits {} (read-only store {}), misses {}, entries written {}, entries \
             refused {}, I/O errors {}",
            get(&self.hits),
            get(&self.store_hits),
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
    /// A read-only store: never written, its refused entries never removed,
    /// and files owned by root accepted as well as the user's.
    read_only: bool,
    /// A store written for every user: entries made `0644`.
    shared: bool,
}

/// Checks that `dir` is a directory owned by the effective user and writable by
/// neither group nor others.
fn trusted(dir: &sys::Dir, path: &Path) -> Result<(), String> {
    trusted_by(dir, path, false)
}

/// [`trusted`]; with `root_too`, a directory owned by root is trusted as well
/// (a read-only store installed by the system).
fn trusted_by(dir: &sys::Dir, path: &Path, root_too: bool) -> Result<(), String> {
    use std::os::unix::fs::MetadataExt;
    let meta = dir
        .file()
        .metadata()
        .map_err(|e| format!("cannot stat {}: {e}", path.display()))?;
    if !meta.is_dir() {
        return Err(format!("{} is not a directory", path.display()));
    }
    if meta.uid() != sys::euid() && !(root_too && meta.uid() == 0) {
        return Err(format!(
            "{} is owned by uid {}, not by this user (uid {}){}",
            path.display(),
            meta.uid(),
            sys::euid(),
            if root_too { " nor by root" } else { "" }
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
        Self::open_with(settings, true, false)
    }

    /// Opens and vets the cache of `settings` without creating anything (for
    /// diagnostics); `Err` says why it is not there or not usable.
    pub fn open_existing(settings: &Settings) -> Result<Store, String> {
        Self::open_with(settings, false, false)
    }

    /// Opens (creating what is missing) the store directory `root` for
    /// writing (`hotswap cache warm --into`, `hotswap cache import --into`):
    /// vetted as a cache directory of this user, but its directories made
    /// `0755` and its entries `0644` so that every user's loads can read it,
    /// and never evicted.
    pub fn open_store_for_writing(root: &Path) -> Result<Store, String> {
        let settings = Settings {
            dir: Ok(root.to_path_buf()),
            max_bytes: u64::MAX,
            lock_timeout: DEFAULT_LOCK_TIMEOUT,
            warnings: Vec::new(),
        };
        Self::open_with(&settings, true, true)
    }

    fn open_with(settings: &Settings, create: bool, shared: bool) -> Result<Store, String> {
        use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
        let dir_mode = if shared { 0o755 } else { 0o700 };
        let open_mode = |dir: &sys::Dir, path: &Path| -> Result<(), String> {
            if shared {
                dir.file()
                    .set_permissions(std::fs::Permissions::from_mode(dir_mode))
                    .map_err(|e| format!("cannot make {} readable by all: {e}", path.display()))?;
            }
            Ok(())
        };
        let root = settings.dir.clone()?;
        if !create && std::fs::symlink_metadata(&root).is_err() {
            return Err(format!("{} does not exist yet", root.display()));
        }
        if let Err(e) = std::fs::DirBuilder::new()
            .recursive(true)
            .mode(dir_mode)
            .create(&root)
        {
            // A symbolic link or a file there is reported by open_dir below.
            if !root.exists() {
                return Err(format!("cannot create {}: {e}", root.display()));
            }
        }
        let mut dir = open_dir(&root)?;
        trusted(&dir, &root)?;
        open_mode(&dir, &root)?;
        let mut path = root;
        for (depth, sub) in ENTRIES_SUBDIR.into_iter().enumerate() {
            if create && depth + 1 == ENTRIES_SUBDIR.len() {
                remove_old_formats(&dir, &path);
            }
            path = path.join(sub);
            if !create && dir.lstat(sub).is_err() {
                return Err(format!("{} does not exist yet", path.display()));
            }
            dir = dir
                .subdir(sub, dir_mode)
                .map_err(|e| match e.raw_os_error() {
                    Some(libc::ELOOP) | Some(libc::ENOTDIR) => {
                        format!("{} is not a directory (a symbolic link?)", path.display())
                    }
                    _ => format!("cannot open {}: {e}", path.display()),
                })?;
            trusted(&dir, &path)?;
            open_mode(&dir, &path)?;
        }
        Ok(Store {
            dir,
            path,
            max_bytes: settings.max_bytes,
            lock_timeout: settings.lock_timeout,
            read_only: false,
            shared,
        })
    }

    /// Opens the read-only store at `root` (laid out as a cache directory:
    /// `<root>/rewrites/v2`) without creating or changing anything. Each of
    /// the three directories must be a real directory (no symbolic link is
    /// followed), owned by root or by the effective user and writable by
    /// neither group nor others; `Err` says why the store is not used.
    pub fn open_read_only(root: &Path) -> Result<Store, String> {
        if !root.is_absolute() {
            return Err(format!("{} is not an absolute path", root.display()));
        }
        if std::fs::symlink_metadata(root).is_err() {
            return Err(format!("{} does not exist", root.display()));
        }
        let mut dir = open_dir(root)?;
        trusted_by(&dir, root, true)?;
        let mut path = root.to_path_buf();
        for sub in ENTRIES_SUBDIR {
            path = path.join(sub);
            match dir.lstat(sub) {
                Ok(m) if m.file_type().is_symlink() => {
                    return Err(format!("{} is a symbolic link", path.display()))
                }
                Ok(m) if m.is_dir() => {}
                Ok(_) => return Err(format!("{} is not a directory", path.display())),
                Err(_) => return Err(format!("{} does not exist", path.display())),
            }
            // The directory exists: subdir only opens it (O_NOFOLLOW).
            dir = dir
                .subdir(sub, 0o700)
                .map_err(|e| format!("cannot open {}: {e}", path.display()))?;
            trusted_by(&dir, &path, true)?;
        }
        Ok(Store {
            dir,
            path,
            max_bytes: u64::MAX,
            lock_timeout: Duration::ZERO,
            read_only: true,
            shared: true,
        })
    }

    /// Whether this is a read-only store.
    pub fn is_read_only(&self) -> bool {
        self.read_only
    }

    /// The directory of the entries.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The answer for `code_object` and `request` from the backend identified
    /// by `identity`: an entry's if there is a valid one, else `rewrite()`'s,
    /// which is then stored when it is an outcome (see the module
    /// documentation). Never fails because of the cache; rewrites without it
    /// when the tool cannot be identified. `digest` is the input's, when a
    /// pass computed it already; else it is computed here.
    pub fn through(
        &self,
        identity: &str,
        code_object: &[u8],
        digest: Option<&InputDigest>,
        request: &Request<'_>,
        rewrite: impl FnOnce() -> Result<Retargeted, RetargetError>,
    ) -> Result<Retargeted, RetargetError> {
        let Some(tool) = key::tool_identity() else {
            return rewrite();
        };
        let digest = InputDigest::given_or_of(digest, code_object);
        self.through_digested(tool, identity, &digest, request, rewrite)
    }

    /// [`Store::through`] of the input `digest` names (hashed once by the
    /// caller) by the tool `tool` (`key::tool_identity`).
    pub fn through_digested(
        &self,
        tool: &str,
        identity: &str,
        digest: &InputDigest,
        request: &Request<'_>,
        rewrite: impl FnOnce() -> Result<Retargeted, RetargetError>,
    ) -> Result<Retargeted, RetargetError> {
        through_layers(Some(self), None, tool, identity, digest, request, rewrite)
    }

    /// After a miss in this cache and in the read-only store: the rewrite,
    /// serialised with other processes missing the same key, and stored.
    fn fill(
        &self,
        key: &[u8; 32],
        name: &str,
        input_size: u64,
        rewrite: impl FnOnce() -> Result<Retargeted, RetargetError>,
    ) -> Result<Retargeted, RetargetError> {
        let key = *key;
        let lock = self.lock(&key);
        if lock.is_some() {
            if let Some(hit) = self.lookup(name, &key, input_size) {
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
            match self.store(name, kind, &key, input_size, reason, output) {
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
    /// I/O error). A refused entry of a read-only store is left in place.
    fn lookup(&self, name: &str, key: &[u8; 32], input_size: u64) -> Option<Hit> {
        match self.read(name, key, input_size) {
            Ok(hit) if self.read_only => {
                count(&COUNTERS.store_hits);
                log::debug!(
                    "rewrite cache: hit in the read-only store {}/{name}",
                    self.path.display()
                );
                Some(hit)
            }
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
                if self.read_only {
                    return None;
                }
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
        let owner_ok = meta.uid() == sys::euid() || (self.read_only && meta.uid() == 0);
        if !owner_ok || meta.mode() & 0o022 != 0 {
            return Err(Miss::Refused(format!(
                "owner uid {} mode {:04o} (must be this user's{} and not group/other-writable)",
                meta.uid(),
                meta.mode() & 0o7777,
                if self.read_only { " or root's" } else { "" }
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
        // Least recently used: the modification time is the last use (a
        // read-only store is never touched).
        if !self.read_only {
            let _ = file.set_modified(SystemTime::now());
        }
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
                self.lock_free(&e);
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
                    self.lock_free(&e);
                    return None;
                }
            }
        }
    }

    /// Logs, once per process, that locking failed here (a file system
    /// without `flock`: NFS without a lock manager, some FUSE mounts) and that
    /// the cache goes on without locks.
    fn lock_free(&self, error: &io::Error) {
        static LOGGED: std::sync::Once = std::sync::Once::new();
        LOGGED.call_once(|| {
            log::info!(
                "rewrite cache: cannot lock in {} ({error}); going on without locks: processes \
                 that miss the same object at once may each rewrite it, and the atomic rename \
                 keeps one whole entry (logged once)",
                self.path.display()
            );
        });
    }

    /// The file system of the entries (its name, or its magic number in hex)
    /// and whether `flock` works there (probed on an existing lock file, else
    /// on the directory: nothing is created).
    pub fn filesystem(&self) -> (String, Result<(), String>) {
        let name = match sys::fs_magic(self.dir.file()) {
            Ok(magic) => fs_name(magic),
            Err(e) => format!("unknown ({e})"),
        };
        let probe_file = self
            .dir
            .names()
            .unwrap_or_default()
            .into_iter()
            .find(|n| n.starts_with(LOCK_PREFIX))
            .and_then(|n| self.dir.open_read(&n).ok());
        let flock = match &probe_file {
            Some(f) => sys::probe_lock(f),
            None => sys::probe_lock(self.dir.file()),
        }
        .map_err(|e| e.to_string());
        (name, flock)
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
            if self.shared {
                use std::os::unix::fs::PermissionsExt;
                file.set_permissions(std::fs::Permissions::from_mode(0o644))?;
            }
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

    /// Writes every valid entry into an archive (the `archive` module's format) on `out`;
    /// returns the entries and bytes written and the names of entries left
    /// out because they do not pass the checks a load makes.
    pub fn export(&self, out: impl Write) -> io::Result<(u64, u64, Vec<String>)> {
        let mut kept: Vec<(String, Vec<u8>)> = Vec::new();
        let mut skipped = Vec::new();
        for e in self.scan()? {
            let bytes = match self.read_whole(&e.name) {
                Ok(bytes) => bytes,
                Err(why) => {
                    skipped.push(format!("{}: {why}", e.name));
                    continue;
                }
            };
            match archive::check_entry(&e.name, &bytes) {
                Ok(()) => kept.push((e.name, bytes)),
                Err(why) => skipped.push(format!("{}: {why}", e.name)),
            }
        }
        kept.sort();
        let count = u32::try_from(kept.len()).map_err(io::Error::other)?;
        let mut writer = archive::Writer::new(out, count)?;
        let mut bytes = 0u64;
        for (name, entry) in &kept {
            writer.add(name, entry)?;
            bytes += entry.len() as u64;
        }
        writer.finish()?.flush()?;
        Ok((kept.len() as u64, bytes, skipped))
    }

    /// One entry file, whole, under the rules [`Store::read`] applies to the
    /// file (no symbolic link, a regular file of the right owner and mode).
    fn read_whole(&self, name: &str) -> Result<Vec<u8>, String> {
        use std::os::unix::fs::MetadataExt;
        let mut file = self.dir.open_read(name).map_err(|e| e.to_string())?;
        let meta = file.metadata().map_err(|e| e.to_string())?;
        let owner_ok = meta.uid() == sys::euid() || (self.read_only && meta.uid() == 0);
        if !meta.is_file() || !owner_ok || meta.mode() & 0o022 != 0 {
            return Err(
                "not a regular file of this user (or root) that only its owner can write".into(),
            );
        }
        let mut bytes = Vec::new();
        file.read_to_end(&mut bytes).map_err(|e| e.to_string())?;
        Ok(bytes)
    }

    /// Imports every entry of the archive `bytes` (verified whole first: one
    /// bad member and nothing is written); returns the entries and bytes
    /// written.
    pub fn import(&self, bytes: &[u8]) -> Result<(u64, u64), String> {
        if self.read_only {
            return Err("a read-only store is not written".into());
        }
        let members = archive::parse(bytes).map_err(|e| format!("archive refused: {e}"))?;
        let mut written = 0u64;
        for m in &members {
            self.put(m.name, m.entry)
                .map_err(|e| format!("cannot write {}: {e}", m.name))?;
            written += m.entry.len() as u64;
        }
        Ok((members.len() as u64, written))
    }

    /// Writes the verified entry `entry` as `name` (temporary file, rename).
    fn put(&self, name: &str, entry: &[u8]) -> io::Result<()> {
        static SERIAL: AtomicU64 = AtomicU64::new(0);
        let temp = format!(
            "{TEMP_PREFIX}{}.i{}.{}",
            std::process::id(),
            SERIAL.fetch_add(1, Ordering::Relaxed),
            &name[..16.min(name.len())]
        );
        let written = (|| {
            let mut file = self.dir.create_new(&temp)?;
            if self.shared {
                use std::os::unix::fs::PermissionsExt;
                file.set_permissions(std::fs::Permissions::from_mode(0o644))?;
            }
            file.write_all(entry)?;
            self.dir.rename(&temp, name)
        })();
        if written.is_err() {
            let _ = self.dir.unlink(&temp);
        }
        written
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

/// The answer for the input `digest` names: the cache's entry, else the
/// read-only store's, else `rewrite()`'s, stored in the cache (when there is
/// one; the store is never written).
fn through_layers(
    cache: Option<&Store>,
    store: Option<&Store>,
    tool: &str,
    identity: &str,
    digest: &InputDigest,
    request: &Request<'_>,
    rewrite: impl FnOnce() -> Result<Retargeted, RetargetError>,
) -> Result<Retargeted, RetargetError> {
    let key = key::of_digest(tool, identity, request, digest);
    let name = entry_name(&key);
    let input_size = digest.len;
    for layer in [cache, store].into_iter().flatten() {
        if let Some(hit) = layer.lookup(&name, &key, input_size) {
            return hit.into_result();
        }
    }
    match cache {
        Some(cache) => cache.fill(&key, &name, input_size, rewrite),
        None => {
            count(&COUNTERS.misses);
            rewrite()
        }
    }
}

/// The read-only store's directory for `config`: `HSA_HOTSWAP_CACHE_STORE`, else
/// `share/hotswap/store` under the prefix the object at `installed` (the tool
/// library, or the command) is installed in (`<prefix>/lib`, `<prefix>/lib64`,
/// `<prefix>/lib/<multiarch>` or `<prefix>/bin`). `Err` says why there is none.
pub fn store_dir(config: &Config, installed: Option<&Path>) -> Result<PathBuf, String> {
    match config.cache_store.as_deref() {
        Some(v) if !crate::config::is_true(Some(v)) => {
            Err(format!("switched off ({HSA_HOTSWAP_CACHE_STORE}={v})"))
        }
        Some(v) if Path::new(v).is_absolute() => Ok(PathBuf::from(v)),
        Some(v) => Err(format!(
            "{HSA_HOTSWAP_CACHE_STORE}={v:?} is not an absolute path"
        )),
        None => {
            let dir = installed
                .and_then(Path::parent)
                .ok_or("the install prefix is not known")?;
            let name = |p: &Path| p.file_name().map(|n| n.to_string_lossy().into_owned());
            let prefix = match name(dir).as_deref() {
                Some("lib" | "lib64" | "bin") => dir.parent(),
                Some(n) if n.contains("-linux-") => dir.parent().and_then(Path::parent),
                _ => None,
            }
            .ok_or_else(|| format!("{} is not in an install prefix", dir.display()))?;
            Ok(prefix.join("share").join("hotswap").join("store"))
        }
    }
}

/// The name of a file system from its `statfs` magic number.
pub fn fs_name(magic: i64) -> String {
    let name = match magic as u32 {
        0xEF53 => "ext2/3/4",
        0x5846_5342 => "xfs",
        0x9123_683E => "btrfs",
        0x0102_1994 => "tmpfs",
        0x6969 => "nfs",
        0x6573_5546 => "fuse",
        0x794C_7630 => "overlayfs",
        0xFF53_4D42 => "cifs",
        0xFE53_4D42 => "smb2",
        0x0BD0_0BD0 => "lustre",
        0x4750_4653 => "gpfs",
        0x00C3_6400 => "ceph",
        0x0102_1997 => "9p",
        0x2FC1_2FC1 => "zfs",
        0x4d44 => "vfat",
        0x7371_7368 => "squashfs",
        _ => return format!("{magic:#x}"),
    };
    name.to_owned()
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

/// The layers of this process: its cache and its read-only store.
#[derive(Debug, Default)]
struct Layers {
    cache: Option<Store>,
    store: Option<Store>,
}

/// The cache and store of this process: resolved from [`Config::process`] on
/// first use (one warning if either is unusable for a reason other than being
/// off or absent).
fn process_layers() -> &'static Layers {
    #[cfg(test)]
    {
        // Unit tests never touch a real cache.
        static NONE: Layers = Layers {
            cache: None,
            store: None,
        };
        &NONE
    }
    #[cfg(not(test))]
    {
        static LAYERS: std::sync::OnceLock<Layers> = std::sync::OnceLock::new();
        LAYERS.get_or_init(|| {
            let config = Config::process();
            let secure = sys::at_secure();
            let settings = Settings::from_config(config, secure);
            for w in &settings.warnings {
                log::warn!("rewrite cache: {w}");
            }
            let off = config.cache_off || secure;
            let cache = match Store::open(&settings) {
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
            };
            let here = process_layers as fn() -> &'static Layers as usize;
            let installed = crate::dl::object_of(here).map(PathBuf::from);
            let store = if off {
                None
            } else {
                match store_dir(config, installed.as_deref()) {
                    Err(why) => {
                        log::debug!("rewrite cache: no read-only store: {why}");
                        None
                    }
                    Ok(dir) if config.cache_store.is_none() && !dir.exists() => {
                        log::debug!("rewrite cache: no read-only store at {}", dir.display());
                        None
                    }
                    Ok(dir) => match Store::open_read_only(&dir) {
                        Ok(store) => {
                            log::debug!("rewrite cache: read-only store {}", store.path.display());
                            Some(store)
                        }
                        Err(why) => {
                            log::warn!("rewrite cache: read-only store not used: {why}");
                            None
                        }
                    },
                }
            };
            Layers { cache, store }
        })
    }
}

/// Whether this process is `AT_SECURE` (for the command line's report).
pub fn process_is_secure() -> bool {
    sys::at_secure()
}

/// Whether rewrites through `backend` consult a persistent cache layer in
/// this process (so the input's SHA-256 will be needed on a memo miss): a
/// cache or read-only store is usable, and the backend and the tool have
/// persistent identities.
pub fn in_use_for(backend: &dyn Backend) -> bool {
    let layers = process_layers();
    (layers.cache.is_some() || layers.store.is_some())
        && key::tool_identity().is_some()
        && backend.cache_identity().is_some()
}

/// The rewrite of `code_object` for `request` through `backend`, answered by
/// the process's cache when the backend and the tool have a persistent
/// identity and the cache is usable; `rewrite` is the rewrite itself.
/// `digest` is the input's when a pass computed it already (the in-process
/// memo's fused pass, [`crate::retained`]); else the input is hashed here,
/// only when a cache layer is used.
pub fn through(
    backend: &dyn Backend,
    code_object: &[u8],
    digest: Option<&InputDigest>,
    request: &Request<'_>,
    rewrite: impl FnOnce() -> Result<Retargeted, RetargetError>,
) -> Result<Retargeted, RetargetError> {
    let layers = process_layers();
    if layers.cache.is_none() && layers.store.is_none() {
        return rewrite();
    }
    let (Some(identity), Some(tool)) = (backend.cache_identity(), key::tool_identity()) else {
        return rewrite();
    };
    let digest = InputDigest::given_or_of(digest, code_object);
    through_layers(
        layers.cache.as_ref(),
        layers.store.as_ref(),
        tool,
        &identity,
        &digest,
        request,
        rewrite,
    )
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
