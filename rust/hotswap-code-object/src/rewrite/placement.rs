//! Code growth by moving whole functions: every function that holds a DS
//! two-address site is copied, with each such site split ([`super::ds2`]),
//! into a new executable region appended to the object, and every entry into
//! it is redirected. No original byte moves: data keeps its addresses, the
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
//! `s_swap_pc_i64` must follow such a computation; `s_add_pc_i64` and
//! `s_rfe_i64` refuse. In all code, a computation or a branch that targets a
//! moved function is re-targeted to its image (a same-size literal or
//! immediate edit), any other `s_get_pc_i64` refuses the object (a PC value
//! the rewriter cannot follow), and each kernel descriptor whose entry lies in
//! a moved function gets its `kernel_code_entry_byte_offset` redirected. A
//! relocation whose target lies in a moved function refuses.
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

use std::sync::Arc;

use super::islands;
use super::layout;
use super::vgpr_mode::{self, Flow, Mode};
use super::{ds2, Patch, RewriteError, SiteInfo};
use crate::elf::{self, AddressMap};
use crate::gfx1250::{self, Analysis, FunctionKind};
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

const PAGE: u64 = 0x1000;
const FUNCTION_ALIGN: u64 = 256;
/// `s_code_end` after the last moved function (instruction prefetch).
const PREFETCH_TAIL: usize = 2048;
const S_CODE_END: [u8; 4] = [0x00, 0x00, 0x9f, 0xbf];
const S_NOP_0: [u8; 4] = [0x00, 0x00, 0x80, 0xbf];

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
    /// `ds2-split` or `ds2-split-swapped`.
    pub fix: &'static str,
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
    /// The DS2 sites fixed, in the order of `place`'s `sites`.
    pub sites: Vec<PlacedSite>,
    /// Clauses in moved code replaced by `s_nop 0`.
    pub clauses_removed: usize,
    pub islands: Vec<BranchIsland>,
}

/// Where the replacement of one DS2 site went: a [`GrownSite`] without the
/// site, which the caller owns (`site` is its index in `place`'s `sites`),
/// so that the report's sites are moved there rather than copied.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct PlacedSite {
    pub site: usize,
    pub new_vaddr: u64,
    pub new_len: u32,
    pub fix: &'static str,
}

/// Why growth was refused: becomes [`RewriteError::Growth`].
fn refuse(what: String) -> RewriteError {
    RewriteError::Growth(what)
}

fn w32(b: &[u8]) -> u32 {
    u32::from_le_bytes([b[0], b[1], b[2], b[3]])
}

/// One instruction of a walked function.
#[derive(Clone, Copy, Debug)]
struct Insn {
    vaddr: u64,
    /// Offset in the object.
    at: usize,
    len: usize,
}

/// Instructions per block of [`Insns`]: a block spans at most 32 of the
/// longest encodings (5 dwords), so an offset from its base fits in a u8.
const BLOCK: usize = 32;

/// The instructions of one walked function, a little over a byte each: the
/// offset of each from the function's start, then the end of the last, kept
/// as a u32 base per [`BLOCK`] offsets and, per offset, its distance from
/// its block's base in dwords (every gfx1250 encoding is 1 to 5 dwords). A
/// moved function's instruction lists are held together until its image is
/// written, at the rewrite's peak memory, so their element size matters.
#[derive(Debug, Default)]
struct Insns {
    vaddr: u64,
    /// The function's offset in the object.
    at: usize,
    /// The byte offset of every [`BLOCK`]-th offset.
    bases: Vec<u32>,
    /// Each offset's distance from its block's base, in dwords.
    rel: Vec<u8>,
}

impl Insns {
    fn len(&self) -> usize {
        self.rel.len().saturating_sub(1)
    }

    /// Appends the next offset (at or after the last one); false when it
    /// is not a whole number of dwords past its block's base or too far.
    fn push(&mut self, off: u32) -> bool {
        let i = self.rel.len();
        if i % BLOCK == 0 {
            self.bases.push(off);
        }
        let d = off.wrapping_sub(self.bases[i / BLOCK]);
        match u8::try_from(d / 4) {
            Ok(r) if d % 4 == 0 => {
                self.rel.push(r);
                true
            }
            _ => false,
        }
    }

    /// Offset `i` (`i <= len()`).
    #[inline]
    fn offset(&self, i: usize) -> u32 {
        self.bases[i / BLOCK] + 4 * u32::from(self.rel[i])
    }

    #[inline]
    fn get(&self, i: usize) -> Option<Insn> {
        if i >= self.len() {
            return None;
        }
        let (start, end) = (self.offset(i), self.offset(i + 1));
        Some(Insn {
            vaddr: self.vaddr + u64::from(start),
            at: self.at + start as usize,
            len: (end - start) as usize,
        })
    }

    /// Instruction `i` (`i < len()`).
    #[inline]
    fn at(&self, i: usize) -> Insn {
        self.get(i).expect("an instruction index")
    }

    /// The instructions in order (each offset read once).
    fn iter(&self) -> impl Iterator<Item = Insn> + '_ {
        let mut start = if self.rel.is_empty() {
            0
        } else {
            self.offset(0)
        };
        (1..=self.len()).map(move |i| {
            let end = self.offset(i);
            let insn = Insn {
                vaddr: self.vaddr + u64::from(start),
                at: self.at + start as usize,
                len: (end - start) as usize,
            };
            start = end;
            insn
        })
    }

    /// The block holding offset `off` and the range of its instruction
    /// indices (the end offset excluded).
    fn block_of(&self, off: u32) -> (usize, std::ops::Range<usize>) {
        let b = self.bases.partition_point(|&base| base <= off).max(1) - 1;
        let first = b * BLOCK;
        (b, first..(first + BLOCK).min(self.len()).max(first))
    }

    /// The index of the instruction at `vaddr` (`Err`: none starts there).
    fn index_of_vaddr(&self, vaddr: u64) -> Result<usize, usize> {
        let Some(off) = vaddr
            .checked_sub(self.vaddr)
            .and_then(|o| u32::try_from(o).ok())
        else {
            return Err(0);
        };
        if self.len() == 0 {
            return Err(0);
        }
        let (b, range) = self.block_of(off);
        let d = off - self.bases[b];
        let r = u8::try_from(d / 4).map_err(|_| range.end)?;
        if d % 4 != 0 {
            return Err(range.start);
        }
        let first = range.start;
        self.rel[range]
            .binary_search(&r)
            .map(|k| first + k)
            .map_err(|k| first + k)
    }

    /// The index of the instruction holding object offset `at` (which must
    /// lie in the function).
    fn index_holding(&self, at: usize) -> usize {
        let off = (at - self.at) as u32;
        let (b, range) = self.block_of(off);
        let d = off - self.bases[b];
        let first = range.start;
        first + self.rel[range].partition_point(|&r| 4 * u32::from(r) <= d) - 1
    }
}

/// The instructions that start in `[vaddr, vaddr + size)`.
fn walk(
    bytes: &[u8],
    map: &AddressMap,
    name: &str,
    vaddr: u64,
    size: u64,
) -> Result<Insns, RewriteError> {
    let start = map
        .file_offset(vaddr)
        .ok_or_else(|| refuse(format!("function {name} is not mapped")))? as usize;
    let code = map
        .tail(bytes, vaddr)
        .ok_or_else(|| refuse(format!("function {name} is not mapped")))?;
    // Offsets past `size` by at most one instruction fit in the u32s.
    if size > u64::from(u32::MAX) - 64 {
        return Err(refuse(format!("function {name}: 4 GiB or larger")));
    }
    let mut insns = Insns {
        vaddr,
        at: start,
        ..Insns::default()
    };
    let unexpected = || {
        refuse(format!(
            "function {name}: an encoding of an unexpected size"
        ))
    };
    let mut off = 0u64;
    for insn in gfx1250::instructions(code, vaddr) {
        if off >= size {
            break;
        }
        let insn = insn
            .map_err(|(at, _)| refuse(format!("function {name}: undecodable at vaddr {at:#x}")))?;
        if !insns.push(off as u32) {
            return Err(unexpected());
        }
        off += insn.bytes.len() as u64;
    }
    if off < size && !insns.rel.is_empty() {
        return Err(refuse(format!("function {name}: walk ended early")));
    }
    if !insns.rel.is_empty() && !insns.push(off as u32) {
        return Err(unexpected());
    }
    insns.bases.shrink_to_fit();
    insns.rel.shrink_to_fit();
    Ok(insns)
}

fn sop1_op(w0: u32) -> Option<u32> {
    (w0 >> 23 == 0x17D).then_some((w0 >> 8) & 0xff)
}

fn sop2(w0: u32) -> Option<(u32, u32, u32, u32)> {
    // (op, sdst, ssrc0, ssrc1); SOP2 excludes the SOPK/SOP1/SOPC/SOPP rows.
    if w0 >> 30 != 0b10 || w0 >> 28 == 0xB || (w0 >> 23) >= 0x17D {
        return None;
    }
    Some((
        (w0 >> 23) & 0x7f,
        (w0 >> 16) & 0x7f,
        w0 & 0xff,
        (w0 >> 8) & 0xff,
    ))
}

const OP_GET_PC: u32 = 0x47;
const OP_SET_PC: u32 = 0x48;
const OP_SWAP_PC: u32 = 0x49;
const OP_RFE: u32 = 0x4a;
const OP_ADD_PC: u32 = 0x4b;

/// Where a recognised address computation's literal(s) are.
#[derive(Clone, Copy, Debug)]
enum Literal {
    /// An 8-byte literal at this object offset.
    Lit64(usize),
    /// Two 4-byte literals (low, high) at these object offsets.
    Pair(usize, usize),
}

/// A recognised `s_get_pc_i64` address computation.
#[derive(Clone, Copy, Debug)]
struct PcComputation {
    /// Index of the `s_get_pc_i64`.
    index: usize,
    /// Index of its last instruction.
    last: usize,
    /// The register pair (first SGPR).
    reg: u32,
    /// The address it computes.
    target: u64,
    literal: Literal,
}

/// The address computations of one function, and whether every PC read is
/// one of them.
fn pc_computations(
    bytes: &[u8],
    insns: &Insns,
    name: &str,
) -> Result<Vec<PcComputation>, RewriteError> {
    let mut out = Vec::new();
    for (i, insn) in insns.iter().enumerate() {
        let w0 = w32(&bytes[insn.at..]);
        if sop1_op(w0) != Some(OP_GET_PC) {
            continue;
        }
        let reg = (w0 >> 16) & 0x7f;
        let pc = insn.vaddr.wrapping_add(4);
        let unknown = || {
            refuse(format!(
                "{name}: s_get_pc_i64 at vaddr {:#x} is not followed by a recognised address \
                 computation (the PC value would escape)",
                insn.vaddr
            ))
        };
        let next = insns.get(i + 1).ok_or_else(unknown)?;
        let n0 = w32(&bytes[next.at..]);
        let (op, sdst, s0, s1) = sop2(n0).ok_or_else(unknown)?;
        let uses = |a: u32, b: u32, r: u32, lit: u32| (a == r && b == lit) || (a == lit && b == r);
        if op == 0x53 && sdst == reg && uses(s0, s1, reg, 0xfe) && next.len == 12 {
            let off = u64::from_le_bytes(bytes[next.at + 4..next.at + 12].try_into().unwrap());
            out.push(PcComputation {
                index: i,
                last: i + 1,
                reg,
                target: pc.wrapping_add(off),
                literal: Literal::Lit64(next.at + 4),
            });
            continue;
        }
        if op == 0x00 && sdst == reg && uses(s0, s1, reg, 0xff) && next.len == 8 {
            let hi = insns.get(i + 2).ok_or_else(unknown)?;
            let (op2, d2, t0, t1) = sop2(w32(&bytes[hi.at..])).ok_or_else(unknown)?;
            if op2 == 0x04 && d2 == reg + 1 && uses(t0, t1, reg + 1, 0xff) && hi.len == 8 {
                let lo = u64::from(w32(&bytes[next.at + 4..]));
                let hv = u64::from(w32(&bytes[hi.at + 4..]));
                out.push(PcComputation {
                    index: i,
                    last: i + 2,
                    reg,
                    target: pc.wrapping_add(lo | hv << 32),
                    literal: Literal::Pair(next.at + 4, hi.at + 4),
                });
                continue;
            }
        }
        return Err(unknown());
    }
    Ok(out)
}

/// Writes the offset `value` into a computation's literal(s) in `out` at
/// `base`-relative positions.
fn write_literal(out: &mut [u8], literal: Literal, shift: usize, value: u64) {
    match literal {
        Literal::Lit64(at) => out[at - shift..at - shift + 8].copy_from_slice(&value.to_le_bytes()),
        Literal::Pair(lo, hi) => {
            out[lo - shift..lo - shift + 4].copy_from_slice(&(value as u32).to_le_bytes());
            out[hi - shift..hi - shift + 4].copy_from_slice(&((value >> 32) as u32).to_le_bytes());
        }
    }
}

/// The replacement of each split instruction, by instruction index (sparse:
/// a function holds far fewer sites than instructions, so nothing here grows
/// with the function's instruction count).
#[derive(Default)]
struct Splits {
    /// (instruction index, start in `bytes`, length, swapped), by index.
    items: Vec<(u32, usize, u32, bool)>,
    /// The replacements, one after another (one allocation per function,
    /// not one per site).
    bytes: Vec<u8>,
}

impl Splits {
    fn insert(&mut self, index: usize, split: (Vec<u8>, bool)) {
        let index = index as u32;
        let item = (index, self.bytes.len(), split.0.len() as u32, split.1);
        self.bytes.extend_from_slice(&split.0);
        let at = self.items.partition_point(|x| x.0 < index);
        if self.items.get(at).is_some_and(|x| x.0 == index) {
            self.items[at] = item;
        } else {
            self.items.insert(at, item);
        }
    }

    fn get(&self, index: usize) -> Option<(&[u8], bool)> {
        let index = u32::try_from(index).ok()?;
        let at = self.items.binary_search_by_key(&index, |x| x.0).ok()?;
        let (_, start, len, swapped) = self.items[at];
        Some((&self.bytes[start..start + len as usize], swapped))
    }

    /// Gives back the room left by growing (they are held to the end).
    fn shrink_to_fit(&mut self) {
        self.items.shrink_to_fit();
        self.bytes.shrink_to_fit();
    }

    /// (instruction index, replacement), by index.
    fn iter(&self) -> impl Iterator<Item = (usize, &[u8])> + '_ {
        self.items
            .iter()
            .map(|&(i, start, len, _)| (i as usize, &self.bytes[start..start + len as usize]))
    }

    /// (instruction index, replacement length), by index.
    fn lens(&self) -> impl Iterator<Item = (u32, u64)> + '_ {
        self.items.iter().map(|x| (x.0, u64::from(x.2)))
    }

    fn contains_key(&self, index: usize) -> bool {
        self.get(index).is_some()
    }
}

/// How far each instruction of a moved function moves within its image
/// beyond its original offset: the growth of every split before it and of
/// every island at or before it (sparse, like [`Splits`]).
#[derive(Debug, Default)]
struct Shifts {
    /// (the first instruction index a step applies to, the total growth from
    /// there on), by index.
    steps: Vec<(u32, u64)>,
}

impl Shifts {
    /// From (first index affected, growth) pairs in any order.
    fn new(mut adds: Vec<(u32, u64)>) -> Self {
        adds.sort_by_key(|a| a.0);
        let mut steps: Vec<(u32, u64)> = Vec::with_capacity(adds.len());
        let mut total = 0u64;
        for (i, d) in adds {
            total += d;
            match steps.last_mut() {
                Some(last) if last.0 == i => last.1 = total,
                _ => steps.push((i, total)),
            }
        }
        Shifts { steps }
    }

    fn at(&self, i: usize) -> u64 {
        let k = self.steps.partition_point(|s| s.0 as usize <= i);
        k.checked_sub(1).map_or(0, |k| self.steps[k].1)
    }
}

/// A moved function during placement.
struct Moving {
    name: Arc<str>,
    kernel_only: bool,
    vaddr: u64,
    size: u64,
    insns: Insns,
    /// How far each instruction moves within the image.
    shifts: Shifts,
    /// The replacement of each DS2 instruction (by index).
    splits: Splits,
    pcs: Vec<PcComputation>,
    /// Branch islands inserted in the image (usually none).
    islands: PlacedIslands,
    image_len: u64,
    new_vaddr: u64,
}

impl Moving {
    /// The image offset of instruction `i` (`i == len`: the image's end).
    fn new_off(&self, i: usize) -> u64 {
        u64::from(self.insns.offset(i)) + self.shifts.at(i)
    }

    /// The image address of `target` when it lies in this function.
    fn map(&self, target: u64) -> Option<Result<u64, ()>> {
        if target < self.vaddr || target - self.vaddr >= self.size {
            return None;
        }
        Some(
            self.insns
                .index_of_vaddr(target)
                .map(|i| self.new_vaddr + self.new_off(i))
                .map_err(|_| ()),
        )
    }
}

/// The image of `target` if it lies in a moved function (`Err` when it is
/// not an instruction boundary there).
fn map_target(moving: &[Moving], target: u64) -> Option<Result<u64, ()>> {
    let i = moving
        .partition_point(|m| m.vaddr <= target)
        .checked_sub(1)?;
    moving[i].map(target)
}

/// A branch immediate from `from` (the branch's address) to `to`.
fn branch_imm(from: u64, to: u64) -> Option<u16> {
    let delta = (to as i64).wrapping_sub(from as i64 + 4);
    if delta % 4 != 0 {
        return None;
    }
    i16::try_from(delta / 4).ok().map(|v| v as u16)
}

/// `v` rounded up to a multiple of `a`; `None` past `u64::MAX`.
fn align(v: u64, a: u64) -> Option<u64> {
    v.div_ceil(a).checked_mul(a)
}

/// The branch islands of one moved function, at their image offsets.
#[derive(Debug, Default)]
struct PlacedIslands {
    /// (the instruction each island precedes, its first entry's image
    /// offset, each entry's destination instruction), by instruction.
    points: Vec<(usize, u64, Vec<usize>)>,
    /// (branch instruction, the image offset of the entry it goes through).
    via: Vec<(usize, u64)>,
}

impl PlacedIslands {
    fn via(&self, branch: usize) -> Option<u64> {
        let j = self.via.binary_search_by_key(&branch, |v| v.0).ok()?;
        Some(self.via[j].1)
    }
}

/// Gives `m` the branch islands its own branches need once its splits have
/// grown it ([`islands`]), and moves its instructions past them.
fn place_islands(bytes: &[u8], m: &mut Moving) -> Result<(), RewriteError> {
    let n = m.insns.len();
    let mut branches = Vec::new();
    for (i, insn) in m.insns.iter().enumerate() {
        if let Flow::Jump(t) | Flow::Branch(t) = vgpr_mode::flow(insn.vaddr, w32(&bytes[insn.at..]))
        {
            if t >= m.vaddr && t - m.vaddr < m.size {
                if let Ok(d) = m.insns.index_of_vaddr(t) {
                    branches.push((i, d));
                }
            }
        }
    }
    // After an instruction with no fall-through successor, and in no
    // `s_clause` window (a clause holds at most 64 instructions).
    let barrier = |k: usize| {
        let insn = m.insns.at(k - 1);
        let stops = matches!(
            vgpr_mode::flow(insn.vaddr, w32(&bytes[insn.at..])),
            Flow::Jump(_) | Flow::Stop
        );
        stops
            && (k.saturating_sub(64)..k).all(|j| {
                let w0 = w32(&bytes[m.insns.at(j).at..]);
                w0 >> 16 != 0xBF85 || j + (w0 & 0x3f) as usize + 1 < k
            })
    };
    let planned = islands::plan(n, |i| m.new_off(i), &branches, barrier).map_err(|(b, why)| {
        let insn = m.insns.at(b);
        refuse(format!(
            "{} at vaddr {:#x}: the branch is out of s_branch reach in the moved copy and {why}",
            m.name, insn.vaddr
        ))
    })?;
    if planned.points.is_empty() {
        return Ok(());
    }
    let mut adds = split_growth(m);
    adds.extend(
        planned
            .points
            .iter()
            .map(|(k, dests)| (*k as u32, 4 * dests.len() as u64)),
    );
    m.shifts = Shifts::new(adds);
    m.image_len = m.new_off(n);
    if m.image_len > u64::from(u32::MAX) {
        return Err(refuse(format!(
            "{}: its image would be 4 GiB or larger",
            m.name
        )));
    }
    // An island's entries end where the instruction it precedes starts.
    let first = |k: usize, entries: usize| m.new_off(k) - 4 * entries as u64;
    m.islands = PlacedIslands {
        points: planned
            .points
            .iter()
            .map(|(k, dests)| (*k, first(*k, dests.len()), dests.clone()))
            .collect(),
        via: planned
            .via
            .iter()
            .map(|&(b, p, e)| {
                let (k, dests) = &planned.points[p];
                (b, first(*k, dests.len()) + 4 * e as u64)
            })
            .collect(),
    };
    Ok(())
}

/// The growth of each split of `m`: (the index after it, replacement length
/// minus the original's).
fn split_growth(m: &Moving) -> Vec<(u32, u64)> {
    m.splits
        .lens()
        .map(|(i, new_len)| {
            let len = m.insns.at(i as usize).len;
            (i + 1, new_len.saturating_sub(len as u64))
        })
        .collect()
}

/// Writes the island entries that precede instruction `i` of `m` (`i ==
/// len`: the end), at `vaddr`; `next` is the next island to write.
fn emit_islands(
    region: &mut Vec<u8>,
    m: &Moving,
    next: &mut usize,
    i: usize,
    vaddr: u64,
) -> Result<(), RewriteError> {
    let Some((k, first, dests)) = m.islands.points.get(*next) else {
        return Ok(());
    };
    if *k != i {
        return Ok(());
    }
    *next += 1;
    let mut at = m.new_vaddr + first;
    debug_assert_eq!(at, vaddr - 4 * dests.len() as u64);
    for &d in dests {
        let to = m.new_vaddr + m.new_off(d);
        let imm = branch_imm(at, to).ok_or_else(|| {
            refuse(format!(
                "{}: a branch island at {at:#x} cannot reach {to:#x}",
                m.name
            ))
        })?;
        region.extend_from_slice(&imm.to_le_bytes());
        region.extend_from_slice(&[0xa0, 0xbf]); // s_branch
        at += 4;
    }
    Ok(())
}

/// Plans the growth of `bytes` (the input): `fixes` are its same-size patches
/// (sorted by offset; copied code gets them too), `sites` the DS2 sites (all
/// of them, in address order), `analysis` the input's analysis.
pub(super) fn place(
    object: &CodeObject<'_>,
    fixes: &[Patch],
    analysis: &Analysis,
    sites: &[SiteInfo],
) -> Result<Placement, RewriteError> {
    let bytes = object.bytes();
    let map = object.address_map();
    let sections = object.sections();
    if sections.is_empty() || object.segments().is_empty() {
        return Err(refuse(
            "no section or program headers: not a loadable code object".into(),
        ));
    }
    check_tables(bytes, sections)?;

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
        let insns = walk(bytes, map, &f.name, f.vaddr, f.size)?;
        moving.push(Moving {
            name: Arc::from(f.name.as_str()),
            kernel_only: f.kind == FunctionKind::KernelEntry,
            vaddr: f.vaddr,
            size: f.size,
            insns,
            shifts: Shifts::default(),
            splits: Splits::default(),
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
    let is_kernel = |m: &Moving| m.kernel_only || entries.binary_search(&m.vaddr).is_ok();

    // Pass 1: the splits, the layout of each image.
    // (function, instruction, index in `sites`), in the order of `sites`
    // (the moved functions are disjoint and in address order).
    let mut grown: Vec<(u32, u32, usize)> = Vec::with_capacity(sites.len());
    for (fi, m) in moving.iter_mut().enumerate() {
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
        let first = sites.partition_point(|s| s.vaddr < m.vaddr);
        for (k, s) in sites[first..]
            .iter()
            .take_while(|s| s.vaddr - m.vaddr < m.size)
            .enumerate()
        {
            let Ok(idx) = m.insns.index_of_vaddr(s.vaddr) else {
                return Err(refuse(format!("{s}: not an instruction boundary")));
            };
            let mode = match modes.as_ref().map(|v| v[idx]) {
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
        m.shifts = Shifts::new(split_growth(m));
        m.image_len = m.new_off(m.insns.len());
        if m.image_len > u64::from(u32::MAX) {
            return Err(refuse(format!(
                "{}: its image would be 4 GiB or larger",
                m.name
            )));
        }
        place_islands(bytes, m)?;
    }

    // Where the region goes.
    let segments = object.segments();
    // A loadable segment mapping more file bytes than its memory size is
    // malformed (the ELF rule is p_filesz <= p_memsz): the address map reads its
    // file bytes past the memory end, where the new segment would start, so the
    // moved code could not be found where it was put.
    if let Some(s) = segments
        .iter()
        .find(|s| s.p_type == elf::PT_LOAD && s.filesz > s.memsz)
    {
        return Err(refuse(format!(
            "the loadable segment at {:#x} has a file size ({:#x}) larger than its memory \
             size ({:#x}): malformed program header",
            s.vaddr, s.filesz, s.memsz
        )));
    }
    let vend = segments
        .iter()
        .filter(|s| s.p_type == elf::PT_LOAD)
        .map(|s| s.vaddr.saturating_add(s.memsz))
        .chain(
            sections
                .iter()
                .filter(|s| s.flags & elf::SHF_ALLOC != 0)
                .map(|s| s.addr.saturating_add(s.size)),
        )
        .max()
        .unwrap_or(0);
    // Input values: every sum is checked, so a header near the end of the
    // address space refuses the object instead of wrapping.
    let region_vaddr = align(vend, PAGE)
        .ok_or_else(|| refuse("a segment ends beyond the address space".into()))?;
    let region_off = align(bytes.len() as u64, PAGE)
        .ok_or_else(|| refuse("the object's size leaves no room for a new segment".into()))?;
    let mut cursor = 0u64;
    for m in &mut moving {
        cursor = align(cursor, FUNCTION_ALIGN)
            .ok_or_else(|| refuse("the moved code exceeds the address space".into()))?;
        m.new_vaddr = region_vaddr
            .checked_add(cursor)
            .ok_or_else(|| refuse("the moved code exceeds the address space".into()))?;
        cursor = cursor
            .checked_add(m.image_len)
            .ok_or_else(|| refuse("the moved code exceeds the address space".into()))?;
    }
    // The region's end must be an address too, one a loader can place.
    region_vaddr
        .checked_add(cursor)
        .and_then(|end| end.checked_add((PREFETCH_TAIL + 2 * PAGE as usize) as u64))
        .filter(|&end| end <= layout::ADDRESS_LIMIT)
        .ok_or_else(|| refuse("the moved code exceeds the GPU address space".into()))?;
    let code_len = align(cursor, 4)
        .ok_or_else(|| refuse("the moved code exceeds the address space".into()))?
        as usize
        + PREFETCH_TAIL;

    // Pass 2: the images.
    // The tail starts with the zero padding up to the region's page; the
    // region is written straight into it (no second copy).
    let pad = (region_off - bytes.len() as u64) as usize;
    // Room for the new tables too, so that the tail is never reallocated
    // (a reallocation would hold a large tail twice): the three sections
    // copied (the names, `.symtab` and its strings, which `check_tables`
    // found), each at most the object's size since it lies in it (their sum
    // is not: they may overlap, and each is copied whole).
    let table_bytes = {
        let count = |at: usize| usize::from(elf::u16_at(bytes, at).unwrap_or(0));
        let symtab = sections.iter().find(|s| s.sh_type == elf::SHT_SYMTAB);
        let copied: usize = [
            sections.get(count(62)),
            symtab,
            symtab.and_then(|st| sections.get(st.link as usize)),
        ]
        .into_iter()
        .flatten()
        .map(|s| s.data(bytes).map_or(0, <[u8]>::len))
        .sum();
        let per_moved: usize = moving
            .iter()
            .map(|m| m.name.len() + SYMBOL_SUFFIX.len() + 1 + 24 + 32)
            .sum();
        (count(56) + 1) * 56 + (count(60) + 2) * 64 + copied + per_moved + 256
    };
    // And room for the input before all of it: the output of
    // `rewrite_b0_to_a0` is built in this allocation ([`Placement::tail`]).
    let mut region: Vec<u8> = Vec::with_capacity(bytes.len() + pad + code_len + table_bytes);
    region.resize(pad, 0);
    for fi in 0..moving.len() {
        let m = &moving[fi];
        let start = pad + (m.new_vaddr - region_vaddr) as usize;
        while region.len() < start {
            region.extend_from_slice(&S_CODE_END);
        }
        let kernel = is_kernel(m);
        // Computations are in instruction order: found by their last index.
        let pc_last = |j: usize| {
            m.pcs
                .binary_search_by_key(&j, |p| p.last)
                .ok()
                .map(|k| &m.pcs[k])
        };
        let image_start = region.len();
        let mut island = 0usize;
        // The splits in index order, met as the instructions are.
        let mut splits = m.splits.iter().peekable();
        for (i, insn) in m.insns.iter().enumerate() {
            let new_vaddr = m.new_vaddr + m.new_off(i);
            emit_islands(&mut region, m, &mut island, i, new_vaddr)?;
            if let Some((_, split)) = splits.next_if(|s| s.0 == i) {
                region.extend_from_slice(split);
                continue;
            }
            let here = region.len();
            region.extend_from_slice(&bytes[insn.at..insn.at + insn.len]);
            // The same-size fixes of this instruction (patches are sorted).
            let first = fixes.partition_point(|p| p.file_offset < insn.at as u64);
            for p in fixes[first..]
                .iter()
                .take_while(|p| p.file_offset < (insn.at + insn.len) as u64)
            {
                let o = here + (p.file_offset as usize - insn.at);
                let n = p.bytes.len().min(region.len() - o);
                region[o..o + n].copy_from_slice(&p.bytes[..n]);
            }
            let w0 = w32(&bytes[insn.at..]);
            let at = |what: &str| format!("{} at vaddr {:#x}: {what}", m.name, insn.vaddr);
            // Branches.
            match vgpr_mode::flow(insn.vaddr, w0) {
                Flow::Jump(t) | Flow::Branch(t) => {
                    let to = match map_target(&moving, t) {
                        Some(Ok(v)) => v,
                        Some(Err(())) => {
                            return Err(refuse(at("a branch into the middle of an instruction")))
                        }
                        None => t,
                    };
                    let to = m.islands.via(i).map_or(to, |o| m.new_vaddr + o);
                    let imm = branch_imm(new_vaddr, to).ok_or_else(|| {
                        refuse(at(&format!(
                            "the branch target {t:#x} is out of s_branch reach from the moved copy"
                        )))
                    })?;
                    region[here..here + 2].copy_from_slice(&imm.to_le_bytes());
                }
                _ => {}
            }
            // s_clause whose window holds a split site.
            if w0 >> 16 == 0xBF85 {
                let n = (w0 & 0x3f) as usize + 1;
                if (i + 1..=i + n).any(|j| m.splits.contains_key(j)) {
                    region[here..here + 4].copy_from_slice(&S_NOP_0);
                }
            }
            // PC-dependent instructions (the computations' literals are
            // written once the whole image is).
            match sop1_op(w0) {
                Some(OP_SET_PC) => {
                    let reg = w0 & 0xff;
                    let after_computation = i
                        .checked_sub(1)
                        .and_then(pc_last)
                        .is_some_and(|p| p.reg == reg);
                    let is_return = reg == 30 && !kernel;
                    if !after_computation && !is_return {
                        return Err(refuse(at(
                            "s_set_pc_i64 whose target the rewriter cannot bound",
                        )));
                    }
                }
                Some(OP_SWAP_PC) => {
                    let reg = w0 & 0xff;
                    let after_computation = i
                        .checked_sub(1)
                        .and_then(pc_last)
                        .is_some_and(|p| p.reg == reg);
                    if !after_computation {
                        return Err(refuse(at(
                            "s_swap_pc_i64 whose target the rewriter cannot bound",
                        )));
                    }
                }
                Some(OP_ADD_PC) => return Err(refuse(at("s_add_pc_i64 in moved code"))),
                Some(OP_RFE) => return Err(refuse(at("s_rfe_i64 in moved code"))),
                _ => {}
            }
        }
        let end = m.new_vaddr + m.image_len;
        emit_islands(&mut region, m, &mut island, m.insns.len(), end)?;
        debug_assert_eq!((region.len() - image_start) as u64, m.image_len);
        // The literals of the computations, now that the image is written.
        for pc in &m.pcs {
            let to = match map_target(&moving, pc.target) {
                Some(Ok(v)) => v,
                Some(Err(())) => {
                    return Err(refuse(format!(
                        "{}: an address computation into the middle of an instruction",
                        m.name
                    )))
                }
                None => pc.target,
            };
            let getpc_new = m.new_vaddr + m.new_off(pc.index);
            // The literal's image position: its instruction's new offset plus
            // its offset within the instruction.
            let lit_pos = |at: usize| {
                let j = m.insns.index_holding(at);
                image_start + m.new_off(j) as usize + (at - m.insns.at(j).at)
            };
            let value = to.wrapping_sub(getpc_new + 4);
            let literal = match pc.literal {
                Literal::Lit64(a) => Literal::Lit64(lit_pos(a)),
                Literal::Pair(a, b) => Literal::Pair(lit_pos(a), lit_pos(b)),
            };
            write_literal(&mut region, literal, 0, value);
        }
    }
    while region.len() < pad + code_len {
        region.extend_from_slice(&S_CODE_END);
    }

    let mut patches: Vec<Patch> = Vec::new();
    // Unmoved code: branches and computations into moved functions.
    for f in &analysis.functions {
        let moved = moving
            .binary_search_by_key(&f.vaddr, |m| m.vaddr)
            .is_ok_and(|i| moving[i].size == f.size);
        if moved {
            continue;
        }
        let insns = walk(bytes, map, &f.name, f.vaddr, f.size)?;
        for pc in pc_computations(bytes, &insns, &f.name)? {
            if let Some(r) = map_target(&moving, pc.target) {
                let to = r.map_err(|()| {
                    refuse(format!(
                        "{}: an address computation into the middle of an instruction",
                        f.name
                    ))
                })?;
                let value = to.wrapping_sub(insns.at(pc.index).vaddr + 4);
                match pc.literal {
                    Literal::Lit64(a) => patches.push(Patch {
                        file_offset: a as u64,
                        bytes: value.to_le_bytes().to_vec(),
                    }),
                    Literal::Pair(a, b) => {
                        patches.push(Patch {
                            file_offset: a as u64,
                            bytes: (value as u32).to_le_bytes().to_vec(),
                        });
                        patches.push(Patch {
                            file_offset: b as u64,
                            bytes: ((value >> 32) as u32).to_le_bytes().to_vec(),
                        });
                    }
                }
            }
        }
        for insn in insns.iter() {
            let w0 = w32(&bytes[insn.at..]);
            if let Flow::Jump(t) | Flow::Branch(t) = vgpr_mode::flow(insn.vaddr, w0) {
                if let Some(r) = map_target(&moving, t) {
                    let to = r.map_err(|()| {
                        refuse(format!(
                            "{}: a branch into the middle of an instruction",
                            f.name
                        ))
                    })?;
                    let imm = branch_imm(insn.vaddr, to).ok_or_else(|| {
                        refuse(format!(
                            "{} at vaddr {:#x}: a branch into moved function at {t:#x} cannot reach its copy",
                            f.name, insn.vaddr
                        ))
                    })?;
                    patches.push(Patch {
                        file_offset: insn.at as u64,
                        bytes: imm.to_le_bytes().to_vec(),
                    });
                }
            }
        }
    }
    // Kernel descriptors.
    for k in &analysis.kernels {
        let Some(entry) = k.entry_vaddr else { continue };
        if let Some(r) = map_target(&moving, entry) {
            let to =
                r.map_err(|()| refuse(format!("kernel {}: entry inside an instruction", k.name)))?;
            let at = map
                .file_offset(k.descriptor_vaddr)
                .ok_or_else(|| refuse(format!("kernel {}: descriptor not mapped", k.name)))?;
            patches.push(Patch {
                file_offset: at + 16,
                bytes: to.wrapping_sub(k.descriptor_vaddr).to_le_bytes().to_vec(),
            });
        }
    }
    // Relocations that point into moved functions, or patch moved code.
    check_relocations(object, &moving)?;

    // The new tables.
    let code_size = (region.len() - pad) as u64;
    let mut tail = region;
    let abs = |tail: &Vec<u8>| bytes.len() as u64 + tail.len() as u64;
    let pad8 = |tail: &mut Vec<u8>| {
        while (bytes.len() + tail.len()) % 8 != 0 {
            tail.push(0);
        }
    };
    pad8(&mut tail);

    // Program headers.
    let phoff = elf::u64_at(bytes, 32).unwrap_or(0) as usize;
    let phnum = usize::from(elf::u16_at(bytes, 56).unwrap_or(0));
    let new_phoff = abs(&tail);
    for i in 0..phnum {
        let mut ph = bytes[phoff + i * 56..phoff + (i + 1) * 56].to_vec();
        if elf::u32_at(&ph, 0) == Some(6) {
            ph.fill(0); // PT_PHDR → PT_NULL
        }
        tail.extend_from_slice(&ph);
    }
    let mut ph = Vec::with_capacity(56);
    ph.extend_from_slice(&elf::PT_LOAD.to_le_bytes());
    ph.extend_from_slice(&5u32.to_le_bytes()); // PF_R | PF_X
    ph.extend_from_slice(&region_off.to_le_bytes());
    ph.extend_from_slice(&region_vaddr.to_le_bytes());
    ph.extend_from_slice(&region_vaddr.to_le_bytes());
    ph.extend_from_slice(&code_size.to_le_bytes());
    ph.extend_from_slice(&code_size.to_le_bytes());
    ph.extend_from_slice(&PAGE.to_le_bytes());
    tail.extend_from_slice(&ph);

    // Section names.
    let shoff = elf::u64_at(bytes, 40).unwrap_or(0) as usize;
    let shnum = usize::from(elf::u16_at(bytes, 60).unwrap_or(0));
    let shstrndx = usize::from(elf::u16_at(bytes, 62).unwrap_or(0));
    let shstr = sections
        .get(shstrndx)
        .and_then(|s| s.data(bytes))
        .ok_or_else(|| refuse("no .shstrtab".into()))?;
    let new_shstr_off = abs(&tail);
    tail.extend_from_slice(shstr);
    if shstr.last().is_some_and(|&b| b != 0) {
        tail.push(0); // the last name keeps its end
    }
    let text_name = (abs(&tail) - new_shstr_off) as u32;
    tail.extend_from_slice(TEXT_SECTION.as_bytes());
    tail.push(0);
    let marker_name = text_name + TEXT_SECTION.len() as u32 + 1;
    tail.extend_from_slice(MARKER_SECTION.as_bytes());
    tail.push(0);
    let new_shstr_size = abs(&tail) - new_shstr_off;
    pad8(&mut tail);
    let text_index = shnum as u16;

    // Symbols.
    // The table the analysis reads (the first `SHT_SYMTAB`), which
    // `check_tables` found static: a loaded section cannot move, and
    // `.dynsym` is left as it is.
    let symtab = sections.iter().find(|s| s.sh_type == elf::SHT_SYMTAB);
    if symtab.is_none() {
        // Without a symbol table the copies could not be named, and a second
        // analysis would find the moved code covered by no function.
        return Err(refuse(
            "no .symtab: the moved copies could not be named".into(),
        ));
    }
    let mut symtab_new: Option<(usize, u64, u64, u32, usize, u64, u64)> = None; // (symtab idx, off, size, info, strtab idx, off, size)
    let mut moved_out: Vec<MovedFunction> = Vec::new();
    if let Some(st) = symtab {
        if sections
            .iter()
            .any(|s| matches!(s.sh_type, 4 | 9) && s.link == u32::from(st.index))
        {
            return Err(refuse("a relocation section refers to .symtab".into()));
        }
        let data = st
            .data(bytes)
            .ok_or_else(|| refuse(".symtab outside the object".into()))?;
        let strtab = sections
            .get(st.link as usize)
            .ok_or_else(|| refuse(".symtab has no string table".into()))?;
        let strdata = strtab
            .data(bytes)
            .ok_or_else(|| refuse(".strtab outside the object".into()))?;
        let info_at = shoff + usize::from(st.index) * 64 + 44;
        let info = elf::u32_at(bytes, info_at).unwrap_or(0) as usize;
        let locals = info.min(data.len() / 24) * 24;
        let new_str_off = abs(&tail);
        tail.extend_from_slice(strdata);
        if strdata.last().is_some_and(|&b| b != 0) {
            tail.push(0); // the last name keeps its end
        }
        let mut names = Vec::new();
        for m in &moving {
            names.push((abs(&tail) - new_str_off) as u32);
            tail.extend_from_slice(m.name.as_bytes());
            tail.extend_from_slice(SYMBOL_SUFFIX.as_bytes());
            tail.push(0);
        }
        let new_str_size = abs(&tail) - new_str_off;
        pad8(&mut tail);
        let new_sym_off = abs(&tail);
        tail.extend_from_slice(&data[..locals]);
        for (m, &name) in moving.iter().zip(&names) {
            tail.extend_from_slice(&name.to_le_bytes());
            tail.push(elf::STT_FUNC); // STB_LOCAL
            tail.push(0);
            tail.extend_from_slice(&text_index.to_le_bytes());
            tail.extend_from_slice(&m.new_vaddr.to_le_bytes());
            tail.extend_from_slice(&m.image_len.to_le_bytes());
        }
        tail.extend_from_slice(&data[locals..data.len() / 24 * 24]);
        let new_sym_size = abs(&tail) - new_sym_off;
        symtab_new = Some((
            usize::from(st.index),
            new_sym_off,
            new_sym_size,
            (locals / 24 + moving.len()) as u32,
            st.link as usize,
            new_str_off,
            new_str_size,
        ));
    }
    for m in &moving {
        moved_out.push(MovedFunction {
            name: Arc::clone(&m.name),
            original_vaddr: m.vaddr,
            original_size: m.size,
            new_vaddr: m.new_vaddr,
            new_size: m.image_len,
            symbol: if symtab_new.is_some() {
                format!("{}{SYMBOL_SUFFIX}", m.name)
            } else {
                String::new()
            },
        });
    }

    // The marker.
    pad8(&mut tail);
    let marker_off = abs(&tail);
    let desc_len = 8 + 32 * moving.len();
    tail.extend_from_slice(&(MARKER_OWNER.len() as u32 + 1).to_le_bytes());
    tail.extend_from_slice(&(desc_len as u32).to_le_bytes());
    tail.extend_from_slice(&NT_HOTSWAP_MOVED.to_le_bytes());
    tail.extend_from_slice(MARKER_OWNER);
    tail.push(0); // "HOTSWAP\0": 8 bytes, 4-aligned
    tail.extend_from_slice(&1u32.to_le_bytes());
    tail.extend_from_slice(&(moving.len() as u32).to_le_bytes());
    for m in &moving {
        for v in [m.vaddr, m.size, m.new_vaddr, m.image_len] {
            tail.extend_from_slice(&v.to_le_bytes());
        }
    }
    let marker_size = abs(&tail) - marker_off;
    pad8(&mut tail);

    // Section headers.
    let new_shoff = abs(&tail);
    for i in 0..shnum {
        let mut sh = bytes[shoff + i * 64..shoff + (i + 1) * 64].to_vec();
        if i == shstrndx {
            sh[24..32].copy_from_slice(&new_shstr_off.to_le_bytes());
            sh[32..40].copy_from_slice(&new_shstr_size.to_le_bytes());
        }
        if let Some((sti, so, ss, info, stri, tro, trs)) = symtab_new {
            if i == sti {
                sh[24..32].copy_from_slice(&so.to_le_bytes());
                sh[32..40].copy_from_slice(&ss.to_le_bytes());
                sh[44..48].copy_from_slice(&info.to_le_bytes());
            }
            if i == stri {
                sh[24..32].copy_from_slice(&tro.to_le_bytes());
                sh[32..40].copy_from_slice(&trs.to_le_bytes());
            }
        }
        tail.extend_from_slice(&sh);
    }
    let section = |name: u32, ty: u32, flags: u64, addr: u64, off: u64, size: u64, align: u64| {
        let mut sh = Vec::with_capacity(64);
        sh.extend_from_slice(&name.to_le_bytes());
        sh.extend_from_slice(&ty.to_le_bytes());
        sh.extend_from_slice(&flags.to_le_bytes());
        sh.extend_from_slice(&addr.to_le_bytes());
        sh.extend_from_slice(&off.to_le_bytes());
        sh.extend_from_slice(&size.to_le_bytes());
        sh.extend_from_slice(&[0u8; 8]); // link, info
        sh.extend_from_slice(&align.to_le_bytes());
        sh.extend_from_slice(&[0u8; 8]); // entsize
        sh
    };
    tail.extend_from_slice(&section(
        text_name,
        1,
        elf::SHF_ALLOC | elf::SHF_EXECINSTR,
        region_vaddr,
        region_off,
        code_size,
        FUNCTION_ALIGN,
    ));
    tail.extend_from_slice(&section(marker_name, 7, 0, 0, marker_off, marker_size, 4));

    // The ELF header.
    patches.push(Patch {
        file_offset: 32,
        bytes: new_phoff.to_le_bytes().to_vec(),
    });
    patches.push(Patch {
        file_offset: 40,
        bytes: new_shoff.to_le_bytes().to_vec(),
    });
    patches.push(Patch {
        file_offset: 56,
        bytes: ((phnum + 1) as u16).to_le_bytes().to_vec(),
    });
    patches.push(Patch {
        file_offset: 60,
        bytes: ((shnum + 2) as u16).to_le_bytes().to_vec(),
    });

    let sites = grown
        .into_iter()
        .map(|(fi, idx, site)| {
            let (m, idx) = (&moving[fi as usize], idx as usize);
            let (split, swapped) = m.splits.get(idx).expect("a split site");
            PlacedSite {
                site,
                new_vaddr: m.new_vaddr + m.new_off(idx),
                new_len: split.len() as u32,
                fix: if swapped {
                    "ds2-split-swapped"
                } else {
                    "ds2-split"
                },
            }
        })
        .collect();
    let clauses_removed = moving
        .iter()
        .map(|m| {
            m.insns
                .iter()
                .enumerate()
                .filter(|&(i, insn)| {
                    let w0 = w32(&bytes[insn.at..]);
                    w0 >> 16 == 0xBF85
                        && (i + 1..=i + (w0 & 0x3f) as usize + 1).any(|j| m.splits.contains_key(j))
                })
                .count()
        })
        .sum();
    let mut island_list = Vec::new();
    for m in &moving {
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
    // The estimate held: the output fits in the tail's allocation.
    debug_assert!(tail.capacity() - tail.len() >= bytes.len());
    Ok(Placement {
        patches,
        tail,
        moved: moved_out,
        sites,
        clauses_removed,
        islands: island_list,
    })
}

/// Refuses an object whose tables the growth could not replace so that the
/// output is read the same way again: the section names, the symbol table the
/// analysis reads (the first `SHT_SYMTAB`) and its strings are copied with
/// new entries, so each must be a non-allocated section of its own (a shared
/// or aliased one would get two contradicting headers); an object that
/// already holds a section of the names the growth adds (grown before, or a
/// clash) would carry two markers, and only the first would be read; and
/// the two new sections and the new segment must fit the header's counts.
fn check_tables(bytes: &[u8], sections: &[elf::Section<'_>]) -> Result<(), RewriteError> {
    let shstrndx = usize::from(elf::u16_at(bytes, 62).unwrap_or(0));
    let readable = |s: &elf::Section<'_>| s.flags & elf::SHF_ALLOC == 0 && s.data(bytes).is_some();
    let names = sections
        .get(shstrndx)
        .filter(|s| shstrndx != 0 && readable(s))
        .ok_or_else(|| {
            refuse("no .shstrtab (e_shstrndx names no non-allocated section in the file)".into())
        })?;
    let symtab = sections
        .iter()
        .find(|s| s.sh_type == elf::SHT_SYMTAB)
        .ok_or_else(|| refuse("no .symtab: the moved copies could not be named".into()))?;
    if !readable(symtab) {
        return Err(refuse(format!(
            "the symbol table (section {}) is allocated or outside the file: it cannot be \
             replaced",
            symtab.index
        )));
    }
    let strings = usize::try_from(symtab.link)
        .ok()
        .and_then(|i| sections.get(i))
        .filter(|s| s.index != 0 && readable(s))
        .ok_or_else(|| {
            refuse(".symtab links to no non-allocated string table in the file".into())
        })?;
    let distinct = [names.index, symtab.index, strings.index];
    if distinct[0] == distinct[1] || distinct[0] == distinct[2] || distinct[1] == distinct[2] {
        return Err(refuse(format!(
            "the section names (section {}), .symtab (section {}) and its strings (section {}) \
             share a section: the copies would need two different headers for it",
            names.index, symtab.index, strings.index
        )));
    }
    if let Some(s) = sections
        .iter()
        .find(|s| s.name == MARKER_SECTION.as_bytes() || s.name == TEXT_SECTION.as_bytes())
    {
        return Err(refuse(format!(
            "the object already has a section {} (grown before, or a name clash): a second \
             marker would not be found",
            String::from_utf8_lossy(s.name)
        )));
    }
    let shnum = elf::u16_at(bytes, 60).unwrap_or(u16::MAX);
    let phnum = elf::u16_at(bytes, 56).unwrap_or(u16::MAX);
    if shnum >= elf::SHN_LORESERVE - 2 || phnum >= 0xffff - 1 {
        return Err(refuse(
            "too many sections or segments to add the moved code's".into(),
        ));
    }
    Ok(())
}

/// Refuses relocations whose target, or whose patched location, lies in a
/// moved function.
fn check_relocations(object: &CodeObject<'_>, moving: &[Moving]) -> Result<(), RewriteError> {
    let (bytes, sections) = (object.bytes(), object.sections());
    let inside = |v: u64| moving.iter().find(|m| v >= m.vaddr && v - m.vaddr < m.size);
    let dynsym = object.symbols(elf::SHT_DYNSYM);
    for s in sections.iter().filter(|s| s.sh_type == 4 || s.sh_type == 9) {
        let Some(data) = s.data(bytes) else { continue };
        let entry = if s.sh_type == 4 { 24 } else { 16 };
        for r in data.chunks_exact(entry) {
            let offset = elf::u64_at(r, 0).unwrap_or(0);
            let info = elf::u64_at(r, 8).unwrap_or(0);
            let addend = if entry == 24 {
                elf::u64_at(r, 16).unwrap_or(0)
            } else {
                0
            };
            let sym = (info >> 32) as usize;
            let value = if sym == 0 {
                0
            } else {
                dynsym.get(sym - 1).map_or(0, |s| s.value)
            };
            if let Some(m) = inside(offset).or_else(|| inside(value.wrapping_add(addend))) {
                return Err(refuse(format!(
                    "a relocation at {offset:#x} refers to the moved function {}",
                    m.name
                )));
            }
        }
    }
    Ok(())
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

#[cfg(test)]
mod insns_tests {
    use super::{Insns, BLOCK};

    /// Offsets of instructions of 1 to 5 dwords, against a plain list.
    fn check(lens: &[u32]) {
        let mut insns = Insns {
            vaddr: 0x1000,
            at: 0x200,
            ..Insns::default()
        };
        let mut plain = vec![0u32];
        for &l in lens {
            plain.push(plain.last().unwrap() + l);
        }
        for &o in &plain {
            assert!(insns.push(o));
        }
        assert_eq!(insns.len(), lens.len());
        for (i, &o) in plain.iter().enumerate() {
            assert_eq!(insns.offset(i), o);
        }
        for i in 0..lens.len() {
            let insn = insns.at(i);
            assert_eq!(
                (insn.vaddr, insn.at, insn.len),
                (
                    0x1000 + u64::from(plain[i]),
                    0x200 + plain[i] as usize,
                    lens[i] as usize
                )
            );
            for b in 0..lens[i] as usize {
                assert_eq!(insns.index_holding(insn.at + b), i);
            }
        }
        assert!(insns.get(lens.len()).is_none());
        let end = *plain.last().unwrap();
        for off in 0..end + 24 {
            let expect = plain[..lens.len()].binary_search(&off).is_ok();
            let found = insns.index_of_vaddr(0x1000 + u64::from(off));
            assert_eq!(found.is_ok(), expect, "offset {off}");
            if let Ok(i) = found {
                assert_eq!(plain[i], off);
            }
        }
        assert!(insns.index_of_vaddr(0xfff).is_err());
    }

    #[test]
    fn compact_offsets_agree_with_a_plain_list_across_blocks() {
        check(&[]);
        check(&[4]);
        check(&[20; BLOCK - 1]);
        check(&[20; BLOCK]);
        check(&[20; 3 * BLOCK + 5]);
        let mixed: Vec<u32> = (0..200).map(|i| 4 * (1 + (i * 7 + i / 3) % 5)).collect();
        check(&mixed);
    }

    #[test]
    fn an_offset_a_u8_cannot_hold_is_refused() {
        let mut insns = Insns::default();
        assert!(insns.push(0));
        assert!(!insns.push(2), "not a whole dword");
        let mut insns = Insns::default();
        assert!(insns.push(0));
        assert!(!insns.push(4 * 256), "too far from the block's base");
    }
}
