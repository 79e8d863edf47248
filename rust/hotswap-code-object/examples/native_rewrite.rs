//! The native rewriter's test driver (used by `tests/native`).
//!
//! ```text
//! native_rewrite rewrite [--allow-partial] [--clauses=keep|nop] IN OUT SITES
//!     rewrites the bare code object IN; on success writes OUT and, in SITES,
//!     one line per byte range that may differ ("site OFFSET LEN CLASS" for
//!     each fixed site, "definition OFFSET LEN SITE" for a tensor mask's
//!     definition changed in place for the load at offset SITE, "note OFFSET
//!     LEN" for the metadata retag); prints one
//!     JSON line. Exit 0: rewritten (complete, or partial when allowed);
//!     3: refused, sites need code growth; 4: refused otherwise; 5: rewritten
//!     by code growth (DS two-address split; the output is larger, SITES empty).
//! native_rewrite mutate ROUNDS SEED FILE...
//!     bit flips, truncations and random dwords over every code object in the
//!     files: never a panic; on success the output keeps the size, differs only
//!     in executable sections and the metadata note, and is a fixed point (a
//!     grown output: larger, functions moved, a fixed point).
//!     Exit 1 on a violation. With NATIVE_REWRITE_KEEP=DIR, each violating
//!     mutant is written there as an input of the `rewrite` fuzz target.
//! native_rewrite bench ROUNDS FILE...
//!     throughput of the rewrite (plan + copy) over every gfx1250 object in
//!     the files, against the analysis alone, in one run. Prints figures.
//! ```
//! A directory among the files stands for the `*.co` files in it.
use std::fmt::Write as _;
use std::process::ExitCode;
use std::time::Instant;

use hotswap_code_object::container;
use hotswap_code_object::elf::{self, Header, SHF_ALLOC, SHF_EXECINSTR, SHT_NOBITS};
use hotswap_code_object::gfx1250::{self, A0Class};
use hotswap_code_object::metadata;
use hotswap_code_object::rewrite::{
    plan_b0_to_a0, rewrite_b0_to_a0, ClausePolicy, Options, Retag, RewriteError,
};

/// The files, a directory standing for its `*.co` files (sorted).
#[path = "common/mod.rs"]
mod common;
use common::{json_str, Rng};

fn expand(files: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    for f in files {
        match std::fs::read_dir(f) {
            Ok(dir) => {
                let mut found: Vec<String> = dir
                    .filter_map(|e| e.ok().map(|e| e.path()))
                    .filter(|p| p.extension().is_some_and(|x| x == "co"))
                    .map(|p| p.to_string_lossy().into_owned())
                    .collect();
                found.sort();
                out.extend(found);
            }
            Err(_) => out.push(f.clone()),
        }
    }
    out
}

fn retag_str(retag: Option<Retag>) -> String {
    match retag {
        None => "none".into(),
        Some(Retag::NoNote) => "no_note".into(),
        Some(Retag::NoRevision) => "no_revision".into(),
        Some(Retag::AlreadyA0(n)) => format!("already_a0:{n}"),
        Some(Retag::Retagged(n)) => format!("retagged:{n}"),
        Some(Retag::KeptSizeChanged(n)) => format!("kept_size_changed:{n}"),
    }
}

fn rewrite(args: &[String]) -> Result<ExitCode, String> {
    let mut options = Options::default();
    let mut paths = Vec::new();
    for a in args {
        match a.as_str() {
            "--allow-partial" => options.allow_partial = true,
            "--clauses=keep" => options.clauses = ClausePolicy::Keep,
            "--clauses=nop" => options.clauses = ClausePolicy::ReplaceWithNop,
            _ => paths.push(a),
        }
    }
    let [input, output, sites] = paths[..] else {
        return Err("usage: rewrite [--allow-partial] [--clauses=keep|nop] IN OUT SITES".into());
    };
    let bytes = std::fs::read(input).map_err(|e| format!("{input}: {e}"))?;
    let plan = match plan_b0_to_a0(&bytes, &options) {
        Ok(plan) => plan,
        Err(e) => {
            let remaining = match &e {
                RewriteError::NeedsGrowth(sites) => sites
                    .iter()
                    .map(|s| json_str(&s.to_string()))
                    .collect::<Vec<_>>()
                    .join(","),
                _ => String::new(),
            };
            println!(
                "{{\"status\":\"refused\",\"kind\":{},\"message\":{},\"remaining\":[{remaining}]}}",
                json_str(e.kind()),
                json_str(&e.to_string())
            );
            let code = if matches!(e, RewriteError::NeedsGrowth(_)) {
                3
            } else {
                4
            };
            return Ok(ExitCode::from(code));
        }
    };
    if !plan.tail.is_empty() {
        // Code growth (the DS two-address split): the output is larger; its
        // checks are the growth proof's (tests/native/invariants.py checks
        // that it decodes and is a fixed point).
        let mut out = vec![0u8; plan.output_len()];
        if !plan.write_into(&bytes, &mut out) {
            return Err("plan does not fit its object".into());
        }
        std::fs::write(output, &out).map_err(|e| format!("{output}: {e}"))?;
        std::fs::write(sites, "").map_err(|e| format!("{sites}: {e}"))?;
        println!(
            "{{\"status\":\"grown\",\"complete\":{},\"split\":{},\"moved\":{},\"size\":{}}}",
            plan.report.is_complete(),
            plan.report.grown.len(),
            plan.report.moved.len(),
            out.len()
        );
        return Ok(ExitCode::from(5));
    }
    let mut out = bytes.clone();
    if !plan.apply(&mut out) {
        return Err("plan does not fit its object".into());
    }
    std::fs::write(output, &out).map_err(|e| format!("{output}: {e}"))?;
    let mut lines = String::new();
    for s in &plan.report.fixed {
        writeln!(lines, "site {:#x} {} {}", s.file_offset, s.len, s.class).unwrap();
    }
    // A tensor site fixed at its mask's definition: the load keeps its
    // bytes, the definition (its site's offset after it) changes.
    for d in &plan.report.at_definition {
        writeln!(
            lines,
            "definition {:#x} {} {:#x}",
            d.definition_file_offset, d.definition_len, d.site.file_offset
        )
        .unwrap();
    }
    let site_ranges: Vec<(u64, u64)> = plan
        .report
        .fixed
        .iter()
        .map(|s| (s.file_offset, s.file_offset + u64::from(s.len)))
        .chain(plan.report.at_definition.iter().map(|d| {
            (
                d.definition_file_offset,
                d.definition_file_offset + u64::from(d.definition_len),
            )
        }))
        .collect();
    for p in &plan.patches {
        let end = p.file_offset + p.bytes.len() as u64;
        if !site_ranges
            .iter()
            .any(|&(s, e)| p.file_offset >= s && end <= e)
        {
            writeln!(lines, "note {:#x} {}", p.file_offset, p.bytes.len()).unwrap();
        }
    }
    std::fs::write(sites, lines).map_err(|e| format!("{sites}: {e}"))?;
    let counts: Vec<String> = A0Class::ALL
        .iter()
        .filter(|&&c| plan.report.fixed_count(c) > 0)
        .map(|&c| format!("{}:{}", json_str(c.as_str()), plan.report.fixed_count(c)))
        .collect();
    let remaining: Vec<String> = plan
        .report
        .remaining
        .iter()
        .map(|s| json_str(&s.to_string()))
        .collect();
    let note_ok = match metadata::read(&out) {
        Ok(_) => "true",
        Err(metadata::MetadataError::Missing) => "null",
        Err(_) => "false",
    };
    println!(
        "{{\"status\":\"ok\",\"complete\":{},\"fixed\":{{{}}},\"kept\":{},\"remaining\":[{}],\
         \"retag\":{},\"patches\":{},\"note_ok\":{note_ok}}}",
        plan.report.is_complete(),
        counts.join(","),
        plan.report.kept.len(),
        remaining.join(","),
        json_str(&retag_str(plan.report.retag)),
        plan.patches.len(),
    );
    Ok(ExitCode::SUCCESS)
}

/// The file ranges the rewriter may change: executable sections, the first
/// metadata note's descriptor.
fn allowed_ranges(bytes: &[u8]) -> Vec<(usize, usize)> {
    let Ok(header) = Header::parse(bytes) else {
        return Vec::new();
    };
    let mut out: Vec<(usize, usize)> = header
        .sections(bytes)
        .iter()
        .filter(|s| s.flags & (SHF_ALLOC | SHF_EXECINSTR) == SHF_ALLOC | SHF_EXECINSTR)
        .filter(|s| s.sh_type != SHT_NOBITS)
        .map(|s| (s.offset as usize, s.offset.saturating_add(s.size) as usize))
        .collect();
    if out.is_empty() {
        out = header
            .segments(bytes)
            .iter()
            .filter(|s| s.p_type == elf::PT_LOAD && s.flags & 1 != 0)
            .map(|s| {
                (
                    s.offset as usize,
                    s.offset.saturating_add(s.filesz) as usize,
                )
            })
            .collect();
    }
    'areas: for area in header.note_areas(bytes).flatten() {
        for note in elf::notes(area) {
            let Ok(note) = note else { break };
            if note.name == b"AMDGPU" && note.note_type == 32 {
                let at = note.desc.as_ptr() as usize - bytes.as_ptr() as usize;
                out.push((at, at + note.desc.len()));
                break 'areas;
            }
        }
    }
    out
}

/// One mutant: Err(description) on a violated invariant; Ok(true) when it was
/// rewritten with changes.
fn check(mutant: &[u8], options: &Options) -> Result<bool, String> {
    let Ok(r) = rewrite_b0_to_a0(mutant, options) else {
        return Ok(false);
    };
    if r.bytes.len() != mutant.len() {
        // Code growth: the output is larger and its functions moved; a fixed
        // point whose re-analysis finds nothing more to grow.
        if r.report.moved.is_empty() || r.bytes.len() < mutant.len() {
            return Err("size changed without moved functions".into());
        }
        return match rewrite_b0_to_a0(&r.bytes, options) {
            Ok(again) if again.bytes == r.bytes && again.report.grown.is_empty() => Ok(true),
            Ok(_) => Err("grown output: not idempotent".into()),
            Err(e) => Err(format!("the grown output is refused: {e}")),
        };
    }
    let allowed = allowed_ranges(mutant);
    if let Some(i) = (0..mutant.len())
        .find(|&i| mutant[i] != r.bytes[i] && !allowed.iter().any(|&(s, e)| i >= s && i < e))
    {
        return Err(format!("byte {i:#x} changed outside code and the note"));
    }
    match rewrite_b0_to_a0(&r.bytes, options) {
        Ok(again) if again.bytes == r.bytes => Ok(r.bytes != mutant),
        Ok(_) => Err("not idempotent".into()),
        Err(e) => Err(format!("the output is refused: {e}")),
    }
}

fn mutate(args: &[String]) -> Result<ExitCode, String> {
    let [rounds, seed, files @ ..] = args else {
        return Err("usage: mutate ROUNDS SEED FILE...".into());
    };
    let rounds: usize = rounds.parse().map_err(|_| "ROUNDS")?;
    let mut rng = Rng(seed.parse::<u64>().map_err(|_| "SEED")? | 1);
    let partial = Options {
        allow_partial: true,
        clauses: ClausePolicy::ReplaceWithNop,
    };
    let (mut tried, mut rewritten, mut failures) = (0usize, 0usize, 0usize);
    let files = expand(files);
    for file in &files {
        let input = std::fs::read(file).map_err(|e| format!("{file}: {e}"))?;
        // The container itself is mutated too: every object found is checked.
        for round in 0..rounds {
            let mut m = input.clone();
            match round % 4 {
                0 => m.truncate(rng.below(input.len())),
                1 | 2 => {
                    for _ in 0..1 + rng.below(4) {
                        let at = rng.below(m.len());
                        m[at] ^= 1 << rng.below(8);
                    }
                }
                _ => {
                    let at = rng.below(m.len()) & !3;
                    if at + 4 <= m.len() {
                        m[at..at + 4].copy_from_slice(&(rng.next() as u32).to_le_bytes());
                    }
                }
            }
            let found = std::panic::catch_unwind(|| container::find(&m))
                .map_err(|_| format!("{file}: round {round}: the container reader panicked"))?;
            for object in &found.objects {
                for options in [Options::default(), partial] {
                    tried += 1;
                    let failure = match std::panic::catch_unwind(|| check(&object.bytes, &options))
                    {
                        Ok(Ok(changed)) => {
                            rewritten += usize::from(changed);
                            continue;
                        }
                        Ok(Err(e)) => e,
                        Err(_) => "panic".to_owned(),
                    };
                    failures += 1;
                    let flags = fuzz_flags(&options);
                    println!("FAIL: {file}: round {round}: options {flags:#x}: {failure}");
                    keep_finding(file, round, flags, &object.bytes)?;
                }
            }
        }
    }
    println!(
        "mutation: {} file(s), {rounds} mutants each, {tried} rewrites tried, {rewritten} changed \
         bytes, {failures} violation(s)",
        files.len()
    );
    Ok(if failures == 0 && tried > 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// The option byte of the `rewrite` fuzz target for `options` (bit 0
/// `allow_partial`, bit 1 clauses replaced by `s_nop 0`).
fn fuzz_flags(options: &Options) -> u8 {
    u8::from(options.allow_partial) | u8::from(options.clauses == ClausePolicy::ReplaceWithNop) << 1
}

/// With `NATIVE_REWRITE_KEEP=DIR`: writes a failing mutant as an input of
/// the `rewrite` fuzz target (its option byte, then the object) to
/// `DIR/<file stem>-r<round>-o<flags>.bin`, to be kept as a fixture.
fn keep_finding(file: &str, round: usize, flags: u8, object: &[u8]) -> Result<(), String> {
    let Some(dir) = std::env::var_os("NATIVE_REWRITE_KEEP") else {
        return Ok(());
    };
    let stem = std::path::Path::new(file)
        .file_stem()
        .map_or_else(|| "object".into(), |s| s.to_string_lossy());
    let path = std::path::Path::new(&dir).join(format!("{stem}-r{round}-o{flags}.bin"));
    let mut input = Vec::with_capacity(object.len() + 1);
    input.push(flags);
    input.extend_from_slice(object);
    std::fs::write(&path, input).map_err(|e| format!("{}: {e}", path.display()))?;
    println!("  kept as {}", path.display());
    Ok(())
}

fn bench(args: &[String]) -> Result<ExitCode, String> {
    let [rounds, files @ ..] = args else {
        return Err("usage: bench ROUNDS FILE...".into());
    };
    let rounds: usize = rounds.parse().map_err(|_| "ROUNDS")?;
    let mut objects: Vec<Vec<u8>> = Vec::new();
    for file in &expand(files) {
        let bytes = std::fs::read(file).map_err(|e| format!("{file}: {e}"))?;
        for found in container::find(&bytes).objects {
            if hotswap_code_object::isa::processor(&found.bytes) == Ok("gfx1250") {
                objects.push(found.bytes.into_owned());
            }
        }
    }
    if objects.is_empty() {
        println!("SKIP: no gfx1250 code object in the files");
        return Ok(ExitCode::SUCCESS);
    }
    let total: usize = objects.iter().map(Vec::len).sum();
    let partial = Options {
        allow_partial: true,
        ..Options::default()
    };
    let (mut complete, mut partly, mut refused, mut sites) = (0, 0, 0, 0);
    let mut reasons: std::collections::BTreeMap<&'static str, (usize, String)> = Default::default();
    for o in &objects {
        match rewrite_b0_to_a0(o, &Options::default()) {
            Ok(r) => {
                complete += 1;
                sites += r.report.fixed.len();
            }
            Err(RewriteError::NeedsGrowth(_)) => {
                partly += 1;
                if let Ok(r) = rewrite_b0_to_a0(o, &partial) {
                    sites += r.report.fixed.len();
                }
            }
            Err(e) => {
                refused += 1;
                let entry = reasons.entry(e.kind()).or_insert((0, e.to_string()));
                entry.0 += 1;
            }
        }
    }
    // Best of `rounds` for each measurement, interleaved.
    let mut best = [f64::MAX; 3];
    for _ in 0..rounds.max(1) {
        let t = Instant::now();
        for o in &objects {
            std::hint::black_box(gfx1250::analyze(o).ok());
        }
        best[0] = best[0].min(t.elapsed().as_secs_f64());
        let t = Instant::now();
        for o in &objects {
            std::hint::black_box(rewrite_b0_to_a0(o, &partial).ok());
        }
        best[1] = best[1].min(t.elapsed().as_secs_f64());
        let t = Instant::now();
        for o in &objects {
            std::hint::black_box(o.clone());
        }
        best[2] = best[2].min(t.elapsed().as_secs_f64());
    }
    let mbs = |s: f64| total as f64 / s / 1e6;
    println!(
        "{} gfx1250 object(s), {:.2} MB: {complete} rewritable, {partly} with growth sites, \
         {refused} refused otherwise; {sites} same-size site(s) fixed",
        objects.len(),
        total as f64 / 1e6
    );
    for (kind, (n, first)) in &reasons {
        println!("  refused ({kind}): {n}, e.g. {first}");
    }
    println!(
        "  native rewrite (analysis + checks + copy + patches, allow-partial): {:8.1} MB/s  ({:.3} ms)",
        mbs(best[1]),
        best[1] * 1e3
    );
    println!(
        "  analysis alone:                                                    {:8.1} MB/s  ({:.3} ms)",
        mbs(best[0]),
        best[0] * 1e3
    );
    println!(
        "  copy alone:                                                        {:8.1} MB/s  ({:.3} ms)",
        mbs(best[2]),
        best[2] * 1e3
    );
    println!(
        "  rewrite / analysis time: x{:.2}",
        best[1] / best[0].max(f64::MIN_POSITIVE)
    );
    Ok(ExitCode::SUCCESS)
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("rewrite") => rewrite(&args[1..]),
        Some("mutate") => mutate(&args[1..]),
        Some("bench") => bench(&args[1..]),
        _ => Err("usage: native_rewrite rewrite|mutate|bench ...".into()),
    };
    result.unwrap_or_else(|e| {
        eprintln!("native_rewrite: {e}");
        ExitCode::from(2)
    })
}
