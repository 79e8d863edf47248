//! Analysis of one moved function: its address computations and the
//! VGPR-MSB mode in force at each instruction (what the emitters read).

use super::moving::Moving;
use super::pc::{pc_computations, sop1_op, OP_SET_PC, OP_SWAP_PC};
use super::w32;
use crate::rewrite::vgpr_mode::{self, Flow, Mode};
use crate::rewrite::RewriteError;

/// The mode before each instruction of `m`, when `m` has an instruction that
/// can change it (`None`: zero everywhere, the ABI's entry mode); fills in
/// `m.pcs`, the address computations (any other PC read refuses).
pub(super) fn analyse(bytes: &[u8], m: &mut Moving) -> Result<Option<Vec<Mode>>, RewriteError> {
    m.pcs = pc_computations(bytes, &m.insns, &m.name)?;
    let changes_mode = m.insns.iter().any(|i| {
        let w0 = w32(&bytes[i.at..]);
        w0 >> 16 == 0xBF86
            || (w0 >> 28 == 0xB && matches!((w0 >> 23) & 0x1f, 0x12 | 0x13))
            || sop1_op(w0) == Some(OP_SWAP_PC)
    });
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
            if set.and_then(sop1_op) == Some(OP_SET_PC) {
                flows[pc.last + 1] = Flow::Jump(pc.target);
            }
        }
        Some(vgpr_mode::modes_with(&list, &flows))
    } else {
        None
    };
    Ok(modes)
}
