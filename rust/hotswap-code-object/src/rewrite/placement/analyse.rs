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
    let modes = if changes_mode {
        let list: Vec<(u64, &[u8])> = m
            .insns
            .iter()
            .map(|i| (i.vaddr, &bytes[i.at..i.at + i.len]))
            .collect();
        let mut flows: Vec<Flow> = list
            .iter()
            .map(|&(v, b)| vgpr_mode::flow(v, w32(b)))
            .collect();
        for pc in &m.pcs {
            let set = m.insns.get(pc.last + 1).map(|i| w32(&bytes[i.at..]));
            if set.and_then(fields::sop1).map(|s| s.op) == Some(sop1::S_SET_PC_I64) {
                flows[pc.last + 1] = Flow::Jump(pc.target);
            }
        }
        Some(vgpr_mode::modes_with(&list, &flows))
    } else {
        None
    };
    Ok(modes)
}
