//! Benchmark of the hashes a load's content keys are made of: prints MB/s
//! of each and their ratios, measured in one run with interleaved repetitions
//! (best of each), so the figures share the machine's load. Not a test.
//!
//! `cargo run --release --locked -p hsa-hotswap --example hash_bench [MiB…]`
//! (default sizes 4 and 100 MiB). It compiles the tool's own passes
//! (`src/digest/pass.rs`), not copies. Candidates:
//! - XXH3-128 (`twox-hash`): the in-process memo's key (src/retained.rs), the
//!   one pass over a new reader of bytes already rewritten; not collision
//!   resistant, which that key does not need;
//! - SHA-256 (`sha2`; with the CPU's SHA extensions when it reports them): the
//!   persistent cache's key (src/rewrite_cache/key.rs);
//! - the two as two passes: a memo miss where the memo held an entry of the
//!   same size and ISA pair (XXH3-128 first, SHA-256 after the miss);
//! - the two fused in one pass, chunks of `CHUNK` (32 KiB) fed to both in
//!   turn: a first load with the cache on; also with 16 and 64 KiB chunks,
//!   which is how the chunk size was chosen.
//!
//! BLAKE3 would serve both keys in one pass at about twice SHA-256's speed
//! here (measured once, figures in docs/how-it-works.md), but `blake3` is not
//! available under MIT, the licence policy for the crates the project uses,
//! so it is not a dependency, not even of this benchmark.

use std::hint::black_box;
use std::time::Instant;

#[path = "../src/digest/pass.rs"]
mod pass;

type Hash = fn(&[u8]) -> u8;

fn xxh3(bytes: &[u8]) -> u8 {
    pass::xxh3_128(bytes) as u8
}

fn sha256(bytes: &[u8]) -> u8 {
    pass::sha256(bytes)[0]
}

fn two_passes(bytes: &[u8]) -> u8 {
    xxh3(bytes) ^ sha256(bytes)
}

fn fused_with(bytes: &[u8], chunk: usize) -> u8 {
    let (x, s) = pass::fused(bytes, chunk);
    x as u8 ^ s[0]
}

fn fused(bytes: &[u8]) -> u8 {
    fused_with(bytes, pass::CHUNK)
}

fn fused_16k(bytes: &[u8]) -> u8 {
    fused_with(bytes, 16 << 10)
}

fn fused_64k(bytes: &[u8]) -> u8 {
    fused_with(bytes, 64 << 10)
}

const XXH3: usize = 0;
const SHA256: usize = 1;
const TWO_PASSES: usize = 2;
const FUSED: usize = 3;

const CANDIDATES: [(&str, Hash); 6] = [
    ("XXH3-128 (memo key: a memo hit)", xxh3),
    ("SHA-256 (sha2 0.10, the cache key)", sha256),
    ("XXH3-128 + SHA-256, two passes", two_passes),
    ("XXH3-128 + SHA-256 fused, 32 KiB chunks", fused),
    ("  fused, 16 KiB chunks", fused_16k),
    ("  fused, 64 KiB chunks", fused_64k),
];

/// The CPU time this thread has used, in seconds: unlike the wall clock, it
/// leaves out the time the thread waited for a core, which on a shared machine
/// is most of a 100 MiB measurement's.
fn thread_cpu_time() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one timespec through the pointer, which
    // points to `ts`, alive and writable for the call.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    assert_eq!(rc, 0, "CLOCK_THREAD_CPUTIME_ID");
    ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
}

/// Best times in seconds of one candidate.
#[derive(Clone, Copy, Debug)]
struct Best {
    cpu: f64,
    wall: f64,
}

/// Best CPU and wall times of each candidate over `bytes`, interleaved.
fn measure(bytes: &[u8], rounds: usize) -> Vec<Best> {
    let mut best = vec![
        Best {
            cpu: f64::INFINITY,
            wall: f64::INFINITY,
        };
        CANDIDATES.len()
    ];
    for _ in 0..rounds {
        for (b, (_, hash)) in best.iter_mut().zip(CANDIDATES.iter()) {
            let cpu = thread_cpu_time();
            let wall = Instant::now();
            black_box(hash(black_box(bytes)));
            b.wall = b.wall.min(wall.elapsed().as_secs_f64());
            b.cpu = b.cpu.min(thread_cpu_time() - cpu);
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
        let rounds = (1500 / mib.max(1)).clamp(15, 50);
        let best = measure(&bytes, rounds);
        let t: Vec<f64> = best.iter().map(|b| b.cpu).collect();
        println!("{mib} MiB, best of {rounds} interleaved rounds (MB/s and ratios by CPU time):");
        for ((name, _), b) in CANDIDATES.iter().zip(&best) {
            println!(
                "  {name:<42} {:>7.0} MB/s  CPU {:>7.2} ms  wall {:>7.2} ms  ×{:.2} SHA-256's time",
                bytes.len() as f64 / b.cpu / 1e6,
                b.cpu * 1e3,
                b.wall * 1e3,
                b.cpu / t[SHA256],
            );
        }
        println!(
            "  SHA-256 against XXH3-128: ×{:.1} the time; two passes against a memo hit: ×{:.1}",
            t[SHA256] / t[XXH3],
            t[TWO_PASSES] / t[XXH3],
        );
        println!(
            "  fused against two passes: ×{:.3} the time; against SHA-256 alone: ×{:.2}; \
             against a memo hit: ×{:.1}",
            t[FUSED] / t[TWO_PASSES],
            t[FUSED] / t[SHA256],
            t[FUSED] / t[XXH3],
        );
    }
}
