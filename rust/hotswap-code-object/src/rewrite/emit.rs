//! The emitter seam: how a site that needs code growth becomes the
//! straight-line code that replaces it.
//!
//! One [`Emitter`] per class that growth fixes, listed in [`emitter`]. The
//! growth pipeline ([`super::placement`]) calls it for every site of its class
//! in a function it moves, with a [`Site`]: the instruction's original bytes,
//! its decoded fields ([`Fields`]), the VGPR-MSB mode in force there (the
//! emitter completes 8-bit VGPR fields with it; the pipeline refuses a site
//! whose mode it cannot tell) and a [`Scratch`] provider. The emitter
//! returns the replacement ([`Emitted`]) or a [`Refusal`] with its reason; a
//! refusal refuses the object, reported as `<site>: <reason>`.
//!
//! What the replacement must be, checked by the pipeline on every site
//! (a violation refuses the object as an emitter defect):
//! - whole gfx1250 instructions, at least one, as the walker sizes them;
//! - straight-line: no branch, no `s_endpgm`, no instruction that reads or
//!   writes the PC (`s_*_pc_i64`, `s_rfe_i64`): the layout moves code by the
//!   replacement's length and re-targets nothing inside it;
//! - the VGPR-MSB mode after it is the mode before it (bracket any
//!   `s_set_vgpr_msb` it needs, as [`ds2`] does).
//!
//! What it must do on its own: compute what the original computes on B0,
//! exactly, for every register state, or refuse; take no register beyond the
//! instruction's own unless [`Site::scratch`] granted it.
//!
//! Adding a class: its row in `gfx1250/classes.rs` (`CLASSES`, with
//! `Fix::Growth` and the rule's name), an emitter module under
//! `rewrite/emit/` with its tests, and one arm in [`emitter`]. See
//! CONTRIBUTING.md ("How to add a class").
//!
//! # Pure emitters
//!
//! Besides the seam, the pure emitters of the WMMA (issue 30) and memory and
//! conversion (issue 31) classes. Each is a pure function of the original instruction's bytes and the
//! context it needs (the `s_set_vgpr_msb` mode in force at the site, from
//! [`super::vgpr_mode`]; for the integer WMMA spacing, the instructions that
//! follow the site). It returns the bytes that replace the instruction, or a
//! [`Reason`] that says precisely why it cannot (a [`Reason`] becomes the
//! seam's [`Refusal`] by its text). Except [`wmma_scale16`] and the
//! block-16 scaled form of [`wmma_f4`] (scratch supplied by the caller),
//! none reads or writes a register the
//! original instruction does not name, so none changes the kernel
//! descriptor's register counts. The caller places the bytes (an
//! emitter never knows an address) and refuses the site when the mode is
//! unknown.
//!
//! - [`wmma_k128`]: the eight dense K=128 FP8/BF8 WMMAs → two K=64 WMMAs of the
//!   same variant chained through the accumulator;
//! - [`wmma_f4`]: `v_wmma_f32_32x16x128_f4` → two `v_wmma_f32_16x16x128_f8f6f4`
//!   (FP4 × FP4) along M (its block-32 scaled form likewise; the block-16
//!   scaled form along M, then each half along K by [`wmma_scale16`]: four
//!   block-32 scaled WMMAs, with the same scratch block);
//! - [`wmma_int_nops`]: an integer WMMA followed by fewer independent VALU
//!   slots than A0 needs → the WMMA and the missing `v_nop`s;
//! - [`wmma_scale16`]: `v_wmma_scale16_f32_16x16x128_f8f6f4` → two block-32
//!   scaled WMMAs split along K, with byte-gathered scales (a scratch pair
//!   below v256) and zero-masked K sub-blocks of A (a scratch run in any
//!   bank) the caller supplies (the one WMMA emitter that writes registers
//!   the original does not name: the caller must take them dead at the site,
//!   or raise the register counts).
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

pub mod ds2;
pub mod ds_addtid;
pub mod flat_scratch_base;
pub mod fp8_clamp;
pub mod tensor_mask;
pub mod wmma_f4;
mod wmma_fields;
pub mod wmma_int_nops;
pub mod wmma_k128;
pub mod wmma_scale16;

use super::SiteInfo;
use crate::gfx1250::fields::Fields;
use crate::gfx1250::A0Class;

/// Why an emitter cannot replace a site (the object is refused).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refusal {
    /// The reason, naming what is not understood or not possible.
    pub reason: String,
}

impl Refusal {
    /// A refusal for `reason`.
    pub fn new(reason: impl Into<String>) -> Self {
        Refusal {
            reason: reason.into(),
        }
    }
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.reason)
    }
}

pub use crate::liveness::{Reg, RegClass, Request};

/// Registers granted to an emitter at one site, as the report lists them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Taken {
    /// The class.
    pub class: RegClass,
    /// The first register.
    pub first: u16,
    /// How many.
    pub count: u16,
    /// How they were found: `dead` (dead at the site on every path),
    /// `dead-above-allocation` (dead, but some reaching kernel allocates
    /// fewer VGPRs: its counts are raised) or `above-allocation` (touched by
    /// no code reaching the site, above what every kernel reaching it
    /// allocates; the kernels' counts are raised, [`super::Report::raised`]).
    pub tier: &'static str,
}

/// Where an emitter gets registers the original code does not free.
pub trait Scratch {
    /// Registers as `request` describes them that the replacement may
    /// overwrite at the site (dead there on every path, with no memory load
    /// outstanding into them, or above every reaching kernel's allocation),
    /// none granted by an earlier request at the same site: the first one's
    /// number; or a refusal naming the site and the class.
    fn take(&mut self, request: Request) -> Result<u16, Refusal>;

    /// Whether `reg` may be read after the site (on some path). `true`
    /// unless the provider proves otherwise.
    fn live_after(&mut self, reg: Reg) -> bool {
        let _ = reg;
        true
    }
}

/// The provider of a site whose function liveness cannot serve: it refuses
/// every request, naming the site and the class (`why`).
#[derive(Clone, Copy, Debug)]
pub struct NoScratch<'a> {
    /// The site asking.
    pub site: &'a SiteInfo,
    /// Why no register can be taken there.
    pub why: &'a str,
}

impl Scratch for NoScratch<'_> {
    fn take(&mut self, request: Request) -> Result<u16, Refusal> {
        Err(Refusal::new(format!(
            "{} scratch {} register(s) needed at {}: {}",
            request.count,
            request.class.as_str(),
            self.site,
            self.why
        )))
    }
}

/// What an emitter gets for one site.
pub struct Site<'a> {
    /// The site: function, address, class, mnemonic.
    pub info: &'a SiteInfo,
    /// The instruction's bytes in the input (exactly its length).
    pub original: &'a [u8],
    /// Its fields, decoded once ([`crate::gfx1250::fields`]).
    pub fields: Fields,
    /// The `s_set_vgpr_msb` mode in force before it (bits 1:0 src0, 3:2
    /// src1, 5:4 src2, 7:6 dst: the high bits of each 8-bit VGPR field).
    pub vgpr_msb: u8,
    /// The bytes of the site's function after the instruction, to the
    /// function's end (what the integer WMMA spacing scans).
    pub following: &'a [u8],
    /// Where to ask for registers the original does not free.
    pub scratch: &'a mut dyn Scratch,
}

impl std::fmt::Debug for Site<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Site")
            .field("info", self.info)
            .field("original", &self.original)
            .field("fields", &self.fields)
            .field("vgpr_msb", &self.vgpr_msb)
            .finish_non_exhaustive()
    }
}

/// An emitter's replacement of one site.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Emitted {
    /// The straight-line code that replaces the instruction (any length).
    pub bytes: Vec<u8>,
    /// The fix's name in the report (`ds2-split`, ...).
    pub fix: &'static str,
    /// What the fix does to results, when it is not exact (the K splits'
    /// intermediate rounding): the report prints it beside the site.
    pub note: Option<&'static str>,
}

/// Whether the emitter of `class` may ask for scratch registers or for
/// liveness ([`Scratch`]): the growth pipeline analyses the object's
/// register liveness only when a site of such a class is to be replaced.
pub fn needs_liveness(class: A0Class) -> bool {
    matches!(
        class,
        A0Class::DsAddtid
            | A0Class::TensorLds
            | A0Class::WmmaF4
            | A0Class::WmmaScale
            | A0Class::FlatScratchBase64
    )
}

/// Whether the emitter of `site` may ask for scratch registers or liveness:
/// [`needs_liveness`] of its class, narrowed for `wmma_f4` to its block-16
/// scaled form (the plain and block-32 scaled forms take no register).
pub fn site_needs_liveness(site: &SiteInfo) -> bool {
    match site.class {
        A0Class::WmmaF4 => site.mnemonic == wmma_f4::SCALE16_MNEMONIC,
        class => needs_liveness(class),
    }
}

/// Replaces one site.
pub type Emitter = fn(&mut Site<'_>) -> Result<Emitted, Refusal>;

/// The emitter of the sites of `class` that need growth, if growth fixes
/// the class; sites of other classes remain (the object is refused unless
/// partial output is allowed).
pub fn emitter(class: A0Class) -> Option<Emitter> {
    match class {
        A0Class::Ds2addr => Some(ds2::emit),
        A0Class::DsAddtid => Some(ds_addtid::emit),
        A0Class::TensorLds => Some(tensor_mask::emit),
        A0Class::WmmaK128 => Some(wmma_k128::emit),
        A0Class::WmmaF4 => Some(wmma_f4::emit),
        // The class's growth sites are the block-16 scaled 16x16x128 WMMAs
        // (the block-32 ones are fixed in place); the block-16 32x16x128 f4
        // form is a `wmma_f4` site only (its emitter splits it along M and K).
        A0Class::WmmaScale => Some(wmma_scale16::emit),
        A0Class::WmmaIntSpacing => Some(wmma_int_nops::emit),
        A0Class::FlatScratchBase64 => Some(flat_scratch_base::emit),
        // B0's UE5M3 conversion is not defined by the available sources
        // (`fp8_clamp`): its sites stay, and the object is refused unless
        // partial output is allowed.
        A0Class::Fp8Clamp => None,
        _ => None,
    }
}

// --- The pure emitters' vocabulary -------------------------------------------

/// Why an emitter refused a site.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Reason {
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
    /// A form of the instruction the expansion does not support (what).
    Unsupported(&'static str),
    /// A scratch register the expansion needs is missing or unusable (why).
    Scratch(&'static str),
    /// B0's semantics of the instruction are not known exactly enough to
    /// reproduce them (what is missing).
    Semantics(&'static str),
}

impl std::fmt::Display for Reason {
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

impl From<Reason> for Refusal {
    fn from(reason: Reason) -> Self {
        Refusal::new(reason.to_string())
    }
}

/// The report's note of an expansion's rounding.
pub fn rounding_note(rounding: Rounding) -> Option<&'static str> {
    match rounding {
        Rounding::Same => None,
        Rounding::IntermediateF32 => Some(
            "K split: the f32 accumulator is rounded between the halves (at most 2 u of \
             |C| + sum |a*b| on the WMMA corpus, u = 2^-24; docs/wmma.md)",
        ),
        Rounding::IntermediateF16 => Some(
            "K split: the f16 accumulator is rounded between the halves (at most 1.45 u of \
             |C| + sum |a*b| on the WMMA corpus, u = 2^-11; an intermediate can overflow \
             where the full sum does not, or the reverse; docs/wmma.md)",
        ),
    }
}

/// An [`Expansion`] as the seam's [`Emitted`], named `fix` (`swapped_fix`
/// when the halves run in the other order).
fn emitted(e: Expansion, fix: &'static str, swapped_fix: &'static str) -> Emitted {
    Emitted {
        note: rounding_note(e.rounding),
        fix: if e.swapped { swapped_fix } else { fix },
        bytes: e.bytes,
    }
}

/// The first register of a grant below v256 / s106 as the 8-bit field the
/// pure emitters take.
fn below_256(first: u16) -> Result<u8, Refusal> {
    u8::try_from(first).map_err(|_| Refusal::new(format!("scratch register {first} above 255")))
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;

    #[test]
    fn every_growth_class_but_fp8_clamp_has_an_emitter_and_no_scratch_refuses_naming_the_site() {
        for class in A0Class::ALL {
            let grows = class
                .info()
                .fixes()
                .any(|f| f == crate::gfx1250::Fix::Growth);
            assert_eq!(
                emitter(class).is_some(),
                grows && class != A0Class::Fp8Clamp,
                "{class}"
            );
            assert!(
                !needs_liveness(class) || emitter(class).is_some(),
                "{class}"
            );
        }
        let mut info = SiteInfo {
            function: Arc::from("k"),
            function_vaddr: 0x1000,
            vaddr: 0x1010,
            file_offset: 0x10,
            len: 8,
            class: A0Class::WmmaF4,
            mnemonic: "v_wmma_f32_32x16x128_f4",
        };
        // Of `wmma_f4`, only the block-16 scaled form (named as its class
        // row names it) asks for liveness.
        assert!(!site_needs_liveness(&info));
        assert!(A0Class::WmmaF4
            .info()
            .encodings
            .iter()
            .any(|e| e.mnemonic == wmma_f4::SCALE16_MNEMONIC));
        info.mnemonic = wmma_f4::SCALE16_MNEMONIC;
        assert!(site_needs_liveness(&info));
        info.class = A0Class::Ds2addr;
        info.mnemonic = "ds_load_2addr_b32";
        assert!(!site_needs_liveness(&info));
        let why = NoScratch {
            site: &info,
            why: "the function is not analysable",
        }
        .take(Request::new(RegClass::Vgpr, 2, 2))
        .unwrap_err()
        .reason;
        assert!(
            why.contains("vgpr")
                && why.contains("in k at offset 0x10")
                && why.contains("analysable"),
            "{why}"
        );
    }
}
