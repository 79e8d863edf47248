//! The eight dense K=128 FP8/BF8 WMMAs (`v_wmma_{f32,f16}_16x16x128_{fp8,bf8}_{fp8,bf8}`,
//! VOP3P opcodes 0x80–0x87), absent on A0, as two K=64 WMMAs of the same
//! variant (0x6A–0x71) chained through the accumulator:
//!
//! ```text
//! D = A[0:7]  × B[0:7]  + C      (C's neg/abs modifiers kept)
//! D = A[8:15] × B[8:15] + D      (no source modifier)
//! ```
//!
//! A and B are 16 VGPRs each; their first eight registers hold K = 0..63 and
//! the last eight K = 64..127 (COMGR's split and the ISA's 8-bit matrix
//! layout). The `matrix_a_reuse`/`matrix_b_reuse` hints are cleared (the
//! operands differ from one operation to the next). Spacing: LLVM 22 emits
//! same-shape WMMAs chained through src2 (C = D) back to back, but puts 4
//! VALU slots between a K=64 FP8 WMMA and a VALU that overwrites one of its
//! sources (both measured on clang-22 output); so the halves are adjacent
//! unless the second writes a register the first reads other than as that
//! accumulator (D over A or B, or over a C other than D), when [`WAR_NOPS`]
//! `v_nop`s separate them. A0 needs fewer slots than B0 after these WMMAs
//! (gfx1250-a0.md, WmmaHazard), so the spacing the compiler left after the
//! original still covers the second half.
//!
//! When D overlaps the upper halves of A or B, the natural order would
//! overwrite them before the second operation reads them: the upper half runs
//! first instead (`D = A_hi × B_hi + C; D = A_lo × B_lo + D`); when D overlaps
//! both a lower and an upper half, the site is refused. VGPRs above v255: each
//! emitted operand is named by its first register's 8-bit field and bank; when
//! an operation needs other banks than the mode in force (the second
//! operation's src2 = D in another bank than src2's, or a half of a tuple that
//! crosses v255/v256, which LLVM 22 allocates and which continues linearly),
//! it is bracketed by `s_set_vgpr_msb` and the mode restored after it.
//!
//! Rounding: the accumulator is rounded to the destination format between the
//! halves (f32, or f16 for the `f16` variants), which the original rounds only
//! once ([`Rounding::IntermediateF32`] / [`Rounding::IntermediateF16`]).

use super::wmma_fields::{
    emit as emit_ops, full, in_range, overlaps_src, source, Src, Vop3p, Wmma, SLOT_DST, SLOT_SRC0,
    SLOT_SRC1, SLOT_SRC2,
};
use super::{Expansion, Reason, Rounding};

/// `v_nop`s between two WMMAs when the second overwrites a source of the
/// first (what LLVM 22 puts between a K=64 FP8 WMMA and a VALU overwriting
/// its A).
pub const WAR_NOPS: u32 = 4;

/// The first K=128 opcode (`v_wmma_f32_16x16x128_fp8_fp8`).
const K128_FIRST: u32 = 0x80;
/// K=128 opcode − K=64 opcode of the same variant.
const K64_DELTA: u32 = 0x16;

/// w0 bits this expansion knows: vdst, neg_hi\[2\] (C abs), the two reuse
/// bits, opcode, encoding.
const W0_KNOWN: u32 = 0xff | 1 << 10 | 3 << 13 | 0xffff_0000;
/// w1 bits it knows: the source fields, op_sel_hi\[1:0\] (must be 0b11, what
/// LLVM encodes), neg_lo\[2\] (C neg).
const W1_KNOWN: u32 = 0x07ff_ffff | 3 << 27 | 1 << 31;

/// Whether `bytes` is one of the eight K=128 FP8/BF8 WMMAs.
pub fn is_k128(bytes: &[u8]) -> bool {
    Vop3p::parse(bytes).is_some_and(|i| (K128_FIRST..K128_FIRST + 8).contains(&i.op()))
}

/// Splits the K=128 WMMA `bytes` (8 bytes) under the VGPR-MSB `mode` in force
/// at the site.
pub fn split(bytes: &[u8], mode: u8) -> Result<Expansion, Reason> {
    let i = Vop3p::parse(bytes)
        .filter(|i| (K128_FIRST..K128_FIRST + 8).contains(&i.op()))
        .ok_or(Reason::NotHandled("a dense K=128 FP8/BF8 WMMA"))?;
    let unknown = u64::from(i.w0 & !W0_KNOWN)
        | u64::from((i.w1 & !W1_KNOWN) | ((i.w1 & 3 << 27) ^ 3 << 27)) << 32;
    if unknown != 0 {
        return Err(Reason::UnknownBits(unknown));
    }
    let f16 = i.op() >= K128_FIRST + 4;
    let n = if f16 { 4 } else { 8 }; // accumulator VGPRs
    let d = full(i.vdst(), mode, SLOT_DST);
    let Src::Vgpr(a) = source(i.src(0), mode, SLOT_SRC0) else {
        return Err(Reason::NotVgpr("src0 (A)"));
    };
    let Src::Vgpr(b) = source(i.src(1), mode, SLOT_SRC1) else {
        return Err(Reason::NotVgpr("src1 (B)"));
    };
    let c = source(i.src(2), mode, SLOT_SRC2);
    in_range("vdst (D)", d, n)?;
    in_range("src0 (A)", a, 16)?;
    in_range("src1 (B)", b, 16)?;
    if let Src::Vgpr(c) = c {
        in_range("src2 (C)", c, n)?;
    }
    let clobbers = |half: u32| {
        overlaps_src(d, n, Src::Vgpr(a + half), 8) || overlaps_src(d, n, Src::Vgpr(b + half), 8)
    };
    let swapped = match (clobbers(8), clobbers(0)) {
        (false, _) => false,
        (true, false) => true,
        (true, true) => {
            return Err(Reason::Overlap(
                "vdst (D) overlaps both K halves of src0/src1: either order overwrites \
                 an input of the second operation",
            ))
        }
    };
    let op64 = (i.op() - K64_DELTA) << 16;
    // Opcode replaced, reuse hints and vdst cleared.
    let w0 = (i.w0 & !(0xff << 16) & !(3 << 13) & !0xff) | op64;
    let w1 = i.w1 & !0x07ff_ffff;
    let (first, second) = if swapped { (8, 0) } else { (0, 8) };
    let ops = [
        Wmma {
            w0,
            w1,
            dst: d,
            src: [Src::Vgpr(a + first), Src::Vgpr(b + first), c],
            prefix: None,
        },
        Wmma {
            w0: w0 & !(1 << 10),
            w1: w1 & !(1 << 31),
            dst: d,
            src: [Src::Vgpr(a + second), Src::Vgpr(b + second), Src::Vgpr(d)],
            prefix: None,
        },
    ];
    // The second operation writes D: a write-after-read of the first's
    // sources unless D is only the chained accumulator.
    let war = overlaps_src(d, n, Src::Vgpr(a + first), 8)
        || overlaps_src(d, n, Src::Vgpr(b + first), 8)
        || (c != Src::Vgpr(d) && overlaps_src(d, n, c, n));
    let mut out = Vec::with_capacity(48);
    emit_ops(&mut out, &ops, mode, if war { WAR_NOPS } else { 0 });
    Ok(Expansion {
        bytes: out,
        swapped,
        rounding: if f16 {
            Rounding::IntermediateF16
        } else {
            Rounding::IntermediateF32
        },
    })
}

/// The fix's name in the report.
pub const FIX: &str = "wmma-k128-split";
/// The fix's name when the upper half runs first.
pub const FIX_SWAPPED: &str = "wmma-k128-split-swapped";

/// The seam's emitter: [`split`] at the site's VGPR-MSB mode.
pub fn emit(site: &mut super::Site<'_>) -> Result<super::Emitted, super::Refusal> {
    Ok(super::emitted(
        split(site.original, site.vgpr_msb)?,
        FIX,
        FIX_SWAPPED,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    // Expected bytes: llvm-mc-22 -triple=amdgcn-amd-amdhsa -mcpu=gfx1250 -show-encoding.

    #[test]
    fn f32_fp8_splits_into_two_k64_chained() {
        // v_wmma_f32_16x16x128_fp8_fp8 v[0:7], v[8:23], v[24:39], v[40:47] neg_lo:[0,0,1]
        //   neg_hi:[0,0,1] matrix_a_reuse
        let orig = [0x00, 0x24, 0x80, 0xcc, 0x08, 0x31, 0xa2, 0x9c];
        let e = split(&orig, 0).unwrap();
        assert!(!e.swapped);
        assert_eq!(e.rounding, Rounding::IntermediateF32);
        assert_eq!(
            e.bytes,
            [
                // v_wmma_f32_16x16x64_fp8_fp8 v[0:7], v[8:15], v[24:31], v[40:47]
                //   neg_lo:[0,0,1] neg_hi:[0,0,1]
                0x00, 0x04, 0x6a, 0xcc, 0x08, 0x31, 0xa2, 0x9c, //
                // v_wmma_f32_16x16x64_fp8_fp8 v[0:7], v[16:23], v[32:39], v[0:7]
                0x00, 0x00, 0x6a, 0xcc, 0x10, 0x41, 0x02, 0x1c,
            ]
        );
    }

    #[test]
    fn f16_bf8_with_inline_constant_accumulator() {
        // v_wmma_f16_16x16x128_bf8_bf8 v[0:3], v[8:23], v[24:39], 1.0
        let orig = [0x00, 0x00, 0x87, 0xcc, 0x08, 0x31, 0xca, 0x1b];
        let e = split(&orig, 0).unwrap();
        assert_eq!(e.rounding, Rounding::IntermediateF16);
        assert_eq!(
            e.bytes,
            [
                // v_wmma_f16_16x16x64_bf8_bf8 v[0:3], v[8:15], v[24:31], 1.0
                0x00, 0x00, 0x71, 0xcc, 0x08, 0x31, 0xca, 0x1b, //
                // v_wmma_f16_16x16x64_bf8_bf8 v[0:3], v[16:23], v[32:39], v[0:3]
                0x00, 0x00, 0x71, 0xcc, 0x10, 0x41, 0x02, 0x1c,
            ]
        );
    }

    #[test]
    fn dst_over_the_upper_half_swaps_and_over_both_refuses() {
        // v_wmma_f32_16x16x128_fp8_bf8 v[16:23], v[0:15], v[32:47], v[16:23]
        // (D = A[16:23]? no: A is v[0:15]; D is v[16:23], B v[32:47]) → natural.
        let natural = [0x10, 0x00, 0x81, 0xcc, 0x00, 0x41, 0x42, 0x1c];
        assert!(!split(&natural, 0).unwrap().swapped);
        // D = v[8:15] = A's upper half: upper half first.
        // v_wmma_f32_16x16x128_fp8_fp8 v[8:15], v[0:15], v[32:47], v[48:55]
        let upper = [0x08, 0x00, 0x80, 0xcc, 0x00, 0x41, 0xc2, 0x1c];
        let e = split(&upper, 0).unwrap();
        assert!(e.swapped);
        assert_eq!(
            e.bytes,
            [
                // v_wmma_f32_16x16x64_fp8_fp8 v[8:15], v[8:15], v[40:47], v[48:55]
                0x08, 0x00, 0x6a, 0xcc, 0x08, 0x51, 0xc2, 0x1c, //
                // 4 × v_nop: the second writes v[8:15], which the first read as A
                0x00, 0x00, 0x00, 0x7e, 0x00, 0x00, 0x00, 0x7e, //
                0x00, 0x00, 0x00, 0x7e, 0x00, 0x00, 0x00, 0x7e, //
                // v_wmma_f32_16x16x64_fp8_fp8 v[8:15], v[0:7], v[32:39], v[8:15]
                0x08, 0x00, 0x6a, 0xcc, 0x00, 0x41, 0x22, 0x1c,
            ]
        );
        // D = v[4:11]: both halves of A.
        let both = [0x04, 0x00, 0x80, 0xcc, 0x00, 0x41, 0xc2, 0x1c];
        assert!(matches!(split(&both, 0), Err(Reason::Overlap(_))));
    }

    #[test]
    fn banked_accumulator_is_bracketed() {
        // Mode 0x41: vdst in bank 1, src0 in bank 1, src1/src2 bank 0:
        // v_wmma_f32_16x16x128_fp8_fp8 v[256:263], v[264:279], v[24:39], v[40:47]
        let orig = [0x00, 0x00, 0x80, 0xcc, 0x08, 0x31, 0xa2, 0x1c];
        let e = split(&orig, 0x41).unwrap();
        assert_eq!(
            e.bytes,
            [
                // v_wmma_f32_16x16x64_fp8_fp8 v[0:7], v[8:15], v[24:31], v[40:47] (mode 0x41)
                0x00, 0x00, 0x6a, 0xcc, 0x08, 0x31, 0xa2, 0x1c, //
                // s_set_vgpr_msb 0x4151: src2 → bank 1
                0x51, 0x41, 0x86, 0xbf, //
                // v_wmma_f32_16x16x64_fp8_fp8 v[0:7], v[16:23], v[32:39], v[0:7]
                0x00, 0x00, 0x6a, 0xcc, 0x10, 0x41, 0x02, 0x1c, //
                // s_set_vgpr_msb 0x5141
                0x41, 0x51, 0x86, 0xbf,
            ]
        );
    }

    #[test]
    fn a_tuple_crossing_v255_splits_into_banked_halves() {
        // v_wmma_f32_16x16x128_fp8_fp8 v[0:7], v[248:263], v[24:39], v[40:47] (mode 0):
        // A's upper half is v[256:263], field 0 in bank 1.
        let e = split(&[0x00, 0x00, 0x80, 0xcc, 0xf8, 0x31, 0xa2, 0x1c], 0).unwrap();
        assert_eq!(
            e.bytes,
            [
                // v_wmma_f32_16x16x64_fp8_fp8 v[0:7], v[248:255], v[24:31], v[40:47]
                0x00, 0x00, 0x6a, 0xcc, 0xf8, 0x31, 0xa2, 0x1c, //
                // s_set_vgpr_msb 0x01
                0x01, 0x00, 0x86, 0xbf, //
                // v_wmma_f32_16x16x64_fp8_fp8 v[0:7], v[0:7] /*v[256:263]*/, v[32:39], v[0:7]
                0x00, 0x00, 0x6a, 0xcc, 0x00, 0x41, 0x02, 0x1c, //
                // s_set_vgpr_msb 0x100
                0x00, 0x01, 0x86, 0xbf,
            ]
        );
    }

    #[test]
    fn refusals_name_the_reason() {
        // Not a K=128 WMMA: v_wmma_f32_16x16x64_fp8_fp8.
        assert!(matches!(
            split(&[0x00, 0x00, 0x6a, 0xcc, 0x08, 0x31, 0xa2, 0x1c], 0),
            Err(Reason::NotHandled(_))
        ));
        // A tuple past v1023: mode 0xff, A = v[1016:1031].
        assert_eq!(
            split(&[0x00, 0x00, 0x80, 0xcc, 0xf8, 0x31, 0xa2, 0x1c], 0xff),
            Err(Reason::TupleOutOfRange {
                operand: "src0 (A)",
                first: 1016,
                len: 16
            })
        );
        // An SGPR as A (src0 field 8 = s8).
        assert_eq!(
            split(&[0x00, 0x00, 0x80, 0xcc, 0x08, 0x30, 0xa2, 0x1c], 0),
            Err(Reason::NotVgpr("src0 (A)"))
        );
        // clamp (w0 bit 15), and op_sel_hi not 0b11.
        assert_eq!(
            split(&[0x00, 0x80, 0x80, 0xcc, 0x08, 0x31, 0xa2, 0x1c], 0),
            Err(Reason::UnknownBits(1 << 15))
        );
        assert_eq!(
            split(&[0x00, 0x00, 0x80, 0xcc, 0x08, 0x31, 0xa2, 0x14], 0),
            Err(Reason::UnknownBits(1 << 59))
        );
        assert!(is_k128(&[0x00, 0x00, 0x80, 0xcc, 0x08, 0x31, 0xa2, 0x1c]));
    }
}
