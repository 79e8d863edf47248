//! The digests of an input code object: the one place the tool reads an
//! input's bytes to hash them, and counts each pass
//! ([`crate::stats::Stats::hashed_bytes`]: a pass over `n` bytes counts `n`,
//! whatever it computes).
//!
//! Two digests, for two keys: XXH3-128 for the in-process memo
//! ([`crate::retained`]: fast, because a memo hit must stay cheap; its
//! entries never leave the process, so it needs no collision resistance) and
//! SHA-256 for the persistent cache ([`crate::rewrite_cache::key`]: its
//! entries cross users and machines). [`Digests::fused`] computes both in one
//! pass, for a first load that will reach the cache; [`Digests::xxh3`] only
//! the memo's, and the cache then takes [`InputDigest::of`] on a memo miss.
//! (Checksums of cache entries and archives are not inputs and are not
//! counted here.)

mod pass;

use crate::stats::{Stats, STATS};

/// The SHA-256 and size of a code object: the persistent cache's view of its
/// input ([`crate::rewrite_cache::key::of_digest`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct InputDigest {
    /// SHA-256 of the bytes.
    pub sha256: [u8; 32],
    /// Their number.
    pub len: u64,
}

impl InputDigest {
    /// Hashes `bytes`: one SHA-256 pass.
    pub fn of(bytes: &[u8]) -> InputDigest {
        counted(bytes);
        InputDigest {
            sha256: pass::sha256(bytes),
            len: bytes.len() as u64,
        }
    }

    /// `given` (computed by an earlier pass over `bytes`), else a pass now.
    pub fn given_or_of(given: Option<&InputDigest>, bytes: &[u8]) -> InputDigest {
        match given {
            Some(digest) => {
                debug_assert_eq!(digest.len, bytes.len() as u64, "a digest of other bytes");
                *digest
            }
            None => InputDigest::of(bytes),
        }
    }
}

/// A code object's XXH3-128 (the in-process memo's key) and, when the same
/// pass computed it, its SHA-256 (the persistent cache's).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Digests {
    /// The number of bytes.
    pub len: u64,
    /// Their XXH3-128.
    pub xxh3_128: u128,
    /// Their SHA-256, when computed ([`Digests::fused`]).
    pub sha256: Option<[u8; 32]>,
}

impl Digests {
    /// XXH3-128 only: one pass.
    pub fn xxh3(bytes: &[u8]) -> Digests {
        counted(bytes);
        Digests {
            len: bytes.len() as u64,
            xxh3_128: pass::xxh3_128(bytes),
            sha256: None,
        }
    }

    /// XXH3-128 and SHA-256 in one pass over `bytes` (chunks of
    /// [`pass::CHUNK`] bytes fed to both hashers in turn).
    pub fn fused(bytes: &[u8]) -> Digests {
        counted(bytes);
        let (xxh3_128, sha256) = pass::fused(bytes, pass::CHUNK);
        Digests {
            len: bytes.len() as u64,
            xxh3_128,
            sha256: Some(sha256),
        }
    }

    /// The persistent cache's digest, when computed.
    pub fn input_digest(&self) -> Option<InputDigest> {
        self.sha256.map(|sha256| InputDigest {
            sha256,
            len: self.len,
        })
    }
}

/// Counts one pass over `bytes`.
fn counted(bytes: &[u8]) {
    Stats::add(&STATS.hashed_bytes, bytes.len());
    #[cfg(test)]
    testing::HERE.with(|here| here.set(here.get() + bytes.len() as u64));
}

/// The passes counted on the calling thread, for tests that run beside
/// others hashing in parallel (the process's counter sees theirs too).
#[cfg(test)]
pub mod testing {
    thread_local! {
        pub(super) static HERE: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
    }

    /// Bytes hashed on this thread so far (each pass counts its bytes once).
    pub fn hashed_here() -> u64 {
        HERE.with(|here| here.get())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sha2::{Digest, Sha256};
    use twox_hash::XxHash3_128;

    /// Bytes that look like data (not one repeated value), from `seed`.
    fn data(len: usize, seed: u64) -> Vec<u8> {
        let mut x = seed | 1;
        (0..len)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                (x >> 32) as u8
            })
            .collect()
    }

    fn check(bytes: &[u8], chunk: usize) {
        let (xxh3, sha) = pass::fused(bytes, chunk);
        let len = bytes.len();
        assert_eq!(
            xxh3,
            XxHash3_128::oneshot(bytes),
            "XXH3-128, {len} bytes, chunk {chunk}"
        );
        assert_eq!(
            sha[..],
            Sha256::digest(bytes)[..],
            "SHA-256, {len} bytes, chunk {chunk}"
        );
    }

    #[test]
    fn the_fused_pass_equals_the_one_shot_digests_around_chunk_boundaries() {
        const C: usize = pass::CHUNK;
        let mut lengths = vec![0, 1, 2, 63, 64, 65, 240, 241, 1024, 1025, C - 1, C, C + 1];
        lengths.extend([2 * C, 3 * C + 17, 5 * C + C / 2 - 1]);
        // Random lengths up to eight chunks.
        let mut x = 0x9e37_79b9_7f4a_7c15_u64;
        for _ in 0..12 {
            x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            lengths.push((x >> 33) as usize % (8 * C));
        }
        let all = data(*lengths.iter().max().unwrap(), 7);
        for &len in &lengths {
            check(&all[..len], C);
        }
        // Chunks that split XXH3's stripes (64 bytes), its internal buffer
        // (256) and SHA-256's blocks (64) anywhere.
        let some = data(5000, 11);
        for chunk in [1, 3, 63, 64, 65, 100, 255, 256, 257, 1000, 4999, 5000, 5001] {
            check(&some, chunk);
        }
    }

    #[test]
    fn digests_agree_with_each_other_and_count_one_pass_each() {
        let bytes = data(3 * pass::CHUNK + 5, 3);
        let n = bytes.len() as u64;
        let before = testing::hashed_here();
        let fused = Digests::fused(&bytes);
        assert_eq!(testing::hashed_here() - before, n, "one pass");
        let xxh3 = Digests::xxh3(&bytes);
        let input = InputDigest::of(&bytes);
        assert_eq!(testing::hashed_here() - before, 3 * n);
        assert_eq!(fused.xxh3_128, xxh3.xxh3_128);
        assert_eq!((xxh3.sha256, xxh3.input_digest()), (None, None));
        assert_eq!(fused.input_digest(), Some(input));
        assert_eq!(input.len, n);
        // A given digest is reused without a pass; none given, one pass.
        let before = testing::hashed_here();
        assert_eq!(InputDigest::given_or_of(Some(&input), &bytes), input);
        assert_eq!(testing::hashed_here(), before);
        assert_eq!(InputDigest::given_or_of(None, &bytes), input);
        assert_eq!(testing::hashed_here() - before, n);
    }
}
