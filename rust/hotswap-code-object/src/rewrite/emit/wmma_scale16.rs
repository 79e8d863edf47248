//! `v_wmma_scale16_f32_16x16x128_f8f6f4` (VOP3PX3: the LD_SCALE16 prefix,
//! opcode 0x3A, with 64-bit block-16 scale operands, then the f8f6f4 WMMA),
//! which A0 lacks, as two block-32 `v_wmma_scale_f32_16x16x128_f8f6f4`
//! (LD_SCALE, 0x35) split exactly along K, chained through the accumulator
//! (COMGR's WmmaScale16 rule):
//!
//! ```text
//! pass lo: sA = even bytes of scale_src0, sB = even bytes of scale_src1,
//!          T = A with the high 16-wide K sub-block of every 32-block zeroed,
//!          D = scale(T, sA) × scale(B, sB) + C
//! pass hi: odd bytes, the low sub-blocks zeroed, D = … + D
//! ```
//!
//! Block-16 scale byte i scales K = 16i..16i+15; a block-32 scale byte b
//! scales K = 32b..32b+31. With the other sub-block of A zero, the pass's
//! block-32 scale byte (byte 2b or 2b+1 of the block-16 operand) applies to
//! exactly the terms the original scaled with it: each term of the original
//! sum appears in exactly one pass with its own scales. The accumulator is
//! rounded to f32 between the passes ([`Rounding::IntermediateF32`]). A term
//! whose B element is infinite or NaN in the masked sub-block gives NaN (0 ×
//! ∞) in the split where the original gave that element's own result.
//!
//! Zero masking (COMGR's rule, which the ISA's operand layout makes exact): a
//! 16-wide K sub-block of an FP8/BF8 A is a lane half (lanes 0–15 the low
//! sub-block: `v_mov_b32_dpp … row_mask:0x1` copies only them into a zeroed
//! scratch tuple; `0x2` the high one); of an FP4 A a VGPR (even VGPRs the low
//! sub-block). FP6/BF6 A is refused. Scales are gathered with `v_perm_b32`
//! (selector 0x06040200: bytes 0, 2 of the low and high dwords; 0x07050301:
//! bytes 1, 3); an SGPR pair is first copied to a VGPR (one constant-bus
//! read beside the literal selector).
//!
//! The copies and gathers are ordinary VALU instructions and so follow EXEC;
//! a WMMA requires EXEC to be all ones, which the split therefore assumes.
//!
//! Spacing: [`WAR_NOPS`] `v_nop`s follow each scaled WMMA, since the next
//! instructions (the second pass's gathers and copies, or whatever the caller
//! later writes into the dead scratch registers) overwrite its A and scale
//! sources: LLVM 22 puts 8 VALU slots between a block-32 scaled FP8 f8f6f4
//! WMMA and a VALU overwriting its A (measured on clang-22 output).
//!
//! Scratch, dead at the site and overlapping no operand nor each other: the
//! gathered scales `sA, sB`, two consecutive VGPRs below v256 (scale-prefix
//! operands ignore the VGPR-MSB mode), and the masked A copy `T`,
//! [`masked_a_regs`] consecutive VGPRs in any one bank (its copies and the
//! WMMA's src0 name it through `s_set_vgpr_msb`, set around them and restored
//! after). The destination must not overlap A, B or the scale registers,
//! which the second pass reads again.
//!
//! Each block-32 scaled WMMA is written in its A0 form, its unused
//! `scale_src2` 0x100 whatever the site's own field held.

use super::wmma_fields::{
    full, in_range, overlaps, scale_src2_vgpr0, set_vgpr_msb, Src, Vop3p, SLOT_DST, SLOT_SRC0,
    SLOT_SRC1, SLOT_SRC2,
};
use super::{Expansion, Reason, Rounding};

/// LD_SCALE16 / LD_SCALE (VOP3P opcodes of the prefix dword).
const LD_SCALE16: u32 = 0x3A;
const LD_SCALE: u32 = 0x35;
/// `v_wmma_f32_16x16x128_f8f6f4`.
const F8F6F4: u32 = 0x33;
/// `v_perm_b32` selectors: even bytes (low sub-blocks), odd bytes (high).
const EVEN_BYTES: u32 = 0x0604_0200;
const ODD_BYTES: u32 = 0x0705_0301;
/// `v_nop`s after each scaled WMMA (see the module documentation).
pub const WAR_NOPS: u32 = 8;
/// The inline constant 0.
const ZERO: Src = Src::Field(0x80);

/// Prefix w0 bits known: the reuse hints (13, 14; cleared), the scale rows
/// and formats and the rest of the fields (kept), opcode, encoding. w0 bits
/// 7:0 (vdst of the prefix) must be 0, as LLVM encodes.
const PREFIX_W0_UNKNOWN: u32 = 0xff;
/// WMMA w0 bits known: vdst, neg_hi\[2\] (C abs), a_fmt (13:11), b_fmt's
/// high bit (14), opcode, encoding.
const WMMA_W0_KNOWN: u32 = 0xff | 1 << 10 | 7 << 11 | 1 << 14 | 0xffff_0000;
/// WMMA w1 bits known: the sources, b_fmt's low bits (28:27), neg_lo\[2\].
const WMMA_W1_KNOWN: u32 = 0x07ff_ffff | 3 << 27 | 1 << 31;

/// Whether `bytes` is a block-16 scaled 16x16x128 f8f6f4 WMMA.
pub fn is_scale16(bytes: &[u8]) -> bool {
    parse(bytes).is_some()
}

fn parse(bytes: &[u8]) -> Option<(Vop3p, Vop3p)> {
    if bytes.len() != 16 {
        return None;
    }
    let prefix = Vop3p::parse(&bytes[..8])?;
    let wmma = Vop3p::parse(&bytes[8..])?;
    (prefix.op() == LD_SCALE16 && wmma.op() == F8F6F4).then_some((prefix, wmma))
}

/// VGPRs of A per `matrix_a_fmt` (FP8, BF8, FP6, BF6, FP4).
fn a_regs(fmt: u32) -> Option<u32> {
    match fmt {
        0 | 1 => Some(16),
        4 => Some(8),
        _ => None,
    }
}

/// The scale scratch VGPRs (consecutive, below v256): `sA`, `sB`.
pub const SCALE_REGS: u32 = 2;

/// The scratch VGPRs of the contiguous form ([`split`]): the scale pair,
/// then the masked A copy.
pub fn scratch_needed(bytes: &[u8]) -> Result<u32, Reason> {
    Ok(SCALE_REGS + masked_a_regs(bytes)?)
}

/// The VGPRs of the masked A copy `T` the split of `bytes` needs
/// (consecutive, in one bank): 16 for FP8/BF8 A, 8 for FP4 A.
pub fn masked_a_regs(bytes: &[u8]) -> Result<u32, Reason> {
    let (_, wmma) =
        parse(bytes).ok_or(Reason::NotHandled("v_wmma_scale16_f32_16x16x128_f8f6f4"))?;
    a_regs((wmma.w0 >> 11) & 7).ok_or(Reason::Unsupported(
        "an FP6/BF6 A matrix (where its 16-wide K sub-blocks lie is not known)",
    ))
}

/// A 64-bit scale operand: a VGPR pair (MSB-free) or an SGPR pair.
#[derive(Clone, Copy)]
enum Scale {
    Vgpr(u32),
    Sgpr(u32),
}

fn scale(field: u32) -> Result<Scale, Reason> {
    match field {
        0x100..=0x1fe => Ok(Scale::Vgpr(field & 0xff)),
        0..=104 if field % 2 == 0 => Ok(Scale::Sgpr(field)),
        _ => Err(Reason::NotVgpr("a scale operand (not a VGPR or SGPR pair)")),
    }
}

/// The mode slot a VGPR source occupies.
fn vgpr_slot(slot: u32, s: Src) -> Option<(u32, u32)> {
    match s {
        Src::Vgpr(r) => Some((slot, r)),
        Src::Field(_) => None,
    }
}

/// The 9-bit source field of `s`.
fn field(s: Src) -> u32 {
    match s {
        Src::Vgpr(r) => 0x100 | (r & 0xff),
        Src::Field(f) => f,
    }
}

/// Emission with the VGPR-MSB mode tracked: each instruction names the slots
/// of its VGPR operands.
struct Out {
    bytes: Vec<u8>,
    mode: u8,
    current: u8,
}

impl Out {
    fn banks(&mut self, slots: &[(u32, u32)]) {
        let mut needed = self.current;
        for &(slot, reg) in slots {
            needed = (needed & !(3 << (2 * slot))) | (((reg >> 8) as u8 & 3) << (2 * slot));
        }
        if needed != self.current {
            self.bytes
                .extend_from_slice(&set_vgpr_msb(needed, self.current));
            self.current = needed;
        }
    }

    fn words(&mut self, words: &[u32]) {
        for w in words {
            self.bytes.extend_from_slice(&w.to_le_bytes());
        }
    }

    /// `v_mov_b32_e32 vdst, src`.
    fn v_mov(&mut self, vdst: u32, src: Src) {
        let mut slots = vec![(SLOT_DST, vdst)];
        slots.extend(vgpr_slot(SLOT_SRC0, src));
        self.banks(&slots);
        self.words(&[0x7e00_0200 | (vdst & 0xff) << 17 | field(src)]);
    }

    /// `v_mov_b32_dpp vdst, vsrc quad_perm:[0,1,2,3] row_mask:ROW bank_mask:0xf`.
    fn v_mov_rows(&mut self, vdst: u32, vsrc: u32, row_mask: u32) {
        self.banks(&[(SLOT_DST, vdst), (SLOT_SRC0, vsrc)]);
        self.words(&[
            0x7e00_0200 | (vdst & 0xff) << 17 | 0xfa,
            (vsrc & 0xff) | 0xe4 << 8 | 0xf << 24 | row_mask << 28,
        ]);
    }

    /// `v_perm_b32 vdst, src0, src1, selector` (the selector a literal).
    fn v_perm(&mut self, vdst: u32, src0: Src, src1: Src, selector: u32) {
        let mut slots = vec![(SLOT_DST, vdst)];
        slots.extend(vgpr_slot(SLOT_SRC0, src0));
        slots.extend(vgpr_slot(SLOT_SRC1, src1));
        self.banks(&slots);
        self.words(&[
            0xd644_0000 | (vdst & 0xff),
            field(src0) | field(src1) << 9 | 0xff << 18,
            selector,
        ]);
    }

    fn finish(mut self) -> Vec<u8> {
        if self.current != self.mode {
            self.bytes
                .extend_from_slice(&set_vgpr_msb(self.mode, self.current));
        }
        self.bytes
    }
}

/// [`split_at`] with one contiguous scratch block of [`scratch_needed`]
/// VGPRs from `scratch`, below v256: the scales, then the masked A copy.
pub fn split(bytes: &[u8], mode: u8, scratch: u32) -> Result<Expansion, Reason> {
    split_at(bytes, mode, scratch, scratch + SCALE_REGS)
}

/// Splits the block-16 scaled WMMA `bytes` (16 bytes) under the VGPR-MSB
/// `mode` in force, with the gathered scales in VGPRs `scales`, `scales + 1`
/// (below v256) and the masked A copy from VGPR `t` (full 10-bit number, in
/// one bank).
pub fn split_at(bytes: &[u8], mode: u8, scales: u32, t: u32) -> Result<Expansion, Reason> {
    let (prefix, wmma) =
        parse(bytes).ok_or(Reason::NotHandled("v_wmma_scale16_f32_16x16x128_f8f6f4"))?;
    let n_a = masked_a_regs(bytes)?;
    let unknown = u64::from(prefix.w0 & PREFIX_W0_UNKNOWN)
        | u64::from((wmma.w0 & !WMMA_W0_KNOWN) | (wmma.w1 & !WMMA_W1_KNOWN)) << 32;
    if unknown != 0 {
        return Err(Reason::UnknownBits(unknown));
    }
    let b_fmt = ((wmma.w0 >> 14) & 1) << 2 | ((wmma.w1 >> 27) & 3);
    let n_b = match b_fmt {
        0 | 1 => 16,
        2 | 3 => 12,
        4 => 8,
        _ => return Err(Reason::UnknownBits(u64::from(b_fmt) << 59)),
    };
    let d = full(wmma.vdst(), mode, SLOT_DST);
    let src = |i: u32, slot: u32, what| {
        let f = wmma.src(i);
        if f >= 0x100 {
            Ok(full(f, mode, slot))
        } else {
            Err(Reason::NotVgpr(what))
        }
    };
    let a = src(0, SLOT_SRC0, "src0 (A)")?;
    let b = src(1, SLOT_SRC1, "src1 (B)")?;
    let c_field = wmma.src(2);
    let c = (c_field >= 0x100).then(|| full(c_field, mode, SLOT_SRC2));
    in_range("vdst (D)", d, 8)?;
    in_range("src0 (A)", a, n_a)?;
    in_range("src1 (B)", b, n_b)?;
    if let Some(c) = c {
        in_range("src2 (C)", c, 8)?;
    }
    let sa = scale(prefix.w1 & 0x1ff)?;
    let sb = scale((prefix.w1 >> 9) & 0x1ff)?;
    if scales + SCALE_REGS > 256 {
        return Err(Reason::Overlap(
            "the scale scratch pair is not below v256 (scale operands ignore the VGPR-MSB mode)",
        ));
    }
    if t + n_a > 1024 || t / 256 != (t + n_a - 1) / 256 {
        return Err(Reason::Overlap(
            "the masked A scratch crosses a VGPR bank or runs past v1023",
        ));
    }
    let scale_regs = |s: Scale| match s {
        Scale::Vgpr(r) => Some(r),
        Scale::Sgpr(_) => None,
    };
    let mut reads = vec![(a, n_a), (b, n_b)];
    reads.extend(scale_regs(sa).map(|r| (r, 2)));
    reads.extend(scale_regs(sb).map(|r| (r, 2)));
    if reads.iter().any(|&(r, n)| overlaps(d, 8, r, n)) {
        return Err(Reason::Overlap(
            "vdst (D) overlaps A, B or a scale operand, which the second pass reads again",
        ));
    }
    reads.push((d, 8));
    reads.extend(c.map(|c| (c, 8)));
    if reads
        .iter()
        .any(|&(r, n)| overlaps(scales, SCALE_REGS, r, n) || overlaps(t, n_a, r, n))
    {
        return Err(Reason::Overlap("the scratch block overlaps an operand"));
    }
    if overlaps(scales, SCALE_REGS, t, n_a) {
        return Err(Reason::Overlap(
            "the scale scratch overlaps the masked A scratch",
        ));
    }

    let (s_a, s_b) = (scales, scales + 1);
    let mut out = Out {
        bytes: Vec::with_capacity(512),
        mode,
        current: mode,
    };
    for (pass, selector) in [EVEN_BYTES, ODD_BYTES].into_iter().enumerate() {
        // Scales.
        for (dst, s) in [(s_a, sa), (s_b, sb)] {
            match s {
                Scale::Vgpr(r) => out.v_perm(dst, Src::Vgpr(r + 1), Src::Vgpr(r), selector),
                Scale::Sgpr(r) => {
                    out.v_mov(dst, Src::Field(r + 1));
                    out.v_perm(dst, Src::Vgpr(dst), Src::Field(r), selector);
                }
            }
        }
        // A with the other K sub-block zeroed.
        for i in 0..n_a {
            if n_a == 16 {
                out.v_mov(t + i, ZERO);
                out.v_mov_rows(t + i, a + i, 1 << pass);
            } else if i % 2 == pass as u32 {
                out.v_mov(t + i, Src::Vgpr(a + i));
            } else {
                out.v_mov(t + i, ZERO);
            }
        }
        // The block-32 scaled WMMA.
        let (c_op, w0_mods, w1_mods) = if pass == 0 {
            (c, wmma.w0 & (1 << 10), wmma.w1 & (1 << 31))
        } else {
            (Some(d), 0, 0)
        };
        let mut slots = vec![(SLOT_DST, d), (SLOT_SRC0, t), (SLOT_SRC1, b)];
        slots.extend(c_op.map(|c| (SLOT_SRC2, c)));
        out.banks(&slots);
        let p0 = (prefix.w0 & !(0xff << 16) & !(3 << 13)) | LD_SCALE << 16;
        let p1 = (scale_src2_vgpr0(prefix.w1) & !0x3ffff) | (0x100 | s_a) | (0x100 | s_b) << 9;
        let c_field = c_op.map_or(c_field, |c| 0x100 | (c & 0xff));
        let w0 = (wmma.w0 & !0xff & !(1 << 10)) | w0_mods | (d & 0xff);
        let w1 = (wmma.w1 & (3 << 27))
            | w1_mods
            | (0x100 | (t & 0xff))
            | (0x100 | (b & 0xff)) << 9
            | c_field << 18;
        out.words(&[p0, p1, w0, w1]);
        for _ in 0..WAR_NOPS {
            out.bytes.extend_from_slice(&super::V_NOP);
        }
    }
    Ok(Expansion {
        bytes: out.finish(),
        swapped: false,
        rounding: Rounding::IntermediateF32,
    })
}

/// The fix's name in the report.
pub const FIX: &str = "wmma-scale16-k-split";

/// The seam's emitter: the scale pair (below v256) and the masked A copy
/// ([`masked_a_regs`] VGPRs, any bank) from the site's provider, then
/// [`split_at`].
pub fn emit(site: &mut super::Site<'_>) -> Result<super::Emitted, super::Refusal> {
    let n_a = masked_a_regs(site.original)?;
    let mut scales = super::Request::new(super::RegClass::Vgpr, SCALE_REGS as u16, 1);
    scales.below = 256;
    let scales = site.scratch.take(scales)?;
    let t = site
        .scratch
        .take(super::Request::new(super::RegClass::Vgpr, n_a as u16, 1))?;
    Ok(super::emitted(
        split_at(
            site.original,
            site.vgpr_msb,
            u32::from(scales),
            u32::from(t),
        )?,
        FIX,
        FIX,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unhex(s: &str) -> Vec<u8> {
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
            .collect()
    }

    // v_wmma_scale16_f32_16x16x128_f8f6f4 v[0:7], v[8:15], v[16:31], v[32:39], v[40:41],
    //   v[42:43] matrix_a_fmt:MATRIX_FMT_FP4
    const FP4_A: &str = "00003acc28550204002033cc08218204";

    #[test]
    fn fp4_a_splits_by_vgpr_with_gathered_scales() {
        let orig = unhex(FP4_A);
        assert!(is_scale16(&orig));
        assert_eq!(masked_a_regs(&orig), Ok(8));
        assert_eq!(scratch_needed(&orig), Ok(10));
        // The contiguous form is the same sequence.
        assert_eq!(split(&orig, 0, 50), split_at(&orig, 0, 50, 52));
        let e = split_at(&orig, 0, 50, 52).unwrap();
        assert_eq!(e.rounding, Rounding::IntermediateF32);
        // llvm-mc-22 -show-encoding of, per pass (selector 0x6040200, then 0x7050301):
        //   v_perm_b32 v50, v41, v40, SEL ; v_perm_b32 v51, v43, v42, SEL
        //   v_mov_b32_e32 v52..v59: v8..v15 on even (pass lo) / odd (pass hi) VGPRs, else 0
        //   v_wmma_scale_f32_16x16x128_f8f6f4 v[0:7], v[52:59], v[16:31], v[32:39] (lo) /
        //     v[0:7] (hi), v50, v51 matrix_a_fmt:MATRIX_FMT_FP4
        let expected = unhex(concat!(
            "320044d62951fe0300020406330044d62b55fe0300020406",
            "0803687e80026a7e0a036c7e80026e7e0c03707e8002727e0e03747e8002767e",
            "000035cc32670204002033cc34218204",
            "0000007e0000007e0000007e0000007e0000007e0000007e0000007e0000007e",
            "320044d62951fe0301030507330044d62b55fe0301030507",
            "8002687e09036a7e80026c7e0b036e7e8002707e0d03727e8002747e0f03767e",
            "000035cc32670204002033cc34210204",
            "0000007e0000007e0000007e0000007e0000007e0000007e0000007e0000007e",
        ));
        assert_eq!(e.bytes, expected);
        // A stale scale_src2 in the block-16 prefix (0x000, not clang's
        // 0x100): each emitted block-32 WMMA still has the A0 form 0x100.
        let mut stale = orig;
        stale[7] &= !0x07;
        stale[6] &= 0x03;
        assert_eq!(split(&stale, 0, 50).unwrap().bytes, expected);
    }

    #[test]
    fn masked_a_in_a_high_bank_is_named_through_the_msb_mode() {
        // T at v300 (bank 1), the scales at v50:51: the copies write T with
        // dst bank 1 and the WMMAs read it as src0 bank 1; mode 0 after.
        let e = split_at(&unhex(FP4_A), 0, 50, 300).unwrap();
        // llvm-mc-22 -show-encoding of, per pass (selector 0x6040200, then 0x7050301):
        //   v_perm_b32 v50, v41, v40, SEL ; v_perm_b32 v51, v43, v42, SEL
        //   s_set_vgpr_msb 0x40 (after pass lo: 0x40)
        //   v_mov_b32_e32 v44..v51 (= v300..v307): v8..v15 on even (lo) / odd (hi), else 0
        //   s_set_vgpr_msb 0x4001
        //   v_wmma_scale_f32_16x16x128_f8f6f4 v[0:7], v[44:51] (= v[300:307]), v[16:31],
        //     v[32:39] (lo) / v[0:7] (hi), v50, v51 matrix_a_fmt:MATRIX_FMT_FP4
        //   8 x v_nop ; s_set_vgpr_msb 0x100
        let nops = "0000007e".repeat(8);
        let expected = unhex(
            &[
                "320044d62951fe0300020406330044d62b55fe0300020406400086bf",
                "0803587e80025a7e0a035c7e80025e7e0c03607e8002627e0e03647e8002667e",
                "014086bf000035cc32670204002033cc2c218204",
                &nops,
                "000186bf320044d62951fe0301030507330044d62b55fe0301030507400086bf",
                "8002587e09035a7e80025c7e0b035e7e8002607e0d03627e8002647e0f03667e",
                "014086bf000035cc32670204002033cc2c210204",
                &nops,
                "000186bf",
            ]
            .concat(),
        );
        assert_eq!(e.bytes, expected);
    }

    #[test]
    fn refusals() {
        let orig = unhex(FP4_A);
        // The scratch over A (v8); the scales not below v256; T across a
        // bank; the scales over T.
        assert!(matches!(split_at(&orig, 0, 6, 52), Err(Reason::Overlap(_))));
        assert!(matches!(split_at(&orig, 0, 50, 6), Err(Reason::Overlap(_))));
        assert!(matches!(
            split_at(&orig, 0, 255, 52),
            Err(Reason::Overlap(_))
        ));
        assert!(matches!(
            split_at(&orig, 0, 50, 250),
            Err(Reason::Overlap(_))
        ));
        assert!(matches!(
            split_at(&orig, 0, 50, 1020),
            Err(Reason::Overlap(_))
        ));
        assert!(matches!(
            split_at(&orig, 0, 52, 50),
            Err(Reason::Overlap(_))
        ));
        // D over A: the second pass reads A again. D = v[8:15]:
        let mut over = orig.clone();
        over[8] = 8;
        assert!(matches!(
            split_at(&over, 0, 50, 52),
            Err(Reason::Overlap(_))
        ));
        // FP6 A (matrix_a_fmt 2): the sub-block layout is not known.
        let mut fp6 = orig.clone();
        fp6[9] = 0x10;
        assert!(matches!(masked_a_regs(&fp6), Err(Reason::Unsupported(_))));
        // Not a scale16 WMMA: the block-32 form.
        let mut scale32 = orig;
        scale32[2] = 0x35;
        assert!(!is_scale16(&scale32));
        assert!(matches!(
            split_at(&scale32, 0, 50, 52),
            Err(Reason::NotHandled(_))
        ));
    }
}
