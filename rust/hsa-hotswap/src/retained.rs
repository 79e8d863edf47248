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
//! retained once: the cache key is (source ISA, target ISA, size, 64-bit SipHash
//! of the bytes). Hashing reads the bytes, which only happens on the rewrite path
//! (where the rewriter reads and copies them anyway). Concurrent requests for the
//! same key wait for the one rewrite in progress (a per-key lock); no global lock
//! is held while the rewriter runs.
#![allow(unsafe_code)] // turns the rewriter's malloc'd buffers into process-lifetime slices

use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use crate::code_object::rewriter::{RetargetError, Retargeted};
use crate::policy::Decision;

/// Process-wide counters, reported at debug level by `OnUnload` (no export needed).
#[derive(Debug)]
pub struct Stats {
    /// Bytes of code objects the tool copied (file readers read into memory).
    pub copied_bytes: AtomicU64,
    /// Rewriter calls.
    pub rewriter_calls: AtomicU64,
    /// Rewritten buffers kept for the life of the process.
    pub retained_buffers: AtomicU64,
    /// Their total size.
    pub retained_bytes: AtomicU64,
    /// File buffers kept because ROCr loaded from them.
    pub pinned_files: AtomicU64,
}

/// The counters.
pub static STATS: Stats = Stats {
    copied_bytes: AtomicU64::new(0),
    rewriter_calls: AtomicU64::new(0),
    retained_buffers: AtomicU64::new(0),
    retained_bytes: AtomicU64::new(0),
    pinned_files: AtomicU64::new(0),
};

impl Stats {
    /// Counts a copy of `n` bytes.
    pub fn add_copied(&self, n: usize) {
        self.copied_bytes.fetch_add(n as u64, Ordering::Relaxed);
    }

    /// One line for the log.
    pub fn summary(&self) -> String {
        format!(
            "bytes copied {}, rewriter calls {}, retained buffers {} ({} bytes), pinned file buffers {}",
            self.copied_bytes.load(Ordering::Relaxed),
            self.rewriter_calls.load(Ordering::Relaxed),
            self.retained_buffers.load(Ordering::Relaxed),
            self.retained_bytes.load(Ordering::Relaxed),
            self.pinned_files.load(Ordering::Relaxed),
        )
    }
}

/// What a rewrite gave, as cached.
#[derive(Clone, Copy, Debug)]
pub enum Outcome {
    /// New bytes, kept for the life of the process.
    Changed(&'static [u8]),
    /// The rewriter returned the input unchanged: load the original.
    Unchanged,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Key {
    source: String,
    target: String,
    len: usize,
    hash: u64,
}

type CacheSlot = Arc<Mutex<Option<Outcome>>>;
static CACHE: Mutex<Option<HashMap<Key, CacheSlot>>> = Mutex::new(None);
static PINNED: Mutex<Vec<Arc<[u8]>>> = Mutex::new(Vec::new());

/// Keeps `bytes` alive for the rest of the process (ROCr loaded from them).
pub fn pin(bytes: &Arc<[u8]>) {
    let mut pinned = PINNED.lock().unwrap_or_else(|e| e.into_inner());
    if !pinned.iter().any(|p| Arc::ptr_eq(p, bytes)) {
        pinned.push(Arc::clone(bytes));
        STATS.pinned_files.fetch_add(1, Ordering::Relaxed);
    }
}

/// The cached outcome of rewriting `code_object` with `decision`, calling
/// `rewrite` only the first time. Failures are not cached (a later load retries).
pub fn rewrite_once(
    code_object: &[u8],
    decision: &Decision,
    rewrite: impl FnOnce() -> Result<Retargeted, RetargetError>,
) -> Result<(Outcome, bool), RetargetError> {
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    code_object.hash(&mut hasher);
    let key = Key {
        source: decision.source.clone(),
        target: decision.target.clone(),
        len: code_object.len(),
        hash: hasher.finish(),
    };
    let slot = {
        let mut cache = CACHE.lock().unwrap_or_else(|e| e.into_inner());
        Arc::clone(
            cache
                .get_or_insert_with(HashMap::new)
                .entry(key)
                .or_default(),
        )
    };
    let mut slot = slot.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(outcome) = *slot {
        return Ok((outcome, true));
    }
    STATS.rewriter_calls.fetch_add(1, Ordering::Relaxed);
    let outcome = match rewrite()? {
        Retargeted::Unchanged => Outcome::Unchanged,
        Retargeted::Changed(rewritten) => {
            let (ptr, len) = rewritten.into_raw();
            if ptr.is_null() || len == 0 {
                return Err(RetargetError::Failed);
            }
            STATS.retained_buffers.fetch_add(1, Ordering::Relaxed);
            STATS
                .retained_bytes
                .fetch_add(len as u64, Ordering::Relaxed);
            // SAFETY: `into_raw` hands over a malloc'd buffer of `len` bytes that
            // nothing else owns; it is never freed, so the slice is 'static.
            Outcome::Changed(unsafe { std::slice::from_raw_parts(ptr, len) })
        }
    };
    *slot = Some(outcome);
    Ok((outcome, false))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failures_are_not_cached_unchanged_is() {
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
}
