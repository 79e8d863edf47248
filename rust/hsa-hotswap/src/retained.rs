//! Buffers ROCr may read until the process ends, and the rewrite cache.
//!
//! ROCr keeps raw pointers to the bytes of every loaded code object (debugger,
//! profilers, `hsa_ven_amd_loader` queries) and destroys its loader only after
//! `OnUnload`. So rewritten code objects, and file bytes ROCr loaded from, are
//! kept for the life of the process and never freed. They live in `static`s,
//! which Rust never destroys: no static destructor can free them before ROCr's
//! teardown (HIP runs `hsa_shut_down` from an atexit handler, after the library's
//! static destructors).
//!
//! Identical code objects rewritten for the same ISA pair are rewritten once and
//! retained once: the cache key is (source ISA, target ISA, size, XXH3-128 of the
//! bytes). Hashing reads the bytes once per reader and ISA pair: a reader
//! remembers its outcome ([`crate::readers`]), so a repeated load of a reader
//! already rewritten reads nothing. XXH3 (crate `twox-hash`) runs at memory
//! speed; the figure on this machine is printed by the stand-in benchmark. Concurrent
//! requests for the same key wait on a condition variable for the one rewrite in
//! progress; no lock is held while the rewriter runs.
#![allow(unsafe_code)] // turns the rewriter's malloc'd buffers into process-lifetime slices

use std::collections::HashMap;
use std::sync::{Arc, Condvar, Mutex};

use crate::policy::Decision;
use crate::rewriter::{RetargetError, Retargeted};
use crate::stats::{Stats, STATS};

/// What a rewrite gave, as cached.
#[derive(Clone, Copy, Debug)]
pub enum Outcome {
    /// New bytes, kept for the life of the process.
    Changed(&'static [u8]),
    /// The rewriter returned the input unchanged: load the original.
    Unchanged,
    /// The rewriter declined this object for what it contains
    /// ([`RetargetError::Refused`]) or this pair ([`RetargetError::Unsupported`]):
    /// asking again gives the same answer, so it is not asked again. Load the
    /// original.
    Declined,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Key {
    source: String,
    target: String,
    len: usize,
    hash: u128,
}

/// One cache entry: a rewrite in progress (other threads wait for it) or done.
#[derive(Clone, Copy, Debug)]
enum Entry {
    InProgress,
    Done(Outcome),
}

struct Cache {
    map: Mutex<Option<HashMap<Key, Entry>>>,
    done: Condvar,
}

static CACHE: Cache = Cache {
    map: Mutex::new(None),
    done: Condvar::new(),
};
/// A file's bytes read by the tool, shared between the reader registry and the
/// pinned buffers. An `Arc` around the boxed buffer (not `Arc<[u8]>`, whose
/// construction from a `Vec` copies every byte once more).
pub type FileBytes = Arc<Box<[u8]>>;

static PINNED: Mutex<Vec<FileBytes>> = Mutex::new(Vec::new());

/// Forgets every cached rewrite (the buffers stay alive: ROCr may still read
/// them). For tests that swap rewriters in one process.
#[cfg(any(test, feature = "testing"))]
pub fn forget_cache() {
    if let Some(map) = CACHE.map.lock().unwrap_or_else(|e| e.into_inner()).as_mut() {
        map.clear();
    }
}

/// Keeps `bytes` alive for the rest of the process (ROCr loaded from them).
pub fn pin(bytes: &FileBytes) {
    let mut pinned = PINNED.lock().unwrap_or_else(|e| e.into_inner());
    if !pinned.iter().any(|p| Arc::ptr_eq(p, bytes)) {
        pinned.push(Arc::clone(bytes));
        Stats::add(&STATS.pinned_files, 1);
    }
}

fn key(code_object: &[u8], decision: &Decision) -> Key {
    Stats::add(&STATS.hashed_bytes, code_object.len());
    Key {
        source: decision.source.clone(),
        target: decision.target.clone(),
        len: code_object.len(),
        hash: twox_hash::XxHash3_128::oneshot(code_object),
    }
}

/// Removes an in-progress entry if the rewrite did not complete (error or
/// panic), and wakes the waiters so one of them can try.
struct Claim<'a> {
    key: &'a Key,
    completed: bool,
}

impl Drop for Claim<'_> {
    fn drop(&mut self) {
        let mut map = CACHE.map.lock().unwrap_or_else(|e| e.into_inner());
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
/// `rewrite` only the first time. Returns the outcome and whether it came from
/// the cache. A refusal (`Refused`, `Unsupported`) is returned as the error the
/// first time and cached as [`Outcome::Declined`]; other failures are not
/// cached (a later load retries: they may be environmental). The cache lock is
/// never held while `rewrite` runs; a concurrent request for the same key waits
/// (on a condition variable) for the rewrite in progress.
pub fn rewrite_once(
    code_object: &[u8],
    decision: &Decision,
    rewrite: impl FnOnce() -> Result<Retargeted, RetargetError>,
) -> Result<(Outcome, bool), RetargetError> {
    let key = key(code_object, decision);
    {
        let mut map = CACHE.map.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            match map.get_or_insert_with(HashMap::new).get(&key) {
                Some(Entry::Done(outcome)) => return Ok((*outcome, true)),
                Some(Entry::InProgress) => {
                    map = CACHE.done.wait(map).unwrap_or_else(|e| e.into_inner());
                }
                None => break,
            }
        }
        map.get_or_insert_with(HashMap::new)
            .insert(key.clone(), Entry::InProgress);
    }
    let mut claim = Claim {
        key: &key,
        completed: false,
    };
    Stats::add(&STATS.rewriter_calls, 1);
    let result = rewrite();
    if let Err(declined @ (RetargetError::Refused(_) | RetargetError::Unsupported)) = &result {
        let mut map = CACHE.map.lock().unwrap_or_else(|e| e.into_inner());
        map.get_or_insert_with(HashMap::new)
            .insert(key.clone(), Entry::Done(Outcome::Declined));
        claim.completed = true;
        return Err(declined.clone());
    }
    let outcome = match result? {
        Retargeted::Unchanged => Outcome::Unchanged,
        Retargeted::Changed(rewritten) => {
            let (ptr, len) = rewritten.into_raw();
            if ptr.is_null() || len == 0 {
                return Err(RetargetError::Failed);
            }
            Stats::add(&STATS.retained_buffers, 1);
            Stats::add(&STATS.retained_bytes, len);
            // SAFETY: `into_raw` hands over a malloc'd buffer of `len` bytes that
            // nothing else owns; it is never freed, so the slice is 'static.
            Outcome::Changed(unsafe { std::slice::from_raw_parts(ptr, len) })
        }
    };
    {
        let mut map = CACHE.map.lock().unwrap_or_else(|e| e.into_inner());
        map.get_or_insert_with(HashMap::new)
            .insert(key.clone(), Entry::Done(outcome));
    }
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
        assert!(rewrite_once(bytes, &d, || Err(RetargetError::Failed)).is_err());
        let (o, cached) = rewrite_once(bytes, &d, || Ok(Retargeted::Unchanged)).unwrap();
        assert!(matches!(o, Outcome::Unchanged) && !cached);
        let (o, cached) = rewrite_once(bytes, &d, || panic!("must not be called")).unwrap();
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
            rewrite_once(bytes, &d, || Err(refused.clone())).unwrap_err(),
            refused
        );
        let (o, cached) = rewrite_once(bytes, &d, || panic!("must not be called")).unwrap();
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
        let r = std::panic::catch_unwind(|| rewrite_once(bytes, &d, || panic!("rewriter bug")));
        assert!(r.is_err());
        let (o, cached) = rewrite_once(bytes, &d, || Ok(Retargeted::Unchanged)).unwrap();
        assert!(matches!(o, Outcome::Unchanged) && !cached);
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
                    rewrite_once(b"shared", &d, || {
                        calls.fetch_add(1, Ordering::SeqCst);
                        std::thread::sleep(std::time::Duration::from_millis(20));
                        Ok(Retargeted::Unchanged)
                    })
                    .unwrap()
                });
            }
        });
        assert_eq!(calls.load(Ordering::SeqCst), 1);
    }
}
