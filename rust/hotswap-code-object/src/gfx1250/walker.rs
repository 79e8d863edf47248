//! The gfx1250 instruction length decoder: where each instruction ends, from the
//! encoding family of its first dword, its literal (32- or 64-bit), its DPP
//! dword, and the few opcodes with a constant extra dword.
//!
//! Facts (see `gfx1250-a0.md` §3 of the project's reference notes; LLVM's
//! `SIInstrFormats.td`, `VOPDInstructions.td` and `AMDGPUDisassembler.cpp`):
//! - families are told apart by the top bits of the first dword ([`Family`]);
//! - a VOP1, VOP2, VOPC or scalar opcode LLVM does not decode is unknown;
//! - a source field holding 255 is followed by a 32-bit literal, one holding 254
//!   (gfx1250's `64-bit-literals`) by a 64-bit literal; an instruction has at
//!   most one literal, whatever the number of fields that name it; LLVM only
//!   looks at the source fields the opcode uses, which the generated `operand_table` lists
//!   per opcode (derived from LLVM's own disassembler by
//!   `tools/operand_table.py`; the ctest `analyzer.operand_table` regenerates it);
//! - DPP16 (src0 = 0xFA) and DPP8 (0xE9, 0xEA) add one dword to VOP1/VOP2/VOPC
//!   and to VOP3/VOP3P;
//! - `v_fmamk/fmaak_f32/f16` and `s_fmamk/fmaak_f32` always carry a 32-bit K,
//!   `v_fmamk/fmaak_f64` a 64-bit K, `s_setreg_imm32_b32` a 32-bit immediate,
//!   `v_dual_fmamk/fmaak` a 32-bit K shared by both halves;
//! - a scaled WMMA is two 8-byte halves (VOP3PX2): an LD_SCALE prefix (VOP3P op
//!   0x35 or 0x3A) followed by a WMMA (op 0x33 or 0x88); a prefix not followed by
//!   one is an 8-byte instruction on its own.
//!
//! What LLVM 22 does not decode on gfx1250 (with or without its real-true16
//! operands, which ROCm's compilers use: `v_mov_b16_e32` decodes only with them)
//! is reported, not sized: SALU, VOP1, VOP2 and VOPC opcodes it lacks, VSAMPLE, VEXPORT, VINTERP, LDSDIR, image opcodes other than the
//! tensor ones (including ROCm's legacy `tensor_load_to_lds` encoding), and the
//! unassigned encoding spaces.

use super::fields::Scalar;
use super::operand_table as table;

/// The encoding family of an instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Family {
    /// Scalar ALU, two sources.
    Sop2,
    /// Scalar ALU with a 16-bit immediate.
    Sopk,
    /// Scalar ALU, one source.
    Sop1,
    /// Scalar compare.
    Sopc,
    /// Scalar program control (`s_nop`, `s_clause`, branches, waits...).
    Sopp,
    /// Scalar memory.
    Smem,
    /// Vector ALU, one source (32-bit encoding).
    Vop1,
    /// Vector ALU, two sources (32-bit encoding).
    Vop2,
    /// Vector compare (32-bit encoding).
    Vopc,
    /// Vector ALU, 64-bit encoding (also VOP3SD).
    Vop3,
    /// Packed vector ALU and WMMA (64-bit encoding).
    Vop3p,
    /// A scaled WMMA: LD_SCALE prefix plus WMMA, 16 bytes.
    Vop3px2,
    /// Dual-issue vector ALU.
    Vopd,
    /// Dual-issue vector ALU, three-operand form (gfx1250).
    Vopd3,
    /// LDS and GDS.
    Ds,
    /// Buffer memory.
    Vbuffer,
    /// Flat, global and scratch memory.
    Vflat,
    /// Image encoding: on gfx1250, the tensor data movers.
    Vimage,
}

/// One decoded instruction: what the classifier needs beyond the length.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Decoded {
    /// Length in bytes (4 to 20).
    pub len: u8,
    /// The encoding family.
    pub family: Family,
    /// The opcode field of the family (for VOP3PX2: the LD_SCALE prefix's).
    pub op: u16,
}

/// Why an instruction could not be sized.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DecodeError {
    /// Fewer bytes remain than the encoding needs (or than one dword).
    Truncated,
    /// An encoding LLVM's gfx1250 disassembler does not decode.
    Unknown,
}

/// The DPP markers of a source-0 field: DPP16, DPP8, DPP8 with FI.
const DPP_MARKERS: [u32; 3] = [0xFA, 0xE9, 0xEA];
/// A 32-bit literal follows.
const LITERAL32: u32 = 255;
/// A 64-bit literal follows (gfx1250).
const LITERAL64: u32 = 254;

/// Bytes of literal for the source values `fields` (unused fields filtered out
/// by the caller): 8 for a 64-bit literal, 4 for a 32-bit one, else 0.
fn literal_len(fields: impl IntoIterator<Item = u32>) -> usize {
    let mut len = 0;
    for f in fields {
        if f == LITERAL64 {
            return 8;
        }
        if f == LITERAL32 {
            len = 4;
        }
    }
    len
}

/// Reads dword `i` of `bytes`, if present.
fn dword(bytes: &[u8], i: usize) -> Option<u32> {
    let at = i.checked_mul(4)?;
    Some(u32::from_le_bytes(bytes.get(at..at + 4)?.try_into().ok()?))
}

/// The used-source mask and the 64-bit mask of a table entry, or `fallback`
/// (used) when the table has no entry for the opcode.
fn entry_masks(entry: u8, fallback: u8) -> (u8, u8) {
    if entry == table::INVALID {
        (fallback, 0)
    } else {
        (entry & 7, (entry >> 3) & 7)
    }
}

/// The coarse source count of VOP3 opcodes the table has no entry for:
/// promoted VOPC and VOP2 use two sources, promoted VOP1 one, native VOP3 three.
fn vop3_coarse(op: u16) -> u8 {
    match op {
        0x000..=0x17F => 0b011,
        0x180..=0x1FF => 0b001,
        _ => 0b111,
    }
}

/// The used-source and 64-bit masks of a VOP3 opcode (VOPC, VOP2 and VOP1
/// opcodes map into VOP3 at 0x000, 0x100 and 0x180).
pub(crate) fn vop3_sources(op: u16) -> (u8, u8) {
    let entry = table::VOP3
        .get(usize::from(op))
        .copied()
        .unwrap_or(table::INVALID);
    entry_masks(entry, vop3_coarse(op))
}

/// The used-source and 64-bit masks of a VOP3P opcode.
pub(crate) fn vop3p_sources(op: u16) -> (u8, u8) {
    let entry = table::VOP3P
        .get(usize::from(op))
        .copied()
        .unwrap_or(table::INVALID);
    entry_masks(entry, 0b111)
}

/// The used-source and 64-bit masks of a scalar opcode; `None` when LLVM does
/// not decode the opcode.
pub(crate) fn salu_sources(family: Family, op: u16) -> Option<(u8, u8)> {
    let t: &[u8] = match family {
        Family::Sop1 => &table::SOP1,
        Family::Sop2 => &table::SOP2,
        Family::Sopc => &table::SOPC,
        Family::Sopk => &table::SOPK,
        Family::Sopp => &table::SOPP,
        _ => return None,
    };
    let entry = *t.get(usize::from(op))?;
    (entry != table::INVALID).then_some(entry_masks(entry, 0))
}

/// The values of the 9-bit source fields of a VOP3/VOP3P second dword.
fn vop3_fields(w1: u32) -> [u32; 3] {
    [w1 & 0x1FF, (w1 >> 9) & 0x1FF, (w1 >> 18) & 0x1FF]
}

/// The fields of `fields` selected by `mask` (bit i: field i).
fn selected(fields: [u32; 3], mask: u8) -> impl Iterator<Item = u32> {
    (0..3)
        .filter(move |i| mask & (1 << i) != 0)
        .map(move |i| fields[i])
}

/// Decodes the length and family of the instruction at the start of `bytes`.
pub fn decode(bytes: &[u8]) -> Result<Decoded, DecodeError> {
    let w0 = dword(bytes, 0).ok_or(DecodeError::Truncated)?;
    let (len, family, op) = size(bytes, w0)?;
    if bytes.len() < len {
        return Err(DecodeError::Truncated);
    }
    Ok(Decoded {
        len: len as u8,
        family,
        op,
    })
}

/// The second dword, needed to size 8-byte-or-longer encodings.
fn w1_of(bytes: &[u8]) -> Result<u32, DecodeError> {
    dword(bytes, 1).ok_or(DecodeError::Truncated)
}

/// Length, family and opcode of the instruction whose first dword is `w0`.
fn size(bytes: &[u8], w0: u32) -> Result<(usize, Family, u16), DecodeError> {
    use DecodeError::Unknown;
    if w0 >> 31 == 0 {
        return vop_short(w0);
    }
    let top8 = w0 >> 24;
    match w0 >> 30 {
        0b10 => return scalar(w0),
        0b11 => {}
        _ => unreachable!("bit 31 is set"),
    }
    let op8 = ((w0 >> 16) & 0xFF) as u16;
    match top8 {
        0xCC => {
            let w1 = w1_of(bytes)?;
            if matches!(op8, 0x35 | 0x3A) {
                if let Some(w2) = dword(bytes, 2) {
                    let next_op = (w2 >> 16) & 0xFF;
                    if w2 >> 24 == 0xCC && matches!(next_op, 0x33 | 0x88) {
                        return Ok((16, Family::Vop3px2, op8));
                    }
                }
            }
            let (used, _) = vop3p_sources(op8);
            Ok((8 + extension(w1, used), Family::Vop3p, op8))
        }
        0xCF => {
            let w1 = w1_of(bytes)?;
            let literal = [w0 & 0x1FF, w1 & 0x1FF].contains(&LITERAL32);
            Ok((12 + if literal { 4 } else { 0 }, Family::Vopd3, 0))
        }
        0xC8..=0xCB => {
            let w1 = w1_of(bytes)?;
            let op_x = (w0 >> 22) & 0xF;
            let op_y = (w0 >> 17) & 0x1F;
            let mut extra = literal_len([w0 & 0x1FF, w1 & 0x1FF]);
            if extra == 0 && (matches!(op_x, 1 | 2) || matches!(op_y, 1 | 2)) {
                extra = 4;
            }
            Ok((8 + extra, Family::Vopd, ((op_x << 5) | op_y) as u16))
        }
        0xD4..=0xD7 => {
            let w1 = w1_of(bytes)?;
            let op = ((w0 >> 16) & 0x3FF) as u16;
            let (used, _) = vop3_sources(op);
            Ok((8 + extension(w1, used), Family::Vop3, op))
        }
        0xD8..=0xDB => Ok((8, Family::Ds, ((w0 >> 18) & 0xFF) as u16)),
        0xF4..=0xF7 => Ok((8, Family::Smem, ((w0 >> 13) & 0x3F) as u16)),
        0xC4..=0xC7 => Ok((12, Family::Vbuffer, ((w0 >> 14) & 0xFF) as u16)),
        0xEC..=0xEE => Ok((12, Family::Vflat, ((w0 >> 14) & 0xFF) as u16)),
        // Only the tensor data movers (bits [22:14] = 0x1C4, 0x1C5) exist in the
        // gfx1250 image space; ROCm's legacy tensor encoding (bit 22 clear) does
        // not decode with LLVM 22.
        0xD0..=0xD3 => match (w0 >> 14) & 0x1FF {
            0x1C4 | 0x1C5 => Ok((12, Family::Vimage, ((w0 >> 14) & 0xFF) as u16)),
            _ => Err(Unknown),
        },
        _ => Err(Unknown),
    }
}

/// The DPP dword or the literal of a VOP3/VOP3P whose used sources are `used`.
fn extension(w1: u32, used: u8) -> usize {
    let fields = vop3_fields(w1);
    if used & 1 != 0 && DPP_MARKERS.contains(&fields[0]) {
        return 4;
    }
    literal_len(selected(fields, used))
}

/// The used-source and 64-bit masks of a VOP1, VOP2 or VOPC opcode (src0
/// only); `None` when LLVM does not decode the opcode.
pub(crate) fn vop_short_sources(family: Family, op: u16) -> Option<(u8, u8)> {
    let t: &[u8] = match family {
        Family::Vop1 => &table::VOP1,
        Family::Vop2 => &table::VOP2,
        Family::Vopc => &table::VOPC,
        _ => return None,
    };
    let entry = *t.get(usize::from(op))?;
    (entry != table::INVALID).then_some(entry_masks(entry, 0))
}

/// VOP1, VOPC and VOP2 (bit 31 clear).
fn vop_short(w0: u32) -> Result<(usize, Family, u16), DecodeError> {
    let src0 = w0 & 0x1FF;
    let (family, op) = match w0 >> 25 {
        0x3F => (Family::Vop1, ((w0 >> 9) & 0xFF) as u16),
        0x3E => (Family::Vopc, ((w0 >> 17) & 0xFF) as u16),
        op => (Family::Vop2, op as u16),
    };
    let (used, _) = vop_short_sources(family, op).ok_or(DecodeError::Unknown)?;
    let extra = if used & 1 == 0 {
        0
    } else if DPP_MARKERS.contains(&src0) {
        4
    } else {
        literal_len([src0])
    };
    let extra = match (family, op) {
        // v_fmamk/fmaak_f64: a 64-bit K.
        (Family::Vop2, 0x23 | 0x24) => 8,
        // v_fmamk/fmaak_f32 and _f16: a 32-bit K (the literal itself).
        (Family::Vop2, 0x2C | 0x2D | 0x37 | 0x38) => 4,
        _ => extra,
    };
    Ok((4 + extra, family, op))
}

/// SOP2, SOPK, SOP1, SOPC, SOPP (bits [31:30] = 10).
fn scalar(w0: u32) -> Result<(usize, Family, u16), DecodeError> {
    let s = Scalar::decode(w0).ok_or(DecodeError::Unknown)?;
    let family = match s {
        Scalar::Sop1(_) => Family::Sop1,
        Scalar::Sop2(_) => Family::Sop2,
        Scalar::Sopk(_) => Family::Sopk,
        Scalar::Sopc(_) => Family::Sopc,
        Scalar::Sopp(_) => Family::Sopp,
    };
    let op = u16::from(s.op());
    let (used, _) = salu_sources(family, op).ok_or(DecodeError::Unknown)?;
    let [s0, s1] = s.sources();
    let fields = [u32::from(s0), u32::from(s1), 0];
    let extra = match (family, op) {
        // s_fmaak_f32 / s_fmamk_f32: a 32-bit K.
        (Family::Sop2, 0x45 | 0x46) => 4,
        // s_setreg_imm32_b32: a 32-bit immediate.
        (Family::Sopk, 0x13) => 4,
        (Family::Sopk | Family::Sopp, _) => 0,
        _ => literal_len(selected(fields, used)),
    };
    Ok((4 + extra, family, op))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn len(bytes: &[u8]) -> Result<u8, DecodeError> {
        decode(bytes).map(|d| d.len)
    }

    #[test]
    fn measured_encodings() {
        // From llvm-mc-22 -show-encoding (gfx1250-a0.md §3.4 and this crate's corpus).
        let cases: &[(&[u8], u8)] = &[
            (&[0x00, 0x00, 0x85, 0xbf], 4),                          // s_clause
            (&[0xc1, 0x4f, 0x80, 0xbe], 4),                          // s_barrier_signal_isfirst
            (&[0x41, 0x06, 0x80, 0xb9, 1, 0, 0, 0], 8),              // s_setreg_imm32_b32
            (&[0x01, 0x02, 0x80, 0xa2, 0x34, 0x12, 0, 0], 8),        // s_fmaak_f32
            (&[0xfe, 0x01, 0x80, 0xbe, 1, 2, 3, 4, 5, 6, 7, 8], 12), // s_mov_b64 lit64
            (&[0xfe, 0x3a, 0x00, 0x7e, 1, 2, 3, 4, 5, 6, 7, 8], 12), // v_mov_b64 lit64
            (&[0x02, 0x09, 0x00, 0x46, 0, 0, 0, 0, 0x34, 0x12, 0, 0], 12), // v_fmamk_f64
            (&[0xfa, 0x02, 0x00, 0x7e, 0x01, 0xb1, 0x00, 0xff], 8),  // v_mov_b32_dpp
            (
                &[0, 0, 0x03, 0xd5, 0xe9, 0x04, 0x02, 0, 1, 0x77, 0x39, 5],
                12,
            ), // v_add_f32_e64 dpp8
            (&[0, 0, 0x13, 0xd6, 1, 5, 0xfe, 3, 0x34, 0x12, 0, 0], 12), // v_fma_f32 literal
            (
                &[0xff, 0x00, 0x10, 0xca, 0xff, 0, 0, 0, 0x34, 0x12, 0, 0],
                12,
            ), // v_dual_mov x2 lit
            (
                &[
                    0x01, 0x05, 0x50, 0xc8, 0x04, 0x01, 0x02, 0, 0x34, 0x12, 0, 0,
                ],
                12,
            ), // dual fmaak
            (&[0x01, 0x31, 0x4c, 0xcf, 6, 1, 2, 3, 0, 7, 0, 5], 12), // VOPD3
            (&[0x01, 0x02, 0xdc, 0xd8, 2, 0, 0, 0], 8),              // ds_load_2addr_b32
            (&[0x7c, 0xc0, 0x19, 0xee, 0, 0, 0, 0, 2, 0, 0, 0], 12), // cluster_load_b32
            (&[1, 0, 0x71, 0xd0, 0, 0, 0, 0x7c, 0, 4, 0x7c, 0x7c], 12), // tensor_load_to_lds
            (&[0, 0, 0x72, 0xcc, 8, 0x21, 0x62, 0x1c], 8),           // v_wmma_i32_16x16x64_iu8
            (
                &[
                    0, 0, 0x35, 0xcc, 2, 7, 2, 4, 0, 0, 0x33, 0xcc, 8, 0x31, 0xa2, 4,
                ],
                16,
            ), // v_wmma_scale_f32_16x16x128_f8f6f4
        ];
        for (bytes, expected) in cases {
            assert_eq!(len(bytes), Ok(*expected), "{bytes:02x?}");
        }
    }

    #[test]
    fn unpaired_ld_scale_is_eight_bytes() {
        let bytes = [0, 0, 0x35, 0xcc, 2, 7, 2, 4, 0, 0, 0x80, 0xbf];
        assert_eq!(len(&bytes), Ok(8));
    }

    #[test]
    fn unknown_and_truncated() {
        assert_eq!(
            len(&[0, 0, 0x31, 0xd0, 0, 0, 0, 0, 0, 0, 0, 0]),
            Err(DecodeError::Unknown)
        );
        assert_eq!(len(&[0, 0, 0, 0xf8, 0, 0, 0, 0]), Err(DecodeError::Unknown)); // VEXPORT
        assert_eq!(len(&[0, 0, 0, 0xcd, 0, 0, 0, 0]), Err(DecodeError::Unknown)); // VINTERP
        assert_eq!(
            len(&[0x7c, 0xc0, 0x19, 0xee, 0, 0]),
            Err(DecodeError::Truncated)
        );
        assert_eq!(len(&[0xff, 0x00, 0x80, 0xbe]), Err(DecodeError::Truncated));
        assert_eq!(len(&[0x00]), Err(DecodeError::Truncated));
    }

    #[test]
    fn never_panics_on_any_dword_pair() {
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..200_000 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let bytes = state.to_le_bytes();
            let cut = (state >> 59) as usize % 9;
            if let Ok(d) = decode(&bytes[..cut]) {
                assert!(usize::from(d.len) <= cut);
            }
        }
    }
}
