//! Rewrites every gfx1250 code object in the given files (bare objects,
//! bundles, host binaries; a directory stands for its `*.co` files) with the
//! native rewriter, growth included, in one process, and prints per object
//! the outcome, and in total the throughput (MB/s of input, analysis
//! included) and the peak extra memory relative to the largest object.
//!
//! ```text
//! growth_bench [--quiet] FILE...
//! ```
//! Exit 0 when every object was rewritten completely, 1 otherwise.
use std::process::ExitCode;
use std::time::Instant;

use hotswap_code_object::container;
use hotswap_code_object::rewrite::{rewrite_b0_to_a0, Options};

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
    let quiet = args.first().is_some_and(|a| a == "--quiet");
    if quiet {
        args.remove(0);
    }
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
    let (mut complete, mut sites, mut moved) = (0usize, 0usize, 0usize);
    let start = Instant::now();
    for (name, bytes) in &objects {
        match rewrite_b0_to_a0(bytes, &Options::default()) {
            Ok(r) => {
                complete += usize::from(r.report.is_complete());
                sites += r.report.grown.len();
                moved += r.report.moved.len();
                if !quiet {
                    println!(
                        "{name}: rewritten, {} DS2 site(s) split in {} moved function(s), {} -> {} bytes",
                        r.report.grown.len(),
                        r.report.moved.len(),
                        bytes.len(),
                        r.bytes.len()
                    );
                }
            }
            Err(e) => println!("{name}: refused ({}): {e}", e.kind()),
        }
    }
    let secs = start.elapsed().as_secs_f64();
    let extra_kib = peak_rss_kib().saturating_sub(base_rss);
    println!(
        "{} gfx1250 object(s), {:.1} MB: {complete} rewritten complete, {sites} DS2 site(s) split, \
         {moved} function(s) moved; {:.3} s, {:.0} MB/s; peak extra memory {:.1} MB = {:.2}x the \
         largest object ({:.1} MB)",
        objects.len(),
        total as f64 / 1e6,
        secs,
        total as f64 / 1e6 / secs.max(1e-9),
        extra_kib as f64 / 1024.0,
        extra_kib as f64 * 1024.0 / (largest.max(1) as f64),
        largest as f64 / 1e6
    );
    if complete == objects.len() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
