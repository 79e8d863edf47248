//! Layout: how far each instruction of a moved function moves within its
//! image (the emitters' growth, then branch islands), and where each image
//! goes in the new segment. Addresses only, no bytes.

use super::moving::Moving;
use super::{refuse, w32, FUNCTION_ALIGN, PAGE, PREFETCH_TAIL};
use crate::elf;
use crate::gfx1250::fields;
use crate::object::CodeObject;
use crate::rewrite::vgpr_mode::{self, Flow};
use crate::rewrite::RewriteError;
use crate::rewrite::{input_bounds, islands};

/// How far each instruction of a moved function moves within its image
/// beyond its original offset: the growth of every replaced site before it and of
/// every island at or before it (sparse, like
/// [`super::moving::Replacements`]).
#[derive(Debug, Default)]
pub(super) struct Shifts {
    /// (the first instruction index a step applies to, the total growth from
    /// there on), by index.
    pub(super) steps: Vec<(u32, u64)>,
}

impl Shifts {
    /// From (first index affected, growth) pairs in any order.
    pub(super) fn new(mut adds: Vec<(u32, u64)>) -> Self {
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

    pub(super) fn at(&self, i: usize) -> u64 {
        let k = self.steps.partition_point(|s| s.0 as usize <= i);
        k.checked_sub(1).map_or(0, |k| self.steps[k].1)
    }

    /// [`Shifts::at`] for indices met in increasing order (the encoder's
    /// walk), a step at a time instead of a search per instruction.
    pub(super) fn cursor(&self) -> ShiftCursor<'_> {
        ShiftCursor {
            steps: &self.steps,
            next: 0,
            shift: 0,
        }
    }
}

/// See [`Shifts::cursor`].
pub(super) struct ShiftCursor<'a> {
    steps: &'a [(u32, u64)],
    /// The first step not yet reached.
    next: usize,
    /// The total growth of the steps reached.
    shift: u64,
}

impl ShiftCursor<'_> {
    /// [`Shifts::at`]`(i)`; `i` at or after the last index asked.
    pub(super) fn at(&mut self, i: usize) -> u64 {
        while let Some(&(first, total)) = self.steps.get(self.next) {
            if first as usize > i {
                break;
            }
            self.shift = total;
            self.next += 1;
        }
        self.shift
    }
}
/// A branch immediate from `from` (the branch's address) to `to`.
pub(super) fn branch_imm(from: u64, to: u64) -> Option<u16> {
    let delta = (to as i64).wrapping_sub(from as i64 + 4);
    if delta % 4 != 0 {
        return None;
    }
    i16::try_from(delta / 4).ok().map(|v| v as u16)
}

/// `v` rounded up to a multiple of `a`; `None` past `u64::MAX`.
pub(super) fn align(v: u64, a: u64) -> Option<u64> {
    v.div_ceil(a).checked_mul(a)
}

/// The branch islands of one moved function, at their image offsets.
#[derive(Debug, Default)]
pub(super) struct PlacedIslands {
    /// (the instruction each island precedes, its first entry's image
    /// offset, each entry's destination instruction), by instruction.
    pub(super) points: Vec<(usize, u64, Vec<usize>)>,
    /// (branch instruction, the image offset of the entry it goes through).
    pub(super) via: Vec<(usize, u64)>,
}

impl PlacedIslands {
    pub(super) fn via(&self, branch: usize) -> Option<u64> {
        let j = self.via.binary_search_by_key(&branch, |v| v.0).ok()?;
        Some(self.via[j].1)
    }
}
/// Gives `m` the branch islands its own branches need once its replacements have
/// grown it ([`islands`]), and moves its instructions past them.
pub(super) fn place_islands(bytes: &[u8], m: &mut Moving) -> Result<(), RewriteError> {
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
                fields::clause_window(w32(&bytes[m.insns.at(j).at..])).is_none_or(|n| j + n < k)
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
    let mut adds = growth(m);
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

/// The growth of each replaced site of `m`: (the index after it, replacement length
/// minus the original's).
pub(super) fn growth(m: &Moving) -> Vec<(u32, u64)> {
    m.replacements
        .lens()
        .map(|(i, new_len)| {
            let len = m.insns.at(i as usize).len;
            (i + 1, new_len.saturating_sub(len as u64))
        })
        .collect()
}

/// Lays out the image of `m` once the emitters replaced its sites: each
/// instruction's shift past the growth before it, then the branch islands
/// its own branches need.
pub(super) fn function(bytes: &[u8], m: &mut Moving) -> Result<(), RewriteError> {
    m.replacements.shrink_to_fit();
    m.shifts = Shifts::new(growth(m));
    m.image_len = m.new_off(m.insns.len());
    if m.image_len > u64::from(u32::MAX) {
        return Err(refuse(format!(
            "{}: its image would be 4 GiB or larger",
            m.name
        )));
    }
    place_islands(bytes, m)
}

/// Where the new segment goes, in the file and in memory.
#[derive(Clone, Copy, Debug)]
pub(super) struct Region {
    /// Its virtual address (a page past every segment and allocated section).
    pub(super) vaddr: u64,
    /// Its file offset (the page past the original end).
    pub(super) file_offset: u64,
    /// The bytes of code it holds: the images and the prefetch tail.
    pub(super) code_len: usize,
}

/// Places the new segment past everything the object maps, and each image
/// in it (`m.new_vaddr`), in address order at [`FUNCTION_ALIGN`].
pub(super) fn region(
    object: &CodeObject<'_>,
    moving: &mut [Moving],
) -> Result<Region, RewriteError> {
    let bytes = object.bytes();
    let sections = object.sections();
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
    for m in moving.iter_mut() {
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
        .filter(|&end| end <= input_bounds::ADDRESS_LIMIT)
        .ok_or_else(|| refuse("the moved code exceeds the GPU address space".into()))?;
    let code_len = align(cursor, 4)
        .ok_or_else(|| refuse("the moved code exceeds the address space".into()))?
        as usize
        + PREFETCH_TAIL;
    Ok(Region {
        vaddr: region_vaddr,
        file_offset: region_off,
        code_len,
    })
}
