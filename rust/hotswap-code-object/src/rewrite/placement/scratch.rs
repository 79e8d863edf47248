//! Scratch registers for the emitters, from the object's register liveness
//! ([`crate::liveness`]): analysed once per object, and only when a site of
//! a class that may ask ([`emit::needs_liveness`]) is replaced, so the DS
//! two-address path does not pay for it.
//!
//! Tiers, in order: registers dead at the site; registers above what every
//! kernel reaching the site allocates (the kernels' counts are raised, by
//! [`count_patches`]). Save and restore is refused: no emitter's code
//! includes the saves. Either way the registers have no memory load
//! outstanding into them at the site (liveness keeps a load's destination
//! live up to its wait; no reachable code touches registers above the
//! allocation), which is what the emitters of classes31 require.

use crate::liveness::scratch::CountRaise;
use crate::liveness::{self, counts, Convention, ObjectLiveness};
use crate::object::CodeObject;
use crate::rewrite::emit::{self, Refusal, Reg, Request, Scratch, Taken};
use crate::rewrite::{Patch, RewriteError, SiteInfo};

use super::refuse;

/// The liveness of `object` when a site of `sites` needs it.
pub(super) fn analyse<'a>(
    object: &CodeObject<'a>,
    sites: &[SiteInfo],
) -> Result<Option<ObjectLiveness<'a>>, RewriteError> {
    if !sites.iter().any(|s| emit::needs_liveness(s.class)) {
        return Ok(None);
    }
    // The calling convention of callable functions is not recorded in the
    // object: `Unknown` keeps what either convention preserves.
    liveness::analyze_object(object, Convention::Unknown)
        .map(Some)
        .map_err(|e| refuse(format!("register liveness: {e}")))
}

/// The provider of one site.
pub(super) struct FromLiveness<'l, 'a> {
    /// The object's liveness.
    pub liveness: &'l ObjectLiveness<'a>,
    /// The site's function in it.
    pub function: Option<usize>,
    /// The site.
    pub site: &'l SiteInfo,
    /// What was granted.
    pub taken: Vec<Taken>,
    /// The count raises the grants need.
    pub raises: Vec<CountRaise>,
}

impl Scratch for FromLiveness<'_, '_> {
    fn take(&mut self, request: Request) -> Result<u16, Refusal> {
        let Some(function) = self.function else {
            return Err(Refusal::new(format!(
                "no {} scratch: the liveness analysis has no function at the site",
                request.class.as_str()
            )));
        };
        match self.liveness.scratch(function, self.site.vaddr, request) {
            Ok(liveness::Scratch::Dead {
                class,
                first,
                count,
            }) => {
                self.taken.push(Taken {
                    class,
                    first,
                    count,
                    tier: "dead",
                });
                Ok(first)
            }
            Ok(liveness::Scratch::AboveAllocation {
                class,
                first,
                count,
                raises,
            }) => {
                self.taken.push(Taken {
                    class,
                    first,
                    count,
                    tier: "above-allocation",
                });
                self.raises.extend(raises);
                Ok(first)
            }
            Ok(liveness::Scratch::SaveRestore { .. }) => Err(Refusal::new(format!(
                "no {} scratch: only live registers saved and restored around the site \
                 are free, and this emitter's code does not include the saves",
                request.class.as_str()
            ))),
            Err(e) => Err(Refusal::new(e.to_string())),
        }
    }

    fn live_after(&mut self, reg: Reg) -> bool {
        self.function
            .and_then(|f| self.liveness.live_at(f, self.site.vaddr))
            .is_none_or(|at| at.after.contains(reg))
    }
}

/// One raise per kernel and class: the largest.
pub(super) fn merge(mut raises: Vec<CountRaise>) -> Vec<CountRaise> {
    raises.sort_by_key(|r| (r.kernel, r.class as u8, std::cmp::Reverse(r.new_count)));
    raises.dedup_by_key(|r| (r.kernel, r.class as u8));
    raises
}

/// The same-size patches that raise the counts (`raises`, merged) of the
/// kernel descriptors and the metadata note, on top of `fixes` (sorted by
/// offset; the metadata retag is one of them). Works on a copy of the
/// object, made only when a count is raised.
pub(super) fn count_patches(
    bytes: &[u8],
    fixes: &[Patch],
    liveness: &ObjectLiveness<'_>,
    raises: &[CountRaise],
) -> Result<Vec<Patch>, RewriteError> {
    if raises.is_empty() {
        return Ok(Vec::new());
    }
    let mut out = bytes.to_vec();
    for p in fixes {
        let at = p.file_offset as usize;
        out[at..at + p.bytes.len()].copy_from_slice(&p.bytes);
    }
    counts::apply(liveness, &mut out, raises)
        .map_err(|e| refuse(format!("raising the register counts: {e:?}")))?;
    // The bytes as they were with the fixes: the input's, or a fix's.
    let before = |i: usize| -> u8 {
        let k = fixes.partition_point(|p| p.file_offset as usize <= i);
        match k.checked_sub(1).map(|k| &fixes[k]) {
            Some(p) if i - (p.file_offset as usize) < p.bytes.len() => {
                p.bytes[i - p.file_offset as usize]
            }
            _ => bytes[i],
        }
    };
    let mut patches: Vec<Patch> = Vec::new();
    for (i, (&new, _)) in out.iter().zip(bytes).enumerate() {
        if new == before(i) {
            continue;
        }
        match patches.last_mut() {
            Some(p) if p.file_offset as usize + p.bytes.len() == i => p.bytes.push(new),
            _ => patches.push(Patch {
                file_offset: i as u64,
                bytes: vec![new],
            }),
        }
    }
    Ok(patches)
}
