//! The VOP3P fields the WMMA emitters read and write, and the emission of a
//! WMMA whose VGPR operands are full 10-bit register numbers (the
//! `s_set_vgpr_msb` brackets it needs).
//!
//! VOP3P (8 bytes, w0\[31:24\] = 0xCC): w0\[7:0\] vdst, w0\[10:8\] neg_hi,
//! w0\[13:11\] op_sel (the WMMAs' `matrix_a_reuse`/`matrix_b_reuse` bits 13/14,
//! or `matrix_a_fmt` in \[13:11\] and `matrix_b_fmt`'s high bit in 14 for
//! f8f6f4), w0\[15\] clamp, w0\[23:16\] opcode; w1\[8:0\] src0, \[17:9\] src1,
//! \[26:18\] src2 (256 + n: VGPR n), w1\[28:27\] op_sel_hi (f8f6f4: the low bits
//! of `matrix_b_fmt`), w1\[31:29\] neg_lo. Measured with llvm-mc-22
//! `-mcpu=gfx1250 -show-encoding` (see the emitters' tests).
//!
//! VGPR-MSB slots (`s_set_vgpr_msb` mode bits): src0 \[1:0\], src1 \[3:2\],
//! src2 \[5:4\], vdst \[7:6\].

use super::Reason;

/// The VOP3P encoding (w0\[31:24\]).
pub const VOP3P: u32 = 0xCC;

/// Mode slot of each operand.
pub const SLOT_SRC0: u32 = 0;
pub const SLOT_SRC1: u32 = 1;
pub const SLOT_SRC2: u32 = 2;
pub const SLOT_DST: u32 = 3;

/// One 8-byte VOP3P instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Vop3p {
    pub w0: u32,
    pub w1: u32,
}

impl Vop3p {
    /// The instruction in exactly 8 bytes of VOP3P, else `None`.
    pub fn parse(bytes: &[u8]) -> Option<Self> {
        let b: &[u8; 8] = bytes.try_into().ok()?;
        let w0 = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
        let w1 = u32::from_le_bytes([b[4], b[5], b[6], b[7]]);
        (w0 >> 24 == VOP3P).then_some(Self { w0, w1 })
    }

    pub fn op(self) -> u32 {
        (self.w0 >> 16) & 0xff
    }

    /// The 8-bit destination VGPR field.
    pub fn vdst(self) -> u32 {
        self.w0 & 0xff
    }

    /// The 9-bit source field `i` (0..=2).
    pub fn src(self, i: u32) -> u32 {
        (self.w1 >> (9 * i)) & 0x1ff
    }
}

/// A source operand of an emitted WMMA.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Src {
    /// A VGPR tuple starting at this full register number.
    Vgpr(u32),
    /// A non-VGPR 9-bit field value (an inline constant), copied as is.
    Field(u32),
}

/// One WMMA to emit: the fixed bits (opcode, modifiers: every bit except the
/// register fields) and the operands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Wmma {
    /// w0 with vdst (\[7:0\]) zero.
    pub w0: u32,
    /// w1 with the three source fields (\[26:0\]) zero.
    pub w1: u32,
    /// The destination's first register (full number).
    pub dst: u32,
    /// src0, src1, src2.
    pub src: [Src; 3],
    /// The LD_SCALE prefix of a scaled WMMA (its two dwords, written before
    /// the WMMA; its scale operands ignore the VGPR-MSB mode).
    pub prefix: Option<[u32; 2]>,
}

/// The LD_SCALE prefix's second dword `w1` with its unused `scale_src2`
/// field (\[26:18\], bits \[58:50\] of the prefix) set to 0x100 (VGPR0):
/// the A0 form of a block-32 scaled WMMA (class `wmma_scale`, same size).
/// Every scaled WMMA an emitter writes is in that form whatever the site's
/// field held, or rewriting the output would find it to fix (the output
/// would be no fixed point).
pub fn scale_src2_vgpr0(w1: u32) -> u32 {
    (w1 & !(0x1ff << 18)) | 0x100 << 18
}

/// The full register number of VGPR field `field` (8 bits) in `slot` under
/// `mode`.
pub fn full(field: u32, mode: u8, slot: u32) -> u32 {
    (field & 0xff) | (u32::from(mode >> (2 * slot)) & 3) << 8
}

/// A source field as a VGPR's full number under `mode`, or the field itself.
pub fn source(field: u32, mode: u8, slot: u32) -> Src {
    if field >= 0x100 {
        Src::Vgpr(full(field, mode, slot))
    } else {
        Src::Field(field)
    }
}

/// Refuses a tuple `[first, first + len)` that runs past v1023. A tuple may
/// cross a 256-register bank: it continues linearly from its first register
/// (LLVM 22 allocates such tuples, e.g. `v[250:257]` under mode 0), so a half
/// of it is named by its own first register's field and MSBs.
pub fn in_range(operand: &'static str, first: u32, len: u32) -> Result<(), Reason> {
    if first + len <= 1024 {
        Ok(())
    } else {
        Err(Reason::TupleOutOfRange {
            operand,
            first,
            len,
        })
    }
}

/// Whether `[a, a + an)` and `[b, b + bn)` share a register.
pub fn overlaps(a: u32, an: u32, b: u32, bn: u32) -> bool {
    a < b + bn && b < a + an
}

/// Whether VGPR tuple `[d, d + dn)` overlaps a source tuple of `bn` registers.
pub fn overlaps_src(d: u32, dn: u32, src: Src, bn: u32) -> bool {
    matches!(src, Src::Vgpr(b) if overlaps(d, dn, b, bn))
}

/// `s_set_vgpr_msb` to `mode`, the previous mode in the high byte as LLVM
/// writes it (the hardware reads the low byte).
pub fn set_vgpr_msb(mode: u8, previous: u8) -> [u8; 4] {
    [mode, previous, 0x86, 0xbf]
}

/// Appends `ops` to `out`, each preceded by the `s_set_vgpr_msb` its operands'
/// banks need (only when the mode changes) and, after the first, by `gap`
/// `v_nop`s; restores `mode` after them.
pub fn emit(out: &mut Vec<u8>, ops: &[Wmma], mode: u8, gap: u32) {
    let mut current = mode;
    for (n, op) in ops.iter().enumerate() {
        if n > 0 {
            for _ in 0..gap {
                out.extend_from_slice(&super::V_NOP);
            }
        }
        let mut needed = current;
        let mut set = |slot: u32, reg: u32| {
            needed = (needed & !(3 << (2 * slot))) | (((reg >> 8) as u8 & 3) << (2 * slot));
        };
        set(SLOT_DST, op.dst);
        let mut w1 = op.w1;
        for (i, s) in op.src.iter().enumerate() {
            let field = match *s {
                Src::Vgpr(r) => {
                    set(i as u32, r);
                    0x100 | (r & 0xff)
                }
                Src::Field(f) => f,
            };
            w1 |= field << (9 * i);
        }
        if needed != current {
            out.extend_from_slice(&set_vgpr_msb(needed, current));
            current = needed;
        }
        for w in op.prefix.iter().flatten() {
            out.extend_from_slice(&w.to_le_bytes());
        }
        out.extend_from_slice(&(op.w0 | (op.dst & 0xff)).to_le_bytes());
        out.extend_from_slice(&w1.to_le_bytes());
    }
    if current != mode {
        out.extend_from_slice(&set_vgpr_msb(mode, current));
    }
}
