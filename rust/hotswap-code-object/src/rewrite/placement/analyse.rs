//! Analysis of one moved function: its address computations and the
//! VGPR-MSB mode in force at each instruction (what the emitters read).

use super::moving::Moving;
use super::pc::pc_computations;
use super::w32;
use crate::gfx1250::fields::{self, sop1};
use crate::rewrite::vgpr_mode::{self, Flow, Mode};
use crate::rewrite::RewriteError;

/// The mode before each instruction of `m`, when `m` has an instruction that
/// can change it (`None`: zero everywhere, the ABI's entry mode); fills in
/// `m.pcs`, the address computations (any other PC read refuses).
pub(super) fn analyse(bytes: &[u8], m: &mut Moving) -> Result<Option<Vec<Mode>>, RewriteError> {
    m.pcs = pc_computations(bytes, &m.insns, &m.name)?;
    let changes_mode = m
        .insns
        .iter()
        .any(|i| vgpr_mode::may_change(w32(&bytes[i.at..])));
    let modes = changes_mode.then(|| {
        // The s_set_pc_i64 that ends a recognised computation jumps to its
        // target (a long branch), by index; computations are in order.
        let long: Vec<(usize, u64)> = m
            .pcs
            .iter()
            .filter(|pc| {
                let set = m.insns.get(pc.last + 1).map(|i| w32(&bytes[i.at..]));
                set.and_then(fields::sop1).map(|s| s.op) == Some(sop1::S_SET_PC_I64)
            })
            .map(|pc| (pc.last + 1, pc.target))
            .collect();
        let insns = &m.insns;
        vgpr_mode::modes_by(
            insns.len(),
            |i| {
                let insn = insns.at(i);
                let code = &bytes[insn.at..insn.at + insn.len];
                let flow = match vgpr_mode::flow(insn.vaddr, w32(code)) {
                    // Only an s_set_pc_i64 (a stop) can be a long branch.
                    Flow::Stop => long
                        .binary_search_by_key(&i, |l| l.0)
                        .map_or(Flow::Stop, |k| Flow::Jump(long[k].1)),
                    flow => flow,
                };
                (code, flow)
            },
            |t| insns.index_of_vaddr(t).ok(),
        )
    });
    Ok(modes)
}
