//! Scratch registers for the emitters, from the object's register liveness
//! ([`crate::liveness`]): analysed once per object, and only when a site of
//! a class that may ask ([`emit::site_needs_liveness`]) is replaced, so the DS
//! two-address path does not pay for it.
//!
//! Tiers, in order: registers dead at the site; registers above what every
//! kernel reaching the site allocates (the kernels' counts are raised, by
//! [`count_patches`]). Save and restore is refused: no emitter's code
//! includes the saves. Either way the registers have no memory load
//! outstanding into them at the site (liveness keeps a load's destination
//! live up to its wait; no reachable code touches registers above the
//! allocation), which is what the emitters of classes31 require.

use crate::gfx1250;
use crate::liveness::scratch::CountRaise;
use crate::liveness::{self, counts, Convention, ObjectLiveness};
use crate::object::CodeObject;
use crate::rewrite::emit::{self, Refusal, Reg, RegClass, Request, Scratch, Taken};
use crate::rewrite::{Patch, RewriteError, SiteInfo};

use super::refuse;

/// The liveness of `object` when a site of `sites` needs it.
pub(super) fn analyse<'a>(
    object: &CodeObject<'a>,
    analysis: &gfx1250::Analysis,
    sites: &[SiteInfo],
) -> Option<ObjectLiveness<'a>> {
    if !sites.iter().any(emit::site_needs_liveness) {
        return None;
    }
    // The calling convention of callable functions is not recorded in the
    // object: `Unknown` keeps what either convention preserves. Every
    // function: a count raise needs every kernel that can reach the site.
    Some(liveness::analyze_walked(
        object,
        analysis,
        Convention::Unknown,
        None,
    ))
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

impl FromLiveness<'_, '_> {
    /// The kernels that reach `function` (as the liveness analysis's tier 2
    /// counts them) and the smallest VGPR allocation among them; `None`
    /// when no kernel of the object reaches it or a descriptor is unreadable.
    fn vgpr_allocation(&self, function: usize) -> Option<(Vec<usize>, u16)> {
        self.liveness.functions.get(function)?;
        let reaching = self.liveness.kernels_reaching(function);
        let mut least = u16::MAX;
        for &k in &reaching {
            least = least.min(self.liveness.kernels[k].allocated_vgprs?);
        }
        (!reaching.is_empty()).then_some((reaching, least))
    }

    /// The raises that make VGPRs `first..end` allocated in every kernel of
    /// `reaching` (none when they already are).
    fn vgpr_raises(&self, reaching: &[usize], end: u16) -> Vec<CountRaise> {
        reaching
            .iter()
            .filter_map(|&k| {
                let kernel = &self.liveness.kernels[k];
                let old = kernel.allocated_vgprs?;
                (end > old).then(|| CountRaise::vgpr(k, &kernel.name, old, end))
            })
            .collect()
    }
}

impl Scratch for FromLiveness<'_, '_> {
    fn take(&mut self, request: Request) -> Result<u16, Refusal> {
        let Some(function) = self.function else {
            return Err(Refusal::new(format!(
                "no {} scratch: the liveness analysis has no function at the site",
                request.class.as_str()
            )));
        };
        // A VGPR dead at the site may still lie above what a kernel running
        // the code allocates (the analysis's tier 1 does not bound it): such
        // a register is granted only with the raise that allocates it.
        let allocation = if request.class == RegClass::Vgpr {
            match self.vgpr_allocation(function) {
                Some(a) => Some(a),
                None => {
                    return Err(Refusal::new(
                        "no vgpr scratch: no kernel of the object reaches the function (or a \
                         descriptor is unreadable), so its VGPR allocation is not known",
                    ))
                }
            }
        } else {
            None
        };
        // Never a register granted earlier at the site (an emitter asking
        // twice uses both grants at once).
        let mut avoid = liveness::RegSet::EMPTY;
        for t in &self.taken {
            for n in t.first..t.first + t.count {
                avoid.insert(match t.class {
                    RegClass::Sgpr => Reg::S(n as u8),
                    RegClass::Vgpr => Reg::V(n),
                });
            }
        }
        match self
            .liveness
            .scratch_avoiding(function, self.site.vaddr, request, &avoid)
        {
            Ok(liveness::Scratch::Dead {
                class,
                first,
                count,
            }) => {
                let end = first + count;
                let raises = match &allocation {
                    Some((reaching, least)) if end > *least => self.vgpr_raises(reaching, end),
                    _ => Vec::new(),
                };
                self.taken.push(Taken {
                    class,
                    first,
                    count,
                    tier: if raises.is_empty() {
                        "dead"
                    } else {
                        "dead-above-allocation"
                    },
                });
                self.raises.extend(raises);
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
    // The bytes as they were with the fixes: the input's, or those of the
    // last fix starting at or before the byte (one pass over the fixes).
    let mut started = 0; // the fixes starting at or before byte `i`
    let mut patches: Vec<Patch> = Vec::new();
    for (i, (&new, &input)) in out.iter().zip(bytes).enumerate() {
        while fixes
            .get(started)
            .is_some_and(|p| p.file_offset as usize <= i)
        {
            started += 1;
        }
        let before = match started.checked_sub(1).map(|k| &fixes[k]) {
            Some(p) if i - (p.file_offset as usize) < p.bytes.len() => {
                p.bytes[i - p.file_offset as usize]
            }
            _ => input,
        };
        if new == before {
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
