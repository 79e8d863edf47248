//! The scavenger: registers a rewrite may use at a site, in three tiers.
//!
//! 1. [`Scratch::Dead`]: registers dead at the site — not live before or after
//!    the site instruction, not read or written by it, and in a callable
//!    function not preserved by the calling convention (a caller may expect
//!    them unchanged even where this function never touches them).
//! 2. [`Scratch::AboveAllocation`]: registers no code reachable from any
//!    kernel that reaches the function touches (with an indirect call: the
//!    kernel's own code and every callable function, never another kernel's
//!    body, which no call can enter), at or above what each kernel
//!    allocates: the [`CountRaise`]s say which kernels' descriptor and metadata
//!    counts grow (within gfx1250's 1024 VGPRs / 106 SGPRs) and how their
//!    occupancy changes.
//! 3. [`Scratch::SaveRestore`] (SGPRs only): live SGPRs saved into lanes of a
//!    VGPR dead in every lane (tier 1 or 2) with `v_writelane_b32` before the
//!    site's code and restored with `v_readlane_b32` after it.
//!
//! Otherwise a [`Refusal`] names the site, the class and why.
//!
//! VGPR registers of tier 1 are dead in the lanes EXEC enables at the site
//! (writes under the site's EXEC are safe); ask [`Request::all_lanes`] when
//! the code writes lanes EXEC disables (`v_writelane_b32`, a changed EXEC).

use super::regs::{Reg, RegSet, SGPRS, VGPRS};
use super::{abi, ObjectLiveness, Status, VGPR_GRANULE};

/// A register class.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RegClass {
    /// s0–s105.
    Sgpr,
    /// v0–v1023.
    Vgpr,
}

impl RegClass {
    /// `sgpr` or `vgpr`.
    pub fn as_str(self) -> &'static str {
        match self {
            RegClass::Sgpr => "sgpr",
            RegClass::Vgpr => "vgpr",
        }
    }

    fn reg(self, n: u16) -> Reg {
        match self {
            RegClass::Sgpr => Reg::S(n as u8),
            RegClass::Vgpr => Reg::V(n),
        }
    }

    fn limit(self) -> u16 {
        match self {
            RegClass::Sgpr => u16::from(SGPRS),
            RegClass::Vgpr => VGPRS,
        }
    }
}

/// What a rewrite asks for: `count` consecutive registers of `class`, the
/// first a multiple of `align`, all below `below` (e.g. 256 for VGPRs an
/// operand without VGPR-MSB banking must name). A VGPR run always lies in one
/// 256-register bank (an operand names a tuple by one bank).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Request {
    /// The register class.
    pub class: RegClass,
    /// How many consecutive registers.
    pub count: u16,
    /// Alignment of the first register (1, 2, 4, ...).
    pub align: u16,
    /// Every register must be below this number.
    pub below: u16,
    /// VGPRs must be dead in every lane, not only in those EXEC enables.
    pub all_lanes: bool,
}

impl Request {
    /// `count` registers of `class`, aligned to `align`, anywhere in the file.
    pub fn new(class: RegClass, count: u16, align: u16) -> Request {
        Request {
            class,
            count,
            align: align.max(1),
            below: class.limit(),
            all_lanes: false,
        }
    }
}

/// A kernel whose register counts grow.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CountRaise {
    /// Index in [`ObjectLiveness::kernels`].
    pub kernel: usize,
    /// The kernel's name.
    pub name: String,
    /// The class whose count grows.
    pub class: RegClass,
    /// Registers counted before (VGPRs: the descriptor's allocation; SGPRs:
    /// one past the highest SGPR any reachable code touches).
    pub old_count: u16,
    /// Registers needed after.
    pub new_count: u16,
    /// VGPRs: the descriptor's GRANULATED_WORKITEM_VGPR_COUNT before and after.
    pub granulated: Option<(u8, u8)>,
    /// Waves per SIMD before and after (VGPRs only; SGPRs do not limit
    /// occupancy on gfx10+).
    pub occupancy: Option<(u8, u8)>,
}

impl CountRaise {
    /// Kernel `kernel` (`name`) allocating `end` VGPRs instead of `old`.
    pub fn vgpr(kernel: usize, name: &str, old: u16, end: u16) -> CountRaise {
        let granulated = |n: u16| n.div_ceil(VGPR_GRANULE).saturating_sub(1) as u8;
        CountRaise {
            kernel,
            name: name.to_owned(),
            class: RegClass::Vgpr,
            old_count: old,
            new_count: end,
            granulated: Some((granulated(old), granulated(end))),
            occupancy: Some((occupancy(old), occupancy(end))),
        }
    }
}

/// How a live SGPR is kept.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Save {
    /// The SGPR saved before the site's code and restored after it.
    pub reg: Reg,
    /// The VGPR lane holding it.
    pub vgpr: u16,
    /// The lane.
    pub lane: u8,
}

/// Registers granted at a site.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Scratch {
    /// Dead registers `first..first + count`.
    Dead {
        /// The class.
        class: RegClass,
        /// The first register.
        first: u16,
        /// How many.
        count: u16,
    },
    /// Registers above the allocation of every kernel that reaches the site.
    AboveAllocation {
        /// The class.
        class: RegClass,
        /// The first register.
        first: u16,
        /// How many.
        count: u16,
        /// The kernels whose counts grow (empty when already allocated).
        raises: Vec<CountRaise>,
    },
    /// Live SGPRs, saved into VGPR lanes around the site.
    SaveRestore {
        /// The first SGPR.
        first: u16,
        /// How many.
        count: u16,
        /// Where each live one is kept (dead ones need no save).
        saves: Vec<Save>,
        /// How the VGPR holding the saves was obtained (tier 1 or 2).
        holder: Box<Scratch>,
    },
}

impl Scratch {
    /// The granted registers.
    pub fn registers(&self) -> Vec<Reg> {
        let (class, first, count) = match *self {
            Scratch::Dead {
                class,
                first,
                count,
            }
            | Scratch::AboveAllocation {
                class,
                first,
                count,
                ..
            } => (class, first, count),
            Scratch::SaveRestore { first, count, .. } => (RegClass::Sgpr, first, count),
        };
        (first..first + count).map(|n| class.reg(n)).collect()
    }
}

/// Why no register was granted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refusal {
    /// The function's name.
    pub function: String,
    /// The site.
    pub site: u64,
    /// The class asked for.
    pub class: RegClass,
    /// Why, one sentence per tier tried.
    pub reason: String,
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} at {:#x}: no {} scratch: {}",
            self.function,
            self.site,
            self.class.as_str(),
            self.reason
        )
    }
}

/// Waves per SIMD with `vgprs` allocated: gfx1250 allocates in 16s from 1024
/// per SIMD lane, at most 16 waves (matches clang-22's reported occupancy for
/// 49, 65, 97, 129, 193 and 256 VGPRs: 16, 12, 9, 7, 4, 4).
pub fn occupancy(vgprs: u16) -> u8 {
    let rounded = vgprs.max(1).div_ceil(VGPR_GRANULE) * VGPR_GRANULE;
    (1024 / rounded).min(16) as u8
}

/// The VGPRs of one `s_set_vgpr_msb` bank: an operand names a tuple by an
/// 8-bit field in one bank, so a VGPR run never crosses a multiple of this.
const VGPR_BANK: u32 = 256;

/// The first aligned run of `req.count` registers of `req.class` from `from`
/// none of which is in `busy` (a VGPR run within one bank).
fn find_run(busy: &RegSet, req: &Request, from: u16) -> Option<u16> {
    let limit = u32::from(req.below.min(req.class.limit()));
    let (align, count) = (u32::from(req.align.max(1)), u32::from(req.count));
    let mut first = u32::from(from).div_ceil(align) * align;
    while first + count <= limit {
        if req.class == RegClass::Vgpr
            && count <= VGPR_BANK
            && first / VGPR_BANK != (first + count - 1) / VGPR_BANK
        {
            first = (first / VGPR_BANK + 1) * VGPR_BANK;
            first = first.div_ceil(align) * align;
            continue;
        }
        match (first..first + count).find(|&n| busy.contains(req.class.reg(n as u16))) {
            None => return Some(first as u16),
            Some(n) => first = (n + 1).div_ceil(align) * align,
        }
    }
    None
}

impl ObjectLiveness<'_> {
    /// Scratch registers at the instruction at `site` of function `function`.
    pub fn scratch(&self, function: usize, site: u64, req: Request) -> Result<Scratch, Refusal> {
        self.scratch_avoiding(function, site, req, &RegSet::EMPTY)
    }

    /// [`ObjectLiveness::scratch`], none of the registers in `avoid` (those
    /// already granted at the site for another purpose).
    pub fn scratch_avoiding(
        &self,
        function: usize,
        site: u64,
        req: Request,
        avoid: &RegSet,
    ) -> Result<Scratch, Refusal> {
        let refuse = |reason: String| {
            Err(Refusal {
                function: self
                    .functions
                    .get(function)
                    .map_or_else(String::new, |f| f.name.clone()),
                site,
                class: req.class,
                reason,
            })
        };
        let Some(f) = self.functions.get(function) else {
            return refuse("no such function".into());
        };
        if let Status::NotAnalysable(why) = &f.status {
            return refuse(format!("the function is not analysable ({why})"));
        }
        if req.count == 0 || req.align == 0 {
            return refuse("an empty request".into());
        }
        let Some(at) = self.live_at(function, site) else {
            return refuse("no instruction starts at the site".into());
        };
        let mut why = Vec::new();
        // Tier 1: dead.
        let mut busy = self.busy_at(function, &at, req.all_lanes);
        busy.union_with(avoid);
        match find_run(&busy, &req, 0) {
            Some(first) => {
                return Ok(Scratch::Dead {
                    class: req.class,
                    first,
                    count: req.count,
                })
            }
            None => why.push(format!(
                "no {} aligned dead run of {}",
                req.align, req.count
            )),
        }
        // Tier 2: above the allocation.
        match self.above_allocation(function, &req, avoid) {
            Ok(s) => return Ok(s),
            Err(e) => why.push(e),
        }
        // Tier 3: SGPRs saved into lanes of a VGPR dead in every lane.
        if req.class == RegClass::Sgpr && req.count <= 32 {
            match self.save_restore(function, site, &at, &req, avoid) {
                Ok(s) => return Ok(s),
                Err(e) => why.push(e),
            }
        } else if req.class == RegClass::Vgpr {
            why.push("VGPRs are never saved and restored".into());
        } else {
            why.push("save and restore is only offered for up to 32 SGPRs".into());
        }
        refuse(why.join("; "))
    }

    /// Registers that may not be scratch at the site: live before or after
    /// it, read or written by it, preserved for callers, and the special
    /// registers.
    fn busy_at(&self, function: usize, at: &super::LiveAt, all_lanes: bool) -> RegSet {
        let f = &self.functions[function];
        let mut busy = at.before.union(&at.after);
        busy.union_with(&at.effect.uses);
        busy.union_with(&at.effect.writes);
        if all_lanes {
            busy.union_with(&at.used_after);
        }
        if !f.is_kernel {
            busy.union_with(&abi::callee_saved(self.convention));
        }
        busy
    }

    /// Tier 2.
    fn above_allocation(
        &self,
        function: usize,
        req: &Request,
        avoid: &RegSet,
    ) -> Result<Scratch, String> {
        let reaching = self.kernels_reaching(function);
        if reaching.is_empty() {
            return Err("no kernel of the object reaches the function".into());
        }
        // One past the highest register any code reachable from the kernels
        // touches: what they reach through direct calls; with a call whose
        // target is not known, every callable function too (a kernel entry
        // is never a call target, so other kernels' bodies do not count);
        // with code outside the call structure, everything.
        let mut first = 0u16;
        let mut highest: Option<(usize, usize)> = None; // (kernel, function)
        for &k in &reaching {
            let kernel = &self.kernels[k];
            for (i, g) in self.functions.iter().enumerate() {
                let reached = kernel.reaches_anything
                    || kernel.reaches.contains(&i)
                    || (kernel.reaches_indirect && !g.is_kernel);
                if !reached {
                    continue;
                }
                let bound = match req.class {
                    RegClass::Vgpr => g.touched.vgpr_bound(),
                    RegClass::Sgpr => u16::from(g.touched.sgpr_bound()),
                };
                if bound > first || highest.is_none() {
                    highest = Some((k, i));
                }
                first = first.max(bound);
            }
        }
        let Some(first) = find_run(avoid, req, first) else {
            // Which kernel's reach sets the bound, and how it reaches the site.
            let (how, at) = highest.map_or((String::new(), String::new()), |(k, i)| {
                let kernel = &self.kernels[k];
                let how = if kernel.reaches.contains(&function) {
                    "through direct calls"
                } else if kernel.reaches_anything {
                    "through code outside the call structure"
                } else {
                    "through a call whose target is not known"
                };
                (
                    format!(" from kernel {} ({how})", kernel.name),
                    format!(" (in {})", self.functions[i].name),
                )
            });
            return Err(format!(
                "code reachable{how} touches registers up to {first}{at}, no room below {}",
                req.below.min(req.class.limit())
            ));
        };
        let end = first + req.count;
        let mut raises = Vec::new();
        for &k in &reaching {
            let kernel = &self.kernels[k];
            match req.class {
                RegClass::Vgpr => {
                    let Some(old) = kernel.allocated_vgprs else {
                        return Err(format!("kernel {}'s descriptor is unreadable", kernel.name));
                    };
                    if end > old {
                        raises.push(CountRaise::vgpr(k, &kernel.name, old, end));
                    }
                }
                RegClass::Sgpr => raises.push(CountRaise {
                    kernel: k,
                    name: kernel.name.clone(),
                    class: RegClass::Sgpr,
                    old_count: first,
                    new_count: end,
                    granulated: None,
                    occupancy: None,
                }),
            }
        }
        Ok(Scratch::AboveAllocation {
            class: req.class,
            first,
            count: req.count,
            raises,
        })
    }

    /// Tier 3.
    fn save_restore(
        &self,
        function: usize,
        site: u64,
        at: &super::LiveAt,
        req: &Request,
        avoid: &RegSet,
    ) -> Result<Scratch, String> {
        // The SGPRs: not read or written by the site instruction (its code
        // reads the originals), s0–s105 only.
        let mut busy = at.effect.uses.union(&at.effect.writes);
        busy.union_with(avoid);
        busy.insert(Reg::S(super::regs::VCC_LO));
        let Some(first) = find_run(&busy, req, 0) else {
            return Err("every SGPR run overlaps the site's own operands".into());
        };
        let live = at.before.union(&at.after);
        let holder_req = Request {
            class: RegClass::Vgpr,
            count: 1,
            align: 1,
            below: VGPRS,
            all_lanes: true,
        };
        let holder = match self.scratch_avoiding(function, site, holder_req, avoid) {
            Ok(h @ (Scratch::Dead { .. } | Scratch::AboveAllocation { .. })) => h,
            Ok(_) => return Err("no VGPR to hold the saves".into()),
            Err(e) => return Err(format!("no VGPR to hold the saves ({})", e.reason)),
        };
        let vgpr = match holder {
            Scratch::Dead { first, .. } | Scratch::AboveAllocation { first, .. } => first,
            Scratch::SaveRestore { .. } => unreachable!("filtered above"),
        };
        let mut saves = Vec::new();
        for (lane, n) in (first..first + req.count).enumerate() {
            let reg = Reg::S(n as u8);
            let preserved = !self.functions[function].is_kernel
                && abi::callee_saved(self.convention).contains(reg);
            if live.contains(reg) || preserved {
                saves.push(Save {
                    reg,
                    vgpr,
                    lane: lane as u8,
                });
            }
        }
        Ok(Scratch::SaveRestore {
            first,
            count: req.count,
            saves,
            holder: Box::new(holder),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_vgpr_run_never_crosses_a_bank_and_avoids_busy_registers() {
        let mut busy = RegSet::EMPTY;
        busy.insert_v(0, 240);
        // v240-v255 hold 16, not 18: the run of 18 starts at v256.
        let req = Request::new(RegClass::Vgpr, 18, 1);
        assert_eq!(find_run(&busy, &req, 0), Some(256));
        assert_eq!(
            find_run(&busy, &Request::new(RegClass::Vgpr, 16, 1), 0),
            Some(240)
        );
        // Busy v256-v259: after them, still within bank 1.
        busy.insert_v(256, 4);
        assert_eq!(find_run(&busy, &req, 0), Some(260));
        // Aligned to 8: v264.
        assert_eq!(
            find_run(&busy, &Request::new(RegClass::Vgpr, 18, 8), 0),
            Some(264)
        );
        // Below 256: none.
        let mut low = req;
        low.below = 256;
        assert_eq!(find_run(&busy, &low, 0), None);
        // SGPRs have no banks.
        let mut s = RegSet::EMPTY;
        s.insert_s(0, 10);
        assert_eq!(
            find_run(&s, &Request::new(RegClass::Sgpr, 4, 1), 0),
            Some(10)
        );
    }
}
