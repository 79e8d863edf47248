//! The AMDGPU calling conventions, as liveness needs them: what a caller may
//! expect preserved across a call (live at a callable function's return even
//! when the function never touches it) and where return values travel.
//!
//! From LLVM's `AMDGPUCallingConv.td` and AMDGPUUsage "Call Convention":
//! - default C convention (`CSR_AMDGPU`): VGPRs v40–47, v56–63, ..., v248–255
//!   (8 preserved after every 8 clobbered, from v40); SGPRs s30–s105 in the
//!   LLVM releases before the striped layout, s30–39, s48–55, s64–71, s80–87,
//!   s96–105 in the striped one — an object does not say which compiler built
//!   it, so the union (s30–s105) is preserved; return values in v0–v31;
//! - `amdgpu_gfx` (`CSR_AMDGPU_SI_Gfx`): the same VGPRs, SGPRs s4–s31 and
//!   s64–s105 (rocm-systems #9261: a translator that used s4–s31 as scratch in
//!   such a function corrupted its callers); return values in v0–v31 and, `inreg`,
//!   s0–s29 (taken as s0–s31);
//! - both: EXEC is preserved, the stack pointer s32 and frame pointer s33 are
//!   inside the preserved ranges, VCC/SCC/M0 are clobbered.
//!
//! An ELF function symbol does not record its convention, so
//! [`Convention::Unknown`] (the union of both) is what the analysis uses unless
//! the caller of the API knows better.

use super::regs::{RegSet, EXEC_HI, EXEC_LO};

/// A calling convention of a callable (non-kernel) function.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Convention {
    /// The default C convention of compute code (HIP, OpenCL functions).
    C,
    /// `amdgpu_gfx`.
    Gfx,
    /// Not known: everything either convention preserves or returns.
    Unknown,
}

fn csr_vgprs(set: &mut RegSet) {
    let mut first = 40;
    while first < 256 {
        set.insert_v(first, 8);
        first += 16;
    }
}

/// Registers a caller may expect unchanged after a call to a function of
/// `convention`.
pub fn callee_saved(convention: Convention) -> RegSet {
    let mut set = RegSet::EMPTY;
    csr_vgprs(&mut set);
    match convention {
        Convention::C => set.insert_s(30, 76),
        Convention::Gfx => {
            set.insert_s(4, 28);
            set.insert_s(64, 42);
        }
        Convention::Unknown => set.insert_s(4, 102),
    }
    set.insert_s(EXEC_LO, 1);
    set.insert_s(EXEC_HI, 1);
    set
}

/// Registers that may carry return values.
pub fn return_values(convention: Convention) -> RegSet {
    let mut set = RegSet::EMPTY;
    set.insert_v(0, 32);
    if convention != Convention::C {
        set.insert_s(0, 32);
    }
    set
}

/// What is live at a return (`s_set_pc_i64 s[30:31]`) of a callable function
/// of `convention`: the preserved registers, the return values and the return
/// address.
pub fn live_at_return(convention: Convention) -> RegSet {
    let mut set = callee_saved(convention).union(&return_values(convention));
    set.insert_s(30, 2);
    set
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::liveness::regs::Reg;

    #[test]
    fn conventions_preserve_what_llvm_lists() {
        let c = callee_saved(Convention::C);
        let gfx = callee_saved(Convention::Gfx);
        let any = callee_saved(Convention::Unknown);
        for v in [40, 47, 56, 63, 248, 255] {
            assert!(c.contains(Reg::V(v)) && gfx.contains(Reg::V(v)), "v{v}");
        }
        for v in [0, 31, 39, 48, 55, 247, 256, 1023] {
            assert!(!any.contains(Reg::V(v)), "v{v}");
        }
        // amdgpu_gfx: s4-s31 preserved (rocm-systems #9261), s32-s63 not.
        for s in [4, 20, 31, 64, 105] {
            assert!(gfx.contains(Reg::S(s)), "s{s}");
        }
        assert!(!gfx.contains(Reg::S(3)) && !gfx.contains(Reg::S(40)));
        assert!(!c.contains(Reg::S(29)) && c.contains(Reg::S(30)) && c.contains(Reg::S(105)));
        for s in 4..106 {
            assert!(any.contains(Reg::S(s)), "s{s}");
        }
        assert!(!any.contains(Reg::S(106)) && !any.contains(Reg::Scc));
        assert!(any.contains(Reg::S(EXEC_LO)));
        assert!(live_at_return(Convention::C).contains(Reg::V(0)));
        assert!(live_at_return(Convention::Unknown).contains(Reg::S(0)));
    }
}
