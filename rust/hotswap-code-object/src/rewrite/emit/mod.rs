//! Emitters: one instruction in, straight-line replacement bytes out.
//!
//! Each emitter is a pure function of the original instruction's bytes and the
//! context it needs (the `s_set_vgpr_msb` mode in force at the site, from
//! [`super::vgpr_mode`]; for the integer WMMA spacing, the instructions that
//! follow the site). It returns the bytes that replace the instruction, or a
//! [`Refusal`] that says precisely why it cannot. Except [`wmma_scale16`]
//! (scratch supplied by the caller), none reads or writes a register the
//! original instruction does not name, so none changes the kernel
//! descriptor's register counts. The caller places the bytes (an
//! emitter never knows an address) and refuses the site when the mode is
//! unknown.
//!
//! - [`wmma_k128`]: the eight dense K=128 FP8/BF8 WMMAs → two K=64 WMMAs of the
//!   same variant chained through the accumulator;
//! - [`wmma_f4`]: `v_wmma_f32_32x16x128_f4` → two `v_wmma_f32_16x16x128_f8f6f4`
//!   (FP4 × FP4) along M;
//! - [`wmma_int_nops`]: an integer WMMA followed by fewer independent VALU
//!   slots than A0 needs → the WMMA and the missing `v_nop`s;
//! - [`wmma_scale16`]: `v_wmma_scale16_f32_16x16x128_f8f6f4` → two block-32
//!   scaled WMMAs split along K, with byte-gathered scales and zero-masked K
//!   sub-blocks of A in a scratch block the caller supplies (the one emitter
//!   that writes registers the original does not name: the caller must take
//!   them dead at the site, or raise the register counts).
//!
//! The memory and conversion classes (issue 31), each with the registers it
//! needs stated in its module (the caller supplies them):
//!
//! - [`ds_addtid`]: `ds_load/store_addtid_b32` → the lane address computed in
//!   the ALU from M0\[19:0\] and a plain `ds_load/store_b32` (the store needs
//!   one dead scratch VGPR);
//! - [`tensor_mask`]: `tensor_load_to_lds` → the workgroup mask cleared at the
//!   site (a scratch SGPR when the mask register is live after it);
//! - [`flat_scratch_base`]: a vector 64-bit read of
//!   `src_flat_scratch_base_lo/hi` → the base read into a dead SGPR pair by
//!   `s_mov_b64` and the pair read instead;
//! - [`fp8_clamp`]: FP8 conversions with CLAMP → always refused (B0's UE5M3
//!   semantics are not defined by the available sources).
//!
//! The proof that an expansion computes what the original computed is not
//! here: `tests/wmma` decodes every emitted byte with llvm-objdump-22,
//! assembles its expected text with llvm-mc-22, and evaluates both sequences
//! on an independent exact model of the WMMA operand layouts.

pub mod ds_addtid;
pub mod flat_scratch_base;
pub mod fp8_clamp;
pub mod tensor_mask;
pub mod wmma_f4;
mod wmma_fields;
pub mod wmma_int_nops;
pub mod wmma_k128;
pub mod wmma_scale16;

/// Why an emitter refused a site.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// The bytes are not an instruction this emitter handles (wrong length,
    /// encoding or opcode).
    NotHandled(&'static str),
    /// Bits the emitter does not know the meaning of are set (the mask, as
    /// the 64-bit little-endian value of the instruction's two dwords).
    UnknownBits(u64),
    /// An operand the expansion must split is not a VGPR tuple (an SGPR or a
    /// constant where a matrix is read).
    NotVgpr(&'static str),
    /// A VGPR tuple runs past v1023 (a malformed operand: the 8-bit field
    /// plus the operand's two MSBs name its first register).
    TupleOutOfRange {
        /// The operand.
        operand: &'static str,
        /// Its first register (full 10-bit number).
        first: u32,
        /// Its length in registers.
        len: u32,
    },
    /// The destination overlaps a source the second operation still reads, in
    /// both orders of the two operations.
    Overlap(&'static str),
    /// The block-16 scaled form of the 32x16x128 f4 WMMA, which no emitter
    /// expands.
    Scaled,
    /// A form of the instruction the expansion does not support (what).
    Unsupported(&'static str),
    /// A scratch register the expansion needs is missing or unusable (why).
    Scratch(&'static str),
    /// B0's semantics of the instruction are not known exactly enough to
    /// reproduce them (what is missing).
    Semantics(&'static str),
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::NotHandled(what) => write!(f, "not {what}"),
            Self::UnknownBits(mask) => {
                write!(
                    f,
                    "bits {mask:#018x} are set that the expansion does not know"
                )
            }
            Self::NotVgpr(op) => write!(f, "{op} is not a VGPR tuple"),
            Self::TupleOutOfRange {
                operand,
                first,
                len,
            } => write!(
                f,
                "{operand} v[{first}:{}] runs past v1023",
                first + len - 1
            ),
            Self::Overlap(what) => write!(f, "{what}"),
            Self::Unsupported(what) => write!(f, "{what} is not supported"),
            Self::Scratch(why) => write!(f, "scratch register: {why}"),
            Self::Semantics(what) => write!(f, "semantics not known exactly: {what}"),
            Self::Scaled => write!(
                f,
                "the block-16 scaled 32x16x128 f4 form is not expanded: it needs an M and \
                 a K split (four operations, scratch registers)"
            ),
        }
    }
}

/// How an expansion's result relates to the original's, in the hardware's
/// arithmetic (exactly in real arithmetic, always).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rounding {
    /// Every result element is computed by one operation over the same
    /// products and accumulator as before: the same result.
    Same,
    /// The K sum is split in two with the accumulator rounded to the
    /// destination format (f32) in between: results may differ in the last
    /// place.
    IntermediateF32,
    /// As [`Rounding::IntermediateF32`] with an f16 accumulator: the
    /// intermediate f16 rounding (and overflow) can be visible.
    IntermediateF16,
}

/// One expansion.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Expansion {
    /// The bytes that replace the instruction.
    pub bytes: Vec<u8>,
    /// Whether the two operations run in the opposite of the natural order
    /// (upper half first), because the natural order would overwrite a source
    /// the second operation reads.
    pub swapped: bool,
    /// What the split does to rounding.
    pub rounding: Rounding,
}

/// `v_nop`.
pub const V_NOP: [u8; 4] = [0x00, 0x00, 0x00, 0x7e];
