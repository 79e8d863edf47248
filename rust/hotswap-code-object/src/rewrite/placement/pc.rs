//! The `s_get_pc_i64` address computations clang emits, recognised so that
//! their literals can follow moved code, and every other PC read refused.

use super::insns::Insns;
use super::{refuse, w32};
use crate::gfx1250::fields::{self, sop1, sop2, LITERAL32, LITERAL64};
use crate::rewrite::RewriteError;

/// Where a recognised address computation's literal(s) are.
#[derive(Clone, Copy, Debug)]
pub(super) enum Literal {
    /// An 8-byte literal at this object offset.
    Lit64(usize),
    /// Two 4-byte literals (low, high) at these object offsets.
    Pair(usize, usize),
}

/// A recognised `s_get_pc_i64` address computation.
#[derive(Clone, Copy, Debug)]
pub(super) struct PcComputation {
    /// Index of the `s_get_pc_i64`.
    pub(super) index: usize,
    /// Index of its last instruction.
    pub(super) last: usize,
    /// The register pair (first SGPR).
    pub(super) reg: u32,
    /// The address it computes.
    pub(super) target: u64,
    pub(super) literal: Literal,
}

/// The address computations of one function, and whether every PC read is
/// one of them.
pub(super) fn pc_computations(
    bytes: &[u8],
    insns: &Insns,
    name: &str,
) -> Result<Vec<PcComputation>, RewriteError> {
    let mut out = Vec::new();
    for (i, insn) in insns.iter().enumerate() {
        let Some(get_pc) = fields::sop1(w32(&bytes[insn.at..])) else {
            continue;
        };
        if get_pc.op != sop1::S_GET_PC_I64 {
            continue;
        }
        let reg = get_pc.sdst;
        let pc = insn.vaddr.wrapping_add(4);
        let unknown = || {
            refuse(format!(
                "{name}: s_get_pc_i64 at vaddr {:#x} is not followed by a recognised address \
                 computation (the PC value would escape)",
                insn.vaddr
            ))
        };
        let next = insns.get(i + 1).ok_or_else(unknown)?;
        let add = fields::sop2(w32(&bytes[next.at..])).ok_or_else(unknown)?;
        if add.op == sop2::S_ADD_NC_U64
            && add.sdst == reg
            && add.sources_are(reg, LITERAL64)
            && next.len == 12
        {
            let off = u64::from_le_bytes(bytes[next.at + 4..next.at + 12].try_into().unwrap());
            out.push(PcComputation {
                index: i,
                last: i + 1,
                reg: u32::from(reg),
                target: pc.wrapping_add(off),
                literal: Literal::Lit64(next.at + 4),
            });
            continue;
        }
        if add.op == sop2::S_ADD_CO_U32
            && add.sdst == reg
            && add.sources_are(reg, LITERAL32)
            && next.len == 8
        {
            let hi = insns.get(i + 2).ok_or_else(unknown)?;
            let carry = fields::sop2(w32(&bytes[hi.at..])).ok_or_else(unknown)?;
            if carry.op == sop2::S_ADD_CO_CI_U32
                && carry.sdst == reg + 1
                && carry.sources_are(reg + 1, LITERAL32)
                && hi.len == 8
            {
                let lo = u64::from(w32(&bytes[next.at + 4..]));
                let hv = u64::from(w32(&bytes[hi.at + 4..]));
                out.push(PcComputation {
                    index: i,
                    last: i + 2,
                    reg: u32::from(reg),
                    target: pc.wrapping_add(lo | hv << 32),
                    literal: Literal::Pair(next.at + 4, hi.at + 4),
                });
                continue;
            }
        }
        return Err(unknown());
    }
    Ok(out)
}

/// Writes the offset `value` into a computation's literal(s) in `out` at
/// `base`-relative positions.
pub(super) fn write_literal(out: &mut [u8], literal: Literal, shift: usize, value: u64) {
    match literal {
        Literal::Lit64(at) => out[at - shift..at - shift + 8].copy_from_slice(&value.to_le_bytes()),
        Literal::Pair(lo, hi) => {
            out[lo - shift..lo - shift + 4].copy_from_slice(&(value as u32).to_le_bytes());
            out[hi - shift..hi - shift + 4].copy_from_slice(&((value >> 32) as u32).to_le_bytes());
        }
    }
}
