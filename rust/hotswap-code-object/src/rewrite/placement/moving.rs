//! A moved function as the stages fill it in: selected (plan), expanded
//! (the emitters' replacements), laid out (shifts, islands, address), then
//! written (encode) and redirected to (patch).

use std::sync::Arc;

use super::insns::Insns;
use super::layout::{PlacedIslands, Shifts};
use super::pc::PcComputation;

/// A moved function during placement.
pub(super) struct Moving {
    pub(super) name: Arc<str>,
    pub(super) kernel_only: bool,
    /// Whether a kernel descriptor enters it (no `s_set_pc_i64 s[30:31]`
    /// return then).
    pub(super) is_kernel: bool,
    pub(super) vaddr: u64,
    pub(super) size: u64,
    pub(super) insns: Insns,
    /// How far each instruction moves within the image.
    pub(super) shifts: Shifts,
    /// The replacement of each DS2 instruction (by index).
    pub(super) replacements: Replacements,
    pub(super) pcs: Vec<PcComputation>,
    /// Branch islands inserted in the image (usually none).
    pub(super) islands: PlacedIslands,
    pub(super) image_len: u64,
    pub(super) new_vaddr: u64,
}

impl Moving {
    /// The image offset of instruction `i` (`i == len`: the image's end).
    pub(super) fn new_off(&self, i: usize) -> u64 {
        u64::from(self.insns.offset(i)) + self.shifts.at(i)
    }

    /// The image address of `target` when it lies in this function.
    pub(super) fn map(&self, target: u64) -> Option<Result<u64, ()>> {
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
pub(super) fn map_target(moving: &[Moving], target: u64) -> Option<Result<u64, ()>> {
    let i = moving
        .partition_point(|m| m.vaddr <= target)
        .checked_sub(1)?;
    moving[i].map(target)
}

/// The replacement of each emitted site, by instruction index (sparse: a
/// function holds far fewer sites than instructions, so nothing here grows
/// with the function's instruction count).
#[derive(Default)]
pub(super) struct Replacements {
    /// (instruction index, start in `bytes`, length, index in `fixes`), by
    /// instruction index.
    items: Vec<(u32, usize, u32, u8)>,
    /// The replacements, one after another (one allocation per function,
    /// not one per site).
    bytes: Vec<u8>,
    /// The emitters' names of their fixes (a handful).
    fixes: Vec<&'static str>,
}

impl Replacements {
    /// Records `code` (named `fix`) as the replacement of instruction `index`.
    pub(super) fn insert(&mut self, index: usize, code: &[u8], fix: &'static str) {
        let index = index as u32;
        let name = match self.fixes.iter().position(|&f| f == fix) {
            Some(k) => k,
            None => {
                self.fixes.push(fix);
                self.fixes.len() - 1
            }
        };
        // At most one name per emitter's outcome: a u8 holds them.
        let item = (index, self.bytes.len(), code.len() as u32, name as u8);
        self.bytes.extend_from_slice(code);
        let at = self.items.partition_point(|x| x.0 < index);
        if self.items.get(at).is_some_and(|x| x.0 == index) {
            self.items[at] = item;
        } else {
            self.items.insert(at, item);
        }
    }

    /// The replacement of instruction `index` and its fix's name.
    pub(super) fn get(&self, index: usize) -> Option<(&[u8], &'static str)> {
        let index = u32::try_from(index).ok()?;
        let at = self.items.binary_search_by_key(&index, |x| x.0).ok()?;
        let (_, start, len, fix) = self.items[at];
        Some((
            &self.bytes[start..start + len as usize],
            self.fixes[usize::from(fix)],
        ))
    }

    /// Gives back the room left by growing (they are held to the end).
    pub(super) fn shrink_to_fit(&mut self) {
        self.items.shrink_to_fit();
        self.bytes.shrink_to_fit();
    }

    /// (instruction index, replacement), by index.
    pub(super) fn iter(&self) -> impl Iterator<Item = (usize, &[u8])> + '_ {
        self.items
            .iter()
            .map(|&(i, start, len, _)| (i as usize, &self.bytes[start..start + len as usize]))
    }

    /// (instruction index, replacement length), by index.
    pub(super) fn lens(&self) -> impl Iterator<Item = (u32, u64)> + '_ {
        self.items.iter().map(|x| (x.0, u64::from(x.2)))
    }

    pub(super) fn contains_key(&self, index: usize) -> bool {
        self.get(index).is_some()
    }
}
