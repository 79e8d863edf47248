//! Plan: which functions move. Each distinct function range holding a
//! growth site moves, whole; a kernel entry no function symbol covers, or
//! two functions overlapping, refuse.

use std::sync::Arc;

use super::insns::{walk, Walked};
use super::layout::{PlacedIslands, Shifts};
use super::moving::{Moving, Replacements};
use super::refuse;
use crate::gfx1250::{Analysis, FunctionKind};
use crate::object::CodeObject;
use crate::rewrite::{RewriteError, SiteInfo};

/// The functions that hold a site of `sites` (in address order), walked (by
/// the analysis when `walked` kept their boundaries), in address order, each
/// marked whether a kernel descriptor enters it.
pub(super) fn moving_functions(
    object: &CodeObject<'_>,
    analysis: &Analysis,
    sites: &[SiteInfo],
    mut walked: Walked,
) -> Result<Vec<Moving>, RewriteError> {
    let bytes = object.bytes();
    let map = object.address_map();
    // The functions to move: each distinct range holding a DS2 site.
    // Site addresses, sorted: a function holds one when the first site at or
    // after its start lies before its end.
    let mut site_vaddrs: Vec<u64> = sites.iter().map(|s| s.vaddr).collect();
    site_vaddrs.sort_unstable();
    let holds_site = |vaddr: u64, size: u64| {
        let i = site_vaddrs.partition_point(|&v| v < vaddr);
        site_vaddrs.get(i).is_some_and(|&v| v - vaddr < size)
    };
    let mut moving: Vec<Moving> = Vec::new();
    for f in &analysis.functions {
        if !holds_site(f.vaddr, f.size) {
            continue;
        }
        if let Some(last) = moving.last() {
            if last.vaddr == f.vaddr && last.size == f.size {
                continue; // an alias
            }
            if f.vaddr < last.vaddr + last.size {
                return Err(RewriteError::OverlappingFunctions {
                    first: last.name.to_string(),
                    second: f.name.clone(),
                });
            }
        }
        if f.kind == FunctionKind::KernelEntry {
            // Covered by no function symbol, only by its descriptor's entry:
            // once the descriptor points at the copy, nothing would cover the
            // original's bytes, and the output could not be analysed again.
            return Err(refuse(format!(
                "kernel {} has no function symbol covering its code: its moved original \
                 would be left unnamed",
                f.name
            )));
        }
        let insns = match walked.take(f.vaddr, f.size) {
            Some(insns) => insns,
            None => walk(bytes, map, &f.name, f.vaddr, f.size)?,
        };
        moving.push(Moving {
            name: Arc::from(f.name.as_str()),
            kernel_only: f.kind == FunctionKind::KernelEntry,
            is_kernel: false,
            vaddr: f.vaddr,
            size: f.size,
            insns,
            shifts: Shifts::default(),
            replacements: Replacements::default(),
            pcs: Vec::new(),
            islands: PlacedIslands::default(),
            image_len: 0,
            new_vaddr: 0,
        });
    }
    let mut entries: Vec<u64> = analysis
        .kernels
        .iter()
        .filter_map(|k| k.entry_vaddr)
        .collect();
    entries.sort_unstable();
    for m in &mut moving {
        m.is_kernel = m.kernel_only || entries.binary_search(&m.vaddr).is_ok();
    }
    Ok(moving)
}
