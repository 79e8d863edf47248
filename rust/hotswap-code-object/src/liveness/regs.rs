//! Register sets of one wave: the scalar operand space (SGPRs s0–s105, VCC,
//! TTMPs, M0, EXEC, as the 7-bit SDST field numbers them) plus SCC, and the
//! 1024 VGPRs of gfx1250 (v256 and up reached through `s_set_vgpr_msb`).

use std::fmt;

/// Scalar operand numbers (the SSRC/SDST field values) of the special registers.
pub const VCC_LO: u8 = 106;
/// `vcc_hi`.
pub const VCC_HI: u8 = 107;
/// `null`: never a register (reads zero, writes are dropped).
pub const NULL: u8 = 124;
/// `m0`.
pub const M0: u8 = 125;
/// `exec_lo` (gfx1250 is wave32: the whole EXEC mask).
pub const EXEC_LO: u8 = 126;
/// `exec_hi`.
pub const EXEC_HI: u8 = 127;
/// The bit of [`RegSet`] holding SCC (past the 128 scalar operand numbers).
const SCC_BIT: u16 = 128;
/// The number of addressable SGPRs (s0–s105).
pub const SGPRS: u8 = 106;
/// The number of VGPRs of gfx1250.
pub const VGPRS: u16 = 1024;

/// One register.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Reg {
    /// A scalar operand number 0–127 (`s0`–`s105`, `vcc_lo`, ..., `exec_hi`).
    S(u8),
    /// A VGPR, 0–1023.
    V(u16),
    /// The scalar condition code.
    Scc,
}

impl fmt::Display for Reg {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Reg::S(n) if n < SGPRS => write!(f, "s{n}"),
            Reg::S(VCC_LO) => f.write_str("vcc_lo"),
            Reg::S(VCC_HI) => f.write_str("vcc_hi"),
            Reg::S(n @ 108..=123) => write!(f, "ttmp{}", n - 108),
            Reg::S(NULL) => f.write_str("null"),
            Reg::S(M0) => f.write_str("m0"),
            Reg::S(EXEC_LO) => f.write_str("exec_lo"),
            Reg::S(EXEC_HI) => f.write_str("exec_hi"),
            Reg::S(n) => write!(f, "s?{n}"),
            Reg::V(n) => write!(f, "v{n}"),
            Reg::Scc => f.write_str("scc"),
        }
    }
}

/// A set of registers: 129 scalar bits (operand numbers 0–127, SCC) and 1024
/// VGPR bits. Copy-sized (152 bytes): the dataflow keeps two per block.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct RegSet {
    s: [u64; 3],
    v: [u64; 16],
}

impl fmt::Debug for RegSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set().entries(self.iter()).finish()
    }
}

impl RegSet {
    /// The empty set.
    pub const EMPTY: RegSet = RegSet {
        s: [0; 3],
        v: [0; 16],
    };
    /// Every register (NULL excluded: it is never a register).
    pub const ALL: RegSet = RegSet {
        s: [u64::MAX, !(1 << (NULL - 64)), 1],
        v: [u64::MAX; 16],
    };
    /// Every VGPR.
    pub const ALL_VGPRS: RegSet = RegSet {
        s: [0; 3],
        v: [u64::MAX; 16],
    };
    /// Every scalar register and SCC (NULL excluded).
    pub const ALL_SCALAR: RegSet = RegSet {
        s: [u64::MAX, !(1 << (NULL - 64)), 1],
        v: [0; 16],
    };

    /// Adds one register (a `null` operand is ignored).
    pub fn insert(&mut self, r: Reg) {
        match r {
            Reg::S(NULL) => {}
            Reg::S(n) if n < 128 => self.s[usize::from(n / 64)] |= 1 << (n % 64),
            Reg::S(_) => {}
            Reg::V(n) if n < VGPRS => self.v[usize::from(n / 64)] |= 1 << (n % 64),
            Reg::V(_) => {}
            Reg::Scc => self.s[usize::from(SCC_BIT / 64)] |= 1 << (SCC_BIT % 64),
        }
    }

    /// Adds `count` consecutive scalar operand numbers from `first` (clipped at 127).
    pub fn insert_s(&mut self, first: u8, count: u8) {
        for n in first..first.saturating_add(count).min(128) {
            self.insert(Reg::S(n));
        }
    }

    /// Adds `count` consecutive VGPRs from `first` (clipped at v1023).
    pub fn insert_v(&mut self, first: u16, count: u16) {
        for n in first..first.saturating_add(count).min(VGPRS) {
            self.insert(Reg::V(n));
        }
    }

    /// Whether `r` is in the set.
    pub fn contains(&self, r: Reg) -> bool {
        match r {
            Reg::S(n) if n < 128 => self.s[usize::from(n / 64)] >> (n % 64) & 1 != 0,
            Reg::S(_) => false,
            Reg::V(n) if n < VGPRS => self.v[usize::from(n / 64)] >> (n % 64) & 1 != 0,
            Reg::V(_) => false,
            Reg::Scc => self.s[2] & 1 != 0,
        }
    }

    /// Adds every register of `other`.
    pub fn union_with(&mut self, other: &RegSet) {
        for (a, b) in self.s.iter_mut().zip(other.s) {
            *a |= b;
        }
        for (a, b) in self.v.iter_mut().zip(other.v) {
            *a |= b;
        }
    }

    /// Removes every register of `other`.
    pub fn remove_all(&mut self, other: &RegSet) {
        for (a, b) in self.s.iter_mut().zip(other.s) {
            *a &= !b;
        }
        for (a, b) in self.v.iter_mut().zip(other.v) {
            *a &= !b;
        }
    }

    /// The union of `self` and `other`.
    pub fn union(mut self, other: &RegSet) -> RegSet {
        self.union_with(other);
        self
    }

    /// Replaces the VGPR part with that of `other` (the scalar part stays).
    pub fn set_vgprs_from(&mut self, other: &RegSet) {
        self.v = other.v;
    }

    /// Whether the set is empty.
    pub fn is_empty(&self) -> bool {
        self.s.iter().chain(self.v.iter()).all(|&w| w == 0)
    }

    /// Whether any VGPR is in the set.
    pub fn has_vgprs(&self) -> bool {
        self.v.iter().any(|&w| w != 0)
    }

    /// One past the highest VGPR in the set (0 when none).
    pub fn vgpr_bound(&self) -> u16 {
        (0..16)
            .rev()
            .find(|&i| self.v[i] != 0)
            .map_or(0, |i| i as u16 * 64 + 64 - self.v[i].leading_zeros() as u16)
    }

    /// One past the highest SGPR (s0–s105) in the set (0 when none).
    pub fn sgpr_bound(&self) -> u8 {
        (0..SGPRS)
            .rev()
            .find(|&n| self.contains(Reg::S(n)))
            .map_or(0, |n| n + 1)
    }

    /// The registers, scalar operands first, then SCC, then VGPRs.
    pub fn iter(&self) -> impl Iterator<Item = Reg> + '_ {
        (0..128u8)
            .map(Reg::S)
            .chain(std::iter::once(Reg::Scc))
            .chain((0..VGPRS).map(Reg::V))
            .filter(|r| self.contains(*r))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sets_hold_what_was_inserted() {
        let mut s = RegSet::EMPTY;
        s.insert_v(1020, 8);
        s.insert_s(104, 4);
        s.insert(Reg::Scc);
        s.insert(Reg::S(NULL));
        let all: Vec<String> = s.iter().map(|r| r.to_string()).collect();
        assert_eq!(
            all,
            ["s104", "s105", "vcc_lo", "vcc_hi", "scc", "v1020", "v1021", "v1022", "v1023"]
        );
        assert_eq!(s.vgpr_bound(), 1024);
        assert_eq!(s.sgpr_bound(), 106);
        assert!(!RegSet::ALL.contains(Reg::S(NULL)));
        assert!(RegSet::ALL.contains(Reg::Scc) && RegSet::ALL.contains(Reg::V(1023)));
        let mut t = RegSet::ALL;
        t.remove_all(&s);
        assert!(!t.contains(Reg::V(1021)) && t.contains(Reg::V(1019)));
        assert_eq!(RegSet::EMPTY.vgpr_bound(), 0);
    }
}
