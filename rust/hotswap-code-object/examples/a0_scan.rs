//! The analyzer's test driver (used by `tests/analyzer`): finds every code
//! object in the given files and prints what the walker and the classifier say,
//! one JSON object per line, for the oracle comparison with llvm-objdump.
//!
//! ```text
//! a0_scan dump OUT_DIR FILE...   # writes each gfx125x object to OUT_DIR/<n>.co
//! a0_scan bench ROUNDS FILE...   # times container reading + analysis
//! a0_scan mutate ROUNDS FILE...  # mutated containers and code objects must not panic
//! ```
use std::fmt::Write as _;
use std::time::Instant;

use hotswap_code_object::container;
use hotswap_code_object::gfx1250::{self, A0Class};

#[path = "common/mod.rs"]
mod common;
use common::{json_str, Rng};

fn dump(out_dir: &str, files: &[String]) -> std::io::Result<()> {
    let mut n = 0usize;
    for file in files {
        let bytes = std::fs::read(file)?;
        let contents = container::find(&bytes);
        for e in &contents.errors {
            println!(
                "{{\"file\":{},\"error\":{}}}",
                json_str(file),
                json_str(&e.to_string())
            );
        }
        for found in &contents.objects {
            let id = found
                .bundle_id
                .as_deref()
                .map_or("null".to_string(), json_str);
            let analysis = match gfx1250::analyze(&found.bytes) {
                Ok(a) => a,
                Err(e) => {
                    println!(
                        "{{\"file\":{},\"bundle_id\":{id},\"skipped\":{}}}",
                        json_str(file),
                        json_str(&e.to_string())
                    );
                    continue;
                }
            };
            let path = format!("{out_dir}/{n}.co");
            n += 1;
            std::fs::write(&path, &found.bytes)?;
            let mut line = format!(
                "{{\"file\":{},\"bundle_id\":{id},\"object\":{},\"isa\":{},\"size\":{},\"functions\":[",
                json_str(file),
                json_str(&path),
                json_str(&analysis.isa),
                found.bytes.len()
            );
            for (i, f) in analysis.functions.iter().enumerate() {
                let mut offsets = Vec::new();
                if let Some(start) = f.file_offset {
                    let code = &found.bytes[start as usize..];
                    for insn in gfx1250::instructions(code, f.vaddr) {
                        let Ok(insn) = insn else { break };
                        if insn.vaddr >= f.vaddr + f.size {
                            break;
                        }
                        offsets.push(insn.vaddr.to_string());
                    }
                }
                let counts: Vec<String> = A0Class::ALL
                    .iter()
                    .map(|&c| format!("{}:{}", json_str(c.as_str()), f.count(c)))
                    .collect();
                let sites: Vec<String> = f
                    .sites
                    .iter()
                    .map(|s| {
                        let start = s.file_offset as usize;
                        let original = &found.bytes[start..start + usize::from(s.len)];
                        let fixed = gfx1250::same_size_fix(s.class, original).map_or("null".into(), |b| {
                            format!("\"{}\"", b.iter().map(|x| format!("{x:02x}")).collect::<String>())
                        });
                        let hex: String = original.iter().map(|x| format!("{x:02x}")).collect();
                        format!(
                            "{{\"offset\":{},\"file_offset\":{},\"len\":{},\"class\":\"{}\",\"mnemonic\":\"{}\",\"fix\":\"{}\",\"needs_change\":{},\"bytes\":\"{hex}\",\"fixed\":{fixed}}}",
                            s.vaddr, s.file_offset, s.len, s.class, s.mnemonic, s.fix.as_str(), s.needs_change
                        )
                    })
                    .collect();
                write!(
                    line,
                    "{}{{\"name\":{},\"offset\":{},\"size\":{},\"instructions\":{},\"incomplete\":{},\"a0\":{{{}}},\"sites\":[{}],\"boundaries\":[{}]}}",
                    if i == 0 { "" } else { "," },
                    json_str(&f.name),
                    f.vaddr,
                    f.size,
                    f.instructions,
                    f.incomplete,
                    counts.join(","),
                    sites.join(","),
                    offsets.join(",")
                )
                .unwrap();
            }
            let unknown: Vec<String> = analysis
                .unknown
                .iter()
                .map(|u| {
                    format!(
                        "{{\"function\":{},\"vaddr\":{},\"first_dword\":{}}}",
                        json_str(&u.function),
                        u.vaddr,
                        u.first_dword.map_or("null".into(), |d| d.to_string())
                    )
                })
                .collect();
            write!(line, "],\"unknown\":[{}]}}", unknown.join(",")).unwrap();
            println!("{line}");
        }
    }
    Ok(())
}

fn bench(rounds: u32, files: &[String]) -> std::io::Result<()> {
    let inputs: Vec<Vec<u8>> = files.iter().map(std::fs::read).collect::<Result<_, _>>()?;
    let total: usize = inputs.iter().map(Vec::len).sum();
    let mut analysed_bytes = 0usize;
    let mut instructions = 0u64;
    let mut objects = 0usize;
    let start = Instant::now();
    for _ in 0..rounds {
        analysed_bytes = 0;
        instructions = 0;
        objects = 0;
        for input in &inputs {
            for found in container::find(input).objects {
                if let Ok(a) = gfx1250::analyze(&found.bytes) {
                    analysed_bytes += found.bytes.len();
                    instructions += a.instructions();
                    objects += 1;
                }
            }
        }
    }
    let seconds = start.elapsed().as_secs_f64() / f64::from(rounds);
    println!(
        "{{\"input_bytes\":{total},\"objects\":{objects},\"object_bytes\":{analysed_bytes},\"instructions\":{instructions},\"seconds\":{seconds}}}"
    );
    Ok(())
}

/// One mutation of `bytes`: a bit flip, a truncation, or a bogus 16/32/64-bit
/// value (huge, zero, just past the end, or random), at a position near one of
/// `hot` (headers, container magics) or anywhere.
fn mutate_once(rng: &mut Rng, bytes: &mut Vec<u8>, hot: &[usize]) {
    if bytes.is_empty() {
        return;
    }
    let len = bytes.len();
    let at = if !hot.is_empty() && rng.below(4) != 0 {
        (hot[rng.below(hot.len())] + rng.below(256)).min(len - 1)
    } else {
        rng.below(len)
    };
    match rng.below(5) {
        0 => bytes[at] ^= 1 << rng.below(8),
        1 => bytes.truncate(rng.below(len)),
        _ => {
            let width = [2, 4, 8][rng.below(3)];
            let value = match rng.below(4) {
                0 => u64::MAX,
                1 => 0,
                2 => len as u64 + rng.below(64) as u64,
                _ => rng.next(),
            };
            let end = (at + width).min(len);
            let value = value.to_le_bytes();
            bytes[at..end].copy_from_slice(&value[..end - at]);
        }
    }
}

/// Exercises everything a caller reaches from untrusted bytes.
fn consume(bytes: &[u8]) -> usize {
    let mut n = 0;
    for found in container::find(bytes).objects {
        if let Ok(a) = gfx1250::analyze(&found.bytes) {
            for site in a.sites() {
                let start = site.file_offset as usize;
                if let Some(b) = found.bytes.get(start..start + usize::from(site.len)) {
                    let _ = gfx1250::same_size_fix(site.class, b);
                }
            }
            n += 1;
        }
    }
    n
}

fn mutate(rounds: usize, files: &[String]) -> std::io::Result<()> {
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    let (mut containers, mut objects, mut analysed) = (0usize, 0usize, 0usize);
    for file in files {
        let original = std::fs::read(file)?;
        let magic = |m: &[u8]| -> Vec<usize> {
            original
                .windows(m.len())
                .enumerate()
                .filter(|(_, w)| *w == m)
                .map(|(i, _)| i)
                .take(64)
                .collect()
        };
        let mut hot = vec![0, 64];
        hot.extend(magic(container::BUNDLE_MAGIC));
        hot.extend(magic(container::CCOB_MAGIC));
        // Mutated containers: fewer rounds for large host binaries.
        let container_rounds = (rounds * 64 * 1024 / original.len().max(1)).clamp(20, rounds);
        for _ in 0..container_rounds {
            let mut bytes = original.clone();
            for _ in 0..=rng.below(3) {
                mutate_once(&mut rng, &mut bytes, &hot);
            }
            analysed += consume(&bytes);
            containers += 1;
        }
        // Mutated code objects (headers, tables, notes, code).
        for found in container::find(&original).objects {
            if gfx1250::analyze(&found.bytes).is_err() {
                continue;
            }
            let co = found.bytes.to_vec();
            let hot: Vec<usize> = (0..co.len()).step_by(64).collect();
            for _ in 0..rounds {
                let mut bytes = co.clone();
                for _ in 0..=rng.below(3) {
                    mutate_once(&mut rng, &mut bytes, &hot);
                }
                analysed += consume(&bytes);
                objects += 1;
            }
        }
    }
    println!(
        "mutation: {containers} mutated containers and {objects} mutated code objects, {analysed} analyses, no panic"
    );
    Ok(())
}

fn main() -> std::io::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("dump") if args.len() >= 2 => dump(&args[1], &args[2..]),
        Some("bench") if args.len() >= 2 => bench(args[1].parse().unwrap_or(1), &args[2..]),
        Some("mutate") if args.len() >= 2 => mutate(args[1].parse().unwrap_or(100), &args[2..]),
        _ => {
            eprintln!("usage: a0_scan dump OUT_DIR FILE... | bench ROUNDS FILE... | mutate ROUNDS FILE...");
            std::process::exit(2)
        }
    }
}
