//! Benchmark of the hashes a load's content keys can be made of: prints MB/s
//! of each and their ratios, measured in one run with interleaved repetitions
//! (best of each), so the figures share the machine's load. Not a test.
//!
//! `cargo run --release --locked -p hsa-hotswap --example hash_bench [MiB…]`
//! (default sizes 4 and 100 MiB). Candidates:
//! - XXH3-128 (`twox-hash`): the in-process memo's key (src/retained.rs), the
//!   one pass over a new reader of bytes already rewritten; not collision
//!   resistant, which that key does not need;
//! - SHA-256 (`sha2`; with the CPU's SHA extensions when it reports them): the
//!   persistent cache's key (src/rewrite_cache/key.rs), computed on a memo
//!   miss with a cache layer in use;
//! - the two together: what a first load with the cache on costs.
//!
//! BLAKE3 would serve both keys in one pass at about twice SHA-256's speed
//! here (measured once, figures in docs/how-it-works.md), but `blake3` is not
//! available under MIT, the licence policy for the crates the project uses,
//! so it is not a dependency, not even of this benchmark.

use std::hint::black_box;
use std::time::Instant;

use sha2::{Digest, Sha256};
use twox_hash::XxHash3_128;

type Hash = fn(&[u8]) -> u8;

fn xxh3(bytes: &[u8]) -> u8 {
    XxHash3_128::oneshot(bytes) as u8
}

fn sha256(bytes: &[u8]) -> u8 {
    Sha256::digest(bytes)[0]
}

fn memo_miss(bytes: &[u8]) -> u8 {
    xxh3(bytes) ^ sha256(bytes)
}

const CANDIDATES: [(&str, Hash); 3] = [
    ("XXH3-128 (memo key: a memo hit)", xxh3),
    ("SHA-256 (sha2 0.10, the cache key)", sha256),
    ("XXH3-128 + SHA-256 (a memo miss)", memo_miss),
];

/// Best time in seconds of each candidate over `bytes`, interleaved.
fn measure(bytes: &[u8], rounds: usize) -> Vec<f64> {
    let mut best = vec![f64::INFINITY; CANDIDATES.len()];
    for _ in 0..rounds {
        for (i, (_, hash)) in CANDIDATES.iter().enumerate() {
            let start = Instant::now();
            black_box(hash(black_box(bytes)));
            best[i] = best[i].min(start.elapsed().as_secs_f64());
        }
    }
    best
}

fn main() {
    let sizes: Vec<usize> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let sizes = if sizes.is_empty() {
        vec![4, 100]
    } else {
        sizes
    };
    #[cfg(target_arch = "x86_64")]
    println!(
        "CPU reports: SHA extensions {}, AVX2 {}, AVX-512F {} (sha2 uses the first when present)",
        std::arch::is_x86_feature_detected!("sha"),
        std::arch::is_x86_feature_detected!("avx2"),
        std::arch::is_x86_feature_detected!("avx512f"),
    );
    for mib in sizes {
        // Not all zeros or one repeated byte: bytes that look like data.
        let bytes: Vec<u8> = (0..mib << 20)
            .map(|i: usize| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
            .collect();
        let rounds = (400 / mib.max(1)).clamp(5, 50);
        let best = measure(&bytes, rounds);
        let sha = best[1];
        println!("{mib} MiB, best of {rounds} interleaved rounds:");
        for ((name, _), t) in CANDIDATES.iter().zip(&best) {
            println!(
                "  {name:<40} {:>8.0} MB/s  {:>8.2} ms  ×{:.2} the time of SHA-256",
                bytes.len() as f64 / t / 1e6,
                t * 1e3,
                t / sha,
            );
        }
        println!(
            "  SHA-256 against XXH3-128: ×{:.1} the time; a memo miss against a hit: ×{:.1}",
            best[1] / best[0],
            best[2] / best[0],
        );
    }
}
