//! Encode: the images of the moved functions written into the new
//! segment's bytes: each instruction copied with its same-size fixes, or
//! replaced by its emitter's code; branches re-targeted, island entries
//! written, the address computations' literals re-targeted; PC-dependent
//! instructions the rewriter cannot follow refuse.

use super::layout::{branch_imm, Region};
use super::moving::{map_target, Moving};
use super::pc::{write_literal, Literal};
use super::{refuse, w32, S_CODE_END, S_NOP_0};
use crate::gfx1250::fields::{self, sop1};
use crate::object::CodeObject;
use crate::rewrite::vgpr_mode::{self, Flow};
use crate::rewrite::{Patch, RewriteError};

/// What [`images`] wrote.
pub(super) struct Images {
    /// The bytes appended after the original end: zero padding to the
    /// region's page, then the images and the prefetch tail.
    pub(super) code: Vec<u8>,
    /// The `s_clause` instructions made `s_nop 0` (their window held a
    /// replaced site).
    pub(super) clauses_removed: usize,
}

/// The images of `moving` ([`Images`]), in an allocation with room for
/// `table_bytes` more and for the input (see [`super::Placement::tail`]).
pub(super) fn images(
    object: &CodeObject<'_>,
    fixes: &[Patch],
    moving: &[Moving],
    region: &Region,
    table_bytes: usize,
) -> Result<Images, RewriteError> {
    let bytes = object.bytes();

    // The tail starts with the zero padding up to the region's page; the
    // images are written straight into it (no second copy).
    let pad = (region.file_offset - bytes.len() as u64) as usize;
    // And room for the input before all of it: the output of
    // `rewrite_b0_to_a0` is built in this allocation ([`Placement::tail`]).
    let code_len = region.code_len;
    let mut out: Vec<u8> = Vec::with_capacity(bytes.len() + pad + code_len + table_bytes);
    out.resize(pad, 0);
    let mut clauses_removed = 0;
    for m in moving {
        let start = pad + (m.new_vaddr - region.vaddr) as usize;
        while out.len() < start {
            out.extend_from_slice(&S_CODE_END);
        }
        let image_start = out.len();
        clauses_removed += image(&mut out, bytes, fixes, moving, m)?;
        // The literals of the computations, now that the image is written.
        literals(&mut out, moving, m, image_start)?;
    }
    while out.len() < pad + code_len {
        out.extend_from_slice(&S_CODE_END);
    }
    Ok(Images {
        code: out,
        clauses_removed,
    })
}

/// Appends the image of `m`: each instruction copied with its same-size
/// fixes (`fixes`, sorted by offset) or replaced by its emitter's code, its
/// island entries, branches re-targeted, clauses over a replaced site made
/// `s_nop 0` (how many: the result); a PC use the rewriter cannot follow
/// refuses.
fn image(
    out: &mut Vec<u8>,
    bytes: &[u8],
    fixes: &[Patch],
    moving: &[Moving],
    m: &Moving,
) -> Result<usize, RewriteError> {
    let image_start = out.len();
    let mut clauses_removed = 0;
    let mut island = 0usize;
    // The replacements in index order, met as the instructions are.
    let mut replacements = m.replacements.iter().peekable();
    // Instructions come in order: their shifts and their same-size fixes
    // (sorted by offset) are followed, not searched for.
    let mut shifts = m.shifts.cursor();
    let mut fix = fixes.partition_point(|p| p.file_offset < m.insns.at as u64);
    for (i, insn) in m.insns.iter().enumerate() {
        let new_vaddr = m.new_vaddr + (insn.vaddr - m.insns.vaddr) + shifts.at(i);
        // Islands are few: asked only where one is.
        if m.islands.points.get(island).is_some_and(|p| p.0 == i) {
            emit_islands(out, m, &mut island, i, new_vaddr)?;
        }
        if let Some((_, code)) = replacements.next_if(|s| s.0 == i) {
            out.extend_from_slice(code);
            continue;
        }
        let here = out.len();
        out.extend_from_slice(&bytes[insn.at..insn.at + insn.len]);
        // The same-size fixes of this instruction: those starting in it.
        while fixes
            .get(fix)
            .is_some_and(|p| p.file_offset < insn.at as u64)
        {
            fix += 1;
        }
        for p in fixes[fix..]
            .iter()
            .take_while(|p| p.file_offset < (insn.at + insn.len) as u64)
        {
            let o = here + (p.file_offset as usize - insn.at);
            let n = p.bytes.len().min(out.len() - o);
            out[o..o + n].copy_from_slice(&p.bytes[..n]);
        }
        let w0 = w32(&bytes[insn.at..]);
        let at = |what: &str| format!("{} at vaddr {:#x}: {what}", m.name, insn.vaddr);
        // Branches.
        match vgpr_mode::flow(insn.vaddr, w0) {
            Flow::Jump(t) | Flow::Branch(t) => {
                let to = match map_target(moving, t) {
                    Some(Ok(v)) => v,
                    Some(Err(())) => {
                        return Err(refuse(at("a branch into the middle of an instruction")))
                    }
                    None => t,
                };
                let to = m.islands.via(i).map_or(to, |o| m.new_vaddr + o);
                let imm = branch_imm(new_vaddr, to).ok_or_else(|| {
                    refuse(at(&format!(
                        "the branch target {t:#x} is out of s_branch reach from the moved copy"
                    )))
                })?;
                out[here..here + 2].copy_from_slice(&imm.to_le_bytes());
            }
            _ => {}
        }
        // s_clause whose window holds a split site.
        if let Some(n) = fields::clause_window(w0) {
            if (i + 1..=i + n).any(|j| m.replacements.contains_key(j)) {
                out[here..here + 4].copy_from_slice(&S_NOP_0);
                clauses_removed += 1;
            }
        }
        // PC-dependent instructions (the computations' literals are
        // written once the whole image is).
        check_pc_use(m, i, w0).map_err(|why| refuse(at(why)))?;
    }
    let end = m.new_vaddr + m.image_len;
    emit_islands(out, m, &mut island, m.insns.len(), end)?;
    debug_assert_eq!((out.len() - image_start) as u64, m.image_len);
    Ok(clauses_removed)
}

/// Refuses a PC use at instruction `i` of `m` (first dword `w0`): an
/// `s_set_pc_i64` that is not the end of a recognised address computation or
/// a function's return, `s_add_pc_i64`, `s_rfe_i64`.
fn check_pc_use(m: &Moving, i: usize, w0: u32) -> Result<(), &'static str> {
    // Computations are in instruction order: found by their last index.
    let pc_last = |j: usize| {
        m.pcs
            .binary_search_by_key(&j, |p| p.last)
            .ok()
            .map(|k| &m.pcs[k])
    };
    let sop1 = fields::sop1(w0);
    let reg = sop1.map_or(0, |s| u32::from(s.ssrc0));
    match sop1.map(|s| s.op) {
        Some(sop1::S_SET_PC_I64) => {
            let after_computation = i
                .checked_sub(1)
                .and_then(pc_last)
                .is_some_and(|p| p.reg == reg);
            let is_return = reg == 30 && !m.is_kernel;
            if !after_computation && !is_return {
                return Err("s_set_pc_i64 whose target the rewriter cannot bound");
            }
        }
        // A call, whatever register its target travelled through: the
        // target is a function entry, which is the image itself when the
        // address was built by a computation (re-aimed where it is built),
        // taken from a relocation (re-aimed) or a kernel descriptor
        // (redirected), and a gateway to the image when it is the old entry
        // of a moved function; every other PC read refuses. Its return
        // address is the image's.
        Some(sop1::S_SWAP_PC_I64) => {}
        Some(sop1::S_ADD_PC_I64) => return Err("s_add_pc_i64 in moved code"),
        Some(sop1::S_RFE_I64) => return Err("s_rfe_i64 in moved code"),
        _ => {}
    }
    Ok(())
}

/// Writes the literals of the address computations of `m`, whose image
/// starts at `image_start` in `out`: each keeps its target, or follows it
/// into its image.
fn literals(
    out: &mut [u8],
    moving: &[Moving],
    m: &Moving,
    image_start: usize,
) -> Result<(), RewriteError> {
    for pc in &m.pcs {
        let to = match map_target(moving, pc.target) {
            Some(Ok(v)) => v,
            Some(Err(())) => {
                return Err(refuse(format!(
                    "{}: an address computation into the middle of an instruction",
                    m.name
                )))
            }
            None => pc.target,
        };
        let getpc_new = m.new_vaddr + m.new_off(pc.index);
        // The literal's image position: its instruction's new offset plus
        // its offset within the instruction.
        let lit_pos = |at: usize| {
            let j = m.insns.index_holding(at);
            image_start + m.new_off(j) as usize + (at - m.insns.at(j).at)
        };
        let value = to.wrapping_sub(getpc_new + 4);
        let literal = match pc.literal {
            Literal::Lit64(a) => Literal::Lit64(lit_pos(a)),
            Literal::Pair(a, b) => Literal::Pair(lit_pos(a), lit_pos(b)),
        };
        write_literal(out, literal, 0, value);
    }
    Ok(())
}

/// Writes the island entries that precede instruction `i` of `m` (`i ==
/// len`: the end), at `vaddr`; `next` is the next island to write.
fn emit_islands(
    region: &mut Vec<u8>,
    m: &Moving,
    next: &mut usize,
    i: usize,
    vaddr: u64,
) -> Result<(), RewriteError> {
    let Some((k, first, dests)) = m.islands.points.get(*next) else {
        return Ok(());
    };
    if *k != i {
        return Ok(());
    }
    *next += 1;
    let mut at = m.new_vaddr + first;
    debug_assert_eq!(at, vaddr - 4 * dests.len() as u64);
    for &d in dests {
        let to = m.new_vaddr + m.new_off(d);
        let imm = branch_imm(at, to).ok_or_else(|| {
            refuse(format!(
                "{}: a branch island at {at:#x} cannot reach {to:#x}",
                m.name
            ))
        })?;
        region.extend_from_slice(&imm.to_le_bytes());
        region.extend_from_slice(&[0xa0, 0xbf]); // s_branch
        at += 4;
    }
    Ok(())
}
