//! Runs the liveness analysis and the scavenger over every gfx1250 code object
//! of the files given (bare objects, bundles, host binaries) and prints, per
//! object, the functions analysable and the scratch each A0 site could get.
//!
//! Usage: `liveness_scan [--sites] FILE...`; one JSON line per object.
//! `liveness_scan --claims OUT.json OBJECT`: the scratch granted (SGPR and
//! VGPR pairs, tiers 1 and 2) at every instruction of every analysable
//! function of a bare code object, as claims for
//! `tests/liveness/check_scratch.py`.

use hotswap_code_object::container;
use hotswap_code_object::gfx1250;
use hotswap_code_object::liveness::{self, Convention, RegClass, Request, Scratch};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("--claims") && args.len() == 3 {
        claims(&args[1], &args[2]);
        return;
    }
    let sites = args.iter().any(|a| a == "--sites");
    let mut totals = [0usize; 4];
    for path in args.iter().filter(|a| !a.starts_with("--")) {
        let Ok(file) = std::fs::read(path) else {
            eprintln!("{path}: unreadable");
            std::process::exit(2);
        };
        for (n, found) in container::find(&file).objects.iter().enumerate() {
            let Ok(l) = liveness::analyze(&found.bytes, Convention::Unknown) else {
                continue;
            };
            let unknown: u64 = l.functions.iter().map(|f| f.unknown_instructions).sum();
            let mut tiers = [0usize; 4];
            if sites {
                if let Ok(a) = gfx1250::analyze(&found.bytes) {
                    for s in a.sites() {
                        let Some(fi) = l.function_at(s.vaddr) else {
                            continue;
                        };
                        for class in [RegClass::Sgpr, RegClass::Vgpr] {
                            let t = match l.scratch(fi, s.vaddr, Request::new(class, 2, 2)) {
                                Ok(Scratch::Dead { .. }) => 0,
                                Ok(Scratch::AboveAllocation { .. }) => 1,
                                Ok(Scratch::SaveRestore { .. }) => 2,
                                Err(e) => {
                                    if std::env::var_os("LIVENESS_WHY").is_some() {
                                        eprintln!("refused: {e}");
                                    }
                                    3
                                }
                            };
                            tiers[t] += 1;
                        }
                    }
                }
            }
            if std::env::var_os("LIVENESS_UNKNOWN").is_some() {
                unknown_histogram(&found.bytes);
            }
            for (t, c) in totals.iter_mut().zip(tiers) {
                *t += c;
            }
            println!(
                "{{\"file\": {path:?}, \"object\": {n}, \"functions\": {}, \"analysable\": {}, \"unknown_instructions\": {unknown}, \"scratch\": {{\"dead\": {}, \"above\": {}, \"save\": {}, \"refused\": {}}}}}",
                l.functions.len(),
                l.analysable(),
                tiers[0],
                tiers[1],
                tiers[2],
                tiers[3]
            );
            for f in l
                .functions
                .iter()
                .filter(|f| f.status != liveness::Status::Analysable)
            {
                eprintln!("  {}: {:?}", f.name, f.status);
            }
        }
    }
    eprintln!(
        "site requests: dead {} above {} save {} refused {}",
        totals[0], totals[1], totals[2], totals[3]
    );
}

/// Prints the family and opcode of every instruction the effect model does not
/// know (in mode 0), with counts.
fn unknown_histogram(bytes: &[u8]) {
    use hotswap_code_object::liveness::effects;
    use hotswap_code_object::rewrite::vgpr_mode::Mode;
    let Ok(a) = gfx1250::analyze(bytes) else {
        return;
    };
    let mut counts = std::collections::BTreeMap::new();
    for f in &a.functions {
        let Some(off) = f.file_offset else { continue };
        let Some(code) = bytes.get(off as usize..(off + f.size) as usize) else {
            continue;
        };
        for i in gfx1250::instructions(code, f.vaddr).flatten() {
            let e = effects::effect(i.vaddr, i.bytes, i.decoded, Mode::Known(0));
            if !e.known {
                *counts
                    .entry(format!("{:?} {:#x}", i.decoded.family, i.decoded.op))
                    .or_insert(0) += 1;
            }
        }
    }
    for (k, n) in counts {
        eprintln!("unknown {k}: {n}");
    }
}

/// Writes the claims of every instruction of `object` to `out`.
fn claims(out: &str, object: &str) {
    let bytes = std::fs::read(object).expect("readable object");
    let l = liveness::analyze(&bytes, Convention::Unknown).expect("a gfx1250 object");
    let mut claims = Vec::new();
    for (fi, f) in l.functions.iter().enumerate() {
        for (vaddr, len) in f.instructions() {
            for class in [RegClass::Sgpr, RegClass::Vgpr] {
                let (kind, regs) = match l.scratch(fi, vaddr, Request::new(class, 2, 2)) {
                    Ok(s @ Scratch::Dead { .. }) => ("dead", s.registers()),
                    Ok(s @ Scratch::AboveAllocation { .. }) => ("above", s.registers()),
                    _ => continue,
                };
                let names: Vec<String> = regs
                    .iter()
                    .map(|r| {
                        format!("{r:?}")
                            .replace("S(", "s")
                            .replace("V(", "v")
                            .replace(')', "")
                    })
                    .collect();
                claims.push(format!(
                    "{{\"site\": {vaddr}, \"end\": {}, \"kind\": \"{kind}\", \"scratch\": {:?}}}",
                    vaddr + u64::from(len),
                    names
                ));
            }
        }
    }
    std::fs::write(out, format!("[\n{}\n]\n", claims.join(",\n"))).expect("writable");
    eprintln!("{} claims", claims.len());
}
