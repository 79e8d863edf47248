//! Runs the WMMA emitters (`rewrite::emit`) on every WMMA of gfx1250 code
//! objects, for the independent checks of `tests/wmma` (llvm-objdump-22,
//! llvm-mc-22 and the exact WMMA model), which never see the emitters'
//! structures: only the bytes printed here.
//!
//! ```text
//! wmma_emit FILE...
//! ```
//! One JSON line per object (`"object"`, the analysis' site counts of the
//! WMMA classes) and one per WMMA instruction found by walking each function
//! with the crate's walker: `"kind"` (`k128`, `f4`, `f4_scaled`, `scale16`,
//! `int`), its `"vaddr"`, the VGPR-MSB `"mode"` in force (null when unknown),
//! the `"original"` bytes and either the `"replacement"` bytes (hex) with what
//! the emitter reports, or its `"refusal"`. A block-16 scaled site appears
//! twice: with its masked A copy below v256, and again (`"variant":
//! "t_bank1"`) with it in bank 1 (v256-v511). Exit 1 when an object cannot be
//! read or analysed.
use std::process::ExitCode;

use hotswap_code_object::gfx1250::{self, A0Class};
use hotswap_code_object::rewrite::emit::{
    wmma_f4, wmma_int_nops, wmma_k128, wmma_scale16, Expansion, Reason,
};
use hotswap_code_object::rewrite::vgpr_mode::{self, Mode};

// Only `json_str` is used here; the shared module's random generator is not.
#[allow(dead_code)]
#[path = "common/mod.rs"]
mod common;
use common::json_str;

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The kind of WMMA `bytes` is, if any.
fn kind(bytes: &[u8]) -> Option<&'static str> {
    if wmma_k128::is_k128(bytes) {
        return Some("k128");
    }
    if wmma_f4::is_f4(bytes) {
        return Some("f4");
    }
    if wmma_int_nops::is_int_wmma(bytes) {
        return Some("int");
    }
    if bytes.len() == 16 && bytes[3] == 0xCC && bytes[11] == 0xCC {
        return match (bytes[2], bytes[10]) {
            (0x35 | 0x3A, 0x88) => Some("f4_scaled"),
            (0x3A, 0x33) => Some("scale16"),
            _ => None,
        };
    }
    None
}

fn expansion_json(e: &Expansion) -> String {
    format!(
        "\"replacement\":\"{}\",\"swapped\":{},\"rounding\":\"{:?}\"",
        hex(&e.bytes),
        e.swapped,
        e.rounding
    )
}

/// A block-16 split (`needed`, `split`) with the first scratch block (below
/// v256) that overlaps no operand: this driver has no liveness, so the
/// checker excludes the scratch registers from its comparison.
fn with_scratch(
    bytes: &[u8],
    mode: u8,
    needed: fn(&[u8]) -> Result<u32, Reason>,
    split: fn(&[u8], u8, u32) -> Result<Expansion, Reason>,
) -> String {
    let need = match needed(bytes) {
        Ok(n) => n,
        Err(r) => return format!("\"refusal\":{}", json_str(&r.to_string())),
    };
    let mut last = Reason::Overlap("no scratch block below v256 overlaps no operand");
    for base in 0..=256 - need {
        match split(bytes, mode, base) {
            Ok(e) => {
                return format!(
                    "{},\"scratch\":{base},\"scratch_len\":{need}",
                    expansion_json(&e)
                )
            }
            Err(Reason::Overlap("the scratch block overlaps an operand")) => {}
            Err(r) => {
                last = r;
                break;
            }
        }
    }
    format!("\"refusal\":{}", json_str(&last.to_string()))
}

/// The masked A copy's size and the two-request split of a block-16 form.
type MaskedA = fn(&[u8]) -> Result<u32, Reason>;
type SplitAt = fn(&[u8], u8, u32, u32) -> Result<Expansion, Reason>;

/// A block-16 split (`masked_a`, `split_at`) with the first scale pair
/// (below v256) and the first masked A block in bank 1 (v256-v511) that
/// overlap no operand; the scratch registers listed as `"scratch_regs"`.
fn t_bank1(bytes: &[u8], mode: u8, masked_a: MaskedA, split_at: SplitAt) -> String {
    let n_a = match masked_a(bytes) {
        Ok(n) => n,
        Err(r) => return format!("\"refusal\":{}", json_str(&r.to_string())),
    };
    for s in 0..256 - wmma_scale16::SCALE_REGS {
        for t in 256..=512 - n_a {
            match split_at(bytes, mode, s, t) {
                Ok(e) => {
                    let regs: Vec<String> = (s..s + wmma_scale16::SCALE_REGS)
                        .chain(t..t + n_a)
                        .map(|r| r.to_string())
                        .collect();
                    return format!(
                        "{},\"scratch_regs\":[{}]",
                        expansion_json(&e),
                        regs.join(",")
                    );
                }
                Err(Reason::Overlap("the scratch block overlaps an operand")) => {}
                Err(r) => return format!("\"refusal\":{}", json_str(&r.to_string())),
            }
        }
    }
    let none = Reason::Overlap("no scratch block below v256 overlaps no operand");
    format!("\"refusal\":{}", json_str(&none.to_string()))
}

fn run(path: &str) -> Result<(), String> {
    let data = std::fs::read(path).map_err(|e| format!("{path}: {e}"))?;
    let analysis = gfx1250::analyze(&data).map_err(|e| format!("{path}: {e}"))?;
    let count = |c: A0Class| analysis.sites().filter(|s| s.class == c).count();
    println!(
        "{{\"object\":{},\"wmma_k128\":{},\"wmma_f4\":{},\"wmma_scale\":{},\"wmma_int_spacing\":{}}}",
        json_str(path),
        count(A0Class::WmmaK128),
        count(A0Class::WmmaF4),
        count(A0Class::WmmaScale),
        count(A0Class::WmmaIntSpacing)
    );
    for f in &analysis.functions {
        let Some(start) = f.file_offset.and_then(|o| usize::try_from(o).ok()) else {
            continue;
        };
        let Some(code) = usize::try_from(f.size)
            .ok()
            .and_then(|n| data.get(start..start.checked_add(n)?))
        else {
            continue;
        };
        let insns: Vec<(u64, &[u8])> = gfx1250::instructions(code, f.vaddr)
            .map_while(Result::ok)
            .map(|i| (i.vaddr, i.bytes))
            .collect();
        let modes = vgpr_mode::modes(&insns);
        for (i, &(vaddr, bytes)) in insns.iter().enumerate() {
            let Some(kind) = kind(bytes) else { continue };
            let mode = match modes[i] {
                Mode::Known(m) => Some(m),
                _ => None,
            };
            let outcome = match (kind, mode) {
                (_, None) => "\"refusal\":\"the VGPR-MSB mode at the site is unknown\"".into(),
                ("k128", Some(m)) => match wmma_k128::split(bytes, m) {
                    Ok(e) => expansion_json(&e),
                    Err(r) => format!("\"refusal\":{}", json_str(&r.to_string())),
                },
                ("f4_scaled", Some(m)) if wmma_f4::is_scale16(bytes) => with_scratch(
                    bytes,
                    m,
                    wmma_f4::scale16_scratch_needed,
                    wmma_f4::split_scale16,
                ),
                ("f4" | "f4_scaled", Some(m)) => match wmma_f4::split(bytes, m) {
                    Ok(e) => expansion_json(&e),
                    Err(r) => format!("\"refusal\":{}", json_str(&r.to_string())),
                },
                ("int", Some(_)) => {
                    let after = (vaddr - f.vaddr) as usize + bytes.len();
                    match wmma_int_nops::pad(bytes, &code[after..]) {
                        Ok(p) => format!(
                            "\"replacement\":\"{}\",\"present\":{},\"added\":{}",
                            hex(&p.bytes),
                            p.present,
                            p.added
                        ),
                        Err(r) => format!("\"refusal\":{}", json_str(&r.to_string())),
                    }
                }
                ("scale16", Some(m)) => {
                    with_scratch(bytes, m, wmma_scale16::scratch_needed, wmma_scale16::split)
                }
                _ => "\"refusal\":\"no emitter for this WMMA\"".into(),
            };
            let record = |variant: &str, outcome: &str| {
                println!(
                    "{{\"site\":{},\"function\":{},\"vaddr\":{vaddr},\"kind\":\"{kind}\",{variant}\"mode\":{},\"original\":\"{}\",{outcome}}}",
                    json_str(path),
                    json_str(&f.name),
                    mode.map_or("null".into(), |m| m.to_string()),
                    hex(bytes)
                )
            };
            record("", &outcome);
            // The masked A copy of a block-16 split may lie in any bank: the
            // same site again with it in bank 1, marked as a variant.
            match (kind, mode) {
                ("scale16", Some(m)) => record(
                    "\"variant\":\"t_bank1\",",
                    &t_bank1(
                        bytes,
                        m,
                        wmma_scale16::masked_a_regs,
                        wmma_scale16::split_at,
                    ),
                ),
                ("f4_scaled", Some(m)) if wmma_f4::is_scale16(bytes) => record(
                    "\"variant\":\"t_bank1\",",
                    &t_bank1(
                        bytes,
                        m,
                        |b| {
                            wmma_f4::scale16_scratch_needed(b).map(|n| n - wmma_scale16::SCALE_REGS)
                        },
                        wmma_f4::split_scale16_at,
                    ),
                ),
                _ => {}
            }
        }
    }
    Ok(())
}

fn main() -> ExitCode {
    let files: Vec<String> = std::env::args().skip(1).collect();
    if files.is_empty() {
        eprintln!("usage: wmma_emit FILE...");
        return ExitCode::from(2);
    }
    let mut ok = true;
    for f in &files {
        if let Err(e) = run(f) {
            eprintln!("error: {e}");
            ok = false;
        }
    }
    if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
