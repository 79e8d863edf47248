//! Code growth by moving whole functions: every function that holds a site
//! of a class with an emitter ([`super::emit`]; today the DS two-address
//! split, [`super::ds2`]) is copied, with each such site replaced by its
//! emitter's code, into a new executable region appended to the object, and
//! every entry into it is redirected. `place` lists the stages, one module
//! each. No original byte moves: data keeps its addresses, the
//! original copies stay in place (nothing enters them any more).
//!
//! The new layout (all appended after the original bytes):
//! - a `PT_LOAD` (R+X, 4 KiB aligned) at the first page past every existing
//!   segment and allocated section, file offset the page past the original
//!   end, holding the section [`TEXT_SECTION`]: each moved function at a
//!   256-byte boundary (the kernel entry alignment), `s_code_end` padding, and
//!   a tail of `s_code_end` so instruction prefetch never runs past the end;
//! - the program header table (a copy plus the new `PT_LOAD`; a `PT_PHDR`,
//!   which would describe the old table, becomes `PT_NULL` as in COMGR);
//! - `.shstrtab`, `.symtab`, `.strtab` copies (new names; one local
//!   `STT_FUNC` symbol `<name>.a0` per moved function, inserted after the
//!   existing locals: `.symtab` indices are referenced by no section of a
//!   linked object, which is checked), the marker note [`MARKER_SECTION`],
//!   and the section header table (a copy plus the two new sections).
//!
//! Inside moved code: every `s_branch` / `s_cbranch_*` is re-encoded to the
//! image of its target (the same function or another moved one) or to the
//! original target (refused beyond ±128 KiB); every `s_get_pc_i64` must start
//! one of the two linker-baked address computations clang emits,
//! `s_add_nc_u64 d, d, lit64` or `s_add_co_u32 d.lo, d.lo, lit` +
//! `s_add_co_ci_u32 d.hi, d.hi, lit`, whose literals are re-targeted so the
//! computed address stays the same (data, unmoved code) or becomes the image
//! (moved code); an `s_set_pc_i64` must end such a computation (a long branch),
//! or be `s_set_pc_i64 s[30:31]` (a return) in a non-kernel function; an
//! `s_swap_pc_i64` (a call) may take its target from any register (it is a
//! function entry: the image when built by a computation or taken from a
//! relocation, both re-aimed, else a gateway); `s_add_pc_i64` and
//! `s_rfe_i64` refuse. In all code, a computation or a branch that targets a
//! moved function is re-targeted to its image (a same-size literal or
//! immediate edit), any other `s_get_pc_i64` refuses the object (a PC value
//! the rewriter cannot follow), and each kernel descriptor whose entry lies in
//! a moved function gets its `kernel_code_entry_byte_offset` redirected. A
//! dynamic `R_AMDGPU_RELATIVE64` or `R_AMDGPU_ABS64` relocation whose target
//! lies in a moved function (a function-pointer table entry, a GOT slot) gets
//! its addend re-aimed at the image; any other relocation referring to moved
//! code refuses.
//!
//! The old entry of every moved function becomes a gateway to its image
//! ([`Gateway`]: an `s_branch`, or a far jump through a register pair dead
//! there), so that a path the rewriter cannot see (a function-pointer table,
//! a stub kernel falling through its end) still enters fixed code.
//!
//! `s_clause` in moved code whose window holds a split site becomes `s_nop 0`.
//!
//! The marker [`MARKER_SECTION`] (non-allocated `SHT_NOTE`, owner `HOTSWAP`,
//! type [`NT_HOTSWAP_MOVED`]) holds the map: version (u32 = 1), count (u32),
//! then per moved function four u64: original vaddr, original size, new
//! vaddr, new size. [`moved_functions`] reads it back.
//!
//! `.eh_frame` and debug sections are left as they are: they describe the
//! original functions at their original addresses (still present, byte for
//! byte); the moved copies carry no CFI (GPU code is not unwound through it).

mod analyse;
mod elf_write;
mod emit;
mod encode;
mod gateway;
mod insns;
mod layout;
mod moving;
mod patch;
mod pc;
mod report;
mod scratch;
mod select;

use std::sync::Arc;

pub use gateway::{read_gateway, Gateway, GatewayKind};
pub(super) use insns::Walked;
pub use patch::ReaimedRelocation;

use super::{Patch, RewriteError, SiteInfo};
use crate::elf;
use crate::gfx1250::Analysis;
use crate::object::CodeObject;

/// The name of the section holding the moved functions.
pub const TEXT_SECTION: &str = ".hotswap.a0.text";
/// The name of the marker section.
pub const MARKER_SECTION: &str = ".note.hotswap.moved";
/// The marker note's owner.
pub const MARKER_OWNER: &[u8] = b"HOTSWAP";
/// The marker note's type.
pub const NT_HOTSWAP_MOVED: u32 = 1;
/// The suffix of a moved function's symbol.
pub const SYMBOL_SUFFIX: &str = ".a0";

pub(super) const PAGE: u64 = 0x1000;
pub(super) const FUNCTION_ALIGN: u64 = 256;
/// `s_code_end` after the last moved function (instruction prefetch).
pub(super) const PREFETCH_TAIL: usize = 2048;
pub(super) const S_CODE_END: [u8; 4] = [0x00, 0x00, 0x9f, 0xbf];
pub(super) const S_NOP_0: [u8; 4] = [0x00, 0x00, 0x80, 0xbf];

/// One moved function.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MovedFunction {
    /// Its name.
    pub name: Arc<str>,
    /// Where it was (and still is, unentered).
    pub original_vaddr: u64,
    /// Its original size.
    pub original_size: u64,
    /// Where its copy starts.
    pub new_vaddr: u64,
    /// The copy's size.
    pub new_size: u64,
    /// The copy's symbol (`<name>.a0`; empty when the object has no `.symtab`).
    pub symbol: String,
}

/// One site fixed by growth.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GrownSite {
    /// The site, where it was.
    pub site: SiteInfo,
    /// The address of its first replacement instruction.
    pub new_vaddr: u64,
    /// The replacement's length in bytes.
    pub new_len: u32,
    /// The emitter's name of the fix (`ds2-split`, `ds2-split-swapped`).
    pub fix: &'static str,
    /// The scratch registers its code took (none for most classes).
    pub scratch: Vec<super::emit::Taken>,
    /// What the fix does to results when it is not exact (the K splits'
    /// rounding), else `None`.
    pub note: Option<&'static str>,
}

/// A branch island: an `s_branch` in a moved function's image that a branch
/// of the same function goes through, because the splits put the branch's
/// destination out of `s_branch` reach.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BranchIsland {
    /// The moved function.
    pub function: Arc<str>,
    /// The island's address.
    pub vaddr: u64,
    /// Where it branches (the image of the original destination).
    pub target: u64,
    /// The original address of the instruction the island precedes (the
    /// function's end when it follows the last one).
    pub before_original_vaddr: u64,
}

/// A range of the marker's map.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MovedRange {
    /// Original vaddr.
    pub original_vaddr: u64,
    /// Original size.
    pub original_size: u64,
    /// New vaddr.
    pub new_vaddr: u64,
    /// New size.
    pub new_size: u64,
}

/// What placement adds to a plan.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(super) struct Placement {
    /// Same-size edits of the original bytes (headers, descriptors, literals).
    pub patches: Vec<Patch>,
    /// The bytes appended after the original end, in an allocation with
    /// room for the original bytes too (its capacity is at least the
    /// output's size), so that the whole output can be built in it without
    /// a second copy of the tail.
    pub tail: Vec<u8>,
    pub moved: Vec<MovedFunction>,
    /// The sites replaced by their emitters, in the order of `place`'s
    /// `sites`.
    pub sites: Vec<PlacedSite>,
    /// Clauses in moved code replaced by `s_nop 0`.
    pub clauses_removed: usize,
    pub islands: Vec<BranchIsland>,
    /// The fixed sites in moved functions, where their copies are.
    pub relocated: Vec<super::Relocated>,
    /// The kernels whose register counts were raised for scratch registers.
    pub raised: Vec<crate::liveness::scratch::CountRaise>,
    /// With partial output allowed: the sites (index in `place`'s `sites`)
    /// whose emitter refused, with the reason; left as they are.
    pub refused: Vec<(usize, String)>,
    /// The old entries made jumps to the images, in address order (their
    /// patches are in `patches`, and replace any other patch of their
    /// bytes).
    pub gateways: Vec<Gateway>,
    /// The dynamic relocations re-aimed at images (their addend patches
    /// are in `patches`).
    pub relocations: Vec<ReaimedRelocation>,
}

/// Where the replacement of one emitted site went: a [`GrownSite`] without the
/// site, which the caller owns (`site` is its index in `place`'s `sites`),
/// so that the report's sites are moved there rather than copied.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct PlacedSite {
    pub site: usize,
    pub new_vaddr: u64,
    pub new_len: u32,
    pub fix: &'static str,
    pub scratch: Vec<super::emit::Taken>,
    pub note: Option<&'static str>,
}

/// Why growth was refused: becomes [`RewriteError::Growth`].
pub(super) fn refuse(what: String) -> RewriteError {
    RewriteError::Growth(what)
}

pub(super) fn w32(b: &[u8]) -> u32 {
    u32::from_le_bytes([b[0], b[1], b[2], b[3]])
}

/// Plans the growth of the input: `fixes` are its same-size patches (sorted
/// by offset; copied code gets them too), `sites` the growth sites (all of
/// them, in address order), `fixed` the sites those patches fix (the report
/// says where each one in a moved function went), `analysis` the input's
/// analysis (dropped before the output is allocated), `walked` the
/// boundaries it recorded of the functions that may move; `partial`: a site
/// whose emitter refuses is left as it is (listed in [`Placement::refused`])
/// instead of refusing the object.
///
/// The stages, in order; each owns one concern and hands the next what it
/// needs (a refusal of any stage refuses the object; the order of the
/// stages is the order in which refusals are found). Everything that needs
/// the analysis (or the liveness a far gateway asks for) runs before the
/// encoder allocates the output, so that neither is held beside it:
pub(super) fn place(
    object: &CodeObject<'_>,
    fixes: &[Patch],
    analysis: Analysis,
    sites: &[SiteInfo],
    fixed: &[SiteInfo],
    walked: Walked,
    partial: bool,
) -> Result<Placement, RewriteError> {
    let bytes = object.bytes();
    // 0. Preconditions: a loadable object whose tables the writer can
    //    replace (before any work that grows with the object).
    if object.sections().is_empty() || object.segments().is_empty() {
        return Err(refuse(
            "no section or program headers: not a loadable code object".into(),
        ));
    }
    elf_write::check_tables(bytes, object.sections())?;
    // 1. Plan: the functions that move (each holding a site), walked.
    let mut moving = select::moving_functions(object, &analysis, sites, walked)?;
    //    The register liveness, when a site's emitter may ask for scratch.
    let liveness = scratch::analyse(object, &analysis, sites);
    // 2. Per moved function, in address order:
    //    (function, instruction, index in `sites`) of each replaced site.
    let mut grown: Vec<(u32, u32, usize)> = Vec::with_capacity(sites.len());
    let mut extras = emit::Extras::default();
    for (fi, m) in moving.iter_mut().enumerate() {
        // a. analysis: its address computations, the VGPR-MSB modes;
        let modes = analyse::analyse(bytes, m)?;
        // b. the emitters: each site's replacement;
        emit::emit_sites(
            bytes,
            m,
            fi,
            modes.as_deref(),
            liveness.as_ref(),
            sites,
            &mut grown,
            &mut extras,
            partial,
        )?;
        // c. its own layout: shifts past the growth, branch islands.
        layout::function(bytes, m)?;
    }
    //    The register counts the scratch registers need (same-size
    //    patches of the descriptors and the metadata note).
    let raised = scratch::merge(std::mem::take(&mut extras.raises));
    let mut count_patches = match &liveness {
        Some(l) => scratch::count_patches(bytes, fixes, l, &raised)?,
        None => Vec::new(),
    };
    drop(liveness);
    // 3. Layout: the new segment's place, each image's address.
    let region = layout::region(object, &mut moving)?;
    //    Where each site went, known now: the emitters' lists become the
    //    report's before the output's allocation is made (peak memory).
    let placed_sites = report::sites(&moving, grown, std::mem::take(&mut extras.sites));
    // 4. Patch: unmoved code, kernel descriptors and dynamic relocations
    //    enter the images (their addresses are known).
    let mut patches: Vec<Patch> = Vec::new();
    patch::unmoved_code(object, &analysis, &moving, &mut patches)?;
    patch::descriptors(object, &analysis, &moving, &mut patches)?;
    let relocations = patch::relocations(object, &moving, &mut patches)?;
    //    Gateways: each old entry jumps to its image.
    let gateways = gateway::gateways(object, &analysis, &moving, &mut patches)?;
    patches.append(&mut count_patches);
    drop(analysis);
    // 5. Encode: the images, in an allocation with room for the tables.
    let room = elf_write::table_room(object, &moving);
    let images = encode::images(object, fixes, &moving, &region, room)?;
    // 6. ELF writer: the tables after the code, the header pointing at them.
    let written = elf_write::tables(object, &moving, &region, images.code)?;
    patches.extend(written.header);
    // 7. Report: where each fixed site in moved code went, the islands.
    let relocated = report::relocated(&moving, fixed)?;
    let placement = Placement {
        patches,
        sites: placed_sites,
        clauses_removed: images.clauses_removed,
        islands: report::islands(&moving),
        relocated,
        raised,
        refused: extras.refused,
        gateways,
        relocations,
        moved: written.moved,
        tail: written.tail,
    };
    // The estimate held: the output fits in the tail's allocation.
    debug_assert!(placement.tail.capacity() - placement.tail.len() >= bytes.len());
    Ok(placement)
}

/// The moved-function map of a rewritten object (its marker), or `None` when
/// the object carries no (well-formed) marker.
pub fn moved_functions(code_object: &[u8]) -> Option<Vec<MovedRange>> {
    moved_functions_of(&CodeObject::parse(code_object).ok()?)
}

/// [`moved_functions`] of an object already parsed.
pub fn moved_functions_of(object: &CodeObject<'_>) -> Option<Vec<MovedRange>> {
    let section = object.section_by_name(MARKER_SECTION.as_bytes())?;
    let area = section.data(object.bytes())?;
    for note in elf::notes(area) {
        let note = note.ok()?;
        if note.name != MARKER_OWNER || note.note_type != NT_HOTSWAP_MOVED {
            continue;
        }
        let d = note.desc;
        if elf::u32_at(d, 0)? != 1 {
            return None;
        }
        let count = elf::u32_at(d, 4)? as usize;
        if d.len() != 8 + count.checked_mul(32)? {
            return None;
        }
        return Some(
            d[8..]
                .chunks_exact(32)
                .map(|e| MovedRange {
                    original_vaddr: elf::u64_at(e, 0).unwrap_or(0),
                    original_size: elf::u64_at(e, 8).unwrap_or(0),
                    new_vaddr: elf::u64_at(e, 16).unwrap_or(0),
                    new_size: elf::u64_at(e, 24).unwrap_or(0),
                })
                .collect(),
        );
    }
    None
}
