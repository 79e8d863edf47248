//! The native B0→A0 rewriter: the same-size fixes and the DS two-address
//! split, fail closed.
//!
//! [`rewrite_b0_to_a0`] takes one gfx1250 code object built for B0 and returns
//! a copy in which every site the A0 stepping needs changed is fixed:
//! - a same-size site in place: only instruction bytes inside executable
//!   sections and the metadata note's descriptor differ, never a size, an
//!   offset, a header, a symbol or a section. An object with only such sites
//!   keeps its identical ELF layout;
//! - a DS two-address site ([`ds2`]) by growth: each function holding one is
//!   copied, its sites split, into a code segment appended to the object, and
//!   every entry into it redirected ([`placement`]); the original bytes keep
//!   their offsets (the object only grows at its end).
//!
//! [`plan_b0_to_a0`] does the same work without copying the object: its
//! [`Plan`] lists the patches and the appended tail, which
//! [`Plan::write_into`] (or [`Plan::apply`], same-size plans only) writes into
//! the output.
//!
//! The same-size fixes (the [`gfx1250::same_size_fix`] of each site the
//! analysis reports as same-size and not yet in its A0 form):
//! - `cluster_load*` → the matching `global_load*` (A0 must not execute
//!   cluster multicast);
//! - `s_barrier_signal_isfirst` → `s_barrier_signal` (the SCC result is dropped,
//!   as COMGR did: the A0 isfirst result is unreliable anyway);
//! - `s_sethalt` → `s_nop 0`;
//! - the scaled WMMAs' unused `scale_src2` field → 0x100;
//! - a scalar 64-bit source naming `src_flat_scratch_base_hi` → `_lo`;
//! - `s_clause` per [`ClausePolicy`] (by default left alone);
//! - every `.gfx1250_revision` string of the metadata note → `A0`, only when the
//!   re-encoded document keeps its size ([`Retag`]).
//!
//! # The `s_clause` policy
//!
//! By default clauses are kept ([`ClausePolicy::Keep`]). COMGR's rewriter first
//! replaced every clause with `s_nop 0` (PR #3448), then only the "initial-VMEM"
//! clauses (those no VMEM instruction precedes on some path, by a must-analysis
//! over each kernel's control flow) and clauses mixing memory families or
//! scopes, and its final version stopped rewriting clauses at all: "s_clause is
//! handled identically on A0/B0 upstream". The A0 hazard behind the earlier
//! versions, unclaused VMEM at kernel entry, is now avoided by the compiler
//! itself (upstream LLVM emits that workaround), and it is a property of the
//! kernel's entry, not of clauses. Removing every clause would change nearly
//! every real object (clauses are the most frequent A0-relevant instruction in
//! ROCm-built code) and cost performance for no correctness the final upstream
//! rewriter still claimed. [`ClausePolicy::ReplaceWithNop`] keeps PR #3448's
//! behaviour available to bring-up experiments.
//!
//! # Fail closed
//!
//! The object is refused ([`RewriteError`]) when the analysis is incomplete (an
//! encoding the walker cannot size), when executable bytes lie outside every
//! walked function and are not padding (`s_nop`, `s_code_end`, zeros: such
//! code would not have been analysed), when two functions overlap with
//! different instruction boundaries, when a patch would fall outside an
//! executable section, when the metadata note is malformed, and, unless
//! [`Options::allow_partial`] is set, when any site needs code growth other
//! than the DS two-address split ([`RewriteError::NeedsGrowth`], which lists
//! every such site). Growth itself refuses ([`RewriteError::Growth`]) what it
//! cannot do exactly ([`placement`]), among it an object whose section or
//! program headers reach past the end of the file or past the GPU address
//! space (`input_bounds`): appending would change what they describe.
//!
//! Idempotent: the output's sites are all in their A0 form, so rewriting it
//! again gives the same bytes. Never panics on any input.

pub mod emit;
mod input_bounds;
mod islands;
pub mod mask_definition;
pub mod placement;
mod retag;
pub mod vgpr_mode;

use std::sync::Arc;

use crate::elf::{self, SHF_ALLOC, SHF_EXECINSTR, SHT_NOBITS};
use crate::gfx1250::{self, A0Class, Analysis, AnalyzeError, Fix, Function, Site};
use crate::isa::IsaError;
use crate::metadata::{self, MetadataError};
use crate::object::CodeObject;

pub use emit::ds2;
pub use placement::{
    moved_functions, moved_functions_of, read_gateway, BranchIsland, Gateway, GatewayKind,
    GrownSite, MovedFunction, MovedRange, ReaimedRelocation,
};
pub use retag::REVISION_KEY;

/// What to do with `s_clause` (see the module documentation).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum ClausePolicy {
    /// Leave every clause as it is (the default; COMGR's final behaviour).
    #[default]
    Keep,
    /// Replace every clause with `s_nop 0` (COMGR PR #3448's behaviour).
    ReplaceWithNop,
}

/// How to rewrite.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Options {
    /// Return the partly fixed object when sites that need code growth remain
    /// (listed in [`Report::remaining`]) instead of refusing it.
    pub allow_partial: bool,
    /// The `s_clause` policy.
    pub clauses: ClausePolicy,
}

/// One site, located for a reader: the function that holds it, where, what.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SiteInfo {
    /// The function (or kernel) that holds the site (shared by its sites).
    pub function: Arc<str>,
    /// The function's virtual address.
    pub function_vaddr: u64,
    /// The site's virtual address.
    pub vaddr: u64,
    /// The site's offset in the code object's bytes.
    pub file_offset: u64,
    /// The instruction's length in bytes.
    pub len: u8,
    /// Its class.
    pub class: A0Class,
    /// Its LLVM mnemonic (before any fix).
    pub mnemonic: &'static str,
}

impl SiteInfo {
    fn new(name: &Arc<str>, function: &Function, site: &Site) -> Self {
        Self {
            function: Arc::clone(name),
            function_vaddr: function.vaddr,
            vaddr: site.vaddr,
            file_offset: site.file_offset,
            len: site.len,
            class: site.class,
            mnemonic: site.mnemonic,
        }
    }

    /// The site's offset from the start of its function.
    pub fn offset_in_function(&self) -> u64 {
        self.vaddr.wrapping_sub(self.function_vaddr)
    }
}

impl std::fmt::Display for SiteInfo {
    /// `wmma_k128 (v_wmma_f32_16x16x128_fp8_fp8) in k_wmma at offset 0x40 (vaddr 0x1740)`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} ({}) in {} at offset {:#x} (vaddr {:#x})",
            self.class,
            self.mnemonic,
            self.function,
            self.offset_in_function(),
            self.vaddr
        )
    }
}

/// What happened to the metadata note's `.gfx1250_revision` strings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Retag {
    /// The object has no AMDGPU metadata note.
    NoNote,
    /// The note has no `.gfx1250_revision` string.
    NoRevision,
    /// Every one (this many) already says `A0`.
    AlreadyA0(usize),
    /// This many were changed to `A0` (the note keeps its size).
    Retagged(usize),
    /// This many would change, but the re-encoded document would not keep its
    /// size, so the note is kept as it is (as COMGR did).
    KeptSizeChanged(usize),
}

impl std::fmt::Display for Retag {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::NoNote => write!(f, "no metadata note"),
            Self::NoRevision => write!(f, "no .gfx1250_revision"),
            Self::AlreadyA0(n) => write!(f, "{n} .gfx1250_revision already A0"),
            Self::Retagged(n) => write!(f, "{n} .gfx1250_revision retagged to A0"),
            Self::KeptSizeChanged(n) => write!(
                f,
                "{n} .gfx1250_revision kept (the re-encoded note would change size)"
            ),
        }
    }
}

/// What a rewrite did and left.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Report {
    /// The sites fixed in their own bytes (same size), in file order (a
    /// tensor load fixed at its mask's definition is in
    /// [`Report::at_definition`]).
    pub fixed: Vec<SiteInfo>,
    /// Same-size sites left as they are by policy (`s_clause` under
    /// [`ClausePolicy::Keep`]), in file order.
    pub kept: Vec<SiteInfo>,
    /// Sites that need code growth, not fixed (empty unless
    /// [`Options::allow_partial`]), in file order: those of a class without
    /// an emitter, and those of [`Report::growth_refused`].
    pub remaining: Vec<SiteInfo>,
    /// Under [`Options::allow_partial`]: the remaining sites whose class has
    /// an emitter that refused them, with its reason (without partial
    /// output, such a refusal refuses the object).
    pub growth_refused: Vec<RefusedSite>,
    /// The metadata retag (`None` only in a default-constructed report).
    pub retag: Option<Retag>,
    /// The sites fixed by growth (their class's emitter, [`emit`]), in file
    /// order: where each one's replacement starts and how long it is.
    pub grown: Vec<GrownSite>,
    /// The functions moved into the appended region, in address order.
    pub moved: Vec<MovedFunction>,
    /// `s_clause` instructions in moved code replaced by `s_nop 0` (their
    /// window holds a split site).
    pub clauses_removed: usize,
    /// Branch islands in moved code, in address order.
    pub islands: Vec<BranchIsland>,
    /// In an object this rewriter already grew (it carries the marker): the
    /// sites left in the original copies of moved functions, which nothing
    /// enters any more.
    pub unreachable: Vec<SiteInfo>,
    /// In such an object: the marker's map.
    pub previously_moved: Vec<MovedRange>,
    /// The fixed sites that lie in a moved function, where their fixed copy
    /// is executed now (in the function's image), by original address; every
    /// other fixed site is executed where it is.
    pub relocated: Vec<Relocated>,
    /// The kernels whose register counts (descriptor and metadata) were
    /// raised for scratch registers above their allocation, one per kernel
    /// and class, with the occupancy before and after for VGPRs.
    pub raised: Vec<crate::liveness::scratch::CountRaise>,
    /// The old entries of moved functions made jumps to their images
    /// ([`placement`]), in address order.
    pub gateways: Vec<Gateway>,
    /// The dynamic relocations re-aimed at moved functions' images
    /// ([`placement`]), in table order.
    pub relocations: Vec<ReaimedRelocation>,
    /// The `tensor_load_to_lds` sites fixed at their mask SGPR's only
    /// reaching definition ([`mask_definition`]): the load's own bytes are
    /// unchanged, the definition's constant has its low 16 bits zero. In
    /// site order.
    pub at_definition: Vec<DefinitionFix>,
}

/// A tensor site fixed at its mask's definition (same size, nothing moves).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DefinitionFix {
    /// The `tensor_load_to_lds` (its bytes unchanged).
    pub site: SiteInfo,
    /// The changed definition's address.
    pub definition_vaddr: u64,
    /// Its offset in the code object.
    pub definition_file_offset: u64,
    /// Its length (unchanged).
    pub definition_len: u8,
}

/// A growth site whose emitter refused it (left as it is under
/// [`Options::allow_partial`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RefusedSite {
    /// The site.
    pub site: SiteInfo,
    /// The emitter's reason.
    pub reason: String,
}

/// A fixed site in a moved function: where it was, where its copy is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Relocated {
    /// The site's address in the input.
    pub original_vaddr: u64,
    /// The address of its copy in the moved function's image.
    pub new_vaddr: u64,
}

/// One changed site of a [`Report`]: where it was, where the code that
/// replaces it is executed, how long that code is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SiteChange<'a> {
    /// The site (its class, mnemonic, function and original address).
    pub site: &'a SiteInfo,
    /// The address of its (first) replacement instruction in the output:
    /// the copy's in a moved function, else the site's own.
    pub new_vaddr: u64,
    /// The replacement's length in bytes.
    pub new_len: u32,
    /// `same-size`, or the emitter's name for a site fixed by growth
    /// ([`GrownSite::fix`]).
    pub fix: &'static str,
    /// The scratch registers the replacement took ([`GrownSite::scratch`]).
    pub scratch: &'a [emit::Taken],
    /// What the fix does to results when it is not exact ([`GrownSite::note`]).
    pub note: Option<&'static str>,
    /// For a tensor site fixed at its mask's definition
    /// ([`Report::at_definition`]): the changed definition's address (the
    /// site itself keeps its bytes and address).
    pub definition_vaddr: Option<u64>,
}

impl Report {
    /// Whether every site A0 needs changed was fixed (nothing remains).
    pub fn is_complete(&self) -> bool {
        self.remaining.is_empty()
    }

    /// The number of sites of `class` fixed without growth: same-size at
    /// the site ([`Report::fixed`]) or at a tensor mask's definition
    /// ([`Report::at_definition`]).
    pub fn fixed_count(&self, class: A0Class) -> usize {
        self.fixed.iter().filter(|s| s.class == class).count()
            + self
                .at_definition
                .iter()
                .filter(|d| d.site.class == class)
                .count()
    }

    /// The number of remaining sites of `class`.
    pub fn remaining_count(&self, class: A0Class) -> usize {
        self.remaining.iter().filter(|s| s.class == class).count()
    }

    /// Where the fixed copy of the site at `vaddr` is executed: its image's
    /// address in a moved function ([`Report::relocated`]), else `vaddr`.
    pub fn executed_vaddr(&self, vaddr: u64) -> u64 {
        self.relocated
            .binary_search_by_key(&vaddr, |r| r.original_vaddr)
            .map_or(vaddr, |i| self.relocated[i].new_vaddr)
    }

    /// Every changed site, in input address order (at one address, the
    /// same-size fixes before a growth): the same-size fixes at their
    /// executed copy, and the sites fixed by growth.
    pub fn changes(&self) -> Vec<SiteChange<'_>> {
        let mut out: Vec<SiteChange<'_>> = self
            .fixed
            .iter()
            .map(|s| SiteChange {
                site: s,
                new_vaddr: self.executed_vaddr(s.vaddr),
                new_len: u32::from(s.len),
                fix: "same-size",
                scratch: &[],
                note: None,
                definition_vaddr: None,
            })
            .chain(self.grown.iter().map(|g| SiteChange {
                site: &g.site,
                new_vaddr: g.new_vaddr,
                new_len: g.new_len,
                fix: g.fix,
                scratch: &g.scratch,
                note: g.note,
                definition_vaddr: None,
            }))
            .chain(self.at_definition.iter().map(|d| SiteChange {
                site: &d.site,
                new_vaddr: d.site.vaddr,
                new_len: u32::from(d.site.len),
                fix: emit::tensor_mask::FIX_DEFINITION,
                scratch: &[],
                note: None,
                definition_vaddr: Some(d.definition_vaddr),
            }))
            .collect();
        out.sort_by_key(|c| c.site.vaddr);
        out
    }
}

/// One byte range to overwrite.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Patch {
    /// Offset in the code object.
    pub file_offset: u64,
    /// The new bytes (as many as they replace).
    pub bytes: Vec<u8>,
}

/// The rewrite of one object, not yet applied.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Plan {
    /// The size of the object planned for.
    pub len: usize,
    /// Patches of the original bytes in file order; empty when nothing
    /// changes.
    pub patches: Vec<Patch>,
    /// Bytes appended after the original end (code growth; see
    /// [`placement`]); empty for a same-size rewrite.
    pub tail: Vec<u8>,
    /// What is fixed and what is left.
    pub report: Report,
}

impl Plan {
    /// Writes the patches into `out`, a copy of the planned object. False
    /// (nothing written) when `out` is not the planned object's size or the
    /// plan grows the object (use [`Plan::write_into`]).
    pub fn apply(&self, out: &mut [u8]) -> bool {
        if out.len() != self.len || !self.tail.is_empty() {
            return false;
        }
        self.patch(out);
        true
    }

    fn patch(&self, out: &mut [u8]) {
        for p in &self.patches {
            // In bounds: checked against the object when planned.
            let start = p.file_offset as usize;
            out[start..start + p.bytes.len()].copy_from_slice(&p.bytes);
        }
    }

    /// The output's size.
    pub fn output_len(&self) -> usize {
        self.len + self.tail.len()
    }

    /// Writes the whole output into `out` ([`Plan::output_len`] bytes) from
    /// `input`, the planned object. False (nothing written) on a size mismatch.
    pub fn write_into(&self, input: &[u8], out: &mut [u8]) -> bool {
        if input.len() != self.len || out.len() != self.output_len() {
            return false;
        }
        out[..self.len].copy_from_slice(input);
        self.patch(&mut out[..self.len]);
        out[self.len..].copy_from_slice(&self.tail);
        true
    }

    /// Whether applying the plan changes any byte.
    pub fn changes_bytes(&self) -> bool {
        !self.patches.is_empty() || !self.tail.is_empty()
    }
}

/// A rewritten code object.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rewrite {
    /// The output: the input with the patches applied, followed by the
    /// appended code segment when a DS two-address site was split.
    pub bytes: Vec<u8>,
    /// What is fixed and what is left.
    pub report: Report,
}

/// Why an object was not rewritten. Every variant is a property of the object
/// (the same input always gives the same answer).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RewriteError {
    /// Not an AMDGPU HSA code object whose ISA the header names.
    NotCodeObject(IsaError),
    /// A code object for another processor than gfx1250 (its name).
    NotGfx1250(&'static str),
    /// A gfx1250-strict code object: already built for A0.
    AlreadyA0,
    /// The walker could not size an instruction (function, vaddr, first dword):
    /// the analysis is incomplete.
    Incomplete {
        /// The function whose walk stopped.
        function: String,
        /// The encoding's virtual address.
        vaddr: u64,
        /// Its first dword, when 4 bytes remain.
        first_dword: Option<u32>,
    },
    /// Executable bytes no walked function covers, other than padding.
    UncoveredCode {
        /// Their file offset.
        file_offset: u64,
    },
    /// Two functions overlap with different instruction boundaries.
    OverlappingFunctions {
        /// The earlier function.
        first: String,
        /// The later one, which starts inside an instruction of the first.
        second: String,
    },
    /// A site lies outside every executable section.
    SiteOutsideCode(SiteInfo),
    /// The analysis reported a same-size site for which no fix applies
    /// (an inconsistency; never expected).
    NoFix(SiteInfo),
    /// The metadata note is malformed.
    Metadata(MetadataError),
    /// Sites that need code growth remain (every one, in file order); the
    /// refusal of the default options.
    NeedsGrowth(Vec<SiteInfo>),
    /// Code growth (a site's emitter, moving its function) cannot be done
    /// exactly (the reason names the site or the function and what is not
    /// understood).
    Growth(String),
}

impl RewriteError {
    /// A stable name for scripts: `not_code_object`, `not_gfx1250`,
    /// `already_a0`, `incomplete`, `uncovered_code`, `overlapping_functions`,
    /// `site_outside_code`, `no_fix`, `metadata`, `needs_growth`,
    /// `growth_refused`.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::NotCodeObject(_) => "not_code_object",
            Self::NotGfx1250(_) => "not_gfx1250",
            Self::AlreadyA0 => "already_a0",
            Self::Incomplete { .. } => "incomplete",
            Self::UncoveredCode { .. } => "uncovered_code",
            Self::OverlappingFunctions { .. } => "overlapping_functions",
            Self::SiteOutsideCode(_) => "site_outside_code",
            Self::NoFix(_) => "no_fix",
            Self::Metadata(_) => "metadata",
            Self::NeedsGrowth(_) => "needs_growth",
            Self::Growth(_) => "growth_refused",
        }
    }
}

impl std::fmt::Display for RewriteError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::NotCodeObject(e) => write!(f, "{e}"),
            Self::NotGfx1250(p) => write!(f, "a {p} code object: only gfx1250 is rewritten"),
            Self::AlreadyA0 => write!(f, "a gfx1250-strict code object is already built for A0"),
            Self::Incomplete {
                function,
                vaddr,
                first_dword,
            } => {
                write!(
                    f,
                    "incomplete analysis: an encoding the walker cannot size in {function} at vaddr {vaddr:#x}"
                )?;
                if let Some(w) = first_dword {
                    write!(f, " (first dword {w:#010x})")?;
                }
                Ok(())
            }
            Self::UncoveredCode { file_offset } => write!(
                f,
                "executable bytes outside every function at file offset {file_offset:#x} \
                 (not padding): they cannot be analysed"
            ),
            Self::OverlappingFunctions { first, second } => write!(
                f,
                "functions {first} and {second} overlap with different instruction boundaries"
            ),
            Self::SiteOutsideCode(s) => write!(f, "site outside every executable section: {s}"),
            Self::NoFix(s) => write!(f, "no same-size fix applies to {s}"),
            Self::Metadata(e) => write!(f, "metadata note: {e}"),
            Self::Growth(why) => write!(f, "code growth refused: {why}"),
            Self::NeedsGrowth(sites) => {
                write!(f, "{} site(s) need code growth", sites.len())?;
                if let Some(first) = sites.first() {
                    write!(f, "; the first: {first}")?;
                }
                Ok(())
            }
        }
    }
}

impl std::error::Error for RewriteError {}

/// Rewrites a gfx1250 B0 code object (a bare ELF) for A0: see the module
/// documentation. The output has the input's size and layout unless a DS
/// two-address site was split (then the input's bytes, patched, followed by
/// the appended segment).
pub fn rewrite_b0_to_a0(code_object: &[u8], options: &Options) -> Result<Rewrite, RewriteError> {
    let object = CodeObject::parse(code_object).map_err(RewriteError::NotCodeObject)?;
    rewrite_object(&object, options)
}

/// [`rewrite_b0_to_a0`] of an object already parsed.
pub fn rewrite_object(object: &CodeObject<'_>, options: &Options) -> Result<Rewrite, RewriteError> {
    let code_object = object.bytes();
    let mut plan = plan(object, options)?;
    let mut bytes = prepend(code_object, std::mem::take(&mut plan.tail));
    plan.patch(&mut bytes[..plan.len]);
    Ok(Rewrite {
        bytes,
        report: plan.report,
    })
}

/// `input` followed by `tail`, built in `tail`'s own allocation, which
/// placement made large enough for both: the output of a growing rewrite
/// never coexists with a second copy of what it appends, so the rewrite's
/// peak extra memory is about the output itself.
fn prepend(input: &[u8], mut tail: Vec<u8>) -> Vec<u8> {
    let appended = tail.len();
    tail.reserve_exact(input.len());
    tail.resize(input.len() + appended, 0);
    tail.copy_within(..appended, input.len());
    tail[..input.len()].copy_from_slice(input);
    tail
}

/// [`rewrite_b0_to_a0`] without the copy: the patches and the report.
pub fn plan_b0_to_a0(code_object: &[u8], options: &Options) -> Result<Plan, RewriteError> {
    let object = CodeObject::parse(code_object).map_err(RewriteError::NotCodeObject)?;
    plan_object(&object, options)
}

/// [`plan_b0_to_a0`] of an object already parsed: the analysis, the checks,
/// the retag and the growth placement all read this one view.
pub fn plan_object(object: &CodeObject<'_>, options: &Options) -> Result<Plan, RewriteError> {
    let mut plan = plan(object, options)?;
    // Without the room for the input, which only `rewrite_object` fills.
    plan.tail.shrink_to_fit();
    Ok(plan)
}

/// [`plan_object`], the tail in an allocation with room for the input
/// before it (see [`prepend`]).
fn plan(object: &CodeObject<'_>, options: &Options) -> Result<Plan, RewriteError> {
    let code_object = object.bytes();
    match object.processor().map_err(RewriteError::NotCodeObject)? {
        "gfx1250" => {}
        "gfx1250-strict" => return Err(RewriteError::AlreadyA0),
        other => return Err(RewriteError::NotGfx1250(other)),
    }
    // The boundaries of each function holding a growth site are kept as the
    // analysis decodes them: the functions placement moves are not decoded
    // again.
    let mut walked = placement::Walked::new(|f| {
        f.sites
            .iter()
            .any(|s| s.fix == Fix::Growth && emit::emitter(s.class).is_some())
    });
    let mut analysis = gfx1250::analyze_object_with(object, &mut walked).map_err(|e| match e {
        AnalyzeError::Isa(e) => RewriteError::NotCodeObject(e),
        AnalyzeError::NotGfx125(p) => RewriteError::NotGfx1250(p),
    })?;
    if let Some(u) = analysis.unknown.first() {
        return Err(RewriteError::Incomplete {
            function: u.function.clone(),
            vaddr: u.vaddr,
            first_dword: u.first_dword,
        });
    }
    let code = code_ranges(object);
    check_overlaps(&analysis, code_object)?;
    check_coverage(&analysis, &code, code_object)?;

    let mut report = Report::default();
    // An object this rewriter grew before: the original copies of its moved
    // functions are no longer entered.
    let previously_moved = placement::moved_functions_of(object).unwrap_or_default();
    let moved_away = |vaddr: u64| {
        previously_moved
            .iter()
            .any(|r| vaddr >= r.original_vaddr && vaddr - r.original_vaddr < r.original_size)
    };
    let mut growth_sites: Vec<SiteInfo> = Vec::new();
    // Tensor sites whose mask is cleared at its only definition (no growth).
    // An object grown before is not changed there either (a site its first
    // rewrite left, in a function it moved, stays as it was: rewriting an
    // output changes nothing); a definition already clear is recognised.
    let mut definitions = mask_definition::plan(
        object,
        &analysis,
        &|class| emit::emitter(class).is_some() && previously_moved.is_empty(),
        &moved_away,
        &|start, len| {
            let end = start.saturating_add(len);
            code.iter().any(|&(s, e)| start >= s && end <= e)
        },
    );
    if !previously_moved.is_empty() {
        definitions.retain(|_, d| d.is_clear());
    }
    let mut definition_patches: Vec<Patch> = Vec::new();
    // (file offset, fixed bytes so far, the classes fixed, the function), in
    // offset order: functions come in address order, so a fix is appended
    // unless functions overlap or alias.
    let mut fixes: Vec<(u64, Vec<u8>, u32, &str)> = Vec::new();
    for function in &analysis.functions {
        let name: Arc<str> = Arc::from(function.name.as_str());
        for site in &function.sites {
            let info = || SiteInfo::new(&name, function, site);
            match site.fix {
                _ if moved_away(site.vaddr) => report.unreachable.push(info()),
                // Fixed at its mask's only definition, in place; nothing to
                // do when that definition yields a zero mask already.
                Fix::Growth
                    if site.class == A0Class::TensorLds
                        && definitions.contains_key(&site.file_offset) =>
                {
                    if let Some(d) = definitions.get(&site.file_offset).filter(|d| !d.is_clear()) {
                        report.at_definition.push(DefinitionFix {
                            site: info(),
                            definition_vaddr: d.vaddr,
                            definition_file_offset: d.file_offset,
                            definition_len: d.bytes.len() as u8,
                        });
                        definition_patches.push(Patch {
                            file_offset: d.file_offset,
                            bytes: d.bytes.clone(),
                        });
                    }
                }
                // An object grown before is not grown again (a second marker
                // would not be found): a site left in it, one an emitter
                // refused under `allow_partial`, remains.
                Fix::Growth
                    if emit::emitter(site.class).is_some() && previously_moved.is_empty() =>
                {
                    growth_sites.push(info())
                }
                Fix::Growth
                    if site.class == A0Class::TensorLds
                        && own_tensor_mask_fix(code_object, function, site, &previously_moved) => {}
                Fix::Growth => report.remaining.push(info()),
                Fix::SameSize if !site.needs_change => {}
                Fix::SameSize
                    if site.class == A0Class::SClause && options.clauses == ClausePolicy::Keep =>
                {
                    report.kept.push(info())
                }
                Fix::SameSize => {
                    let len = u64::from(site.len);
                    let start = site.file_offset;
                    let end = start.saturating_add(len);
                    if !code.iter().any(|&(s, e)| start >= s && end <= e) {
                        return Err(RewriteError::SiteOutsideCode(info()));
                    }
                    let original = elf::range(code_object, start, len)
                        .ok_or_else(|| RewriteError::SiteOutsideCode(info()))?;
                    // A second class of an already fixed instruction composes;
                    // a fix overlapping another instruction's is refused; the
                    // same site seen again (an aliased function) is skipped.
                    let class_bit = 1u32 << (site.class as u32);
                    let mut classes = class_bit;
                    // The last fix that starts before this site's end.
                    let before = fixes.partition_point(|f| f.0 < end);
                    let previous = before.checked_sub(1).map(|i| &fixes[i]);
                    let current = match previous {
                        Some((at, bytes, done, _))
                            if *at == start && bytes.len() == original.len() =>
                        {
                            if done & class_bit != 0 {
                                continue;
                            }
                            classes |= done;
                            bytes.as_slice()
                        }
                        Some((at, bytes, _, holder)) if at + bytes.len() as u64 > start => {
                            return Err(RewriteError::OverlappingFunctions {
                                first: (*holder).to_owned(),
                                second: function.name.clone(),
                            });
                        }
                        _ => original,
                    };
                    let fixed = gfx1250::same_size_fix(site.class, current)
                        .filter(|b| b.len() == current.len())
                        .ok_or_else(|| RewriteError::NoFix(info()))?;
                    report.fixed.push(info());
                    let fix = (start, fixed, classes, function.name.as_str());
                    if previous.is_some_and(|p| p.0 == start) {
                        fixes[before - 1] = fix;
                    } else {
                        fixes.insert(before, fix);
                    }
                }
            }
        }
    }
    // In file order, each site once (an aliased function reports it again).
    for list in [
        &mut report.fixed,
        &mut report.kept,
        &mut report.remaining,
        &mut report.unreachable,
        &mut growth_sites,
    ] {
        list.sort_by_key(|s| (s.file_offset, s.class));
        list.dedup_by_key(|s| (s.file_offset, s.class));
        list.shrink_to_fit(); // held to the end, at the peak of a growth
    }
    report.at_definition.sort_by_key(|d| d.site.file_offset);
    report.at_definition.dedup_by_key(|d| d.site.file_offset);
    // One definition may reach several loads: patched once.
    definition_patches.sort_by_key(|p| p.file_offset);
    definition_patches.dedup();
    drop(definitions);
    if !report.remaining.is_empty() && !options.allow_partial {
        return Err(RewriteError::NeedsGrowth(report.remaining));
    }
    let mut patches: Vec<Patch> = fixes
        .into_iter()
        .filter(|(at, bytes, _, _)| {
            elf::range(code_object, *at, bytes.len() as u64) != Some(bytes.as_slice())
        })
        .map(|(file_offset, bytes, _, _)| Patch { file_offset, bytes })
        .collect();
    // A definition's change never meets a same-size fix (it is no A0
    // class) nor a different change of the same bytes (aliased functions
    // give the same one, deduplicated above): either would be an
    // inconsistency, refused.
    let clash = definition_patches
        .windows(2)
        .find(|w| w[0].file_offset + w[0].bytes.len() as u64 > w[1].file_offset)
        .map(|w| w[1].file_offset)
        .or_else(|| {
            definition_patches
                .iter()
                .find(|d| {
                    patches.iter().any(|p| {
                        p.file_offset < d.file_offset + d.bytes.len() as u64
                            && d.file_offset < p.file_offset + p.bytes.len() as u64
                    })
                })
                .map(|d| d.file_offset)
        });
    if let Some(at) = clash {
        let site = report
            .at_definition
            .iter()
            .find(|d| d.definition_file_offset == at)
            .map(|d| d.site.clone());
        return Err(site.map_or_else(
            || RewriteError::Growth(format!("tensor mask definitions clash at offset {at:#x}")),
            RewriteError::NoFix,
        ));
    }
    patches.extend(definition_patches);
    // Placement reads the functions' ranges, not their sites (now in the
    // report's lists): they go before the output is allocated.
    for f in &mut analysis.functions {
        f.sites = Vec::new();
    }

    let (retag, patch) = retag_note(object)?;
    report.retag = Some(retag);
    patches.extend(patch);
    patches.sort_by_key(|p| p.file_offset);
    report.previously_moved = previously_moved;
    let mut tail = Vec::new();
    if !growth_sites.is_empty() {
        // Growth: the copies get the same-size fixes too.
        input_bounds::check_growable(object)?;
        let placed = placement::place(
            object,
            &patches,
            analysis,
            &growth_sites,
            &report.fixed,
            walked,
            options.allow_partial,
        )?;
        // A gateway replaces whole instructions of an old copy: any
        // same-size fix of those bytes is dropped (the image has it).
        let map = object.address_map();
        let gateway_ranges: Vec<(u64, u64)> = placed
            .gateways
            .iter()
            .filter_map(|g| {
                map.file_offset(g.old_entry)
                    .map(|o| (o, o + u64::from(g.len)))
            })
            .collect();
        patches.retain(|p| {
            !gateway_ranges
                .iter()
                .any(|&(s, e)| p.file_offset < e && p.file_offset + p.bytes.len() as u64 > s)
        });
        patches.extend(placed.patches);
        patches.sort_by_key(|p| p.file_offset);
        tail = placed.tail;
        // The sites move into the report: `placed.sites` follows their
        // order, each one once.
        for (k, reason) in placed.refused {
            report.remaining.push(growth_sites[k].clone());
            report.growth_refused.push(RefusedSite {
                site: growth_sites[k].clone(),
                reason,
            });
        }
        report.remaining.sort_by_key(|s| (s.file_offset, s.class));
        // Allocated at its length: built beside the output, at the peak.
        let mut sites = growth_sites.into_iter().enumerate();
        report.grown = Vec::with_capacity(placed.sites.len());
        for p in placed.sites {
            if let Some((_, site)) = sites.find(|(k, _)| *k == p.site) {
                report.grown.push(GrownSite {
                    site,
                    new_vaddr: p.new_vaddr,
                    new_len: p.new_len,
                    fix: p.fix,
                    scratch: p.scratch,
                    note: p.note,
                });
            }
        }
        report.moved = placed.moved;
        report.clauses_removed = placed.clauses_removed;
        report.islands = placed.islands;
        report.relocated = placed.relocated;
        report.raised = placed.raised;
        report.gateways = placed.gateways;
        report.relocations = placed.relocations;
    }
    Ok(Plan {
        len: code_object.len(),
        patches,
        tail,
        report,
    })
}

/// File ranges `[start, end)` of the executable code: `SHF_ALLOC|SHF_EXECINSTR`
/// sections, or, without section headers, executable `PT_LOAD` segments.
/// Whether the `tensor_load_to_lds` `site` of `function` is the load of this
/// rewriter's own tensor-mask fix in an object it grew before: `function`
/// lies in the image of a moved function and the instruction right before
/// the site (boundaries walked from the function's start) is
/// `s_pack_hh_b32_b16 sB, 0, sB` of the load's mask SGPR `sB`. The image is
/// this rewriter's output, where nothing branches into the middle of a
/// site's replacement (branches are re-aimed at its start), so the clear
/// runs before every execution of the load: the site needs nothing more.
/// `previously_moved`: the object's marker map ([`moved_functions_of`]);
/// `hotswap inspect` asks the same question of a grown output.
pub fn own_tensor_mask_fix(
    code_object: &[u8],
    function: &Function,
    site: &Site,
    previously_moved: &[placement::MovedRange],
) -> bool {
    let in_image = previously_moved
        .iter()
        .any(|r| function.vaddr >= r.new_vaddr && function.vaddr - r.new_vaddr < r.new_size);
    let (Some(start), true) = (function.file_offset, in_image) else {
        return false;
    };
    let Some(load) = elf::range(code_object, site.file_offset, u64::from(site.len)) else {
        return false;
    };
    let Ok(mask) = emit::tensor_mask::mask_sgpr(load) else {
        return false;
    };
    let clear = emit::tensor_mask::clear_bytes(mask);
    let (mut at, mut previous) = (start, None);
    while at < site.file_offset {
        let Some(bytes) = code_object.get(at as usize..site.file_offset as usize) else {
            return false;
        };
        let Ok(d) = gfx1250::walker::decode(bytes) else {
            return false;
        };
        previous = Some(at);
        at += u64::from(d.len);
    }
    at == site.file_offset
        && previous.is_some_and(|p| {
            site.file_offset - p == 4
                && code_object.get(p as usize..site.file_offset as usize) == Some(&clear[..])
        })
}

fn code_ranges(object: &CodeObject<'_>) -> Vec<(u64, u64)> {
    let in_file = |offset: u64, size: u64| {
        offset
            .checked_add(size)
            .filter(|&end| end <= object.bytes().len() as u64)
            .map(|end| (offset, end))
    };
    let sections = object.sections();
    if !sections.is_empty() {
        return sections
            .iter()
            .filter(|s| {
                s.flags & (SHF_ALLOC | SHF_EXECINSTR) == SHF_ALLOC | SHF_EXECINSTR
                    && s.sh_type != SHT_NOBITS
            })
            .filter_map(|s| in_file(s.offset, s.size))
            .collect();
    }
    const PF_X: u32 = 1;
    object
        .segments()
        .iter()
        .filter(|s| s.p_type == elf::PT_LOAD && s.flags & PF_X != 0)
        .filter_map(|s| in_file(s.offset, s.filesz))
        .collect()
}

// Fixed classes are kept as bits of a u32.
const _: () = assert!(A0Class::ALL.len() <= 32);

/// The longest gfx1250 instruction (VOP3PX2 with a literal is 20 bytes).
const MAX_INSTRUCTION_LEN: u64 = 20;

/// Refuses functions whose instructions overlap with different boundaries: a
/// function that starts inside another's walked range (its symbol range, or
/// the last instruction that runs past it) must start at one of that
/// function's instruction boundaries. Aliases (the same start) always agree. A
/// function is walked again only when another starts within its range or less
/// than one instruction length after it.
fn check_overlaps(analysis: &Analysis, code_object: &[u8]) -> Result<(), RewriteError> {
    let functions = &analysis.functions; // in address order
    for (i, earlier) in functions.iter().enumerate() {
        let end = earlier.vaddr.saturating_add(earlier.size);
        let reach = end.saturating_add(MAX_INSTRUCTION_LEN);
        // The later functions that may start inside earlier's walk, in order.
        let mut starts = functions[i + 1..]
            .iter()
            .take_while(|f| f.vaddr < reach)
            .filter(|f| f.vaddr != earlier.vaddr)
            .peekable();
        if starts.peek().is_none() || earlier.size == 0 {
            continue;
        }
        let Some(code) = earlier
            .file_offset
            .and_then(|o| usize::try_from(o).ok())
            .and_then(|o| code_object.get(o..))
        else {
            continue; // not walked: the analysis reported it
        };
        // Instruction starts in [vaddr, end), as the analysis walked them;
        // each later start must be one of them, or lie past the last one's end.
        let mut walk = gfx1250::instructions(code, earlier.vaddr).map_while(Result::ok);
        let mut at = earlier.vaddr; // the next instruction start
        for later in starts {
            while at < later.vaddr && at < end {
                match walk.next() {
                    Some(insn) => at = insn.vaddr + insn.bytes.len() as u64,
                    None => break,
                }
            }
            if at > later.vaddr {
                return Err(RewriteError::OverlappingFunctions {
                    first: earlier.name.clone(),
                    second: later.name.clone(),
                });
            }
        }
    }
    Ok(())
}

/// Whether a dword is padding: `s_nop N`, `s_code_end` or zero.
fn is_padding(word: u32) -> bool {
    word == 0 || word == 0xBF9F_0000 || word & 0xFFFF_0000 == 0xBF80_0000
}

/// Refuses executable bytes that no function covers, unless they are padding.
fn check_coverage(
    analysis: &Analysis,
    code: &[(u64, u64)],
    code_object: &[u8],
) -> Result<(), RewriteError> {
    let mut covered: Vec<(u64, u64)> = analysis
        .functions
        .iter()
        .filter_map(|f| Some((f.file_offset?, f.file_offset?.saturating_add(f.size))))
        .collect();
    covered.sort_unstable();
    for &(start, end) in code {
        let mut at = start;
        let mut gaps = Vec::new();
        for &(s, e) in &covered {
            if e <= at || s >= end {
                continue;
            }
            if s > at {
                gaps.push((at, s));
            }
            at = at.max(e);
        }
        if at < end {
            gaps.push((at, end));
        }
        for (s, e) in gaps {
            let bytes = elf::range(code_object, s, e - s).unwrap_or(&[]);
            let mut words = bytes.chunks_exact(4);
            let bad = words
                .by_ref()
                .position(|w| !is_padding(u32::from_le_bytes([w[0], w[1], w[2], w[3]])))
                .map(|i| s + 4 * i as u64)
                .or_else(|| {
                    let tail = words.remainder();
                    tail.iter()
                        .position(|&b| b != 0)
                        .map(|i| e - tail.len() as u64 + i as u64)
                });
            if let Some(file_offset) = bad {
                return Err(RewriteError::UncoveredCode { file_offset });
            }
        }
    }
    Ok(())
}

/// Where a sub-slice of `outer` starts in it.
fn offset_within(outer: &[u8], inner: &[u8]) -> Option<usize> {
    let start = (inner.as_ptr() as usize).checked_sub(outer.as_ptr() as usize)?;
    (start.checked_add(inner.len())? <= outer.len()).then_some(start)
}

/// The retag of the first AMDGPU metadata note, and its patch (the changed
/// bytes of the descriptor only).
fn retag_note(object: &CodeObject<'_>) -> Result<(Retag, Option<Patch>), RewriteError> {
    let code_object = object.bytes();
    let Some(desc) = object.metadata_note().map_err(RewriteError::Metadata)? else {
        return Ok((Retag::NoNote, None));
    };
    // The retag walks the whole document (a malformed one is refused); a
    // retagged one must still be read by this crate's reader.
    let malformed = |what| RewriteError::Metadata(MetadataError::Msgpack(what));
    let (retag, document) = match retag::retag(desc).map_err(malformed)? {
        retag::Retagged::None => (Retag::NoRevision, None),
        retag::Retagged::AlreadyA0(n) => (Retag::AlreadyA0(n), None),
        retag::Retagged::SizeChanged { changed, .. } => (Retag::KeptSizeChanged(changed), None),
        retag::Retagged::Same { document, changed } => {
            metadata::decode_document(&document).map_err(RewriteError::Metadata)?;
            (Retag::Retagged(changed), Some(document))
        }
    };
    let Some(document) = document else {
        return Ok((retag, None));
    };
    let base =
        offset_within(code_object, desc).ok_or_else(|| malformed("note outside the object"))?;
    let first = desc.iter().zip(&document).position(|(a, b)| a != b);
    let last = desc.iter().zip(&document).rposition(|(a, b)| a != b);
    let patch = first.zip(last).map(|(first, last)| Patch {
        file_offset: (base + first) as u64,
        bytes: document[first..=last].to_vec(),
    });
    Ok((retag, patch))
}

#[cfg(test)]
#[path = "rewrite/tests.rs"]
mod tests;
