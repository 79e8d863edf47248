//! Rewrites every gfx1250 code object in the given files (bare objects,
//! bundles, host binaries; a directory stands for its `*.co` files) with the
//! native rewriter, growth included, in one process, and prints per object
//! the outcome, and in total the throughput (MB/s of input, analysis
//! included) and the peak extra memory relative to the largest object: the
//! process's peak RSS, and exactly, per object, the most bytes the rewrite
//! of that object held allocated at once (output included) over its size,
//! counted by this driver's allocator.
//!
//! ```text
//! growth_bench [--quiet] [--allow-partial] [--repeat N] FILE...
//! ```
//! `--allow-partial`: the rewriter's `Options::allow_partial` (what
//! `hotswap rewrite --allow-partial` passes): growth sites an emitter refuses
//! are left, and counted. `--repeat N`: the whole set is rewritten N times
//! (for small objects, whose single pass is too short to time); the outcome
//! and memory are those of the first pass, the time and MB/s over all N.
//!
//! Exit 0 when every object was rewritten completely (with
//! `--allow-partial`: rewritten at all, sites may be left), 1 otherwise.
use std::alloc::{GlobalAlloc, Layout, System};
use std::process::ExitCode;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use hotswap_code_object::container;
use hotswap_code_object::rewrite::{rewrite_b0_to_a0, Options};

/// The system allocator, counting the bytes live and their peak.
struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

fn grew(by: usize) {
    let now = LIVE.fetch_add(by, Ordering::Relaxed) + by;
    PEAK.fetch_max(now, Ordering::Relaxed);
}

// SAFETY: every call is forwarded to `System` with the caller's arguments;
// the counters only observe sizes.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract for `alloc`, passed on.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            grew(layout.size());
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` was allocated by `System` with `layout` (above).
        unsafe { System.dealloc(ptr, layout) };
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: the caller's contract for `realloc`, passed on.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            // A moving realloc holds both blocks for a moment: count the new
            // one before the old one is released.
            grew(new_size);
            LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        }
        p
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

fn peak_rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        })
        .unwrap_or(0)
}

fn main() -> ExitCode {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let (mut quiet, mut allow_partial, mut repeat) = (false, false, 1usize);
    while let Some(flag) = args.first() {
        match flag.as_str() {
            "--quiet" => quiet = true,
            "--allow-partial" => allow_partial = true,
            "--repeat" => match args.get(1).and_then(|n| n.parse().ok()).filter(|&n| n > 0) {
                Some(n) => {
                    repeat = n;
                    args.remove(0);
                }
                None => {
                    eprintln!("--repeat needs a count above 0");
                    return ExitCode::FAILURE;
                }
            },
            _ => break,
        }
        args.remove(0);
    }
    let options = Options {
        allow_partial,
        ..Options::default()
    };
    let mut files = Vec::new();
    for f in &args {
        match std::fs::read_dir(f) {
            Ok(dir) => {
                let mut v: Vec<String> = dir
                    .filter_map(|e| Some(e.ok()?.path().to_str()?.to_owned()))
                    .filter(|p| p.ends_with(".co"))
                    .collect();
                v.sort();
                files.extend(v);
            }
            Err(_) => files.push(f.clone()),
        }
    }
    let mut objects: Vec<(String, Vec<u8>)> = Vec::new();
    for f in &files {
        let Ok(bytes) = std::fs::read(f) else {
            eprintln!("{f}: cannot read");
            return ExitCode::FAILURE;
        };
        for (i, o) in container::find(&bytes).objects.into_iter().enumerate() {
            if hotswap_code_object::isa::processor(&o.bytes) == Ok("gfx1250") {
                objects.push((format!("{f}#{i}"), o.bytes.into_owned()));
            }
        }
    }
    let base_rss = peak_rss_kib();
    let largest = objects.iter().map(|o| o.1.len()).max().unwrap_or(0);
    let total: usize = objects.iter().map(|o| o.1.len()).sum();
    let (mut complete, mut rewritten, mut sites, mut moved) = (0usize, 0usize, 0usize, 0usize);
    let (mut fixed, mut left) = (0usize, 0usize);
    // The most bytes one rewrite held at once over its object's size: the
    // worst object over 1 MB (below, fixed costs dominate), and the largest.
    let (mut worst, mut of_largest) = ((0.0f64, String::new()), 0.0f64);
    let start = Instant::now();
    for (name, bytes) in &objects {
        let before = LIVE.load(Ordering::Relaxed);
        PEAK.store(before, Ordering::Relaxed);
        let result = rewrite_b0_to_a0(bytes, &options);
        let held = PEAK.load(Ordering::Relaxed).saturating_sub(before) as f64 / bytes.len() as f64;
        if bytes.len() > 1_000_000 && held > worst.0 {
            worst = (held, name.clone());
        }
        if bytes.len() == largest {
            of_largest = held;
        }
        match result {
            Ok(r) => {
                rewritten += 1;
                complete += usize::from(r.report.is_complete());
                sites += r.report.grown.len();
                moved += r.report.moved.len();
                // Same-size fixes and growth fixes are disjoint lists.
                fixed += r.report.fixed.len() + r.report.grown.len();
                left += r.report.remaining.len();
                if !quiet {
                    println!(
                        "{name}: rewritten, {} site(s) fixed ({} by growth) in {} moved function(s), \
                         {} left; {} -> {} bytes; held at once {held:.2}x the object",
                        r.report.fixed.len() + r.report.grown.len(),
                        r.report.grown.len(),
                        r.report.moved.len(),
                        r.report.remaining.len(),
                        bytes.len(),
                        r.bytes.len()
                    );
                }
            }
            Err(e) => println!("{name}: refused ({}): {e}", e.kind()),
        }
    }
    for _ in 1..repeat {
        for (_, bytes) in &objects {
            std::hint::black_box(rewrite_b0_to_a0(bytes, &options).ok());
        }
    }
    let secs = start.elapsed().as_secs_f64();
    let extra_kib = peak_rss_kib().saturating_sub(base_rss);
    println!(
        "{} gfx1250 object(s), {:.3} MB: {rewritten} rewritten ({complete} complete), {fixed} site(s) \
         fixed ({sites} by growth), {left} left, {moved} function(s) moved; {:.3} s for {repeat} \
         pass(es), {:.0} MB/s; peak extra memory {:.1} MB = {:.2}x the largest object ({:.3} MB)",
        objects.len(),
        total as f64 / 1e6,
        secs,
        (total * repeat) as f64 / 1e6 / secs.max(1e-9),
        extra_kib as f64 / 1024.0,
        extra_kib as f64 * 1024.0 / (largest.max(1) as f64),
        largest as f64 / 1e6
    );
    let over_1mb = if worst.1.is_empty() {
        "no object above 1 MB".to_owned()
    } else {
        format!(
            "at most {:.2}x its object over the objects > 1 MB ({})",
            worst.0, worst.1
        )
    };
    println!(
        "allocated at once by one rewrite, output included: {of_largest:.2}x the largest object; \
         {over_1mb}"
    );
    let done = if allow_partial { rewritten } else { complete };
    if done == objects.len() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
