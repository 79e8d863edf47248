//! What the tool keeps because ROCr may read it, for exactly as long as ROCr
//! may read it, and the rewrite cache.
//!
//! The rule (ROCr's loader, restated in the reference for the upstream tool and
//! ROCr's own rocjitsu hook, which "retains loaded bytes per executable until
//! `hsa_executable_destroy`"): a loaded code object (`LoadedCodeObjectImpl`)
//! keeps a raw pointer to the bytes it was loaded from, read by the debugger,
//! profilers and the `hsa_ven_amd_loader` queries while its executable lives;
//! `hsa_executable_destroy` ends that, and so does `hsa_shut_down`, which
//! destroys the loader (after `OnUnload`, so a runtime instance is only known
//! to be gone when the next `hsa_init` calls `OnLoad`). A reader's bytes are
//! read by ROCr while the reader lives.
//!
//! So bytes the tool made and ROCr loaded from (a rewritten code object, or a
//! file's contents behind a memory reader the tool made) are reference-counted
//! ([`Kept`]), held by:
//! - each executable that loaded them ([`Executables`], until its
//!   `hsa_executable_destroy` returned, or until the session of its runtime
//!   instance is dropped by the next `OnLoad`);
//! - the reader whose load they answer ([`crate::readers`], until the
//!   application destroys it, or the next `OnLoad`).
//!
//! They are freed when the last holder lets go: never while ROCr may read them,
//! and never by `OnUnload` (ROCr destroys its loader after it) nor by a static
//! destructor (Rust runs none; HIP calls `hsa_shut_down` from an atexit
//! handler, after the library's static destructors).
//!
//! Identical code objects rewritten for the same ISA pair are rewritten once
//! while the result is alive: the cache key is (source ISA, target ISA, size,
//! XXH3-128 of the bytes), and the cache holds a weak reference to a rewritten
//! object, so it never keeps one alive. An object rewritten again after the last
//! holder freed it is rewritten again. "Unchanged" and "declined" answers are
//! kept for at most `MAX_SETTLED` (4,096) distinct objects (the oldest half is dropped
//! beyond that), so a process that loads ever new objects (run-time compilers,
//! autotuners) keeps a bounded cache. Hashing reads the bytes once per reader
//! and ISA pair: a reader remembers its outcome ([`crate::readers`]), so a
//! repeated load of a reader already rewritten reads nothing.
//!
//! XXH3-128 (crate `twox-hash`), not the persistent cache's SHA-256: this key
//! is on the path of every new reader of bytes already rewritten, where XXH3
//! runs 8–25 times as fast as SHA-256 even with the CPU's SHA extensions
//! (`examples/hash_bench.rs` prints both); it needs no collision resistance,
//! because its entries live in this process, come from objects this process
//! loaded, and never reach the disk: an object made to collide could only get
//! the rewrite of another object this process loaded in place of its own
//! code, nothing a code object loaded into the process cannot do anyway. Only
//! a miss goes on to the persistent cache, whose key holds the object's
//! SHA-256 (its entries cross users and machines, so they must not be
//! forgeable by a colliding input). Both digests come from
//! [`crate::digest`]: when a persistent cache layer is in use and no memo
//! entry (done or in progress) has the input's ISA pair and size, so the memo
//! cannot answer, one fused pass computes both and the SHA-256 is handed to
//! the cache; when one has, XXH3-128 comes first and the cache hashes SHA-256
//! only on a miss; without a cache layer, XXH3-128 only. So a first load with
//! the cache on reads the object once, and so does every later one. The
//! stand-in benchmark prints this key's rate on this machine. Concurrent
//! requests for the same key wait on a condition variable for the one rewrite
//! in progress; no lock is held while the rewriter runs.

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, Weak};

use crate::digest::{Digests, InputDigest};
use crate::handle_map::HandleMap;
use crate::hsa::api::hsa_executable_t;
use crate::policy::Decision;
use crate::rewriter::{RetargetError, Retargeted, Rewritten};
use crate::stats::{Stats, STATS};

/// At most this many "unchanged" or "declined" answers are cached.
pub(crate) const MAX_SETTLED: usize = 4096;

/// A rewritten code object the tool owns; freed (and counted as released) when
/// the last [`Arc`] goes.
#[derive(Debug)]
pub struct RewrittenObject(Rewritten);

impl RewrittenObject {
    fn new(rewritten: Rewritten) -> RewrittenObject {
        Stats::add(&STATS.retained_buffers, 1);
        Stats::add(&STATS.retained_bytes, rewritten.bytes().len());
        RewrittenObject(rewritten)
    }
}

impl std::ops::Deref for RewrittenObject {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        self.0.bytes()
    }
}

impl Drop for RewrittenObject {
    fn drop(&mut self) {
        Stats::add(&STATS.released_buffers, 1);
        Stats::add(&STATS.released_bytes, self.0.bytes().len());
    }
}

/// A shared rewritten code object.
pub type RewrittenBytes = Arc<RewrittenObject>;

/// What a rewrite gave.
#[derive(Clone, Debug)]
pub enum Outcome {
    /// New bytes, alive while someone holds them.
    Changed(RewrittenBytes),
    /// The rewriter returned the input unchanged: load the original.
    Unchanged,
    /// The rewriter declined this object for what it contains
    /// ([`RetargetError::Refused`]) or this pair ([`RetargetError::Unsupported`]):
    /// asking again gives the same answer, so it is not asked again. Load the
    /// original.
    Declined,
}

/// A file's bytes read by the tool, shared between the reader registry and the
/// executables that loaded them. An `Arc` around the boxed buffer (not
/// `Arc<[u8]>`, whose construction from a `Vec` copies every byte once more).
pub type FileBytes = Arc<Box<[u8]>>;

/// Bytes ROCr loaded from, held for an executable.
#[derive(Clone, Debug)]
pub enum Kept {
    /// A rewritten code object.
    Rewritten(RewrittenBytes),
    /// A file's contents behind a memory reader the tool made.
    File(FileBytes),
}

impl Kept {
    fn same(&self, other: &Kept) -> bool {
        match (self, other) {
            (Kept::Rewritten(a), Kept::Rewritten(b)) => Arc::ptr_eq(a, b),
            (Kept::File(a), Kept::File(b)) => Arc::ptr_eq(a, b),
            _ => false,
        }
    }
}

/// Executable handle → the bytes it loaded from the tool's buffers (usually
/// one or two). One short lock per load of such bytes and per destroy of such
/// an executable; an executable that loaded only the application's bytes is
/// never entered, and while none is entered a destroy takes no lock.
#[derive(Debug, Default)]
pub struct Executables {
    map: Mutex<HandleMap<Vec<Kept>>>,
    /// Entries in `map` (changed under its lock).
    entries: AtomicUsize,
}

impl Executables {
    /// Keeps `bytes` alive while `executable` lives.
    pub fn keep(&self, executable: hsa_executable_t, bytes: Kept) {
        let mut map = self.lock();
        let list = map.entry(executable.handle).or_insert_with(|| {
            self.entries.fetch_add(1, Ordering::Release);
            Vec::new()
        });
        if !list.iter().any(|k| k.same(&bytes)) {
            if matches!(bytes, Kept::File(_)) {
                Stats::add(&STATS.pinned_files, 1);
            }
            list.push(bytes);
        }
    }

    /// True when no executable holds anything.
    pub fn is_empty(&self) -> bool {
        self.entries.load(Ordering::Acquire) == 0
    }

    /// Takes out what `executable` holds (before ROCr's destroy runs, so a
    /// handle ROCr reuses right after cannot lose its new entry). The caller
    /// drops it once the destroy returned, or gives it back with
    /// [`Executables::give_back`] if the destroy failed.
    pub fn take(&self, executable: hsa_executable_t) -> Option<Vec<Kept>> {
        if self.is_empty() {
            return None;
        }
        let taken = self.lock().remove(&executable.handle)?;
        self.entries.fetch_sub(1, Ordering::Release);
        Some(taken)
    }

    /// Puts back what [`Executables::take`] took (the destroy failed: the
    /// executable, if it is one, still lives).
    pub fn give_back(&self, executable: hsa_executable_t, kept: Vec<Kept>) {
        for k in kept {
            self.keep(executable, k);
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HandleMap<Vec<Kept>>> {
        self.map.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// What a memo key holds besides the hash: entries of another shape cannot
/// answer for an input.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Shape {
    source: String,
    target: String,
    len: u64,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Key {
    shape: Shape,
    hash: u128,
}

/// A cached answer: a weak reference for new bytes (the cache never keeps a
/// rewritten object alive).
#[derive(Clone, Debug)]
enum Cached {
    Changed(Weak<RewrittenObject>),
    Unchanged,
    Declined,
}

/// One cache entry: a rewrite in progress (other threads wait for it) or done.
#[derive(Clone, Debug)]
enum Entry {
    InProgress,
    Done(Cached),
}

#[derive(Default)]
struct Map {
    entries: HashMap<Key, Entry>,
    /// The number of entries of each shape in `entries`.
    shapes: HashMap<Shape, usize>,
    /// Keys of the "unchanged" and "declined" entries, oldest first.
    settled: VecDeque<Key>,
    /// Size at which dead weak entries are swept next.
    sweep_at: usize,
}

/// One entry of `shape` fewer in `shapes`.
fn forget_shape(shapes: &mut HashMap<Shape, usize>, shape: &Shape) {
    if let Some(n) = shapes.get_mut(shape) {
        *n -= 1;
        if *n == 0 {
            shapes.remove(shape);
        }
    }
}

impl Map {
    /// Whether an entry (done or in progress) could answer for an input of
    /// `shape`: one of the same ISA pair and size is held.
    fn could_hold(&self, shape: &Shape) -> bool {
        self.shapes.contains_key(shape)
    }

    fn put(&mut self, key: Key, entry: Entry) {
        let shape = key.shape.clone();
        if self.entries.insert(key, entry).is_none() {
            *self.shapes.entry(shape).or_default() += 1;
        }
    }

    fn remove(&mut self, key: &Key) {
        if self.entries.remove(key).is_some() {
            forget_shape(&mut self.shapes, &key.shape);
        }
    }

    fn insert_done(&mut self, key: Key, cached: Cached) {
        if !matches!(cached, Cached::Changed(_)) {
            self.settled.push_back(key.clone());
        }
        self.put(key, Entry::Done(cached));
        if self.settled.len() > MAX_SETTLED {
            for old in self.settled.drain(..MAX_SETTLED / 2) {
                if matches!(
                    self.entries.get(&old),
                    Some(Entry::Done(Cached::Unchanged | Cached::Declined))
                ) {
                    self.entries.remove(&old);
                    forget_shape(&mut self.shapes, &old.shape);
                }
            }
        }
        if self.entries.len() >= self.sweep_at {
            let shapes = &mut self.shapes;
            self.entries.retain(|key, e| {
                let live = match e {
                    Entry::Done(Cached::Changed(weak)) => weak.strong_count() > 0,
                    _ => true,
                };
                if !live {
                    forget_shape(shapes, &key.shape);
                }
                live
            });
            self.sweep_at = (2 * self.entries.len()).max(64);
        }
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether `shapes` counts exactly the entries of each shape.
    #[cfg(test)]
    fn shapes_counted(&self) -> bool {
        let mut counted = HashMap::new();
        for key in self.entries.keys() {
            *counted.entry(key.shape.clone()).or_insert(0) += 1;
        }
        counted == self.shapes
    }
}

struct Cache {
    map: Mutex<Option<Map>>,
    done: Condvar,
}

static CACHE: Cache = Cache {
    map: Mutex::new(None),
    done: Condvar::new(),
};

fn lock_cache() -> std::sync::MutexGuard<'static, Option<Map>> {
    CACHE.map.lock().unwrap_or_else(|e| e.into_inner())
}

/// Forgets every cached rewrite (the buffers stay alive while held). For tests
/// that swap rewriters in one process.
#[cfg(any(test, feature = "testing"))]
pub fn forget_cache() {
    *lock_cache() = None;
}

/// Entries in the rewrite cache (for the tests' bound on it).
#[cfg(test)]
pub fn cache_len() -> usize {
    lock_cache().as_ref().map_or(0, Map::len)
}

/// The memo key of `code_object` for `decision`, and the digests computed on
/// the way: one fused pass (XXH3-128 and SHA-256) when no entry of this shape
/// could answer and `persistent_cache()` says a cache layer will want the
/// SHA-256 (asked only then); else one XXH3-128 pass (the cache, if any,
/// hashes on a miss).
fn key(
    code_object: &[u8],
    decision: &Decision,
    persistent_cache: impl FnOnce() -> bool,
) -> (Key, Digests) {
    let shape = Shape {
        source: decision.source.clone(),
        target: decision.target.clone(),
        len: code_object.len() as u64,
    };
    let could_hit = || {
        lock_cache()
            .as_ref()
            .is_some_and(|map| map.could_hold(&shape))
    };
    let digests = if !could_hit() && persistent_cache() {
        Digests::fused(code_object)
    } else {
        Digests::xxh3(code_object)
    };
    let key = Key {
        shape,
        hash: digests.xxh3_128,
    };
    (key, digests)
}

/// Removes an in-progress entry if the rewrite did not complete (error or
/// panic), and wakes the waiters so one of them can try.
struct Claim<'a> {
    key: &'a Key,
    completed: bool,
}

impl Drop for Claim<'_> {
    fn drop(&mut self) {
        let mut map = lock_cache();
        if !self.completed {
            if let Some(map) = map.as_mut() {
                map.remove(self.key);
            }
        }
        drop(map);
        CACHE.done.notify_all();
    }
}

/// The cached outcome of rewriting `code_object` with `decision`, calling
/// `rewrite` only when no live answer is cached. Returns the outcome and whether
/// it came from the cache. A refusal (`Refused`, `Unsupported`) is returned as
/// the error the first time and cached as [`Outcome::Declined`]; other failures
/// are not cached (a later load retries: they may be environmental). The cache
/// lock is never held while `rewrite` runs; a concurrent request for the same
/// key waits (on a condition variable) for the rewrite in progress.
///
/// `persistent_cache()`: whether `rewrite` goes through a persistent cache
/// layer, which keys the input by its SHA-256 (asked only when the memo
/// cannot answer, so a memo hit never pays for the question); `rewrite` is
/// given that digest when the memo's pass computed it too (see [`key`]).
pub fn rewrite_once(
    code_object: &[u8],
    decision: &Decision,
    persistent_cache: impl FnOnce() -> bool,
    rewrite: impl FnOnce(Option<&InputDigest>) -> Result<Retargeted, RetargetError>,
) -> Result<(Outcome, bool), RetargetError> {
    let (key, digests) = key(code_object, decision, persistent_cache);
    {
        let mut guard = lock_cache();
        loop {
            let map = guard.get_or_insert_with(Map::default);
            match map.entries.get(&key) {
                Some(Entry::Done(Cached::Changed(weak))) => match weak.upgrade() {
                    Some(bytes) => return Ok((Outcome::Changed(bytes), true)),
                    // Freed since: rewrite again.
                    None => break,
                },
                Some(Entry::Done(Cached::Unchanged)) => return Ok((Outcome::Unchanged, true)),
                Some(Entry::Done(Cached::Declined)) => return Ok((Outcome::Declined, true)),
                Some(Entry::InProgress) => {
                    guard = CACHE.done.wait(guard).unwrap_or_else(|e| e.into_inner());
                }
                None => break,
            }
        }
        guard
            .get_or_insert_with(Map::default)
            .put(key.clone(), Entry::InProgress);
    }
    let mut claim = Claim {
        key: &key,
        completed: false,
    };
    Stats::add(&STATS.rewriter_calls, 1);
    let result = rewrite(digests.input_digest().as_ref());
    if let Err(declined @ (RetargetError::Refused(_) | RetargetError::Unsupported)) = &result {
        lock_cache()
            .get_or_insert_with(Map::default)
            .insert_done(key.clone(), Cached::Declined);
        claim.completed = true;
        return Err(declined.clone());
    }
    let (outcome, cached) = match result? {
        Retargeted::Unchanged => (Outcome::Unchanged, Cached::Unchanged),
        Retargeted::Changed(rewritten) => {
            if rewritten.bytes().is_empty() {
                return Err(RetargetError::Failed);
            }
            let bytes = Arc::new(RewrittenObject::new(rewritten));
            let weak = Arc::downgrade(&bytes);
            (Outcome::Changed(bytes), Cached::Changed(weak))
        }
    };
    lock_cache()
        .get_or_insert_with(Map::default)
        .insert_done(key.clone(), cached);
    claim.completed = true;
    drop(claim);
    Ok((outcome, false))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::Ordering;

    #[test]
    fn failures_are_not_cached_unchanged_is() {
        let _counters = crate::testing::exclusive();
        let d = Decision {
            source: "test-src-unique".into(),
            target: "test-tgt".into(),
        };
        let bytes = b"some code object";
        assert!(rewrite_once(bytes, &d, || false, |_| Err(RetargetError::Failed)).is_err());
        let (o, cached) = rewrite_once(bytes, &d, || false, |_| Ok(Retargeted::Unchanged)).unwrap();
        assert!(matches!(o, Outcome::Unchanged) && !cached);
        let (o, cached) =
            rewrite_once(bytes, &d, || false, |_| panic!("must not be called")).unwrap();
        assert!(matches!(o, Outcome::Unchanged) && cached);
    }

    #[test]
    fn refusals_are_cached_as_declined() {
        let _counters = crate::testing::exclusive();
        let d = Decision {
            source: "test-src-refused".into(),
            target: "test-tgt".into(),
        };
        let bytes = b"refused code object";
        let refused = RetargetError::Refused("growth".into());
        assert_eq!(
            rewrite_once(bytes, &d, || false, |_| Err(refused.clone())).unwrap_err(),
            refused
        );
        let (o, cached) =
            rewrite_once(bytes, &d, || false, |_| panic!("must not be called")).unwrap();
        assert!(matches!(o, Outcome::Declined) && cached);
    }

    #[test]
    fn a_panicking_rewrite_releases_its_claim() {
        let _counters = crate::testing::exclusive();
        let d = Decision {
            source: "test-src-panic".into(),
            target: "test-tgt".into(),
        };
        let bytes = b"another code object";
        let r = std::panic::catch_unwind(|| {
            rewrite_once(bytes, &d, || false, |_| panic!("rewriter bug"))
        });
        assert!(r.is_err());
        let (o, cached) = rewrite_once(bytes, &d, || false, |_| Ok(Retargeted::Unchanged)).unwrap();
        assert!(matches!(o, Outcome::Unchanged) && !cached);
    }

    #[test]
    fn the_cache_stays_bounded_and_holds_no_object_alive() {
        let _counters = crate::testing::exclusive();
        forget_cache();
        let d = Decision {
            source: "test-src-bounded".into(),
            target: "test-tgt".into(),
        };
        for i in 0..3 * MAX_SETTLED as u64 {
            let bytes = i.to_le_bytes();
            let (o, _) = rewrite_once(&bytes, &d, || false, |_| Ok(Retargeted::Unchanged)).unwrap();
            assert!(matches!(o, Outcome::Unchanged));
        }
        assert!(cache_len() <= MAX_SETTLED + 1, "{} entries", cache_len());
        // Rewritten objects: the cache answers while one is alive, and forgets
        // it once it is freed.
        let changed =
            |_: Option<&InputDigest>| Rewritten::copy_of(b"rewritten").map(Retargeted::Changed);
        let (o, cached) = rewrite_once(b"object", &d, || false, changed).unwrap();
        let Outcome::Changed(first) = o else {
            panic!("changed")
        };
        assert!(!cached);
        let (o, cached) = rewrite_once(b"object", &d, || false, |_| panic!("cached")).unwrap();
        assert!(cached && matches!(&o, Outcome::Changed(b) if Arc::ptr_eq(b, &first)));
        drop((o, first));
        let (o, cached) = rewrite_once(b"object", &d, || false, changed).unwrap();
        assert!(
            !cached && matches!(o, Outcome::Changed(_)),
            "rewritten again"
        );
        for i in 0..1000u64 {
            let bytes = (i + 1_000_000).to_le_bytes();
            drop(rewrite_once(&bytes, &d, || false, changed).unwrap());
        }
        // Dead entries are swept once the map doubled since the last sweep.
        assert!(
            cache_len() <= 2 * (MAX_SETTLED + 1) + 64,
            "dead entries swept: {}",
            cache_len()
        );
        // Entries dropped (settled answers) and swept (dead objects) are no
        // longer counted as shapes the memo could answer for.
        assert!(lock_cache().as_ref().unwrap().shapes_counted());
        forget_cache();
        for i in 0..200u64 {
            let bytes = (i + 2_000_000).to_le_bytes();
            drop(rewrite_once(&bytes, &d, || false, changed).unwrap());
        }
        assert!(cache_len() < 100, "dead entries swept: {}", cache_len());
        assert!(lock_cache().as_ref().unwrap().shapes_counted());
        forget_cache();
    }

    #[test]
    fn concurrent_requests_rewrite_once() {
        let _counters = crate::testing::exclusive();
        let d = Decision {
            source: "test-src-threads".into(),
            target: "test-tgt".into(),
        };
        let calls = std::sync::atomic::AtomicUsize::new(0);
        std::thread::scope(|scope| {
            for _ in 0..8 {
                scope.spawn(|| {
                    rewrite_once(
                        b"shared",
                        &d,
                        || false,
                        |_| {
                            calls.fetch_add(1, Ordering::SeqCst);
                            std::thread::sleep(std::time::Duration::from_millis(20));
                            Ok(Retargeted::Unchanged)
                        },
                    )
                    .unwrap()
                });
            }
        });
        assert_eq!(calls.load(Ordering::SeqCst), 1);
    }
}
