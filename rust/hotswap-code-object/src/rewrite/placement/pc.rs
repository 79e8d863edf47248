//! The `s_get_pc_i64` address computations clang emits, recognised so that
//! their literals can follow moved code, and every other PC read refused.

use super::insns::Insns;
use super::{refuse, w32};
use crate::rewrite::RewriteError;

pub(super) fn sop1_op(w0: u32) -> Option<u32> {
    (w0 >> 23 == 0x17D).then_some((w0 >> 8) & 0xff)
}

pub(super) fn sop2(w0: u32) -> Option<(u32, u32, u32, u32)> {
    // (op, sdst, ssrc0, ssrc1); SOP2 excludes the SOPK/SOP1/SOPC/SOPP rows.
    if w0 >> 30 != 0b10 || w0 >> 28 == 0xB || (w0 >> 23) >= 0x17D {
        return None;
    }
    Some((
        (w0 >> 23) & 0x7f,
        (w0 >> 16) & 0x7f,
        w0 & 0xff,
        (w0 >> 8) & 0xff,
    ))
}

pub(super) const OP_GET_PC: u32 = 0x47;
pub(super) const OP_SET_PC: u32 = 0x48;
pub(super) const OP_SWAP_PC: u32 = 0x49;
pub(super) const OP_RFE: u32 = 0x4a;
pub(super) const OP_ADD_PC: u32 = 0x4b;

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
        let w0 = w32(&bytes[insn.at..]);
        if sop1_op(w0) != Some(OP_GET_PC) {
            continue;
        }
        let reg = (w0 >> 16) & 0x7f;
        let pc = insn.vaddr.wrapping_add(4);
        let unknown = || {
            refuse(format!(
                "{name}: s_get_pc_i64 at vaddr {:#x} is not followed by a recognised address \
                 computation (the PC value would escape)",
                insn.vaddr
            ))
        };
        let next = insns.get(i + 1).ok_or_else(unknown)?;
        let n0 = w32(&bytes[next.at..]);
        let (op, sdst, s0, s1) = sop2(n0).ok_or_else(unknown)?;
        let uses = |a: u32, b: u32, r: u32, lit: u32| (a == r && b == lit) || (a == lit && b == r);
        if op == 0x53 && sdst == reg && uses(s0, s1, reg, 0xfe) && next.len == 12 {
            let off = u64::from_le_bytes(bytes[next.at + 4..next.at + 12].try_into().unwrap());
            out.push(PcComputation {
                index: i,
                last: i + 1,
                reg,
                target: pc.wrapping_add(off),
                literal: Literal::Lit64(next.at + 4),
            });
            continue;
        }
        if op == 0x00 && sdst == reg && uses(s0, s1, reg, 0xff) && next.len == 8 {
            let hi = insns.get(i + 2).ok_or_else(unknown)?;
            let (op2, d2, t0, t1) = sop2(w32(&bytes[hi.at..])).ok_or_else(unknown)?;
            if op2 == 0x04 && d2 == reg + 1 && uses(t0, t1, reg + 1, 0xff) && hi.len == 8 {
                let lo = u64::from(w32(&bytes[next.at + 4..]));
                let hv = u64::from(w32(&bytes[hi.at + 4..]));
                out.push(PcComputation {
                    index: i,
                    last: i + 2,
                    reg,
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
