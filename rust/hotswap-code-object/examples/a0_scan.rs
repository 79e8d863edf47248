//! The analyzer's test driver (used by `tests/analyzer`): finds every code
//! object in the given files and prints what the walker and the classifier say,
//! one JSON object per line, for the oracle comparison with llvm-objdump.
//!
//! ```text
//! a0_scan dump OUT_DIR FILE...   # writes each gfx125x object to OUT_DIR/<n>.co
//! a0_scan bench ROUNDS FILE...   # times container reading + analysis
//! ```
use std::fmt::Write as _;
use std::time::Instant;

use hotswap_code_object::container;
use hotswap_code_object::gfx1250::{self, A0Class};

fn json_str(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => write!(out, "\\u{:04x}", c as u32).unwrap(),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

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
                        format!(
                            "{{\"offset\":{},\"file_offset\":{},\"len\":{},\"class\":\"{}\",\"mnemonic\":\"{}\",\"fix\":\"{}\",\"needs_change\":{}}}",
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

fn main() -> std::io::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("dump") if args.len() >= 2 => dump(&args[1], &args[2..]),
        Some("bench") if args.len() >= 2 => bench(args[1].parse().unwrap_or(1), &args[2..]),
        _ => {
            eprintln!("usage: a0_scan dump OUT_DIR FILE... | a0_scan bench ROUNDS FILE...");
            std::process::exit(2)
        }
    }
}
