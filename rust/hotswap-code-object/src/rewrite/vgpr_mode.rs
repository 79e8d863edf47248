//! The `s_set_vgpr_msb` mode in force at each instruction of a function: a
//! forward dataflow over the function's control flow.
//!
//! Entry: all MSBs zero. LLVM's `AMDGPULowerVGPREncoding` pass states the
//! convention: "non-fall through basic blocks shall start with all 4 MSBs
//! zero ... Consequentially the ABI is set to expect all 4 MSBs to be zero on
//! entry", and it resets the mode to zero before every terminator and call;
//! so a call (`s_swap_pc_i64`) returns with mode zero.
//!
//! Transfer: `s_set_vgpr_msb imm` sets the mode to `imm[7:0]`;
//! `s_setreg_imm32_b32` to `MODE` covering bits 12–19 sets it from the
//! immediate (MODE holds the fields rotated left by 2); any other write to
//! those MODE bits (`s_setreg_b32`, a partial cover) makes it unknown.
//! Merge: equal modes stay, different ones are unknown. Each instruction's
//! state changes at most twice (unset → known → unknown), so the walk is
//! linear in the function's size.

use crate::gfx1250::fields::{sop1, sopk, sopp, HwReg, Scalar};

/// The mode at one instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Not reached (yet).
    Unset,
    /// This 8-bit mode.
    Known(u8),
    /// Paths disagree, or a write this analysis cannot evaluate.
    Unknown,
}

impl Mode {
    fn merge(self, other: Mode) -> Mode {
        match (self, other) {
            (Mode::Unset, m) | (m, Mode::Unset) => m,
            (Mode::Known(a), Mode::Known(b)) if a == b => Mode::Known(a),
            _ => Mode::Unknown,
        }
    }
}

/// Control flow of one instruction, as this module and placement need it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flow {
    /// Falls through.
    Next,
    /// `s_branch`: only the target.
    Jump(u64),
    /// `s_cbranch_*`: the target and the next instruction.
    Branch(u64),
    /// No successor in the function (`s_endpgm`, `s_set_pc_i64`, ...).
    Stop,
}

/// The control flow of one instruction at `vaddr` with first dword `w0`.
#[inline]
pub fn flow(vaddr: u64, w0: u32) -> Flow {
    match Scalar::decode(w0) {
        Some(Scalar::Sopp(i)) => match i.op {
            sopp::S_BRANCH => Flow::Jump(i.branch_target(vaddr)),
            _ if i.is_branch() => Flow::Branch(i.branch_target(vaddr)),
            sopp::S_ENDPGM | sopp::S_ENDPGM_SAVED => Flow::Stop,
            _ => Flow::Next,
        },
        Some(Scalar::Sop1(i)) if matches!(i.op, sop1::S_SET_PC_I64 | sop1::S_RFE_I64) => Flow::Stop,
        _ => Flow::Next,
    }
}

/// Whether the instruction with first dword `w0` can change the mode (an
/// `s_set_vgpr_msb`, an `s_setreg*`, a call): a function with none runs in
/// the entry mode throughout.
#[inline]
pub fn may_change(w0: u32) -> bool {
    match Scalar::decode(w0) {
        Some(Scalar::Sopp(i)) => i.op == sopp::S_SET_VGPR_MSB,
        Some(Scalar::Sopk(i)) => matches!(i.op, sopk::S_SETREG_B32 | sopk::S_SETREG_IMM32_B32),
        Some(Scalar::Sop1(i)) => i.op == sop1::S_SWAP_PC_I64,
        _ => false,
    }
}

/// Whether the instruction with first dword `w0` reads or writes the PC
/// (`s_get_pc_i64`, `s_set_pc_i64`, `s_swap_pc_i64`, `s_rfe_i64`,
/// `s_add_pc_i64`).
#[inline]
pub fn reads_or_writes_pc(w0: u32) -> bool {
    matches!(
        Scalar::decode(w0),
        Some(Scalar::Sop1(i)) if matches!(
            i.op,
            sop1::S_GET_PC_I64
                | sop1::S_SET_PC_I64
                | sop1::S_SWAP_PC_I64
                | sop1::S_RFE_I64
                | sop1::S_ADD_PC_I64
        )
    )
}

/// The mode after one instruction (`bytes`) given the mode before it.
fn transfer(bytes: &[u8], before: Mode) -> Mode {
    let Some(w0) = bytes
        .get(..4)
        .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    else {
        return before;
    };
    match Scalar::decode(w0) {
        Some(Scalar::Sopp(i)) if i.op == sopp::S_SET_VGPR_MSB => Mode::Known(i.simm16 as u8),
        Some(Scalar::Sopk(i)) if matches!(i.op, sopk::S_SETREG_B32 | sopk::S_SETREG_IMM32_B32) => {
            let HwReg { id, offset, size } = i.hwreg();
            let (offset, size) = (u32::from(offset), u32::from(size));
            if id != sopk::HW_REG_MODE || offset + size <= 12 || offset >= 20 {
                return before;
            }
            if i.op == sopk::S_SETREG_IMM32_B32 && offset <= 12 && offset + size >= 20 {
                if let Some(imm) = bytes
                    .get(4..8)
                    .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                {
                    let field = ((imm << offset) >> 12) as u8;
                    return Mode::Known(field.rotate_right(2));
                }
            }
            Mode::Unknown
        }
        // s_swap_pc_i64: the callee returns with mode 0.
        Some(Scalar::Sop1(i)) if i.op == sop1::S_SWAP_PC_I64 => Mode::Known(0),
        _ => before,
    }
}

/// The mode after straight-line code (`insns`, each an instruction's bytes)
/// entered in mode `before`.
pub fn after_straight_line<'a>(insns: impl IntoIterator<Item = &'a [u8]>, before: Mode) -> Mode {
    insns
        .into_iter()
        .fold(before, |mode, bytes| transfer(bytes, mode))
}

/// The mode before each instruction: `insns` are `(vaddr, bytes)` in address
/// order, the first one being the function's entry.
pub fn modes(insns: &[(u64, &[u8])]) -> Vec<Mode> {
    let flows: Vec<Flow> = insns
        .iter()
        .map(|&(v, b)| {
            let w0 = b
                .get(..4)
                .map_or(0, |b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]));
            flow(v, w0)
        })
        .collect();
    modes_with(insns, &flows)
}

/// [`modes`] with the control flow of each instruction given (placement adds
/// the long branches it recognised).
pub fn modes_with(insns: &[(u64, &[u8])], flows: &[Flow]) -> Vec<Mode> {
    modes_by(
        insns.len(),
        |i| (insns[i].1, flows.get(i).copied().unwrap_or(Flow::Next)),
        |vaddr| insns.binary_search_by_key(&vaddr, |i| i.0).ok(),
    )
}

/// The mode before each of `n` instructions, the first being the function's
/// entry: `insn(i)` gives instruction `i`'s bytes and control flow,
/// `index_of` the index of the instruction at an address (`None`: none
/// starts there, or it lies outside the function). No list of the
/// instructions is made.
///
/// A worklist from the entry: each instruction reached is evaluated in the
/// mode before it, and the mode after it merged into its successors';
/// those whose mode changed are evaluated again. A fall-through successor is
/// evaluated next, without the list. The merge only moves a mode up
/// (unset, known, unknown) and each instruction's effect does not depend on
/// the order of evaluation, so the result is that of any order.
pub fn modes_by<'a>(
    n: usize,
    insn: impl Fn(usize) -> (&'a [u8], Flow),
    index_of: impl Fn(u64) -> Option<usize>,
) -> Vec<Mode> {
    let mut state = vec![Mode::Unset; n];
    if n == 0 {
        return state;
    }
    // Merges `after` into the mode before `j`: whether it changed.
    let merge = |state: &mut [Mode], j: usize, after: Mode| {
        let merged = state[j].merge(after);
        let changed = merged != state[j];
        state[j] = merged;
        changed
    };
    state[0] = Mode::Known(0);
    let mut work = vec![0usize];
    while let Some(mut i) = work.pop() {
        loop {
            let (bytes, flow) = insn(i);
            let after = transfer(bytes, state[i]);
            let next = (i + 1 < n).then_some(i + 1);
            let (taken, falls) = match flow {
                Flow::Next => (None, next),
                Flow::Jump(t) => (index_of(t), None),
                Flow::Branch(t) => (index_of(t), next),
                Flow::Stop => (None, None),
            };
            if let Some(j) = taken {
                if merge(&mut state, j, after) {
                    work.push(j);
                }
            }
            match falls {
                Some(j) if merge(&mut state, j, after) => i = j,
                _ => break,
            }
        }
    }
    state
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOP: [u8; 4] = [0, 0, 0x80, 0xbf];

    #[test]
    fn entry_is_zero_and_set_vgpr_msb_sets() {
        let set = [0x41, 0x00, 0x86, 0xbf];
        let insns: Vec<(u64, &[u8])> = vec![(0, &NOP), (4, &set), (8, &NOP)];
        assert_eq!(
            modes(&insns),
            vec![Mode::Known(0), Mode::Known(0), Mode::Known(0x41)]
        );
    }

    #[test]
    fn disagreeing_paths_are_unknown() {
        // 0: s_cbranch_scc0 +1 (to 8); 4: s_set_vgpr_msb 1; 8: s_nop
        let br = [0x01, 0x00, 0xa1, 0xbf];
        let set = [0x01, 0x00, 0x86, 0xbf];
        let insns: Vec<(u64, &[u8])> = vec![(0, &br), (4, &set), (8, &NOP)];
        assert_eq!(modes(&insns)[2], Mode::Unknown);
        // s_setreg_b32 hwreg(HW_REG_MODE, 12, 8), s0 → unknown
        let setreg = [0x01, 0x3b, 0x00, 0xb9];
        let insns: Vec<(u64, &[u8])> = vec![(0, &setreg), (4, &NOP)];
        assert_eq!(modes(&insns)[1], Mode::Unknown);
        // s_setreg_imm32_b32 hwreg(HW_REG_MODE, 0, 20), 0x12345: bits 12-19 = 0x12 → rotr2 = 0x84
        let imm = [0x01, 0x98, 0x80, 0xb9, 0x45, 0x23, 0x01, 0x00];
        let insns: Vec<(u64, &[u8])> = vec![(0, &imm), (8, &NOP)];
        assert_eq!(modes(&insns)[1], Mode::Known(0x12u8.rotate_right(2)));
    }

    /// The mode of every instruction reached, by sweeping all of them in
    /// address order until nothing changes: what the worklist must agree
    /// with, whatever order it evaluates in.
    fn swept(insns: &[(u64, &[u8])]) -> Vec<Mode> {
        let mut state = vec![Mode::Unset; insns.len()];
        state[0] = Mode::Known(0);
        let index_of = |t: u64| insns.iter().position(|i| i.0 == t);
        loop {
            let before = state.clone();
            for (i, &(v, b)) in insns.iter().enumerate() {
                if state[i] == Mode::Unset {
                    continue;
                }
                let after = transfer(b, state[i]);
                let w0 = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
                let next = (i + 1 < insns.len()).then_some(i + 1);
                let succ = match flow(v, w0) {
                    Flow::Next => [next, None],
                    Flow::Jump(t) => [index_of(t), None],
                    Flow::Branch(t) => [next, index_of(t)],
                    Flow::Stop => [None, None],
                };
                for j in succ.into_iter().flatten() {
                    state[j] = state[j].merge(after);
                }
            }
            if state == before {
                return state;
            }
        }
    }

    #[test]
    fn the_worklist_agrees_with_sweeping_to_a_fixed_point() {
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for _ in 0..300 {
            let n = 2 + (next() % 40) as usize;
            let code: Vec<[u8; 4]> = (0..n)
                .map(|i| {
                    let r = next();
                    // A branch to any instruction (offset in dwords from the
                    // next one), else a mode change, a stop or a nop.
                    let to = ((r >> 8) % n as u64) as i64 - i as i64 - 1;
                    let imm = (to as i16 as u16).to_le_bytes();
                    match r % 8 {
                        0 => [imm[0], imm[1], 0xa0, 0xbf],         // s_branch
                        1 => [imm[0], imm[1], 0xa1, 0xbf],         // s_cbranch_scc0
                        2 => [(r >> 16) as u8 & 3, 0, 0x86, 0xbf], // s_set_vgpr_msb
                        3 => [0, 0, 0xb0, 0xbf],                   // s_endpgm
                        _ => NOP,
                    }
                })
                .collect();
            let insns: Vec<(u64, &[u8])> = code
                .iter()
                .enumerate()
                .map(|(i, c)| (4 * i as u64, &c[..]))
                .collect();
            assert_eq!(modes(&insns), swept(&insns), "{code:02x?}");
        }
    }
}
