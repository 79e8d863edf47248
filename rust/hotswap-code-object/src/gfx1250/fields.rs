//! The one typed decode of the instruction fields the walker and the
//! rewriter's stages read: the scalar encodings (SOP1, SOP2, SOPK, SOPC,
//! SOPP), DS and VOP3P, from their dwords. Every stage that needs a field
//! (the walker's family and opcode, placement's branches and address
//! computations, the VGPR-MSB dataflow, the emitters) reads it here, so a
//! field's bit positions are written once.
//!
//! Facts (LLVM's `SOPInstructions.td`, `DSInstructions.td`,
//! `VOP3PInstructions.td` encodings for gfx12; `gfx1250-a0.md` §3):
//! - bits \[31:30\] = `10` is scalar ALU: bits \[31:23\] = 0x17D SOP1, 0x17E
//!   SOPC, 0x17F SOPP; otherwise bits \[31:28\] = `1011` SOPK; otherwise SOP2;
//! - SOP1: `sdst` \[22:16\], `op` \[15:8\], `ssrc0` \[7:0\];
//! - SOP2: `op` \[29:23\], `sdst` \[22:16\], `ssrc1` \[15:8\], `ssrc0` \[7:0\];
//! - SOPK: `op` \[27:23\], `sdst` \[22:16\], `simm16` \[15:0\] (for
//!   `s_setreg*`: a `hwreg` id \[5:0\], offset \[10:6\], size − 1 \[15:11\]);
//! - SOPC: `op` \[22:16\], `ssrc1` \[15:8\], `ssrc0` \[7:0\];
//! - SOPP: `op` \[22:16\], `simm16` \[15:0\];
//! - DS (first byte 0xD8..0xDB): `op` \[25:18\], bits \[17:16\] (must be 0
//!   for the operations the rewriter knows), `offset1` \[15:8\], `offset0`
//!   \[7:0\]; second dword `vdst` \[31:24\], `data1` \[23:16\], `data0`
//!   \[15:8\], `addr` \[7:0\] (8-bit register fields, completed by the
//!   VGPR-MSB mode);
//! - VOP3P (first byte 0xCC): `op` \[22:16\], `clamp` 15, `opsel_hi2` 14,
//!   `opsel` \[13:11\], `neg_hi` \[10:8\], `vdst` \[7:0\]; second dword
//!   `neg` \[31:29\], `opsel_hi` \[28:27\], `src2` \[26:18\], `src1` \[17:9\],
//!   `src0` \[8:0\].

/// SOP1 opcodes the rewriter reads.
pub mod sop1 {
    /// `s_get_pc_i64`.
    pub const S_GET_PC_I64: u8 = 0x47;
    /// `s_set_pc_i64`.
    pub const S_SET_PC_I64: u8 = 0x48;
    /// `s_swap_pc_i64`.
    pub const S_SWAP_PC_I64: u8 = 0x49;
    /// `s_rfe_i64`.
    pub const S_RFE_I64: u8 = 0x4a;
    /// `s_add_pc_i64`.
    pub const S_ADD_PC_I64: u8 = 0x4b;
}

/// SOP2 opcodes the rewriter reads.
pub mod sop2 {
    /// `s_add_co_u32`.
    pub const S_ADD_CO_U32: u8 = 0x00;
    /// `s_add_co_ci_u32`.
    pub const S_ADD_CO_CI_U32: u8 = 0x04;
    /// `s_add_nc_u64`.
    pub const S_ADD_NC_U64: u8 = 0x53;
}

/// SOPK opcodes the rewriter reads.
pub mod sopk {
    /// `s_setreg_b32`.
    pub const S_SETREG_B32: u8 = 0x12;
    /// `s_setreg_imm32_b32` (a 32-bit immediate follows).
    pub const S_SETREG_IMM32_B32: u8 = 0x13;
    /// The `hwreg` id of `MODE`.
    pub const HW_REG_MODE: u8 = 1;
}

/// SOPP opcodes the rewriter reads.
pub mod sopp {
    /// `s_clause` (`simm16[5:0]`: the clause's length minus one).
    pub const S_CLAUSE: u8 = 0x05;
    /// `s_set_vgpr_msb` (`simm16[7:0]`: the new mode).
    pub const S_SET_VGPR_MSB: u8 = 0x06;
    /// `s_branch`.
    pub const S_BRANCH: u8 = 0x20;
    /// The first `s_cbranch_*`.
    pub const S_CBRANCH_FIRST: u8 = 0x21;
    /// The last `s_cbranch_*`.
    pub const S_CBRANCH_LAST: u8 = 0x26;
    /// `s_endpgm`.
    pub const S_ENDPGM: u8 = 0x30;
    /// `s_endpgm_saved`.
    pub const S_ENDPGM_SAVED: u8 = 0x31;
}

/// The source-operand value meaning "a 32-bit literal follows".
pub const LITERAL32: u8 = 0xff;
/// The source-operand value meaning "a 64-bit literal follows" (gfx1250).
pub const LITERAL64: u8 = 0xfe;

/// SOP1: one source.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sop1 {
    /// The opcode.
    pub op: u8,
    /// The destination (7 bits).
    pub sdst: u8,
    /// The source.
    pub ssrc0: u8,
}

/// SOP2: two sources.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sop2 {
    /// The opcode (7 bits).
    pub op: u8,
    /// The destination (7 bits).
    pub sdst: u8,
    /// The first source.
    pub ssrc0: u8,
    /// The second source.
    pub ssrc1: u8,
}

impl Sop2 {
    /// Whether the sources are `a` and `b`, in either order.
    pub fn sources_are(&self, a: u8, b: u8) -> bool {
        (self.ssrc0 == a && self.ssrc1 == b) || (self.ssrc0 == b && self.ssrc1 == a)
    }
}

/// SOPK: a 16-bit immediate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sopk {
    /// The opcode (5 bits).
    pub op: u8,
    /// The destination (7 bits).
    pub sdst: u8,
    /// The immediate.
    pub simm16: u16,
}

/// A `hwreg(id, offset, size)` operand of `s_setreg*` / `s_getreg*`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HwReg {
    /// The hardware register.
    pub id: u8,
    /// The first bit.
    pub offset: u8,
    /// The number of bits (1 to 32).
    pub size: u8,
}

impl Sopk {
    /// The immediate read as a `hwreg` operand.
    pub fn hwreg(&self) -> HwReg {
        HwReg {
            id: (self.simm16 & 0x3f) as u8,
            offset: ((self.simm16 >> 6) & 0x1f) as u8,
            size: ((self.simm16 >> 11) & 0x1f) as u8 + 1,
        }
    }
}

/// SOPC: a scalar compare.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sopc {
    /// The opcode (7 bits).
    pub op: u8,
    /// The first source.
    pub ssrc0: u8,
    /// The second source.
    pub ssrc1: u8,
}

/// SOPP: program control.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sopp {
    /// The opcode (7 bits).
    pub op: u8,
    /// The immediate.
    pub simm16: u16,
}

impl Sopp {
    /// Whether this is `s_branch` or an `s_cbranch_*`.
    pub fn is_branch(&self) -> bool {
        self.op == sopp::S_BRANCH
            || (sopp::S_CBRANCH_FIRST..=sopp::S_CBRANCH_LAST).contains(&self.op)
    }

    /// The target of a branch at `vaddr` (`simm16` dwords past the next
    /// instruction).
    pub fn branch_target(&self, vaddr: u64) -> u64 {
        let simm = i64::from(self.simm16 as i16);
        vaddr.wrapping_add(4).wrapping_add((simm * 4) as u64)
    }
}

/// A scalar ALU instruction's fields.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scalar {
    /// One source.
    Sop1(Sop1),
    /// Two sources.
    Sop2(Sop2),
    /// A 16-bit immediate.
    Sopk(Sopk),
    /// A compare.
    Sopc(Sopc),
    /// Program control.
    Sopp(Sopp),
}

impl Scalar {
    /// The fields of the scalar instruction whose first dword is `w0`, or
    /// `None` when `w0` is not a scalar ALU encoding (bits \[31:30\] ≠ `10`).
    #[inline]
    pub fn decode(w0: u32) -> Option<Scalar> {
        if w0 >> 30 != 0b10 {
            return None;
        }
        let sdst = ((w0 >> 16) & 0x7f) as u8;
        let (s0, s1) = (w0 as u8, (w0 >> 8) as u8);
        Some(match (w0 >> 23) & 0x1ff {
            0x17D => Scalar::Sop1(Sop1 {
                op: s1,
                sdst,
                ssrc0: s0,
            }),
            0x17E => Scalar::Sopc(Sopc {
                op: sdst,
                ssrc0: s0,
                ssrc1: s1,
            }),
            0x17F => Scalar::Sopp(Sopp {
                op: sdst,
                simm16: w0 as u16,
            }),
            _ if w0 >> 28 == 0xB => Scalar::Sopk(Sopk {
                op: ((w0 >> 23) & 0x1f) as u8,
                sdst,
                simm16: w0 as u16,
            }),
            _ => Scalar::Sop2(Sop2 {
                op: ((w0 >> 23) & 0x7f) as u8,
                sdst,
                ssrc0: s0,
                ssrc1: s1,
            }),
        })
    }

    /// The opcode, in its encoding's field.
    pub fn op(&self) -> u8 {
        match self {
            Scalar::Sop1(i) => i.op,
            Scalar::Sop2(i) => i.op,
            Scalar::Sopk(i) => i.op,
            Scalar::Sopc(i) => i.op,
            Scalar::Sopp(i) => i.op,
        }
    }

    /// The values of the 8-bit source fields: `ssrc0`, `ssrc1` (0 where the
    /// encoding has no such field).
    pub fn sources(&self) -> [u8; 2] {
        match self {
            Scalar::Sop1(i) => [i.ssrc0, 0],
            Scalar::Sop2(i) => [i.ssrc0, i.ssrc1],
            Scalar::Sopc(i) => [i.ssrc0, i.ssrc1],
            Scalar::Sopk(_) | Scalar::Sopp(_) => [0, 0],
        }
    }
}

/// The SOP1 fields of `w0`, if it is a SOP1.
#[inline]
pub fn sop1(w0: u32) -> Option<Sop1> {
    match Scalar::decode(w0)? {
        Scalar::Sop1(i) => Some(i),
        _ => None,
    }
}

/// The SOP2 fields of `w0`, if it is a SOP2.
#[inline]
pub fn sop2(w0: u32) -> Option<Sop2> {
    match Scalar::decode(w0)? {
        Scalar::Sop2(i) => Some(i),
        _ => None,
    }
}

/// The SOPK fields of `w0`, if it is a SOPK.
#[inline]
pub fn sopk(w0: u32) -> Option<Sopk> {
    match Scalar::decode(w0)? {
        Scalar::Sopk(i) => Some(i),
        _ => None,
    }
}

/// The SOPP fields of `w0`, if it is a SOPP.
#[inline]
pub fn sopp(w0: u32) -> Option<Sopp> {
    match Scalar::decode(w0)? {
        Scalar::Sopp(i) => Some(i),
        _ => None,
    }
}

/// The length of the `s_clause` window `w0` opens (the instructions after
/// it that it covers), if `w0` is an `s_clause`.
#[inline]
pub fn clause_window(w0: u32) -> Option<usize> {
    sopp(w0)
        .filter(|i| i.op == sopp::S_CLAUSE)
        .map(|i| usize::from(i.simm16 & 0x3f) + 1)
}

/// A DS instruction's fields (8-bit register fields as encoded).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ds {
    /// The opcode (8 bits).
    pub op: u8,
    /// Bits \[17:16\] of the first dword.
    pub reserved: u8,
    /// The first offset.
    pub offset0: u8,
    /// The second offset.
    pub offset1: u8,
    /// The address VGPR.
    pub addr: u8,
    /// The first data VGPR.
    pub data0: u8,
    /// The second data VGPR.
    pub data1: u8,
    /// The destination VGPR.
    pub vdst: u8,
}

impl Ds {
    /// The DS fields of `bytes` (exactly 8 bytes, first byte of the DS
    /// encoding), or `None`.
    pub fn decode(bytes: &[u8]) -> Option<Ds> {
        let b: &[u8; 8] = bytes.try_into().ok()?;
        let w0 = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
        if w0 >> 26 != 0x36 {
            return None;
        }
        Some(Ds {
            op: (w0 >> 18) as u8,
            reserved: ((w0 >> 16) & 3) as u8,
            offset0: b[0],
            offset1: b[1],
            addr: b[4],
            data0: b[5],
            data1: b[6],
            vdst: b[7],
        })
    }
}

/// A VOP3P instruction's fields (the first 8 bytes; a literal or a second
/// half follows in the bytes for some).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Vop3p {
    /// The opcode (7 bits).
    pub op: u8,
    /// The destination VGPR (8 bits).
    pub vdst: u8,
    /// The sources (9-bit operand fields).
    pub src: [u16; 3],
    /// `neg` (3 bits).
    pub neg: u8,
    /// `neg_hi` (3 bits).
    pub neg_hi: u8,
    /// `opsel` (3 bits).
    pub opsel: u8,
    /// `opsel_hi` (3 bits: \[1:0\] from the second dword, bit 2 from the first).
    pub opsel_hi: u8,
    /// `clamp`.
    pub clamp: bool,
}

impl Vop3p {
    /// The VOP3P fields of `bytes` (at least 8, first byte 0xCC), or `None`.
    pub fn decode(bytes: &[u8]) -> Option<Vop3p> {
        let w0 = u32::from_le_bytes(bytes.get(..4)?.try_into().ok()?);
        let w1 = u32::from_le_bytes(bytes.get(4..8)?.try_into().ok()?);
        if w0 >> 24 != 0xCC {
            return None;
        }
        Some(Vop3p {
            op: ((w0 >> 16) & 0x7f) as u8,
            vdst: w0 as u8,
            src: [
                (w1 & 0x1ff) as u16,
                ((w1 >> 9) & 0x1ff) as u16,
                ((w1 >> 18) & 0x1ff) as u16,
            ],
            neg: (w1 >> 29) as u8,
            neg_hi: ((w0 >> 8) & 7) as u8,
            opsel: ((w0 >> 11) & 7) as u8,
            opsel_hi: (((w1 >> 27) & 3) | ((w0 >> 14) & 1) << 2) as u8,
            clamp: w0 & (1 << 15) != 0,
        })
    }
}

/// The decoded fields of one instruction, as the emitters get them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fields {
    /// A scalar ALU instruction.
    Scalar(Scalar),
    /// A DS instruction.
    Ds(Ds),
    /// A VOP3P instruction (its first 8 bytes; for a scaled WMMA, the
    /// LD_SCALE prefix).
    Vop3p(Vop3p),
    /// An encoding this layer does not break into fields.
    Other,
}

impl Fields {
    /// The fields of the instruction `bytes` (exactly its bytes).
    pub fn decode(bytes: &[u8]) -> Fields {
        let Some(w0) = bytes
            .get(..4)
            .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        else {
            return Fields::Other;
        };
        if let Some(s) = Scalar::decode(w0) {
            return Fields::Scalar(s);
        }
        match w0 >> 24 {
            0xD8..=0xDB => Ds::decode(bytes).map_or(Fields::Other, Fields::Ds),
            0xCC => Vop3p::decode(bytes).map_or(Fields::Other, Fields::Vop3p),
            _ => Fields::Other,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // Encodings from llvm-mc-22 -triple=amdgcn-amd-amdhsa -mcpu=gfx1250 -show-encoding.
    fn w(b: [u8; 4]) -> u32 {
        u32::from_le_bytes(b)
    }

    #[test]
    fn scalar_families_and_fields() {
        // s_getpc_b64 s[4:5] (s_get_pc_i64)
        assert_eq!(
            sop1(w([0x00, 0x47, 0x84, 0xbe])),
            Some(Sop1 {
                op: sop1::S_GET_PC_I64,
                sdst: 4,
                ssrc0: 0
            })
        );
        // s_add_co_u32 s4, s4, lit
        assert_eq!(
            sop2(w([0x04, 0xff, 0x04, 0x80])),
            Some(Sop2 {
                op: sop2::S_ADD_CO_U32,
                sdst: 4,
                ssrc0: 4,
                ssrc1: 0xff
            })
        );
        // s_clause 0x3: a window of 4
        assert_eq!(clause_window(w([0x03, 0x00, 0x85, 0xbf])), Some(4));
        assert_eq!(clause_window(w([0x00, 0x00, 0x80, 0xbf])), None); // s_nop 0
                                                                      // s_branch -2 at 0x100 → 0xfc
        let b = sopp(w([0xfe, 0xff, 0xa0, 0xbf])).unwrap();
        assert!(b.is_branch());
        assert_eq!(b.branch_target(0x100), 0xfc);
        // s_setreg_b32 hwreg(HW_REG_MODE, 12, 8), s0
        let k = sopk(w([0x01, 0x3b, 0x00, 0xb9])).unwrap();
        assert_eq!(k.op, sopk::S_SETREG_B32);
        assert_eq!(
            k.hwreg(),
            HwReg {
                id: sopk::HW_REG_MODE,
                offset: 12,
                size: 8
            }
        );
        // SOPC s_cmp_eq_u32 s0, s1
        assert!(matches!(
            Scalar::decode(w([0x00, 0x01, 0x06, 0xbf])),
            Some(Scalar::Sopc(Sopc {
                op: 6,
                ssrc0: 0,
                ssrc1: 1
            }))
        ));
        // Not scalar: a VOP1 and a DS.
        assert_eq!(Scalar::decode(w([0x01, 0x02, 0x00, 0x7e])), None);
        assert_eq!(Scalar::decode(w([0x01, 0x02, 0xdc, 0xd8])), None);
    }

    #[test]
    fn ds_and_vop3p_fields() {
        // ds_load_2addr_b32 v[0:1], v2 offset0:1 offset1:2
        let f = Fields::decode(&[0x01, 0x02, 0xdc, 0xd8, 0x02, 0x00, 0x00, 0x00]);
        assert_eq!(
            f,
            Fields::Ds(Ds {
                op: 0x37,
                reserved: 0,
                offset0: 1,
                offset1: 2,
                addr: 2,
                data0: 0,
                data1: 0,
                vdst: 0
            })
        );
        // v_wmma_i32_16x16x64_iu8 v[0:7], v[8:15], v[16:23], v[0:7]
        let Fields::Vop3p(v) = Fields::decode(&[0, 0, 0x72, 0xcc, 8, 0x21, 0x62, 0x1c]) else {
            panic!("a VOP3P");
        };
        assert_eq!((v.op, v.vdst), (0x72, 0));
        assert_eq!(v.src, [0x108, 0x110, 0x100 | 0x18]);
        assert_eq!(Fields::decode(&[0, 0]), Fields::Other);
    }

    /// The scalar decode against the bit positions written out
    /// independently (the formulas the walker, placement and the VGPR-MSB
    /// dataflow each used before this layer), on random scalar dwords.
    #[test]
    fn scalar_fields_match_the_bit_positions() {
        let mut state = 0x2545_f491_4f6c_dd1du64;
        for _ in 0..200_000 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let w0 = (state as u32 & 0x3fff_ffff) | 0x8000_0000;
            let top9 = w0 >> 23;
            let got = Scalar::decode(w0).expect("scalar");
            let sopk_op = (w0 >> 23) & 0x1f;
            match got {
                Scalar::Sop1(i) => {
                    assert_eq!(top9, 0x17D);
                    assert_eq!(
                        (u32::from(i.op), u32::from(i.sdst), u32::from(i.ssrc0)),
                        ((w0 >> 8) & 0xff, (w0 >> 16) & 0x7f, w0 & 0xff)
                    );
                }
                Scalar::Sopc(i) => {
                    assert_eq!(top9, 0x17E);
                    assert_eq!(u32::from(i.op), (w0 >> 16) & 0x7f);
                }
                Scalar::Sopp(i) => {
                    assert_eq!(w0 >> 16 & !0x7f, 0xBF80);
                    assert_eq!(
                        (u32::from(i.op), u32::from(i.simm16)),
                        ((w0 >> 16) & 0x7f, w0 & 0xffff)
                    );
                }
                Scalar::Sopk(i) => {
                    assert!(w0 >> 28 == 0xB && !(0x17D..=0x17F).contains(&top9));
                    assert!(!(0x1D..=0x1F).contains(&sopk_op) || top9 < 0x17D);
                    assert_eq!(u32::from(i.op), sopk_op);
                    let h = i.hwreg();
                    assert_eq!(
                        (u32::from(h.id), u32::from(h.offset), u32::from(h.size)),
                        (w0 & 0x3f, (w0 >> 6) & 0x1f, ((w0 >> 11) & 0x1f) + 1)
                    );
                }
                Scalar::Sop2(i) => {
                    assert!(w0 >> 28 != 0xB && top9 < 0x17D);
                    assert_eq!(
                        (
                            u32::from(i.op),
                            u32::from(i.sdst),
                            u32::from(i.ssrc0),
                            u32::from(i.ssrc1)
                        ),
                        (
                            (w0 >> 23) & 0x7f,
                            (w0 >> 16) & 0x7f,
                            w0 & 0xff,
                            (w0 >> 8) & 0xff
                        )
                    );
                }
            }
        }
    }
}
