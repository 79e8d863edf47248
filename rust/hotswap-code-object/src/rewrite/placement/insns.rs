//! The instruction boundaries of a walked function, compactly: what every
//! later stage indexes instructions by.

use super::refuse;
use crate::elf::AddressMap;
use crate::gfx1250;
use crate::rewrite::RewriteError;

/// One instruction of a walked function.
#[derive(Clone, Copy, Debug)]
pub(super) struct Insn {
    pub(super) vaddr: u64,
    /// Offset in the object.
    pub(super) at: usize,
    pub(super) len: usize,
}

/// Instructions per block of [`Insns`]: a block spans at most 32 of the
/// longest encodings (5 dwords), so an offset from its base fits in a u8.
pub(super) const BLOCK: usize = 32;

/// The instructions of one walked function, a little over a byte each: the
/// offset of each from the function's start, then the end of the last, kept
/// as a u32 base per [`BLOCK`] offsets and, per offset, its distance from
/// its block's base in dwords (every gfx1250 encoding is 1 to 5 dwords). A
/// moved function's instruction lists are held together until its image is
/// written, at the rewrite's peak memory, so their element size matters.
#[derive(Debug, Default)]
pub(super) struct Insns {
    pub(super) vaddr: u64,
    /// The function's offset in the object.
    pub(super) at: usize,
    /// The byte offset of every [`BLOCK`]-th offset.
    bases: Vec<u32>,
    /// Each offset's distance from its block's base, in dwords.
    rel: Vec<u8>,
}

impl Insns {
    pub(super) fn len(&self) -> usize {
        self.rel.len().saturating_sub(1)
    }

    /// Appends the next offset (at or after the last one); false when it
    /// is not a whole number of dwords past its block's base or too far.
    pub(super) fn push(&mut self, off: u32) -> bool {
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
    pub(super) fn offset(&self, i: usize) -> u32 {
        self.bases[i / BLOCK] + 4 * u32::from(self.rel[i])
    }

    #[inline]
    pub(super) fn get(&self, i: usize) -> Option<Insn> {
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
    pub(super) fn at(&self, i: usize) -> Insn {
        self.get(i).expect("an instruction index")
    }

    /// The instructions in order (each offset read once).
    pub(super) fn iter(&self) -> impl Iterator<Item = Insn> + '_ {
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
    pub(super) fn block_of(&self, off: u32) -> (usize, std::ops::Range<usize>) {
        let b = self.bases.partition_point(|&base| base <= off).max(1) - 1;
        let first = b * BLOCK;
        (b, first..(first + BLOCK).min(self.len()).max(first))
    }

    /// The index of the instruction at `vaddr` (`Err`: none starts there).
    pub(super) fn index_of_vaddr(&self, vaddr: u64) -> Result<usize, usize> {
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
    pub(super) fn index_holding(&self, at: usize) -> usize {
        let off = (at - self.at) as u32;
        let (b, range) = self.block_of(off);
        let d = off - self.bases[b];
        let first = range.start;
        first + self.rel[range].partition_point(|&r| 4 * u32::from(r) <= d) - 1
    }
}

/// The instruction boundaries of the functions that may move, recorded as
/// the analysis decodes them ([`gfx1250::analyze_object_with`]), so that
/// the plan does not decode them a second time ([`walk`] gives the same
/// boundaries): a function is kept when its walk was complete and `keep`
/// says it may move.
pub(crate) struct Walked {
    keep: fn(&gfx1250::Function) -> bool,
    /// The boundaries of the function being walked (its allocation reused
    /// from one function to the next), and whether they are held so far.
    current: Insns,
    held: bool,
    /// (vaddr, size, boundaries) of each function kept, in walk order
    /// (address order).
    kept: Vec<(u64, u64, Insns)>,
}

impl Walked {
    pub(crate) fn new(keep: fn(&gfx1250::Function) -> bool) -> Self {
        Walked {
            keep,
            current: Insns::default(),
            held: false,
            kept: Vec::new(),
        }
    }

    /// The boundaries of the function at `vaddr` of `size` bytes, if kept.
    pub(super) fn take(&mut self, vaddr: u64, size: u64) -> Option<Insns> {
        let first = self.kept.partition_point(|k| k.0 < vaddr);
        let k = self.kept[first..]
            .iter()
            .take_while(|k| k.0 == vaddr)
            .position(|k| k.1 == size)?;
        Some(std::mem::take(&mut self.kept[first + k].2))
    }
}

impl gfx1250::WalkObserver for Walked {
    fn function_start(&mut self, vaddr: u64, file_offset: Option<u64>) {
        self.current.vaddr = vaddr;
        self.current.bases.clear();
        self.current.rel.clear();
        match file_offset.and_then(|o| usize::try_from(o).ok()) {
            Some(at) => {
                self.current.at = at;
                self.held = true;
            }
            None => self.held = false,
        }
    }

    #[inline]
    fn instruction(&mut self, offset: u64) {
        if self.held {
            self.held = u32::try_from(offset).is_ok_and(|o| self.current.push(o));
        }
    }

    fn function_end(&mut self, function: &gfx1250::Function, end: u64) {
        // As `walk`: offsets past the size by at most one instruction fit
        // in the u32s; an empty or incomplete walk is not kept.
        let keep = self.held
            && !function.incomplete
            && !self.current.rel.is_empty()
            && function.size <= u64::from(u32::MAX) - 64
            && (self.keep)(function)
            && self.current.push(end as u32);
        if keep {
            // Copies of exactly their length, held until the image is written.
            let insns = Insns {
                vaddr: self.current.vaddr,
                at: self.current.at,
                bases: self.current.bases.clone(),
                rel: self.current.rel.clone(),
            };
            self.kept.push((function.vaddr, function.size, insns));
        }
        self.held = false;
    }
}

/// The instructions that start in `[vaddr, vaddr + size)`.
pub(super) fn walk(
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
