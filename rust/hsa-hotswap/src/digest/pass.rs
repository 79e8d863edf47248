//! The passes over an input's bytes, and nothing else: no bookkeeping, no
//! crate imports, so that `examples/hash_bench.rs` compiles this very file
//! (by path) and measures the code the tool runs.

use sha2::{Digest, Sha256};
use twox_hash::XxHash3_128;

/// The bytes [`fused`] feeds to one hasher and then the other: small enough
/// to stay in the L1/L2 cache in between, so the input is read from memory
/// once. 32 KiB: 16, 32 and 64 KiB measured alike (`hash_bench` prints them).
/// (`pub(crate)`, not `pub`: cbindgen would put a `pub` constant in the C
/// header.)
pub(crate) const CHUNK: usize = 32 << 10;

/// XXH3-128 of `bytes`, one pass.
pub fn xxh3_128(bytes: &[u8]) -> u128 {
    XxHash3_128::oneshot(bytes)
}

/// SHA-256 of `bytes`, one pass.
pub fn sha256(bytes: &[u8]) -> [u8; 32] {
    Sha256::digest(bytes).into()
}

/// XXH3-128 and SHA-256 of `bytes` in one pass: each `chunk` bytes (at least
/// one) go to both hashers before the next are read. Equal to
/// [`xxh3_128`] and [`sha256`] of the same bytes.
///
/// SHA-256 reads each chunk first: it is bound by computation, so the
/// prefetcher hides its reads from memory; XXH3-128, bound by memory over a
/// large input, then finds the chunk in the cache. (The other order saved
/// nothing over two passes.)
pub fn fused(bytes: &[u8], chunk: usize) -> (u128, [u8; 32]) {
    let mut xxh3 = XxHash3_128::new();
    let mut sha = Sha256::new();
    for piece in bytes.chunks(chunk.max(1)) {
        sha.update(piece);
        xxh3.write(piece);
    }
    (xxh3.finish_128(), sha.finalize().into())
}
