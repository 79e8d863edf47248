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
//!
//! The block-16 scaled form (`v_wmma_scale16_f32_32x16x128_f4`, the
//! LD_SCALE16 prefix then the WMMA, 64-bit scale operands) is split along M
//! the same way, then each half exactly along K ([`split_scale16`]): each
//! half is a block-16 scaled `v_wmma_scale16_f32_16x16x128_f8f6f4` with FP4
//! A and B (the upper half's A scales from lanes 16–31 by
//! `matrix_a_scale:MATRIX_SCALE_ROW1`, the LD_SCALE16 prefix having the same
//! field as LD_SCALE: w0 bit 11, measured with llvm-mc-22), which
//! [`super::wmma_scale16::split`] turns into two block-32 scaled WMMAs: four
//! exact operations (COMGR's WmmaScale16 rule, PR #3691). The two halves
//! share one scratch block (each K split ends with its
//! [`super::wmma_scale16::WAR_NOPS`] `v_nop`s before the next half's gathers
//! overwrite it); the accumulator is rounded to f32 between the K passes
//! ([`Rounding::IntermediateF32`]). Besides the M split's own rules (the
//! order of the halves, a destination over a scale register), each half's
//! destination must not overlap its A (the second K pass reads it again),
//! and the scratch block none of the 32-row operands.

use super::wmma_fields::{
    emit as emit_ops, full, in_range, overlaps, overlaps_src, scale_src2_vgpr0, set_vgpr_msb,
    source, Src, Vop3p, Wmma, SLOT_DST, SLOT_SRC0, SLOT_SRC1, SLOT_SRC2,
};
use super::wmma_k128::WAR_NOPS;
use super::wmma_scale16;
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

/// `matrix_a_scale:MATRIX_SCALE_ROW1` in the LD_SCALE / LD_SCALE16 prefix's w0.
const A_SCALE_ROW1: u32 = 1 << 11;

/// Whether `bytes` is a plain (8-byte) `v_wmma_f32_32x16x128_f4`.
pub fn is_f4(bytes: &[u8]) -> bool {
    Vop3p::parse(bytes).is_some_and(|i| i.op() == F4_32X16)
}

/// The scale prefix and the WMMA of a 16-byte scaled 32x16x128 f4 WMMA whose
/// prefix has opcode `prefix_op`.
fn scaled(bytes: &[u8], prefix_op: u32) -> Option<(Vop3p, Vop3p)> {
    if bytes.len() != 16 {
        return None;
    }
    let p = Vop3p::parse(&bytes[..8])?;
    let i = Vop3p::parse(&bytes[8..])?;
    (p.op() == prefix_op && i.op() == F4_32X16).then_some((p, i))
}

/// The block-16 scaled form's mnemonic (its class table row's).
pub const SCALE16_MNEMONIC: &str = "v_wmma_scale16_f32_32x16x128_f4";

/// Whether `bytes` is the block-16 scaled `v_wmma_scale16_f32_32x16x128_f4`
/// (split by [`split_scale16`]).
pub fn is_scale16(bytes: &[u8]) -> bool {
    scaled(bytes, LD_SCALE16).is_some()
}

/// The operands of the WMMA, as full register numbers.
struct Operands {
    d: u32,
    a: u32,
    b: u32,
    c: Src,
}

impl Operands {
    /// C's half `h` (a constant is used whole by both).
    fn c_half(&self, h: u32) -> Src {
        match self.c {
            Src::Vgpr(c) => Src::Vgpr(c + h),
            f => f,
        }
    }

    /// Whether writing D's half `h` clobbers a source of the other half's
    /// operation (A's and C's other half, B).
    fn clobbers(&self, h: u32) -> bool {
        let o = 8 - h;
        overlaps_src(self.d + h, 8, Src::Vgpr(self.a + o), 8)
            || overlaps_src(self.d + h, 8, Src::Vgpr(self.b), 8)
            || overlaps_src(self.d + h, 8, self.c_half(o), 8)
    }

    /// Whether the upper half runs first: the lower half's D would
    /// overwrite a source of the upper one; refused when both orders would.
    fn swapped(&self) -> Result<bool, Reason> {
        match (self.clobbers(0), self.clobbers(8)) {
            (false, _) => Ok(false),
            (true, false) => Ok(true),
            (true, true) => Err(Reason::Overlap(
                "vdst (D) overlaps sources of the other M half in both orders",
            )),
        }
    }
}

/// The operands of the 32x16x128 f4 WMMA `i` under `mode`, its bits checked.
fn operands(i: Vop3p, mode: u8) -> Result<Operands, Reason> {
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
    Ok(Operands { d, a, b, c })
}

/// The prefix `p` of a scaled form, its bits checked: w0\[7:0\] zero (as
/// LLVM encodes), A's scale not already on ROW1.
fn check_prefix(p: Vop3p) -> Result<(), Reason> {
    if p.w0 & 0xff != 0 {
        return Err(Reason::UnknownBits(u64::from(p.w0 & 0xff)));
    }
    if p.w0 & A_SCALE_ROW1 != 0 {
        return Err(Reason::Unsupported(
            "MATRIX_SCALE_ROW1 for the A scale of a 32-row f4 WMMA",
        ));
    }
    Ok(())
}

/// The scale VGPRs of prefix `p` (MSB-free), `n` registers each (1 for
/// block-32 scales, 2 for block-16), read by both halves: D must not
/// overlap them.
fn scale_vgprs(p: Vop3p, n: u32, d: u32) -> Result<Vec<(u32, u32)>, Reason> {
    let regs: Vec<(u32, u32)> = [p.w1 & 0x1ff, (p.w1 >> 9) & 0x1ff]
        .into_iter()
        .filter(|&f| f >= 0x100)
        .map(|f| (f & 0xff, n))
        .collect();
    if regs.iter().any(|&(r, n)| overlaps(d, 16, r, n)) {
        return Err(Reason::Overlap(
            "vdst (D) overlaps a scale operand, which both halves read",
        ));
    }
    Ok(regs)
}

/// Splits `v_wmma_f32_32x16x128_f4` (`bytes`, 8 bytes) or its block-32
/// scaled form (16 bytes) under the VGPR-MSB `mode` in force at the site.
/// The block-16 scaled form needs scratch registers: [`split_scale16`].
pub fn split(bytes: &[u8], mode: u8) -> Result<Expansion, Reason> {
    let (prefix, i) = match scaled(bytes, LD_SCALE) {
        Some((p, i)) => {
            check_prefix(p)?;
            (Some(p), i)
        }
        None => (
            None,
            Vop3p::parse(bytes)
                .filter(|i| i.op() == F4_32X16)
                .ok_or(Reason::NotHandled(
                    "v_wmma_f32_32x16x128_f4 or its block-32 scaled form",
                ))?,
        ),
    };
    let ops = operands(i, mode)?;
    if let Some(p) = prefix {
        scale_vgprs(p, 1, ops.d)?;
    }
    let swapped = ops.swapped()?;
    let (d, a, b) = (ops.d, ops.a, ops.b);
    let w0 = (i.w0 & (1 << 10)) | F8F6F4 << 16 | FP4_FMT_W0 | 0xCC << 24;
    let w1 = i.w1 & (1 << 31);
    let half = |h: u32| Wmma {
        w0,
        w1,
        dst: d + h,
        src: [Src::Vgpr(a + h), Src::Vgpr(b), ops.c_half(h)],
        // Reuse hints cleared; the upper rows' A scales from lanes 16-31;
        // scale_src2 in its A0 form (the site's own may not be).
        prefix: prefix.map(|p| {
            let row = if h == 8 { A_SCALE_ROW1 } else { 0 };
            [(p.w0 & !(3 << 13)) | row, scale_src2_vgpr0(p.w1)]
        }),
    };
    let halves = if swapped {
        [half(8), half(0)]
    } else {
        [half(0), half(8)]
    };
    // Write-after-read: the second's D over the first's sources.
    let (h1, h2) = if swapped { (8, 0) } else { (0, 8) };
    let war = overlaps_src(d + h2, 8, Src::Vgpr(a + h1), 8)
        || overlaps_src(d + h2, 8, Src::Vgpr(b), 8)
        || overlaps_src(d + h2, 8, ops.c_half(h1), 8);
    let mut out = Vec::with_capacity(32);
    emit_ops(&mut out, &halves, mode, if war { WAR_NOPS } else { 0 });
    Ok(Expansion {
        bytes: out,
        swapped,
        rounding: Rounding::Same,
    })
}

/// The scratch VGPRs [`split_scale16`] needs for `bytes`: those of one
/// half's K split (both halves use the same block).
pub fn scale16_scratch_needed(bytes: &[u8]) -> Result<u32, Reason> {
    let (p, i) =
        scaled(bytes, LD_SCALE16).ok_or(Reason::NotHandled("v_wmma_scale16_f32_32x16x128_f4"))?;
    wmma_scale16::scratch_needed(&half_scale16(p, i, 0, [0; 4]))
}

/// M half `h` (0: rows 0..15, 8: rows 16..31) of the block-16 scaled WMMA
/// (`p`, `i`) as a `v_wmma_scale16_f32_16x16x128_f8f6f4` with FP4 A and B:
/// `fields` are its D, A, B, C fields (8-bit VGPR fields of the half's
/// registers, or C's constant). The upper half's A scales are those of
/// lanes 16–31 (ROW1); the other prefix bits are kept.
fn half_scale16(p: Vop3p, i: Vop3p, h: u32, fields: [u32; 4]) -> [u8; 16] {
    let row = if h == 8 { A_SCALE_ROW1 } else { 0 };
    let [d, a, b, c] = fields;
    let words = [
        p.w0 | row,
        p.w1,
        (i.w0 & (1 << 10)) | F8F6F4 << 16 | FP4_FMT_W0 | 0xCC << 24 | (d & 0xff),
        (i.w1 & (1 << 31)) | a | b << 9 | c << 18,
    ];
    let mut out = [0u8; 16];
    for (k, w) in words.iter().enumerate() {
        out[4 * k..4 * k + 4].copy_from_slice(&w.to_le_bytes());
    }
    out
}

/// [`split_scale16_at`] with one contiguous block of
/// [`scale16_scratch_needed`] VGPRs from `scratch`, below v256: the scales,
/// then the masked A copy.
pub fn split_scale16(bytes: &[u8], mode: u8, scratch: u32) -> Result<Expansion, Reason> {
    split_scale16_at(bytes, mode, scratch, scratch + wmma_scale16::SCALE_REGS)
}

/// Splits the block-16 scaled `v_wmma_scale16_f32_32x16x128_f4` (`bytes`,
/// 16 bytes) under the VGPR-MSB `mode` in force: along M, then each half
/// along K by [`wmma_scale16::split_at`], both halves with the gathered
/// scales in VGPRs `scales`, `scales + 1` (below v256) and the masked A copy
/// from VGPR `t` (8 VGPRs in one bank), all dead at the site.
pub fn split_scale16_at(bytes: &[u8], mode: u8, scales: u32, t: u32) -> Result<Expansion, Reason> {
    let (p, i) =
        scaled(bytes, LD_SCALE16).ok_or(Reason::NotHandled("v_wmma_scale16_f32_32x16x128_f4"))?;
    check_prefix(p)?;
    let ops = operands(i, mode)?;
    let scale_operands = scale_vgprs(p, 2, ops.d)?;
    let n_t = scale16_scratch_needed(bytes)? - wmma_scale16::SCALE_REGS;
    // The halves' K splits check the scratch registers against their own
    // operands; the first half must not overwrite the second's either.
    let mut operands = vec![(ops.d, 16), (ops.a, 16), (ops.b, 8)];
    if let Src::Vgpr(c) = ops.c {
        operands.push((c, 16));
    }
    operands.extend(scale_operands);
    let scratch = [(scales, wmma_scale16::SCALE_REGS), (t, n_t)];
    if scratch
        .iter()
        .any(|&(s, m)| operands.iter().any(|&(r, n)| overlaps(s, m, r, n)))
    {
        return Err(Reason::Overlap("the scratch block overlaps an operand"));
    }
    let swapped = ops.swapped()?;
    let mut out = Vec::with_capacity(512);
    for h in if swapped { [8, 0] } else { [0, 8] } {
        // The half's registers as 8-bit fields under a mode that names
        // their banks (a tuple may cross v255: see `in_range`).
        let mut half_mode = mode;
        let mut field = |slot: u32, reg: u32| {
            half_mode = (half_mode & !(3 << (2 * slot))) | (((reg >> 8) & 3) as u8) << (2 * slot);
            0x100 | (reg & 0xff)
        };
        let d = field(SLOT_DST, ops.d + h);
        let a = field(SLOT_SRC0, ops.a + h);
        let b = field(SLOT_SRC1, ops.b);
        let c = match ops.c_half(h) {
            Src::Vgpr(c) => field(SLOT_SRC2, c),
            Src::Field(f) => f,
        };
        let half = half_scale16(p, i, h, [d, a, b, c]);
        let e = wmma_scale16::split_at(&half, half_mode, scales, t)?;
        if half_mode != mode {
            out.extend_from_slice(&set_vgpr_msb(half_mode, mode));
        }
        out.extend_from_slice(&e.bytes);
        if half_mode != mode {
            out.extend_from_slice(&set_vgpr_msb(mode, half_mode));
        }
    }
    Ok(Expansion {
        bytes: out,
        swapped,
        rounding: Rounding::IntermediateF32,
    })
}

/// The fix's name in the report.
pub const FIX: &str = "wmma-f4-m-split";
/// The fix's name when the upper half runs first.
pub const FIX_SWAPPED: &str = "wmma-f4-m-split-swapped";
/// The block-16 scaled form's fix: M then K.
pub const FIX_SCALE16: &str = "wmma-f4-scale16-mk-split";
/// The block-16 scaled form's fix when the upper half runs first.
pub const FIX_SCALE16_SWAPPED: &str = "wmma-f4-scale16-mk-split-swapped";

/// The seam's emitter: [`split`] at the site's VGPR-MSB mode; for the
/// block-16 scaled form, [`split_scale16_at`] with the requests
/// [`super::wmma_scale16`] makes: the scale pair below v256, then the masked
/// A copy (8 VGPRs) in any bank.
pub fn emit(site: &mut super::Site<'_>) -> Result<super::Emitted, super::Refusal> {
    if is_scale16(site.original) {
        let n_t = scale16_scratch_needed(site.original)? - wmma_scale16::SCALE_REGS;
        let mut scales =
            super::Request::new(super::RegClass::Vgpr, wmma_scale16::SCALE_REGS as u16, 1);
        scales.below = 256;
        let scales = site.scratch.take(scales)?;
        let t = site
            .scratch
            .take(super::Request::new(super::RegClass::Vgpr, n_t as u16, 1))?;
        return Ok(super::emitted(
            split_scale16_at(
                site.original,
                site.vgpr_msb,
                u32::from(scales),
                u32::from(t),
            )?,
            FIX_SCALE16,
            FIX_SCALE16_SWAPPED,
        ));
    }
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

    fn unhex(s: &str) -> Vec<u8> {
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
            .collect()
    }

    /// 8 × `v_nop`.
    const NOPS8: &str = "0000007e0000007e0000007e0000007e0000007e0000007e0000007e0000007e";

    // v_wmma_scale16_f32_32x16x128_f4 v[0:15], v[16:31], v[32:39], v[40:55], v[56:57], v[58:59]
    const SCALE16: &str = "00003acc38750204004088cc1041a21c";

    #[test]
    fn block16_scaled_form_splits_along_m_then_k() {
        let orig = unhex(SCALE16);
        assert!(is_scale16(&orig) && !is_f4(&orig));
        assert_eq!(scale16_scratch_needed(&orig), Ok(10));
        let e = split_scale16(&orig, 0, 60).unwrap();
        assert!(!e.swapped);
        assert_eq!(e.rounding, Rounding::IntermediateF32);
        // llvm-mc-22 -show-encoding of, per M half h (rows 0..15: D v[0:7],
        // A v[16:23], C v[40:47]; rows 16..31: D v[8:15], A v[24:31], C
        // v[48:55] and matrix_a_scale:MATRIX_SCALE_ROW1) and per K pass
        // (selector 0x6040200 and the even VGPRs of A, then 0x7050301 and the
        // odd ones):
        //   v_perm_b32 v60, v57, v56, SEL ; v_perm_b32 v61, v59, v58, SEL
        //   v_mov_b32_e32 v62..v69: A's VGPRs of the pass, else 0
        //   v_wmma_scale_f32_16x16x128_f8f6f4 D, v[62:69], v[32:39], C (pass 1) / D (pass 2),
        //     v60, v61 matrix_a_fmt:MATRIX_FMT_FP4 matrix_b_fmt:MATRIX_FMT_FP4 [ROW1]
        //   8 × v_nop
        let expected = [
            "3c0044d63971fe03000204063d0044d63b75fe030002040610037c7e80027e7e",
            "1203807e8002827e1403847e8002867e1603887e80028a7e",
            "000035cc3c7b0204006033cc3e41a204",
            NOPS8,
            "3c0044d63971fe03010305073d0044d63b75fe030103050780027c7e11037e7e",
            "8002807e1303827e8002847e1503867e8002887e17038a7e",
            "000035cc3c7b0204006033cc3e410204",
            NOPS8,
            "3c0044d63971fe03000204063d0044d63b75fe030002040618037c7e80027e7e",
            "1a03807e8002827e1c03847e8002867e1e03887e80028a7e",
            "000835cc3c7b0204086033cc3e41c204",
            NOPS8,
            "3c0044d63971fe03010305073d0044d63b75fe030103050780027c7e19037e7e",
            "8002807e1b03827e8002847e1d03867e8002887e1f038a7e",
            "000835cc3c7b0204086033cc3e412204",
            NOPS8,
        ]
        .concat();
        assert_eq!(e.bytes, unhex(&expected));
    }

    #[test]
    fn block16_scaled_form_upper_half_first_with_an_sgpr_scale() {
        // v_wmma_scale16_f32_32x16x128_f4 v[8:23], v[0:15], v[32:39], v[40:55], s[4:5],
        //   v[58:59] neg_lo:[0,0,1]: D's lower half is A's upper half.
        let orig = unhex("00003acc04740204084088cc0041a29c");
        let e = split_scale16(&orig, 0, 60).unwrap();
        assert!(e.swapped);
        // llvm-mc-22 -show-encoding of the rows 16..31 (D v[16:23], A v[8:15],
        // C v[48:55], ROW1), then rows 0..15 (D v[8:15], A v[0:7], C
        // v[40:47]), each pass as above but the A scale gathered from the
        // SGPR pair: v_mov_b32_e32 v60, s5 ; v_perm_b32 v60, v60, s4, SEL;
        // neg_lo:[0,0,1] on each half's first pass only.
        let expected = [
            "0502787e3c0044d63c09fc03000204063d0044d63b75fe030002040608037c7e",
            "80027e7e0a03807e8002827e0c03847e8002867e0e03887e80028a7e",
            "000835cc3c7b0204106033cc3e41c284",
            NOPS8,
            "0502787e3c0044d63c09fc03010305073d0044d63b75fe030103050780027c7e",
            "09037e7e8002807e0b03827e8002847e0d03867e8002887e0f038a7e",
            "000835cc3c7b0204106033cc3e414204",
            NOPS8,
            "0502787e3c0044d63c09fc03000204063d0044d63b75fe030002040600037c7e",
            "80027e7e0203807e8002827e0403847e8002867e0603887e80028a7e",
            "000035cc3c7b0204086033cc3e41a284",
            NOPS8,
            "0502787e3c0044d63c09fc03010305073d0044d63b75fe030103050780027c7e",
            "01037e7e8002807e0303827e8002847e0503867e8002887e07038a7e",
            "000035cc3c7b0204086033cc3e412204",
            NOPS8,
        ]
        .concat();
        assert_eq!(e.bytes, unhex(&expected));
    }

    #[test]
    fn block16_scaled_form_banks_and_refusals() {
        let orig = unhex(SCALE16);
        // D = C = v[248:263] (mode 0, accumulating in place): the upper
        // half's D and C are v[256:263], its K split bracketed in the mode
        // naming bank 1 for vdst and src2 (0x50; the scratch copies switch
        // to bank 0 and back inside).
        // v_wmma_scale16_f32_32x16x128_f4 v[248:263], v[0:15], v[16:23], v[248:263],
        //   v[24:25], v[26:27]
        let crossing = unhex("00003acc18350204f84088cc0021e21f");
        let e = split_scale16(&crossing, 0, 30).unwrap();
        let lower = split_scale16(&orig, 0, 60).unwrap().bytes.len() / 2;
        assert_eq!(&e.bytes[lower..lower + 4], &[0x50, 0x00, 0x86, 0xbf]);
        assert_eq!(&e.bytes[e.bytes.len() - 4..], &[0x00, 0x50, 0x86, 0xbf]);
        // A's scale already on ROW1.
        let mut row1 = orig.clone();
        row1[1] = 0x08;
        assert!(matches!(
            split_scale16(&row1, 0, 60),
            Err(Reason::Unsupported(_))
        ));
        // The scratch block over C (v40) or not below v256.
        assert!(matches!(
            split_scale16(&orig, 0, 36),
            Err(Reason::Overlap("the scratch block overlaps an operand"))
        ));
        assert!(matches!(
            split_scale16(&orig, 0, 250),
            Err(Reason::Overlap(_))
        ));
        // D = v[56:71] over the scale pair v[56:57].
        let mut over = orig.clone();
        over[8] = 56;
        assert!(matches!(
            split_scale16(&over, 0, 80),
            Err(Reason::Overlap(_))
        ));
        // D = A = v[16:31]: each half's D over its own A, which its second K
        // pass reads again.
        let mut d_is_a = orig.clone();
        d_is_a[8] = 16;
        assert!(matches!(
            split_scale16(&d_is_a, 0, 60),
            Err(Reason::Overlap(_))
        ));
        // An SGPR C.
        let mut sgpr_c = orig.clone();
        sgpr_c[14] = 0x22;
        sgpr_c[15] = 0x18;
        assert!(matches!(
            split_scale16(&sgpr_c, 0, 60),
            Err(Reason::NotVgpr(_))
        ));
        // Not the block-16 form.
        assert!(matches!(
            split_scale16(&orig[8..], 0, 60),
            Err(Reason::NotHandled(_))
        ));
    }

    #[test]
    fn the_seam_asks_for_the_scale_pair_and_the_a_copy_for_the_block16_form_only() {
        use crate::gfx1250::{fields::Fields, A0Class};
        use crate::rewrite::emit::{Refusal, RegClass, Request, Scratch, Site};
        use crate::rewrite::SiteInfo;

        /// Grants consecutive runs from `first` and records the requests.
        struct Grant(u16, Vec<Request>);
        impl Scratch for Grant {
            fn take(&mut self, request: Request) -> Result<u16, Refusal> {
                self.1.push(request);
                let first = self.0;
                self.0 += request.count;
                Ok(first)
            }
        }
        let info = SiteInfo {
            function: std::sync::Arc::from("k"),
            function_vaddr: 0x1000,
            vaddr: 0x1000,
            file_offset: 0,
            len: 16,
            class: A0Class::WmmaF4,
            mnemonic: "v_wmma_scale16_f32_32x16x128_f4",
        };
        let run = |bytes: &[u8], first: u16| {
            let mut grant = Grant(first, Vec::new());
            let mut site = Site {
                info: &info,
                original: bytes,
                fields: Fields::decode(bytes),
                vgpr_msb: 0,
                following: &[],
                scratch: &mut grant,
            };
            (emit(&mut site), grant.1)
        };
        let orig = unhex(SCALE16);
        let (e, asked) = run(&orig, 60);
        let e = e.unwrap();
        assert_eq!(e.fix, FIX_SCALE16);
        assert_eq!(e.bytes, split_scale16(&orig, 0, 60).unwrap().bytes);
        assert!(e.note.is_some_and(|n| n.contains("rounded between")));
        let shapes: Vec<_> = asked
            .iter()
            .map(|r| (r.class, r.count, r.align, r.below))
            .collect();
        assert_eq!(
            shapes,
            [(RegClass::Vgpr, 2, 1, 256), (RegClass::Vgpr, 8, 1, 1024)]
        );
        // T in bank 1: the same split with the copy named through the mode.
        let high = split_scale16_at(&orig, 0, 60, 300).unwrap();
        assert_ne!(high.bytes, split_scale16(&orig, 0, 60).unwrap().bytes);
        assert!(matches!(
            split_scale16_at(&orig, 0, 60, 61),
            Err(Reason::Overlap(_))
        ));
        // A grant over an operand (v40: C) is refused, not used.
        let (e, _) = run(&orig, 40);
        assert!(e.unwrap_err().reason.contains("scratch block overlaps"));
        // The plain form asks for nothing.
        let (e, asked) = run(&[0x00, 0x40, 0x88, 0xcc, 0x10, 0x41, 0xa2, 0x1c], 60);
        assert_eq!(e.unwrap().fix, FIX);
        assert!(asked.is_empty());
    }

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
        // The block-16 scaled form needs scratch: not `split`'s.
        let mut scaled = [0u8; 16];
        scaled[..4].copy_from_slice(&[0x00, 0x00, 0x3a, 0xcc]);
        scaled[8..12].copy_from_slice(&[0x00, 0x40, 0x88, 0xcc]);
        assert!(is_scale16(&scaled));
        assert!(matches!(split(&scaled, 0), Err(Reason::NotHandled(_))));
        assert!(is_f4(&[0x00, 0x40, 0x88, 0xcc, 0x10, 0x41, 0xa2, 0x1c]));
    }
}
