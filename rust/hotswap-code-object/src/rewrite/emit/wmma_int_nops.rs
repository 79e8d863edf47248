//! Integer WMMA spacing: after `v_wmma_i32_16x16x64_iu8` (VOP3P 0x72) or
//! `v_swmmac_i32_16x16x128_iu8` (0x7B), A0 needs 8 independent VALU slots
//! before a VALU that reads or writes the WMMA's registers, where B0 needs 4
//! (COMGR's WMMA hazard table). The replacement is the WMMA followed by the
//! missing `v_nop`s.
//!
//! The count is conservative, without operand analysis: scanning forward from
//! the WMMA, each `v_nop` (`v_nop`, `v_nop_e64`) is a safe slot, and the first
//! other VALU instruction (taken as dependent), control transfer (`s_branch`,
//! `s_cbranch_*`, `s_code_end`, `s_endpgm*`, `s_set_pc_i64`, `s_swap_pc_i64`,
//! `s_rfe_i64`, `s_call_i64`), `ds_{load,store}_addtid_b32` (whose A0 fix is
//! VALU code), instruction the walker cannot size, or the end of the
//! function's bytes ends the scan. Other instructions (SALU, memory,
//! waits) neither count nor end it. So the padding is never less than A0
//! needs; it may be more than an operand-aware count would give. A `v_nop` has
//! no effect, so the padding never changes what the code computes.
//!
//! clang-22 already emits 8 `v_nop`s after these WMMAs (measured), so its
//! output needs no padding: [`pad`] then returns the WMMA unchanged.

use crate::gfx1250::{int_wmma_nops, INT_WMMA_A0_NOPS};

use super::wmma_fields::Vop3p;
use super::{Reason, V_NOP};

/// The independent VALU slots A0 needs after an integer WMMA.
pub const A0_SLOTS: u32 = INT_WMMA_A0_NOPS;

/// One padding.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Padding {
    /// The WMMA followed by `added` `v_nop`s.
    pub bytes: Vec<u8>,
    /// The `v_nop`s already there before the scan ended.
    pub present: u32,
    /// The `v_nop`s added (`A0_SLOTS - present`, or 0).
    pub added: u32,
}

/// Whether `bytes` is an integer (iu8) WMMA or SWMMAC.
pub fn is_int_wmma(bytes: &[u8]) -> bool {
    Vop3p::parse(bytes).is_some_and(|i| matches!(i.op(), 0x72 | 0x7B))
}

/// The padding of the integer WMMA `wmma` (8 bytes), `following` being the
/// bytes of its function after it (to the function's end).
pub fn pad(wmma: &[u8], following: &[u8]) -> Result<Padding, Reason> {
    if !is_int_wmma(wmma) {
        return Err(Reason::NotHandled("an integer (iu8) WMMA or SWMMAC"));
    }
    let present = int_wmma_nops(following);
    let added = A0_SLOTS.saturating_sub(present);
    let mut bytes = Vec::with_capacity(wmma.len() + 4 * added as usize);
    bytes.extend_from_slice(wmma);
    for _ in 0..added {
        bytes.extend_from_slice(&V_NOP);
    }
    Ok(Padding {
        bytes,
        present,
        added,
    })
}

/// The fix's name in the report.
pub const FIX: &str = "wmma-int-nops";

/// The seam's emitter: [`pad`] over the rest of the site's function.
pub fn emit(site: &mut super::Site<'_>) -> Result<super::Emitted, super::Refusal> {
    let padding = pad(site.original, site.following)?;
    Ok(super::Emitted {
        bytes: padding.bytes,
        fix: FIX,
        note: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    // v_wmma_i32_16x16x64_iu8 v[0:7], v[8:15], v[16:23], v[24:31]
    const IU8: [u8; 8] = [0x00, 0x00, 0x72, 0xcc, 0x08, 0x21, 0x62, 0x1c];
    // s_mov_b32 s0, 0 (SOP1) ; v_add_nc_u32_e32 v0, 1, v0 ; s_branch 0
    const S_MOV: [u8; 4] = [0x80, 0x00, 0x80, 0xbe];
    const V_ADD: [u8; 4] = [0x81, 0x00, 0x00, 0x4a];
    const S_BRANCH: [u8; 4] = [0x00, 0x00, 0xa0, 0xbf];

    fn cat(parts: &[&[u8]]) -> Vec<u8> {
        parts.concat()
    }

    #[test]
    fn adds_the_missing_nops_before_a_valu() {
        // Two v_nops, an SALU (neither counts nor stops), then a VALU.
        let following = cat(&[&V_NOP, &S_MOV, &V_NOP, &V_ADD]);
        let p = pad(&IU8, &following).unwrap();
        assert_eq!((p.present, p.added), (2, 6));
        assert_eq!(p.bytes, cat(&[&IU8, &V_NOP.repeat(6)]));
    }

    #[test]
    fn eight_nops_need_nothing_and_control_or_end_stops() {
        let p = pad(&IU8, &V_NOP.repeat(8)).unwrap();
        assert_eq!((p.present, p.added), (8, 0));
        assert_eq!(p.bytes, IU8);
        // A branch after 3 nops: the successor is not scanned.
        let p = pad(&IU8, &cat(&[&V_NOP.repeat(3), &S_BRANCH, &V_NOP.repeat(8)])).unwrap();
        assert_eq!(p.added, 5);
        // The function's end.
        assert_eq!(pad(&IU8, &[]).unwrap().added, 8);
        // v_nop_e64 counts.
        let nop_e64 = [0x00, 0x00, 0x80, 0xd5, 0x00, 0x00, 0x00, 0x00];
        assert_eq!(pad(&IU8, &nop_e64.repeat(8)).unwrap().added, 0);
    }

    #[test]
    fn only_integer_wmmas() {
        // v_wmma_f32_16x16x64_fp8_fp8
        let fp8 = [0x00, 0x00, 0x6a, 0xcc, 0x08, 0x31, 0xa2, 0x1c];
        assert!(matches!(pad(&fp8, &[]), Err(Reason::NotHandled(_))));
        assert!(is_int_wmma(&IU8));
    }
}
