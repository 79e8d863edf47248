//! Report: what placement tells the caller, read off the laid-out
//! functions: where each site's replacement went, the branch islands (the
//! clauses removed are counted by the encoder, which removes them).

use std::sync::Arc;

use super::moving::{map_target, Moving};
use super::{refuse, BranchIsland, PlacedSite};
use crate::rewrite::emit::Taken;
use crate::rewrite::{Relocated, RewriteError, SiteInfo};

/// Where each emitted site went: `grown` is (function, instruction, index
/// in the sites), in the order of the sites.
pub(super) fn sites(
    moving: &[Moving],
    grown: Vec<(u32, u32, usize)>,
    extras: Vec<(Vec<Taken>, Option<&'static str>)>,
) -> Vec<PlacedSite> {
    grown
        .into_iter()
        .zip(extras)
        .map(|((fi, idx, site), (scratch, note))| {
            let (m, idx) = (&moving[fi as usize], idx as usize);
            let (code, fix) = m.replacements.get(idx).expect("an emitted site");
            PlacedSite {
                site,
                new_vaddr: m.new_vaddr + m.new_off(idx),
                new_len: code.len() as u32,
                fix,
                scratch,
                note,
            }
        })
        .collect()
}

/// Every branch island entry, in address order.
pub(super) fn islands(moving: &[Moving]) -> Vec<BranchIsland> {
    let mut island_list = Vec::new();
    for m in moving {
        for (k, first, dests) in &m.islands.points {
            let before = m.insns.get(*k).map_or(m.vaddr + m.size, |x| x.vaddr);
            for (e, &d) in dests.iter().enumerate() {
                island_list.push(BranchIsland {
                    function: Arc::clone(&m.name),
                    vaddr: m.new_vaddr + first + 4 * e as u64,
                    target: m.new_vaddr + m.new_off(d),
                    before_original_vaddr: before,
                });
            }
        }
    }
    island_list
}

/// Where each fixed site of a moved function is in its image, by original
/// address (`fixed` is in file order; a site of two classes is listed once).
pub(super) fn relocated(
    moving: &[Moving],
    fixed: &[SiteInfo],
) -> Result<Vec<Relocated>, RewriteError> {
    let mut out: Vec<Relocated> = Vec::new();
    for s in fixed {
        let Some(to) = map_target(moving, s.vaddr) else {
            continue;
        };
        let new_vaddr = to.map_err(|()| {
            refuse(format!(
                "{s}: not an instruction boundary of its moved function"
            ))
        })?;
        out.push(Relocated {
            original_vaddr: s.vaddr,
            new_vaddr,
        });
    }
    out.sort_unstable_by_key(|r| r.original_vaddr);
    out.dedup_by_key(|r| r.original_vaddr);
    Ok(out)
}
