//! Gateways: the entry of each moved function's original copy becomes a
//! jump to its image, so that whatever reaches the old entry without the
//! rewriter seeing it (a call through a function-pointer table, a computed
//! target, a stub kernel falling through its end into the next function)
//! runs the fixed code.
//!
//! The jump is an `s_branch` when the image is in its reach (±128 KiB),
//! else a PC-relative far jump
//! `s_get_pc_i64 s[n:n+1]; s_add_nc_u64 s[n:n+1], s[n:n+1], lit64;
//! s_set_pc_i64 s[n:n+1]` (20 bytes, SCC untouched) through a register pair
//! the liveness analysis proves dead at the entry ([`crate::liveness`]): for
//! a callable function, also one its calling convention lets a callee
//! clobber (whatever the convention: [`Convention::Unknown`]); for a kernel,
//! any pair not live at its entry. No such pair, or a function shorter than
//! the jump, refuses, naming the function.
//!
//! The gateway overwrites whole instructions (the rest of the last one it
//! covers becomes `s_nop 0`), so the old copy still decodes; the rest of
//! the old body is left as it is (every branch the rewriter sees into it is
//! re-aimed at the image already).

use std::sync::Arc;

use super::layout::branch_imm;
use super::moving::Moving;
use super::{refuse, S_NOP_0};
use crate::gfx1250;
use crate::gfx1250::walker::{self, Family};
use crate::liveness::effects::{self, Flow};
use crate::liveness::{self, abi, Convention, Reg, RegSet};
use crate::object::CodeObject;
use crate::rewrite::vgpr_mode::Mode;
use crate::rewrite::{Patch, RewriteError};

/// The VCC pair's first operand number.
const VCC_LO: u8 = 106;

/// How a gateway jumps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GatewayKind {
    /// One `s_branch` (4 bytes).
    Branch,
    /// `s_get_pc_i64`, `s_add_nc_u64` with a 64-bit literal, `s_set_pc_i64`
    /// through the SGPR pair starting at `reg` (20 bytes).
    FarJump {
        /// The first register of the pair (an operand number: `s0`–`s104`,
        /// 106 for VCC).
        reg: u8,
    },
}

impl GatewayKind {
    /// `s_branch` or `far-jump`.
    pub fn as_str(self) -> &'static str {
        match self {
            GatewayKind::Branch => "s_branch",
            GatewayKind::FarJump { .. } => "far-jump",
        }
    }

    /// The registers it clobbers, as assembly text (`""` for a branch).
    pub fn registers(self) -> String {
        match self {
            GatewayKind::Branch => String::new(),
            GatewayKind::FarJump { reg: VCC_LO } => "vcc".into(),
            GatewayKind::FarJump { reg } => format!("s[{}:{}]", reg, reg + 1),
        }
    }
}

/// The old entry of one moved function, made a jump to its image.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Gateway {
    /// The moved function.
    pub function: Arc<str>,
    /// The old entry (the gateway's address).
    pub old_entry: u64,
    /// The image's entry (where it jumps).
    pub new_entry: u64,
    /// How it jumps.
    pub kind: GatewayKind,
    /// The bytes it overwrites (whole instructions).
    pub len: u32,
}

/// The gateways of `moving` (laid out) and the patches that write them.
pub(super) fn gateways(
    object: &CodeObject<'_>,
    analysis: &gfx1250::Analysis,
    moving: &[Moving],
    patches: &mut Vec<Patch>,
) -> Result<Vec<Gateway>, RewriteError> {
    let map = object.address_map();
    // Per moved function: its s_branch immediate when the image is in
    // reach, else the pair its entry block writes before reading, if any.
    let bytes = object.bytes();
    let reach: Vec<_> = moving
        .iter()
        .map(|m| branch_imm(m.vaddr, m.new_vaddr).ok_or_else(|| written_before_read(bytes, m)))
        .collect();
    // The others need the liveness analysis: of them and what they call,
    // from the walk the plan made.
    let far: Vec<u64> = moving
        .iter()
        .zip(&reach)
        .filter(|(_, r)| matches!(r, Err(None)))
        .map(|(m, _)| m.vaddr)
        .collect();
    let live = (!far.is_empty())
        .then(|| liveness::analyze_walked(object, analysis, Convention::Unknown, Some(&far)));
    let mut out = Vec::with_capacity(moving.len());
    for (m, r) in moving.iter().zip(reach) {
        let (kind, code) = match r {
            Ok(imm) => {
                let mut code = imm.to_le_bytes().to_vec();
                code.extend_from_slice(&[0xa0, 0xbf]);
                (GatewayKind::Branch, code)
            }
            Err(first) => {
                let reg = match first {
                    Some(reg) => reg,
                    None => free_pair(live.as_ref(), m)?,
                };
                (
                    GatewayKind::FarJump { reg },
                    far_jump(reg, m.vaddr, m.new_vaddr),
                )
            }
        };
        // Whole instructions: the first ones covering the jump.
        let mut len = 0u64;
        for insn in m.insns.iter() {
            if len >= code.len() as u64 {
                break;
            }
            len += insn.len as u64;
        }
        if len < code.len() as u64 || len > m.size {
            return Err(refuse(format!(
                "{}: {} bytes, too short for the {}-byte gateway to its image",
                m.name,
                m.size,
                code.len()
            )));
        }
        let mut written = code;
        while (written.len() as u64) < len {
            written.extend_from_slice(&S_NOP_0);
        }
        let at = map
            .file_offset(m.vaddr)
            .ok_or_else(|| refuse(format!("{}: entry not mapped", m.name)))?;
        patches.push(Patch {
            file_offset: at,
            bytes: written,
        });
        out.push(Gateway {
            function: m.name.clone(),
            old_entry: m.vaddr,
            new_entry: m.new_vaddr,
            kind,
            len: len as u32,
        });
    }
    Ok(out)
}

/// The registers a gateway may never take at `m`'s entry whatever the
/// liveness: for a callable function, what either calling convention
/// preserves and the return address.
fn reserved(m: &Moving) -> RegSet {
    let mut busy = RegSet::EMPTY;
    if !m.is_kernel {
        busy.union_with(&abi::callee_saved(Convention::Unknown));
        busy.insert_s(30, 2);
    }
    busy
}

/// The candidate pairs in the order a gateway prefers them (first registers).
fn pairs() -> impl Iterator<Item = u8> {
    (0..105u8).step_by(2).chain([VCC_LO])
}

/// Instructions of the entry block looked at by [`written_before_read`].
const ENTRY_PREFIX: usize = 64;

/// The first pair, outside [`reserved`], that `m`'s first instructions
/// (up to the first control transfer, at most [`ENTRY_PREFIX`]) write whole
/// with a scalar ALU instruction before any of them may read it. Every path
/// from the entry runs those instructions first, so such a pair is dead
/// there. `None`: no such pair (the liveness analysis decides).
fn written_before_read(bytes: &[u8], m: &Moving) -> Option<u8> {
    let reserved = reserved(m);
    let mut read = RegSet::EMPTY;
    let mut written = RegSet::EMPTY;
    for insn in m.insns.iter().take(ENTRY_PREFIX) {
        let code = bytes.get(insn.at..insn.at + insn.len)?;
        let d = walker::decode(code).ok()?;
        let e = effects::effect(insn.vaddr, code, d, Mode::Unset);
        if !e.known {
            break;
        }
        read.union_with(&e.uses);
        // A scalar ALU write is whole and immediate (no EXEC, no memory).
        if matches!(d.family, Family::Sop1 | Family::Sop2 | Family::Sopk) && !e.memory {
            let mut fresh = e.kills;
            fresh.remove_all(&read);
            written.union_with(&fresh);
        }
        if e.flow != Flow::Next {
            break;
        }
    }
    pairs().find(|&r| {
        [r, r + 1]
            .iter()
            .all(|&s| written.contains(Reg::S(s)) && !reserved.contains(Reg::S(s)))
    })
}

/// The first SGPR pair (or VCC) dead at `m`'s entry and, for a callable
/// function, clobberable under every calling convention.
fn free_pair(live: Option<&liveness::ObjectLiveness<'_>>, m: &Moving) -> Result<u8, RewriteError> {
    let no = |why: String| {
        refuse(format!(
            "{}: its image is out of s_branch reach of its old entry and {why}, so no \
             gateway can be placed there",
            m.name
        ))
    };
    // The function entered at `m`'s entry (functions are in address order;
    // the one holding the entry must start there).
    let f = live
        .and_then(|l| l.function_at(m.vaddr).map(|i| &l.functions[i]))
        .filter(|f| f.vaddr == m.vaddr)
        .ok_or_else(|| no("the liveness analysis does not know it".into()))?;
    if let liveness::Status::NotAnalysable(why) = &f.status {
        return Err(no(format!("its liveness is unknown ({why})")));
    }
    let mut busy: RegSet = f.entry_live;
    busy.union_with(&reserved(m));
    pairs()
        .find(|&r| !busy.contains(Reg::S(r)) && !busy.contains(Reg::S(r + 1)))
        .ok_or_else(|| no("no SGPR pair is dead at its entry".into()))
}

/// The gateway at `vaddr` of an object (`code`: its bytes from `vaddr`,
/// at least 20 when there are that many), if the instruction there is one
/// of the two jumps a gateway is made of: its kind and where it jumps.
pub fn read_gateway(vaddr: u64, code: &[u8]) -> Option<(GatewayKind, u64)> {
    let w = |at: usize| code.get(at..at + 4).map(super::w32);
    let w0 = w(0)?;
    if w0 >> 16 == 0xbfa0 {
        let delta = 4 * i64::from(w0 as u16 as i16);
        return Some((
            GatewayKind::Branch,
            vaddr.wrapping_add(4).wrapping_add(delta as u64),
        ));
    }
    let reg = (w0 >> 16) as u8 & 0x7f;
    let far = far_jump(reg, vaddr, 0);
    if code.len() < 20
        || (reg > 104 && reg != VCC_LO)
        || code[..8] != far[..8]
        || code[16..20] != far[16..20]
    {
        return None;
    }
    let lit = u64::from_le_bytes(code[8..16].try_into().ok()?);
    Some((
        GatewayKind::FarJump { reg },
        vaddr.wrapping_add(4).wrapping_add(lit),
    ))
}

/// The far jump from `from` to `to` through `s[reg:reg+1]`.
fn far_jump(reg: u8, from: u64, to: u64) -> Vec<u8> {
    // s_get_pc_i64 s[reg:reg+1] (SOP1 0x47)
    let mut code = vec![0x00, 0x47, 0x80 | reg, 0xbe];
    // s_add_nc_u64 s[reg:reg+1], s[reg:reg+1], lit64 (SOP2 0x53)
    let add = 0x8000_0000u32 | (0x53 << 23) | (u32::from(reg) << 16) | (0xfe << 8) | u32::from(reg);
    code.extend_from_slice(&add.to_le_bytes());
    // The PC s_get_pc_i64 reads is the next instruction's address.
    code.extend_from_slice(&to.wrapping_sub(from + 4).to_le_bytes());
    // s_set_pc_i64 s[reg:reg+1] (SOP1 0x48)
    code.extend_from_slice(&[reg, 0x48, 0x80, 0xbe]);
    code
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn far_jump_bytes_are_what_llvm_mc_assembles() {
        // llvm-mc-22 -mcpu=gfx1250: s_get_pc_i64 s[2:3];
        // s_add_nc_u64 s[2:3], s[2:3], 0x123456789a; s_set_pc_i64 s[2:3]
        let from = 0x1000u64;
        let code = far_jump(2, from, from + 4 + 0x12_3456_789a);
        assert_eq!(
            code,
            [
                0x00, 0x47, 0x82, 0xbe, 0x02, 0xfe, 0x82, 0xa9, 0x9a, 0x78, 0x56, 0x34, 0x12, 0x00,
                0x00, 0x00, 0x02, 0x48, 0x80, 0xbe
            ]
        );
        assert_eq!(
            read_gateway(from, &code),
            Some((GatewayKind::FarJump { reg: 2 }, from + 4 + 0x12_3456_789a))
        );
        // s_branch -2: to the instruction before.
        assert_eq!(
            read_gateway(from, &[0xfe, 0xff, 0xa0, 0xbf]),
            Some((GatewayKind::Branch, from - 4))
        );
        assert_eq!(read_gateway(from, &code[..16]), None);
        assert_eq!(read_gateway(from, &[0, 0, 0x80, 0xbf]), None);
    }
}
