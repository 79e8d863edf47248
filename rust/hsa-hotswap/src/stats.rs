//! Process-wide counters, reported at info level by `OnUnload` (no export
//! needed). A leaf module: every other module may count, none is imported here.

use std::sync::atomic::{AtomicU64, Ordering};

/// The counters.
#[derive(Debug)]
pub struct Stats {
    /// Bytes of code objects the tool copied (file readers read into memory).
    pub copied_bytes: AtomicU64,
    /// Rewriter calls.
    pub rewriter_calls: AtomicU64,
    /// Bytes of input code objects read to hash them for the memo's and the
    /// persistent cache's keys, once per pass (a pass computing both digests
    /// counts its bytes once; `crate::digest`).
    pub hashed_bytes: AtomicU64,
    /// Rewritten buffers made (kept while ROCr may read them).
    pub retained_buffers: AtomicU64,
    /// Their total size.
    pub retained_bytes: AtomicU64,
    /// Rewritten buffers freed (no executable nor reader held them any more).
    pub released_buffers: AtomicU64,
    /// Their total size.
    pub released_bytes: AtomicU64,
    /// File buffers kept for an executable because ROCr loaded from them.
    pub pinned_files: AtomicU64,
}

/// The counters of this process.
pub static STATS: Stats = Stats {
    copied_bytes: AtomicU64::new(0),
    rewriter_calls: AtomicU64::new(0),
    hashed_bytes: AtomicU64::new(0),
    retained_buffers: AtomicU64::new(0),
    retained_bytes: AtomicU64::new(0),
    released_buffers: AtomicU64::new(0),
    released_bytes: AtomicU64::new(0),
    pinned_files: AtomicU64::new(0),
};

impl Stats {
    /// Adds `n` to `counter`.
    pub fn add(counter: &AtomicU64, n: usize) {
        counter.fetch_add(n as u64, Ordering::Relaxed);
    }

    /// One line for the log.
    pub fn summary(&self) -> String {
        let get = |c: &AtomicU64| c.load(Ordering::Relaxed);
        format!(
            "bytes copied {}, bytes hashed {}, rewriter calls {}, rewritten buffers {} ({} bytes), \
             released {} ({} bytes), file buffers kept for executables {}",
            get(&self.copied_bytes),
            get(&self.hashed_bytes),
            get(&self.rewriter_calls),
            get(&self.retained_buffers),
            get(&self.retained_bytes),
            get(&self.released_buffers),
            get(&self.released_bytes),
            get(&self.pinned_files),
        )
    }
}
