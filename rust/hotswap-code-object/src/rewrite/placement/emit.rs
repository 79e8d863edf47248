//! The emitters' stage: each growth site of a moved function replaced by its
//! class's straight-line code.

use super::moving::Moving;
use super::refuse;
use crate::rewrite::vgpr_mode::Mode;
use crate::rewrite::{ds2, RewriteError, SiteInfo};

/// Replaces each site of `sites` in `m` (function `fi`), given the modes of
/// [`super::analyse::analyse`]; appends (function, instruction, index in
/// `sites`) to `grown` in the order of `sites`.
pub(super) fn emit_sites(
    bytes: &[u8],
    m: &mut Moving,
    fi: usize,
    modes: Option<&[Mode]>,
    sites: &[SiteInfo],
    grown: &mut Vec<(u32, u32, usize)>,
) -> Result<(), RewriteError> {
    let first = sites.partition_point(|s| s.vaddr < m.vaddr);
    for (k, s) in sites[first..]
        .iter()
        .take_while(|s| s.vaddr - m.vaddr < m.size)
        .enumerate()
    {
        let Ok(idx) = m.insns.index_of_vaddr(s.vaddr) else {
            return Err(refuse(format!("{s}: not an instruction boundary")));
        };
        let mode = match modes.map(|v| v[idx]) {
            None => 0,
            Some(Mode::Known(x)) => x,
            Some(_) => {
                return Err(refuse(format!(
                    "{s}: the VGPR-MSB mode at the site is unknown"
                )))
            }
        };
        let insn = m.insns.at(idx);
        let split = ds2::split(&bytes[insn.at..insn.at + insn.len], mode)
            .map_err(|e| refuse(format!("{s}: {e}")))?;
        m.splits.insert(idx, split);
        grown.push((fi as u32, idx as u32, first + k));
    }
    m.splits.shrink_to_fit();
    Ok(())
}
