//! FP8 conversions with CLAMP in VOP3 form (`v_cvt_pk_fp8_f32` 0x369,
//! `v_cvt_sr_fp8_f32` 0x36B, `v_cvt_f32_fp8_e64` 0x1EC, CLAMP = w0\[15\]): on
//! B0 CLAMP selects UE5M3, on A0 it is ignored and the result is E4M3.
//!
//! **Refused, always.** A software UE5M3 sequence must be bit-exact with B0,
//! and the sources available here do not define B0's conversion exactly. The
//! reference (`gfx1250-a0.md` §1.4, "Scratch (E5M3 CLAMP emulation)", from
//! COMGR's own emulation, not an ISA description) gives only: NaN → 0xFF,
//! overflow → 0xFE, round-to-nearest-even through an F16 intermediate (a
//! double rounding whose exact F16 step is not stated), a "direct exponent-31
//! path", and stochastic rounding's noise taken from `src1[31:12]`. It does
//! not state: UE5M3's exponent bias and whether it has subnormals; what a
//! negative input, -0, ±infinity or an f32 subnormal (under which denormal
//! mode) converts to; how the 20 noise bits are aligned and added to the
//! mantissa before truncation; the byte and word selection (`op_sel`) of the
//! packed and stochastic forms under CLAMP; and, for `v_cvt_f32_fp8`, what
//! the UE5M3 codes 0xFE/0xFF and the smallest codes decode to. Any sequence
//! written from that would be a guess, so [`emit`] refuses with
//! [`Reason::Semantics`]; the rewriter then reports the site as not fixed.

use super::{Expansion, Reason};

/// The three conversions, by VOP3 opcode.
const OPS: [u32; 3] = [0x369, 0x36B, 0x1EC];
/// VOP3 encoding, w0\[31:26\].
const VOP3: u32 = 0x35;

/// Whether `bytes` is one of the three conversions in VOP3 form with CLAMP.
pub fn is_fp8_clamp(bytes: &[u8]) -> bool {
    let Some(b) = bytes.get(..4) else {
        return false;
    };
    let w0 = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
    bytes.len() >= 8 && w0 >> 26 == VOP3 && OPS.contains(&((w0 >> 16) & 0x3FF)) && w0 & 0x8000 != 0
}

/// The replacement of an FP8 CLAMP conversion: always a refusal (see the
/// module documentation).
pub fn emit(bytes: &[u8]) -> Result<Expansion, Reason> {
    if !is_fp8_clamp(bytes) {
        return Err(Reason::NotHandled(
            "v_cvt_pk_fp8_f32, v_cvt_sr_fp8_f32 or v_cvt_f32_fp8_e64 with CLAMP",
        ));
    }
    Err(Reason::Semantics(
        "B0's UE5M3 conversion (bias, subnormals, negative and infinite inputs, \
         stochastic noise alignment, op_sel under CLAMP) is not defined by the sources",
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clamped_forms_are_refused_for_their_semantics() {
        // v_cvt_pk_fp8_f32 v1, v2, v3 clamp; v_cvt_sr_fp8_f32 v1, v2, v3 clamp;
        // v_cvt_f32_fp8_e64 v1, v2 clamp (llvm-mc-22)
        for b in [
            [0x01, 0x80, 0x69, 0xd7, 0x02, 0x07, 0x02, 0x00],
            [0x01, 0x80, 0x6b, 0xd7, 0x02, 0x07, 0x02, 0x00],
            [0x01, 0x80, 0xec, 0xd5, 0x02, 0x01, 0x00, 0x00],
        ] {
            assert!(matches!(emit(&b), Err(Reason::Semantics(_))));
            let mut plain = b;
            plain[1] = 0;
            assert!(matches!(emit(&plain), Err(Reason::NotHandled(_))));
        }
    }
}
