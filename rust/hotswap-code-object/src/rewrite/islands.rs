//! Branch islands: when the split sites of a moved function push one of its
//! own branches out of `s_branch` reach (±128 KiB), the branch is aimed at an
//! island, an `s_branch` to the original destination's image placed between
//! the two.
//!
//! An island is only ever inserted where nothing falls through into it: right
//! after an instruction with no fall-through successor (`s_branch`,
//! `s_endpgm`, `s_set_pc_i64`, ...). The code around it keeps its meaning; a
//! branch through an island costs one more `s_branch` and touches no register,
//! no SCC, no EXEC and no VGPR-MSB mode. No such place within reach of both
//! ends refuses the object with the branch named.
//!
//! The planner works on offsets only (no bytes): `base(i)` is the image
//! offset of instruction `i` without islands (`base(n)` the image's end);
//! each island entry adds four bytes before the instruction it precedes.

/// A branch immediate's reach, in bytes past the branch's end.
const FORWARD: i64 = 32767 * 4;
const BACKWARD: i64 = -32768 * 4;
/// Room kept on each side when a place is chosen, so that the entries added
/// later in the same round do not push the island out of reach again.
const SLACK: i64 = 16 * 1024;
/// More entries than this in one function refuse it (a bound on the work,
/// far above what real code needs).
const MAX_ENTRIES: usize = 4096;
const MAX_ROUNDS: usize = 16;

/// Whether a 4-byte branch at image offset `from` reaches `to`.
pub(super) fn reaches(from: u64, to: u64) -> bool {
    let delta = to as i64 - (from as i64 + 4);
    delta % 4 == 0 && (BACKWARD..=FORWARD).contains(&delta)
}

/// The islands of one function.
#[derive(Debug, Default, PartialEq, Eq)]
pub(super) struct Islands {
    /// (the instruction an island precedes, the destination instruction of
    /// each of its entries, in entry order), by instruction.
    pub points: Vec<(usize, Vec<usize>)>,
    /// (branch instruction, island index, entry index), by branch.
    pub via: Vec<(usize, usize, usize)>,
    /// The entries of `points[..p]`, for each `p` up to `points.len()`
    /// (empty when there are no points): offsets in logarithmic time.
    before: Vec<u64>,
}

impl Islands {
    /// Entries before instruction `i` (those at `i` included when
    /// `inclusive`).
    fn entries_before(&self, i: usize, inclusive: bool) -> u64 {
        let p = self
            .points
            .partition_point(|(k, _)| *k < i || (inclusive && *k == i));
        self.before.get(p).copied().unwrap_or(0)
    }

    /// Adds an entry for destination `d` to the island before instruction
    /// `k` (made when there is none); its (island, entry) index. The islands
    /// after it are renumbered in `via`.
    fn add(&mut self, k: usize, d: usize, via: &mut [Option<(usize, usize)>]) -> (usize, usize) {
        let p = match self.points.binary_search_by_key(&k, |x| x.0) {
            Ok(p) => p,
            Err(p) => {
                self.points.insert(p, (k, Vec::new()));
                for v in via.iter_mut().flatten() {
                    if v.0 >= p {
                        v.0 += 1;
                    }
                }
                p
            }
        };
        self.points[p].1.push(d);
        self.before.clear();
        self.before.push(0);
        for (_, e) in &self.points {
            let last = *self.before.last().unwrap_or(&0);
            self.before.push(last + e.len() as u64);
        }
        (p, self.points[p].1.len() - 1)
    }

    /// The image offset of instruction `i` (`i == n`: the end).
    pub fn offset(&self, base: &impl Fn(usize) -> u64, i: usize) -> u64 {
        base(i) + 4 * self.entries_before(i, true)
    }

    /// The image offset of entry `e` of island `p`.
    pub fn entry_offset(&self, base: &impl Fn(usize) -> u64, p: usize, e: usize) -> u64 {
        let k = self.points[p].0;
        base(k) + 4 * (self.entries_before(k, false) + e as u64)
    }

    /// The island entry branch `i` goes through, if any.
    #[cfg(test)]
    pub fn via(&self, i: usize) -> Option<(usize, usize)> {
        let j = self.via.binary_search_by_key(&i, |v| v.0).ok()?;
        Some((self.via[j].1, self.via[j].2))
    }

    /// Number of entries.
    pub fn entries(&self) -> usize {
        self.before.last().map_or(0, |&n| n as usize)
    }
}

/// Plans the islands of one function of `n` instructions: `base` as in the
/// module documentation, `branches` each (branch, destination) instruction pair
/// inside the function, in branch order, `barrier(k)` whether instruction
/// `k - 1` has no fall-through successor (`1 <= k <= n`). `Err` names the
/// branch no island can serve (its instruction index).
pub(super) fn plan(
    n: usize,
    base: impl Fn(usize) -> u64,
    branches: &[(usize, usize)],
    barrier: impl Fn(usize) -> bool,
) -> Result<Islands, (usize, &'static str)> {
    let base = &base;
    let mut islands = Islands::default();
    if branches.iter().all(|&(s, d)| reaches(base(s), base(d))) {
        return Ok(islands);
    }
    let barriers: Vec<usize> = (1..=n).filter(|&k| barrier(k)).collect();
    let mut via: Vec<Option<(usize, usize)>> = vec![None; branches.len()];
    for _ in 0..MAX_ROUNDS {
        let mut changed = false;
        for (b, &(s, d)) in branches.iter().enumerate() {
            let (so, dof) = (islands.offset(base, s), islands.offset(base, d));
            if let Some((p, e)) = via[b] {
                let eo = islands.entry_offset(base, p, e);
                if reaches(so, eo) && reaches(eo, dof) {
                    continue;
                }
                via[b] = None;
                changed = true;
            }
            if reaches(so, dof) {
                continue;
            }
            changed = true;
            // An existing entry for the same destination, within reach.
            let shared = islands.points.iter().enumerate().find_map(|(p, (_, e))| {
                let j = e.iter().position(|&x| x == d)?;
                let eo = islands.entry_offset(base, p, j);
                (reaches(so, eo) && reaches(eo, dof)).then_some((p, j))
            });
            if let Some(pe) = shared {
                via[b] = Some(pe);
                continue;
            }
            // The barrier nearest the middle that both ends reach with room
            // (a new entry goes after the entries already there).
            let in_reach = |delta: i64| (BACKWARD + SLACK..=FORWARD - SLACK).contains(&delta);
            let fits = |k: usize| {
                let at = islands.offset(base, k) as i64;
                in_reach(at - so as i64 - 4) && in_reach(dof as i64 - at - 4)
            };
            let mid = (so.min(dof) + so.max(dof)) / 2;
            let start = barriers.partition_point(|&k| base(k) < mid);
            // Past this distance from the middle no barrier can fit, whatever
            // the islands before it add.
            let near =
                |k: usize| base(k).abs_diff(mid) <= (FORWARD as u64) + 4 * MAX_ENTRIES as u64;
            let mut chosen = None;
            for step in 0.. {
                let left = start
                    .checked_sub(step + 1)
                    .map(|i| barriers[i])
                    .filter(|&k| near(k));
                let right = barriers.get(start + step).copied().filter(|&k| near(k));
                if left.is_none() && right.is_none() {
                    break;
                }
                if let Some(k) = right.into_iter().chain(left).find(|&k| fits(k)) {
                    chosen = Some(k);
                    break;
                }
            }
            let Some(k) = chosen else {
                return Err((s, "no place for a branch island within reach of both ends"));
            };
            if islands.entries() >= MAX_ENTRIES {
                return Err((s, "more branch islands than the rewriter allows"));
            }
            via[b] = Some(islands.add(k, d, &mut via));
        }
        if !changed {
            islands.via = via
                .iter()
                .enumerate()
                .filter_map(|(b, v)| v.map(|(p, e)| (branches[b].0, p, e)))
                .collect();
            islands.via.sort_unstable();
            return Ok(islands);
        }
    }
    Err((
        branches.first().map_or(0, |b| b.0),
        "branch islands did not settle",
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `n` instructions of 4 bytes, one of `big` bytes at `at`.
    fn base_with(n: usize, at: usize, big: u32) -> Vec<u32> {
        let mut v = Vec::new();
        let mut o = 0u32;
        for i in 0..=n {
            v.push(o);
            o += if i == at { big } else { 4 };
        }
        v
    }

    /// Offsets of `n + 1` instructions: 4 bytes each, 1 KiB each in `big`.
    /// [`plan`] over the instruction offsets `base` (the last one is the end).
    fn plan_over(
        base: &[u32],
        branches: &[(usize, usize)],
        barrier: impl Fn(usize) -> bool,
    ) -> Result<Islands, (usize, &'static str)> {
        plan(base.len() - 1, |i| u64::from(base[i]), branches, barrier)
    }

    fn spread(n: usize, big: std::ops::Range<usize>) -> Vec<u32> {
        let mut base = Vec::new();
        let mut o = 0u32;
        for i in 0..=n {
            base.push(o);
            o += if big.contains(&i) { 1024 } else { 4 };
        }
        base
    }

    fn check(base: &[u32], branches: &[(usize, usize)], isl: &Islands) {
        let base = &|i: usize| u64::from(base[i]);
        for &(s, d) in branches {
            let (so, dof) = (isl.offset(base, s), isl.offset(base, d));
            match isl.via(s) {
                None => assert!(reaches(so, dof), "branch {s} -> {d} unserved"),
                Some((p, e)) => {
                    let eo = isl.entry_offset(base, p, e);
                    assert_eq!(isl.points[p].1[e], d);
                    assert!(
                        reaches(so, eo) && reaches(eo, dof),
                        "island of {s} out of reach"
                    );
                }
            }
        }
    }

    #[test]
    fn reach_is_the_signed_16_bit_dword_immediate() {
        assert!(reaches(0, 4 + 32767 * 4));
        assert!(!reaches(0, 4 + 32768 * 4));
        assert!(reaches(32768 * 4, 4));
        assert!(!reaches(32768 * 4 + 4, 4));
        assert!(!reaches(0, 6));
    }

    #[test]
    fn nothing_out_of_reach_needs_no_island() {
        let base = base_with(10, 3, 1000);
        let isl = plan_over(&base, &[(9, 1)], |_| true).unwrap();
        assert_eq!(isl, Islands::default());
    }

    #[test]
    fn a_far_backward_branch_goes_through_an_island_after_a_barrier() {
        // 0: target .. 100: barrier, 101 .. a 200 KiB instruction run .. 400: branch back to 0.
        let base = spread(401, 150..350);
        let branches = [(400, 0), (5, 20)];
        let isl = plan_over(&base, &branches, |k| k == 250).unwrap();
        assert_eq!(isl.points, vec![(250, vec![0])]);
        assert_eq!(isl.via, vec![(400, 0, 0)]);
        check(&base, &branches, &isl);
        // The island's four bytes move what follows it.
        let b = |i: usize| u64::from(base[i]);
        assert_eq!(isl.offset(&b, 250), b(250) + 4);
        assert_eq!(isl.offset(&b, 249), b(249));
    }

    #[test]
    fn branches_to_one_destination_share_an_entry() {
        let base = spread(402, 150..350);
        let branches = [(400, 0), (401, 0)];
        let isl = plan_over(&base, &branches, |k| k == 250).unwrap();
        assert_eq!(isl.entries(), 1);
        check(&base, &branches, &isl);
    }

    #[test]
    fn no_barrier_in_reach_refuses_naming_the_branch() {
        let base = spread(401, 150..350);
        // Barriers only next to the ends: none reached by both.
        let e = plan_over(&base, &[(400, 0)], |k| k == 2 || k == 399).unwrap_err();
        assert_eq!(e.0, 400);
        // Out of reach of any single island (over 256 KiB apart).
        let base = spread(401, 100..370);
        assert!(plan_over(&base, &[(400, 0)], |_| true).is_err());
    }

    #[test]
    fn forward_branches_and_many_islands_settle() {
        let base = base_with(3000, 0, 4);
        // Spread 200 KiB over the run by making every instruction 64 bytes.
        let base: Vec<u32> = base.iter().map(|&o| o * 16).collect();
        let branches: Vec<(usize, usize)> = (0..40)
            .map(|j| (j * 10, 2900 - j * 7))
            .chain([(2999, 1)])
            .collect();
        let isl = plan_over(&base, &branches, |k| k % 97 == 0).unwrap();
        assert!(isl.entries() > 0);
        check(&base, &branches, &isl);
    }
}
