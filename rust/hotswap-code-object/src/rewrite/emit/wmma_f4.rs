//! `v_wmma_f32_32x16x128_f4` (VOP3P opcode 0x88), absent on A0, as two
//! `v_wmma_f32_16x16x128_f8f6f4` (0x33) with `matrix_a_fmt:MATRIX_FMT_FP4
//! matrix_b_fmt:MATRIX_FMT_FP4`, split along M:
//!
//! ```text
//! D[0:7]  = A[0:7]  × B + C[0:7]     (rows 0..15)
//! D[8:15] = A[8:15] × B + C[8:15]    (rows 16..31)
//! ```
//!
//! A (32×128 FP4) and C/D (32×16 f32) are 16 VGPRs each, their first eight
//! registers holding rows 0..15 and the last eight rows 16..31; B (128×16 FP4,
//! 8 VGPRs) is read by both (COMGR's split). An inline-constant C is used by
//! both halves; C's neg/abs modifiers are kept on both. Each result element is
//! computed by one operation over the same products as before
//! ([`Rounding::Same`]).
//!
//! When the first half's D would overwrite a source of the second (A's upper
//! half, B, C's upper half), the upper half runs first; when both orders
//! would, the site is refused. VGPRs above v255: each half is named by its
//! first register's field and bank, bracketed by `s_set_vgpr_msb` when that
//! differs from the mode in force (a tuple crossing v255/v256, which LLVM 22
//! allocates and which continues linearly).
//!
//! The halves are adjacent unless the second writes a register the first
//! reads (then [`super::wmma_k128::WAR_NOPS`] `v_nop`s separate them: what
//! LLVM 22 puts between an FP4 f8f6f4 WMMA and a VALU overwriting its A).
//!
//! The block-32 scaled form (`v_wmma_scale_f32_32x16x128_f4`, the LD_SCALE
//! prefix then the WMMA, 16 bytes) splits the same way into two
//! `v_wmma_scale_f32_16x16x128_f8f6f4`: the scale of A's rows 0..15 is in
//! lanes 0–15 of scale_src0 and that of rows 16..31 in lanes 16–31, so the
//! upper half selects them with `matrix_a_scale:MATRIX_SCALE_ROW1` (COMGR,
//! PR #3691); B's scale (both halves use all of B) is unchanged, and so are
//! the scale formats; the reuse hints are cleared; each half's unused
//! `scale_src2` is 0x100, its A0 form (a site whose field is not is also a
//! `wmma_scale` site, fixed this way). A prefix that already
//! selects ROW1 for A is refused (what it means for 32 rows is not known
//! here), as is a destination over a scale register the second half reads.
//! The block-16 form (`v_wmma_scale16_f32_32x16x128_f4`) is refused
//! ([`Reason::Scaled`]).

use super::wmma_fields::{
    emit as emit_ops, full, in_range, overlaps_src, scale_src2_vgpr0, source, Src, Vop3p, Wmma,
    SLOT_DST, SLOT_SRC0, SLOT_SRC1, SLOT_SRC2,
};
use super::wmma_k128::WAR_NOPS;
use super::{Expansion, Reason, Rounding};

/// `v_wmma_f32_32x16x128_f4`.
const F4_32X16: u32 = 0x88;
/// `v_wmma_f32_16x16x128_f8f6f4`.
const F8F6F4: u32 = 0x33;
/// The LD_SCALE / LD_SCALE16 prefixes of the scaled forms.
const LD_SCALE: u32 = 0x35;
const LD_SCALE16: u32 = 0x3A;

/// w0 bits known: vdst, neg_hi\[2\] (C abs), op_sel_hi\[2\] (bit 14, which LLVM
/// sets), opcode, encoding.
const W0_KNOWN: u32 = 0xff | 1 << 10 | 1 << 14 | 0xffff_0000;
/// w1 bits known: source fields, op_sel_hi\[1:0\] (0b11 as LLVM encodes),
/// neg_lo\[2\] (C neg).
const W1_KNOWN: u32 = 0x07ff_ffff | 3 << 27 | 1 << 31;
/// f8f6f4 with `matrix_a_fmt` = `matrix_b_fmt` = FP4 (4): a_fmt in
/// w0\[13:11\], b_fmt's high bit in w0\[14\], its low bits in w1\[28:27\] (0).
const FP4_FMT_W0: u32 = 1 << 13 | 1 << 14;

/// `matrix_a_scale:MATRIX_SCALE_ROW1` in the LD_SCALE prefix's w0.
const A_SCALE_ROW1: u32 = 1 << 11;

/// Whether `bytes` is a plain (8-byte) `v_wmma_f32_32x16x128_f4`.
pub fn is_f4(bytes: &[u8]) -> bool {
    Vop3p::parse(bytes).is_some_and(|i| i.op() == F4_32X16)
}

/// Splits `v_wmma_f32_32x16x128_f4` (`bytes`, 8 bytes) under the VGPR-MSB
/// `mode` in force at the site.
pub fn split(bytes: &[u8], mode: u8) -> Result<Expansion, Reason> {
    let mut prefix = None;
    let mut bytes = bytes;
    if bytes.len() == 16 && bytes[3] == 0xCC && u32::from(bytes[10]) == F4_32X16 {
        match u32::from(bytes[2]) {
            LD_SCALE16 => return Err(Reason::Scaled),
            LD_SCALE => {
                let p = Vop3p::parse(&bytes[..8])
                    .ok_or(Reason::NotHandled("v_wmma_scale_f32_32x16x128_f4"))?;
                if p.w0 & 0xff != 0 {
                    return Err(Reason::UnknownBits(u64::from(p.w0 & 0xff)));
                }
                if p.w0 & A_SCALE_ROW1 != 0 {
                    return Err(Reason::Unsupported(
                        "MATRIX_SCALE_ROW1 for the A scale of a 32-row f4 WMMA",
                    ));
                }
                prefix = Some(p);
                bytes = &bytes[8..];
            }
            _ => {}
        }
    }
    let i = Vop3p::parse(bytes)
        .filter(|i| i.op() == F4_32X16)
        .ok_or(Reason::NotHandled("v_wmma_f32_32x16x128_f4"))?;
    let unknown = u64::from((i.w0 & !W0_KNOWN) | ((i.w0 & 1 << 14) ^ 1 << 14))
        | u64::from((i.w1 & !W1_KNOWN) | ((i.w1 & 3 << 27) ^ 3 << 27)) << 32;
    if unknown != 0 {
        return Err(Reason::UnknownBits(unknown));
    }
    let d = full(i.vdst(), mode, SLOT_DST);
    let Src::Vgpr(a) = source(i.src(0), mode, SLOT_SRC0) else {
        return Err(Reason::NotVgpr("src0 (A)"));
    };
    let Src::Vgpr(b) = source(i.src(1), mode, SLOT_SRC1) else {
        return Err(Reason::NotVgpr("src1 (B)"));
    };
    let c = source(i.src(2), mode, SLOT_SRC2);
    // A non-VGPR C is used whole by both halves: only an inline constant
    // (the same value in every element) can be.
    if let Src::Field(f) = c {
        if !matches!(f, 128..=208 | 240..=248) {
            return Err(Reason::NotVgpr(
                "src2 (C), neither a VGPR tuple nor an inline constant",
            ));
        }
    }
    in_range("vdst (D)", d, 16)?;
    in_range("src0 (A)", a, 16)?;
    in_range("src1 (B)", b, 8)?;
    if let Src::Vgpr(c) = c {
        in_range("src2 (C)", c, 16)?;
    }
    let c_half = |h: u32| match c {
        Src::Vgpr(c) => Src::Vgpr(c + h),
        f => f,
    };
    // The scale VGPRs (block-32: one register each; MSB-free), read by both.
    let scale_vgprs: Vec<Src> = prefix
        .map(|p| {
            [p.w1 & 0x1ff, (p.w1 >> 9) & 0x1ff]
                .into_iter()
                .filter(|&f| f >= 0x100)
                .map(|f| Src::Vgpr(f & 0xff))
                .collect()
        })
        .unwrap_or_default();
    let over_scales = |h: u32| scale_vgprs.iter().any(|&s| overlaps_src(d + h, 8, s, 1));
    if over_scales(0) || over_scales(8) {
        return Err(Reason::Overlap(
            "vdst (D) overlaps a scale operand, which both halves read",
        ));
    }
    // Writing D's half `h` clobbers a source of the other half's operation.
    let clobbers = |h: u32| {
        let o = 8 - h;
        overlaps_src(d + h, 8, Src::Vgpr(a + o), 8)
            || overlaps_src(d + h, 8, Src::Vgpr(b), 8)
            || overlaps_src(d + h, 8, c_half(o), 8)
    };
    let swapped = match (clobbers(0), clobbers(8)) {
        (false, _) => false,
        (true, false) => true,
        (true, true) => {
            return Err(Reason::Overlap(
                "vdst (D) overlaps sources of the other M half in both orders",
            ))
        }
    };
    let w0 = (i.w0 & (1 << 10)) | F8F6F4 << 16 | FP4_FMT_W0 | 0xCC << 24;
    let w1 = i.w1 & (1 << 31);
    let half = |h: u32| Wmma {
        w0,
        w1,
        dst: d + h,
        src: [Src::Vgpr(a + h), Src::Vgpr(b), c_half(h)],
        // Reuse hints cleared; the upper rows' A scales from lanes 16-31;
        // scale_src2 in its A0 form (the site's own may not be).
        prefix: prefix.map(|p| {
            let row = if h == 8 { A_SCALE_ROW1 } else { 0 };
            [(p.w0 & !(3 << 13)) | row, scale_src2_vgpr0(p.w1)]
        }),
    };
    let ops = if swapped {
        [half(8), half(0)]
    } else {
        [half(0), half(8)]
    };
    // Write-after-read: the second's D over the first's sources.
    let (h1, h2) = if swapped { (8, 0) } else { (0, 8) };
    let war = overlaps_src(d + h2, 8, Src::Vgpr(a + h1), 8)
        || overlaps_src(d + h2, 8, Src::Vgpr(b), 8)
        || overlaps_src(d + h2, 8, c_half(h1), 8);
    let mut out = Vec::with_capacity(32);
    emit_ops(&mut out, &ops, mode, if war { WAR_NOPS } else { 0 });
    Ok(Expansion {
        bytes: out,
        swapped,
        rounding: Rounding::Same,
    })
}

/// The fix's name in the report.
pub const FIX: &str = "wmma-f4-m-split";
/// The fix's name when the upper half runs first.
pub const FIX_SWAPPED: &str = "wmma-f4-m-split-swapped";

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
    fn splits_along_m_into_two_fp4_f8f6f4() {
        // v_wmma_f32_32x16x128_f4 v[0:15], v[16:31], v[32:39], v[40:55] neg_lo:[0,0,1]
        let orig = [0x00, 0x40, 0x88, 0xcc, 0x10, 0x41, 0xa2, 0x9c];
        let e = split(&orig, 0).unwrap();
        assert!(!e.swapped);
        assert_eq!(e.rounding, Rounding::Same);
        assert_eq!(
            e.bytes,
            [
                // v_wmma_f32_16x16x128_f8f6f4 v[0:7], v[16:23], v[32:39], v[40:47]
                //   neg_lo:[0,0,1] matrix_a_fmt:MATRIX_FMT_FP4 matrix_b_fmt:MATRIX_FMT_FP4
                0x00, 0x60, 0x33, 0xcc, 0x10, 0x41, 0xa2, 0x84, //
                // v_wmma_f32_16x16x128_f8f6f4 v[8:15], v[24:31], v[32:39], v[48:55]
                //   neg_lo:[0,0,1] matrix_a_fmt:MATRIX_FMT_FP4 matrix_b_fmt:MATRIX_FMT_FP4
                0x08, 0x60, 0x33, 0xcc, 0x18, 0x41, 0xc2, 0x84,
            ]
        );
    }

    #[test]
    fn accumulate_in_place_and_overlaps() {
        // v_wmma_f32_32x16x128_f4 v[16:31], v[0:15], v[32:39], v[16:31]: natural.
        let e = split(&[0x10, 0x40, 0x88, 0xcc, 0x00, 0x41, 0x42, 0x1c], 0).unwrap();
        assert!(!e.swapped);
        // D = v[8:23] overlaps A's upper half v[8:15] with its lower half:
        // v_wmma_f32_32x16x128_f4 v[8:23], v[0:15], v[32:39], v[40:55] → upper first.
        let e = split(&[0x08, 0x40, 0x88, 0xcc, 0x00, 0x41, 0xa2, 0x1c], 0).unwrap();
        assert!(e.swapped);
        assert_eq!(
            e.bytes,
            [
                // v_wmma_f32_16x16x128_f8f6f4 v[16:23], v[8:15], v[32:39], v[48:55] (FP4)
                0x10, 0x60, 0x33, 0xcc, 0x08, 0x41, 0xc2, 0x04, //
                // 4 × v_nop: the second writes v[8:15], which the first read as A
                0x00, 0x00, 0x00, 0x7e, 0x00, 0x00, 0x00, 0x7e, //
                0x00, 0x00, 0x00, 0x7e, 0x00, 0x00, 0x00, 0x7e, //
                // v_wmma_f32_16x16x128_f8f6f4 v[8:15], v[0:7], v[32:39], v[40:47] (FP4)
                0x08, 0x60, 0x33, 0xcc, 0x00, 0x41, 0xa2, 0x04,
            ]
        );
        // D = v[32:47]: its lower half is B, read by both: refused.
        assert!(matches!(
            split(&[0x20, 0x40, 0x88, 0xcc, 0x00, 0x41, 0xa2, 0x1c], 0),
            Err(Reason::Overlap(_))
        ));
    }

    #[test]
    fn block32_scaled_form_selects_row1_for_the_upper_half() {
        // v_wmma_scale_f32_32x16x128_f4 v[0:15], v[16:31], v[32:39], v[40:55], v56, v58
        let orig = [
            0x00, 0x00, 0x35, 0xcc, 0x38, 0x75, 0x02, 0x04, //
            0x00, 0x40, 0x88, 0xcc, 0x10, 0x41, 0xa2, 0x1c,
        ];
        let e = split(&orig, 0).unwrap();
        assert_eq!(
            e.bytes,
            [
                // v_wmma_scale_f32_16x16x128_f8f6f4 v[0:7], v[16:23], v[32:39], v[40:47],
                //   v56, v58 matrix_a_fmt:MATRIX_FMT_FP4 matrix_b_fmt:MATRIX_FMT_FP4
                0x00, 0x00, 0x35, 0xcc, 0x38, 0x75, 0x02, 0x04, //
                0x00, 0x60, 0x33, 0xcc, 0x10, 0x41, 0xa2, 0x04, //
                // v_wmma_scale_f32_16x16x128_f8f6f4 v[8:15], v[24:31], v[32:39], v[48:55],
                //   v56, v58 (FP4) matrix_a_scale:MATRIX_SCALE_ROW1
                0x00, 0x08, 0x35, 0xcc, 0x38, 0x75, 0x02, 0x04, //
                0x08, 0x60, 0x33, 0xcc, 0x18, 0x41, 0xc2, 0x04,
            ]
        );
        // A stale scale_src2 (bits [58:50] of the prefix: here 0x108, byte
        // 6's bit 5 set, as a fuzz mutant had it; the site is then also a
        // wmma_scale site): both halves get the A0 form 0x100, the same
        // bytes as above, so rewriting the output finds nothing to fix.
        let mut stale = orig;
        stale[6] |= 0x20;
        assert_eq!(split(&stale, 0).unwrap().bytes, e.bytes);
        // A scale already on ROW1: refused.
        let mut row1 = orig;
        row1[1] = 0x08;
        assert!(matches!(split(&row1, 0), Err(Reason::Unsupported(_))));
        // D = v[56:71] over the scale v56: refused.
        let mut over = orig;
        over[8] = 56;
        assert!(matches!(split(&over, 0), Err(Reason::Overlap(_))));
    }

    #[test]
    fn banks_and_refusals() {
        // Mode 0x55 (src0, src1, src2, vdst in bank 1): halves stay in bank 1,
        // no bracket.
        let e = split(&[0x00, 0x40, 0x88, 0xcc, 0x10, 0x41, 0xa2, 0x1c], 0x55).unwrap();
        assert_eq!(e.bytes.len(), 16);
        // D = v[248:263] crosses v255: the upper half is v[256:263] (bank 1).
        let e = split(&[0xf8, 0x40, 0x88, 0xcc, 0x10, 0x41, 0xa2, 0x1c], 0).unwrap();
        assert_eq!(
            e.bytes,
            [
                // v_wmma_f32_16x16x128_f8f6f4 v[248:255], v[16:23], v[32:39], v[40:47] (FP4)
                0xf8, 0x60, 0x33, 0xcc, 0x10, 0x41, 0xa2, 0x04, //
                // s_set_vgpr_msb 0x40
                0x40, 0x00, 0x86, 0xbf, //
                // v_wmma_f32_16x16x128_f8f6f4 v[0:7] /*v[256:263]*/, v[24:31], v[32:39], v[48:55]
                0x00, 0x60, 0x33, 0xcc, 0x18, 0x41, 0xc2, 0x04, //
                // s_set_vgpr_msb 0x4000
                0x00, 0x40, 0x86, 0xbf,
            ]
        );
        // D past v1023 (mode 0xc0: D = v[1016:1031]).
        assert!(matches!(
            split(&[0xf8, 0x40, 0x88, 0xcc, 0x10, 0x41, 0xa2, 0x1c], 0xc0),
            Err(Reason::TupleOutOfRange { .. })
        ));
        // C an SGPR field (s8: 0x008): refused; an inline constant (1.0: 0xf2) splits.
        assert_eq!(
            split(&[0x00, 0x40, 0x88, 0xcc, 0x10, 0x41, 0x22, 0x18], 0),
            Err(Reason::NotVgpr(
                "src2 (C), neither a VGPR tuple nor an inline constant"
            ))
        );
        assert!(split(&[0x00, 0x40, 0x88, 0xcc, 0x10, 0x41, 0xca, 0x1b], 0).is_ok());
        // op_sel_hi[2] (w0 bit 14) clear: not what LLVM encodes.
        assert_eq!(
            split(&[0x00, 0x00, 0x88, 0xcc, 0x10, 0x41, 0xa2, 0x1c], 0),
            Err(Reason::UnknownBits(1 << 14))
        );
        // The block-16 scaled form: v_wmma_scale16_f32_32x16x128_f4 (LD_SCALE16 + 0x88).
        let mut scaled = [0u8; 16];
        scaled[..4].copy_from_slice(&[0x00, 0x00, 0x3a, 0xcc]);
        scaled[8..12].copy_from_slice(&[0x00, 0x40, 0x88, 0xcc]);
        assert_eq!(split(&scaled, 0), Err(Reason::Scaled));
        assert!(is_f4(&[0x00, 0x40, 0x88, 0xcc, 0x10, 0x41, 0xa2, 0x1c]));
    }
}
