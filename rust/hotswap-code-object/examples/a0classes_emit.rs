//! Runs the memory and conversion emitters (`rewrite::emit::{ds_addtid,
//! tensor_mask, flat_scratch_base, fp8_clamp}`) on every site of their classes
//! in gfx1250 code objects, for the independent checks of `tests/a0classes`
//! (llvm-objdump-22, llvm-mc-22 and models that never see the emitters'
//! structures: only the bytes printed here).
//!
//! ```text
//! a0classes_emit FILE...
//! ```
//! One JSON line per object (`"object"`, the analysis' site counts of the four
//! classes, vector flat-scratch sites counted apart) and one per instruction
//! one of the emitters recognises, found by walking each function with the
//! crate's walker: `"kind"` (`addtid`, `tensor`, `tensor_live`,
//! `tensor_delay` — the same-size form when an `s_delay_alu` precedes, whose
//! original and replacement are both two instructions —, `fsb`,
//! `fp8_clamp`), its `"vaddr"`, the VGPR-MSB `"mode"` (null when unknown), the
//! `"original"` bytes and either the `"replacement"` bytes (hex) with the
//! scratch registers chosen, or the `"refusal"`. For the at-site forms this
//! driver uses no liveness: it picks scratch registers the instruction does
//! not name (v255 or v254;
//! s102; s[100:101]), and emits both tensor forms (mask register dead and
//! live), and `tensor_def` — the definition-site form, where the mask SGPR's
//! only reaching definition (`liveness::ObjectLiveness::only_definition`) is
//! read by tensor loads alone: the definition's bytes as `original`, its
//! replacement, its address as `definition` and whether SCC may be read after
//! it as `scc_live`. Exit 1 when an object cannot be read or analysed.
use std::process::ExitCode;

use hotswap_code_object::gfx1250::{self, A0Class, Fix};
use hotswap_code_object::liveness::{self, Convention};
use hotswap_code_object::rewrite::emit::{
    ds_addtid, flat_scratch_base, fp8_clamp, tensor_mask, Expansion, Reason,
};
use hotswap_code_object::rewrite::vgpr_mode::{self, Mode};

#[allow(dead_code)]
#[path = "common/mod.rs"]
mod common;
use common::json_str;

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn outcome(r: Result<Expansion, Reason>, scratch: &str) -> String {
    match r {
        Ok(e) => format!(
            "\"replacement\":\"{}\",\"scratch\":{scratch}",
            hex(&e.bytes)
        ),
        Err(r) => format!("\"refusal\":{}", json_str(&r.to_string())),
    }
}

/// The kinds and outcomes of one instruction (none when no emitter knows it).
fn sites(bytes: &[u8], mode: Option<u8>) -> Vec<(&'static str, String)> {
    if let Ok(a) = ds_addtid::parse(bytes) {
        let scratch = if a.vgpr == 255 { 254 } else { 255 };
        let out = match mode {
            None => "\"refusal\":\"the VGPR-MSB mode at the site is unknown\"".into(),
            Some(m) => outcome(
                ds_addtid::expand(bytes, m, Some(scratch)),
                &match a.kind {
                    ds_addtid::Kind::Load => "null".to_string(),
                    ds_addtid::Kind::Store => scratch.to_string(),
                },
            ),
        };
        return vec![("addtid", out)];
    }
    if tensor_mask::mask_sgpr(bytes).is_ok() {
        return vec![
            (
                "tensor",
                outcome(tensor_mask::clear_at_site(bytes, false, None), "null"),
            ),
            (
                "tensor_live",
                outcome(tensor_mask::clear_at_site(bytes, true, Some(102)), "102"),
            ),
        ];
    }
    if flat_scratch_base::reads_base(bytes) {
        return vec![(
            "fsb",
            outcome(flat_scratch_base::from_sgpr_pair(bytes, 100), "100"),
        )];
    }
    if fp8_clamp::is_fp8_clamp(bytes) {
        return vec![("fp8_clamp", outcome(fp8_clamp::emit(bytes), "null"))];
    }
    vec![]
}

/// The definition-site form of the tensor load at `site` whose mask SGPR is
/// `mask`: the definition's address, bytes, replacement and whether SCC may
/// be read after it; `None` when the proof or the emitter refuses.
fn definition_form(
    l: &liveness::ObjectLiveness<'_>,
    data: &[u8],
    site: u64,
    mask: u8,
) -> Option<(u64, Vec<u8>, Vec<u8>, bool)> {
    let f = l.function_at(site)?;
    let allowed = |_: u64, b: &[u8]| tensor_mask::mask_sgpr(b) == Ok(mask);
    let d = l.only_definition(f, site, mask, &allowed).ok()?;
    let def = data.get(d.offset..d.offset + usize::from(d.len))?.to_vec();
    let scc_live = l.live_at(f, d.vaddr)?.after.contains(liveness::Reg::Scc);
    let new = tensor_mask::clear_at_definition(&def, mask, scc_live).ok()?;
    Some((d.vaddr, def, new, scc_live))
}

fn run(path: &str) -> Result<(), String> {
    let data = std::fs::read(path).map_err(|e| format!("{path}: {e}"))?;
    let analysis = gfx1250::analyze(&data).map_err(|e| format!("{path}: {e}"))?;
    let count = |c: A0Class| analysis.sites().filter(|s| s.class == c).count();
    let fsb_vector = analysis
        .sites()
        .filter(|s| s.class == A0Class::FlatScratchBase64 && s.fix == Fix::Growth)
        .count();
    println!(
        "{{\"object\":{},\"ds_addtid\":{},\"tensor_lds\":{},\"fp8_clamp\":{},\"fsb_vector\":{fsb_vector}}}",
        json_str(path),
        count(A0Class::DsAddtid),
        count(A0Class::TensorLds),
        count(A0Class::Fp8Clamp),
    );
    // The definition-site tensor form where its reaching-definition proof
    // holds (register liveness of the whole object, computed once).
    let liveness = (count(A0Class::TensorLds) > 0)
        .then(|| liveness::analyze(&data, Convention::Unknown).ok())
        .flatten();
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
            let mode = match modes[i] {
                Mode::Known(m) => Some(m),
                _ => None,
            };
            // The same-size tensor form, in the slot of an s_delay_alu right
            // before: the original printed is the two instructions.
            if let (Some(&(_, prev)), Ok(_)) = (
                i.checked_sub(1).and_then(|p| insns.get(p)),
                tensor_mask::mask_sgpr(bytes),
            ) {
                if let Ok(slot) = tensor_mask::clear_in_place_of_delay(prev, bytes) {
                    println!(
                        "{{\"site\":{},\"function\":{},\"vaddr\":{vaddr},\"kind\":\"tensor_delay\",\"mode\":null,\"original\":\"{}{}\",\"replacement\":\"{}{}\",\"scratch\":null}}",
                        json_str(path),
                        json_str(&f.name),
                        hex(prev),
                        hex(bytes),
                        hex(&slot),
                        hex(bytes)
                    );
                }
            }
            if let (Some(l), Ok(mask)) = (&liveness, tensor_mask::mask_sgpr(bytes)) {
                if let Some((def_vaddr, def, new, scc_live)) =
                    definition_form(l, &data, vaddr, mask)
                {
                    println!(
                        "{{\"site\":{},\"function\":{},\"vaddr\":{vaddr},\"kind\":\"tensor_def\",\"mode\":null,\"original\":\"{}\",\"replacement\":\"{}\",\"definition\":{def_vaddr},\"scc_live\":{scc_live},\"scratch\":null}}",
                        json_str(path),
                        json_str(&f.name),
                        hex(&def),
                        hex(&new)
                    );
                }
            }
            for (kind, out) in sites(bytes, mode) {
                println!(
                    "{{\"site\":{},\"function\":{},\"vaddr\":{vaddr},\"kind\":\"{kind}\",\"mode\":{},\"original\":\"{}\",{out}}}",
                    json_str(path),
                    json_str(&f.name),
                    mode.map_or("null".into(), |m| m.to_string()),
                    hex(bytes)
                );
            }
        }
    }
    Ok(())
}

fn main() -> ExitCode {
    let files: Vec<String> = std::env::args().skip(1).collect();
    if files.is_empty() {
        eprintln!("usage: a0classes_emit FILE...");
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
