//! The A0 classes as data: one [`ClassInfo`] row per [`A0Class`], in
//! [`A0Class::ALL`] order, is the single place that says what a class matches
//! and how it is fixed.
//!
//! A row has two sides:
//!
//! - the bit side, [`ClassInfo::encodings`]: the encoding family, the opcode, a
//!   [`Condition`] on other bits, the site's mnemonic, its [`Fix`] and the
//!   [`Rule`] that makes the A0 form. The classifier ([`super::analyze`]) and
//!   [`super::same_size_fix`] read only this side;
//! - the text side, [`ClassInfo::pattern`]: the class in llvm-objdump-22's text
//!   (a regular expression over mnemonics), and the A0 form's mnemonic of each
//!   encoding ([`Encoding::replacement`]). The test oracles (`tests/analyzer`,
//!   `tests/native`, `tests/cli`) read only this side, from the JSON export.
//!
//! LLVM is what checks that the two sides agree: the oracles count sites by
//! `pattern` in llvm-objdump-22's disassembly and compare with the walker's
//! counts, and disassemble each same-size fix with llvm-mc-22 and compare with
//! `replacement`. An opcode missing from `encodings` shows as a count the
//! walker lacks; a wrong replacement opcode as a mnemonic the table does not
//! name.
//!
//! The table is exported as `data/a0-classes.json` ([`to_json`]) and as the
//! class table of `docs/how-it-works.md` ([`docs_table`]); a test fails when
//! either differs from what this module makes of it. Regenerate both with
//! `HOTSWAP_UPDATE_CLASSES=1 cargo test -p hotswap-code-object classes`.

use super::walker::Family;
use super::{A0Class, Fix};

/// A condition an instruction must meet, beyond its family and opcode, to be a
/// site of an [`Encoding`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Condition {
    /// None.
    Always,
    /// A VFLAT instruction of the global segment (first byte `0xEE`).
    GlobalSegment,
    /// VOP3 CLAMP (bit 15) set.
    Clamp,
    /// A scaled WMMA whose WMMA (third dword) is the 16x16x128 f8f6f4 one (`0x33`).
    MatrixF8f6f4,
    /// A scaled WMMA whose WMMA (third dword) is the 32x16x128 f4 one (`0x88`).
    MatrixF4,
    /// Fewer than 8 `v_nop`s before the next other VALU instruction, control
    /// transfer or the function's end.
    FewerThan8Nops,
    /// A 64-bit source operand naming the flat scratch base: selector 231 in a
    /// scalar instruction, 230 or 231 in a vector one.
    FlatScratchBase64,
}

impl Condition {
    /// The name in the JSON export.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Always => "always",
            Self::GlobalSegment => "global_segment",
            Self::Clamp => "clamp",
            Self::MatrixF8f6f4 => "matrix_f8f6f4",
            Self::MatrixF4 => "matrix_f4",
            Self::FewerThan8Nops => "fewer_than_8_v_nops",
            Self::FlatScratchBase64 => "flat_scratch_base_64_source",
        }
    }
}

/// How a site's A0 form is made.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rule {
    /// Same size: the opcode field becomes this opcode, every other bit kept.
    Opcode(u16),
    /// Same size: the instruction becomes `s_nop 0`.
    SNop0,
    /// Same size: the scaled WMMA's unused `scale_src2` field (bits \[58:50\])
    /// becomes 0x100 (VGPR0); a site whose field is 0x100 already needs no change.
    ScaleSrc2Vgpr0,
    /// Same size: each 64-bit scalar source naming `src_flat_scratch_base_hi`
    /// (231) names `_lo` (230) instead.
    FlatScratchBaseLo,
    /// Growth, made by the native rewriter: the DS two-address split
    /// (`rewrite/emit/ds2.rs`, behind the emitter seam `rewrite/emit.rs`).
    Ds2Split,
    /// Growth: a K=128 FP8/BF8 WMMA as two K=64 ones (`rewrite/emit/wmma_k128.rs`).
    WmmaK128Split,
    /// Growth: the 32x16x128 f4 WMMA (plain, block-32 scaled) as two
    /// 16x16x128 f8f6f4 ones along M (`rewrite/emit/wmma_f4.rs`).
    WmmaF4Split,
    /// Growth: the block-16 scaled 32x16x128 f4 WMMA split along M, then
    /// each half along K: four block-32 scaled 16x16x128 f8f6f4 WMMAs, in
    /// scratch VGPRs (`rewrite/emit/wmma_f4.rs` with `wmma_scale16.rs`).
    WmmaF4Scale16Split,
    /// Growth: a block-16 scaled WMMA as two block-32 ones along K, in
    /// scratch VGPRs (`rewrite/emit/wmma_scale16.rs`).
    WmmaScale16Split,
    /// Growth: the missing `v_nop`s after an integer WMMA
    /// (`rewrite/emit/wmma_int_nops.rs`).
    WmmaIntNops,
    /// Growth: the addtid lane address computed in the ALU
    /// (`rewrite/emit/ds_addtid.rs`).
    DsAddtidAlu,
    /// Growth: the workgroup mask cleared at the site
    /// (`rewrite/emit/tensor_mask.rs`).
    TensorMaskClear,
    /// Growth: the flat scratch base read into a dead SGPR pair
    /// (`rewrite/emit/flat_scratch_base.rs`).
    FlatScratchBasePair,
    /// Growth the native rewriter does not make: the object is refused.
    None,
}

impl Rule {
    /// The name in the JSON export.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Opcode(_) => "opcode",
            Self::SNop0 => "s_nop_0",
            Self::ScaleSrc2Vgpr0 => "scale_src2_vgpr0",
            Self::FlatScratchBaseLo => "flat_scratch_base_lo",
            Self::Ds2Split => "ds2_split",
            Self::WmmaK128Split => "wmma_k128_split",
            Self::WmmaF4Split => "wmma_f4_split",
            Self::WmmaF4Scale16Split => "wmma_f4_scale16_split",
            Self::WmmaScale16Split => "wmma_scale16_split",
            Self::WmmaIntNops => "wmma_int_nops",
            Self::DsAddtidAlu => "ds_addtid_alu",
            Self::TensorMaskClear => "tensor_mask_clear",
            Self::FlatScratchBasePair => "flat_scratch_base_pair",
            Self::None => "none",
        }
    }
}

/// One encoding of a class.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Encoding {
    /// The encoding family.
    pub family: Family,
    /// The opcode (`None`: every opcode of the family).
    pub opcode: Option<u16>,
    /// What else the instruction must show.
    pub condition: Condition,
    /// The site's mnemonic: LLVM's, or the family's name for an encoding of
    /// every opcode.
    pub mnemonic: &'static str,
    /// Whether the fix keeps the size.
    pub fix: Fix,
    /// How the A0 form is made.
    pub rule: Rule,
    /// The A0 form's LLVM mnemonic (empty for growth): what llvm-mc-22 must
    /// disassemble the fixed bytes to.
    pub replacement: &'static str,
    /// Matched after every class matched by opcode (a second class of an
    /// instruction another class names, or a match on operands): the site
    /// follows that class's in the instruction's sites.
    pub secondary: bool,
}

/// One class.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ClassInfo {
    /// The class.
    pub class: A0Class,
    /// The stable name of the JSON output.
    pub name: &'static str,
    /// What A0 does differently and what the fix is.
    pub description: &'static str,
    /// The class in llvm-objdump-22's text: a regular expression (Python `re`
    /// syntax, matched at the start) the mnemonic of each of its sites matches,
    /// `_dpp` removed. Empty when the class is defined by an operand alone.
    pub pattern: &'static str,
    /// The encodings.
    pub encodings: &'static [Encoding],
}

impl ClassInfo {
    /// The fix kinds of its encodings, same-size first.
    pub fn fixes(&self) -> impl Iterator<Item = Fix> + '_ {
        [Fix::SameSize, Fix::Growth]
            .into_iter()
            .filter(|f| self.encodings.iter().any(|e| e.fix == *f))
    }
}

const fn enc(
    family: Family,
    opcode: u16,
    mnemonic: &'static str,
    fix: Fix,
    rule: Rule,
    replacement: &'static str,
) -> Encoding {
    Encoding {
        family,
        opcode: Some(opcode),
        condition: Condition::Always,
        mnemonic,
        fix,
        rule,
        replacement,
        secondary: false,
    }
}

const fn grow(family: Family, opcode: u16, mnemonic: &'static str, rule: Rule) -> Encoding {
    enc(family, opcode, mnemonic, Fix::Growth, rule, "")
}

const fn when(e: Encoding, condition: Condition) -> Encoding {
    Encoding { condition, ..e }
}

const fn secondary(e: Encoding) -> Encoding {
    Encoding {
        secondary: true,
        ..e
    }
}

const fn cluster(opcode: u16, mnemonic: &'static str, global: u16, to: &'static str) -> Encoding {
    when(
        enc(
            Family::Vflat,
            opcode,
            mnemonic,
            Fix::SameSize,
            Rule::Opcode(global),
            to,
        ),
        Condition::GlobalSegment,
    )
}

const fn fsb(family: Family, mnemonic: &'static str, fix: Fix, rule: Rule) -> Encoding {
    Encoding {
        family,
        opcode: None,
        condition: Condition::FlatScratchBase64,
        mnemonic,
        fix,
        rule,
        replacement: "",
        secondary: true,
    }
}

use Family::{Ds, Sop1, Sop2, Sopc, Sopp, Vimage, Vop1, Vop2, Vop3, Vop3p, Vop3px2, Vopc};
use Fix::{Growth, SameSize};

/// Every class, in [`A0Class::ALL`] order.
pub const CLASSES: &[ClassInfo] = &[
    ClassInfo {
        class: A0Class::ClusterLoad,
        name: "cluster_load",
        description: "A0 must not execute cluster multicast. Same size: the matching \
            `global_load*` opcode, same operands (`global_load` never reads `M0.wg_mask`).",
        pattern: r"cluster_load_",
        encodings: &[
            cluster(0x67, "cluster_load_b32", 0x14, "global_load_b32"),
            cluster(0x68, "cluster_load_b64", 0x15, "global_load_b64"),
            cluster(0x69, "cluster_load_b128", 0x17, "global_load_b128"),
            cluster(
                0x6A,
                "cluster_load_async_to_lds_b8",
                0x5F,
                "global_load_async_to_lds_b8",
            ),
            cluster(
                0x6B,
                "cluster_load_async_to_lds_b32",
                0x60,
                "global_load_async_to_lds_b32",
            ),
            cluster(
                0x6C,
                "cluster_load_async_to_lds_b64",
                0x61,
                "global_load_async_to_lds_b64",
            ),
            cluster(
                0x6D,
                "cluster_load_async_to_lds_b128",
                0x62,
                "global_load_async_to_lds_b128",
            ),
        ],
    },
    ClassInfo {
        class: A0Class::BarrierSignalIsfirst,
        name: "barrier_signal_isfirst",
        description: "Same size: `s_barrier_signal` with the same operand (drops the SCC \
            result; a later SCC reader sees a stale value, accepted because the A0 isfirst \
            result is unreliable anyway).",
        pattern: r"s_barrier_signal_isfirst$",
        encodings: &[enc(
            Sop1,
            0x4F,
            "s_barrier_signal_isfirst",
            SameSize,
            Rule::Opcode(0x4E),
            "s_barrier_signal",
        )],
    },
    ClassInfo {
        class: A0Class::SClause,
        name: "s_clause",
        description: "Same size: `s_nop 0`. Whether a clause must change is the rewriter's \
            policy (kept by default); every clause is reported.",
        pattern: r"s_clause$",
        encodings: &[enc(Sopp, 0x05, "s_clause", SameSize, Rule::SNop0, "s_nop")],
    },
    ClassInfo {
        class: A0Class::SSethalt,
        name: "s_sethalt",
        description: "A halt before LD_SCALE breaks the implicit LD_SCALE+WMMA clause on A0. \
            Same size: `s_nop 0`.",
        pattern: r"s_sethalt$",
        encodings: &[enc(Sopp, 0x02, "s_sethalt", SameSize, Rule::SNop0, "s_nop")],
    },
    ClassInfo {
        class: A0Class::Ds2addr,
        name: "ds_2addr",
        description: "A0 needs DS two-address addresses aligned to the payload; the split \
            into two single-address operations grows the code.",
        pattern: r"ds_(load|store|storexchg)_2addr",
        encodings: &[
            grow(Ds, 0x37, "ds_load_2addr_b32", Rule::Ds2Split),
            grow(Ds, 0x77, "ds_load_2addr_b64", Rule::Ds2Split),
            grow(Ds, 0x38, "ds_load_2addr_stride64_b32", Rule::Ds2Split),
            grow(Ds, 0x78, "ds_load_2addr_stride64_b64", Rule::Ds2Split),
            grow(Ds, 0x0E, "ds_store_2addr_b32", Rule::Ds2Split),
            grow(Ds, 0x4E, "ds_store_2addr_b64", Rule::Ds2Split),
            grow(Ds, 0x0F, "ds_store_2addr_stride64_b32", Rule::Ds2Split),
            grow(Ds, 0x4F, "ds_store_2addr_stride64_b64", Rule::Ds2Split),
            grow(Ds, 0x2E, "ds_storexchg_2addr_rtn_b32", Rule::Ds2Split),
            grow(Ds, 0x6E, "ds_storexchg_2addr_rtn_b64", Rule::Ds2Split),
            grow(
                Ds,
                0x2F,
                "ds_storexchg_2addr_stride64_rtn_b32",
                Rule::Ds2Split,
            ),
            grow(
                Ds,
                0x6F,
                "ds_storexchg_2addr_stride64_rtn_b64",
                Rule::Ds2Split,
            ),
        ],
    },
    ClassInfo {
        class: A0Class::DsAddtid,
        name: "ds_addtid",
        description: "A0 reads 16 bits of M0, B0 20. Growth: the lane address \
            M0[19:0] + 4 * lane computed in the ALU, then a plain `ds_load/store_b32` (the store \
            takes one scratch VGPR; the load waits for outstanding loads first).",
        pattern: r"ds_(load|store)_addtid_b32$",
        encodings: &[
            grow(Ds, 0xB1, "ds_load_addtid_b32", Rule::DsAddtidAlu),
            grow(Ds, 0xB0, "ds_store_addtid_b32", Rule::DsAddtidAlu),
        ],
    },
    ClassInfo {
        class: A0Class::TensorLds,
        name: "tensor_lds",
        description: "A non-zero workgroup mask is a cluster multicast that hangs A0. \
            Growth (every operand form): the mask cleared at the site by `s_pack_hh_b32_b16`; \
            when its SGPR may be read after the site it is saved in a dead scratch SGPR and \
            restored after `s_wait_tensorcnt 0` (when the load reads its operands is not known; \
            refused when no SGPR is dead). \
            The same-size definition-site literal rewrite needs a data-flow proof this analysis \
            does not make.",
        pattern: r"tensor_load_to_lds$",
        encodings: &[grow(
            Vimage,
            0xC4,
            "tensor_load_to_lds",
            Rule::TensorMaskClear,
        )],
    },
    ClassInfo {
        class: A0Class::WmmaK128,
        name: "wmma_k128",
        description: "The eight dense K=128 FP8/BF8 WMMAs are absent on A0: split in two \
            along K, chained through the accumulator (growth; the accumulator is rounded \
            between the halves).",
        pattern: r"v_wmma_f(16|32)_16x16x128_(fp8|bf8)_(fp8|bf8)$",
        encodings: &[
            grow(
                Vop3p,
                0x80,
                "v_wmma_f32_16x16x128_fp8_fp8",
                Rule::WmmaK128Split,
            ),
            grow(
                Vop3p,
                0x81,
                "v_wmma_f32_16x16x128_fp8_bf8",
                Rule::WmmaK128Split,
            ),
            grow(
                Vop3p,
                0x82,
                "v_wmma_f32_16x16x128_bf8_fp8",
                Rule::WmmaK128Split,
            ),
            grow(
                Vop3p,
                0x83,
                "v_wmma_f32_16x16x128_bf8_bf8",
                Rule::WmmaK128Split,
            ),
            grow(
                Vop3p,
                0x84,
                "v_wmma_f16_16x16x128_fp8_fp8",
                Rule::WmmaK128Split,
            ),
            grow(
                Vop3p,
                0x85,
                "v_wmma_f16_16x16x128_fp8_bf8",
                Rule::WmmaK128Split,
            ),
            grow(
                Vop3p,
                0x86,
                "v_wmma_f16_16x16x128_bf8_fp8",
                Rule::WmmaK128Split,
            ),
            grow(
                Vop3p,
                0x87,
                "v_wmma_f16_16x16x128_bf8_bf8",
                Rule::WmmaK128Split,
            ),
        ],
    },
    ClassInfo {
        class: A0Class::WmmaF4,
        name: "wmma_f4",
        description: "`v_wmma_f32_32x16x128_f4`, standalone or scaled, is absent on A0: \
            split along M (growth). The block-16 scaled form is split along M, then each half \
            along K into block-32 scaled pairs, in scratch VGPRs (growth; this class only).",
        pattern: r"v_wmma(_scale|_scale16)?_f32_32x16x128_f4$",
        encodings: &[
            grow(Vop3p, 0x88, "v_wmma_f32_32x16x128_f4", Rule::WmmaF4Split),
            secondary(when(
                grow(
                    Vop3px2,
                    0x35,
                    "v_wmma_scale_f32_32x16x128_f4",
                    Rule::WmmaF4Split,
                ),
                Condition::MatrixF4,
            )),
            when(
                grow(
                    Vop3px2,
                    0x3A,
                    "v_wmma_scale16_f32_32x16x128_f4",
                    Rule::WmmaF4Scale16Split,
                ),
                Condition::MatrixF4,
            ),
        ],
    },
    ClassInfo {
        class: A0Class::WmmaScale,
        name: "wmma_scale",
        description: "Scaled WMMAs (VOP3PX2, 16 bytes). Block-32 scales: same size, the \
            unused `scale_src2` field (bits [58:50]) set to 0x100 (VGPR0), a site whose field \
            is 0x100 already needing no change; block-16 scales: split along K into block-32 \
            pairs in scratch VGPRs (growth). The block-16 32x16x128 f4 form is a `wmma_f4` \
            site only: one fix splits it along M and K.",
        pattern: r"v_wmma_scale_|v_wmma_scale16_f32_16x16x128_f8f6f4",
        encodings: &[
            when(
                enc(
                    Vop3px2,
                    0x35,
                    "v_wmma_scale_f32_16x16x128_f8f6f4",
                    SameSize,
                    Rule::ScaleSrc2Vgpr0,
                    "v_wmma_scale_f32_16x16x128_f8f6f4",
                ),
                Condition::MatrixF8f6f4,
            ),
            when(
                enc(
                    Vop3px2,
                    0x35,
                    "v_wmma_scale_f32_32x16x128_f4",
                    SameSize,
                    Rule::ScaleSrc2Vgpr0,
                    "v_wmma_scale_f32_32x16x128_f4",
                ),
                Condition::MatrixF4,
            ),
            when(
                grow(
                    Vop3px2,
                    0x3A,
                    "v_wmma_scale16_f32_16x16x128_f8f6f4",
                    Rule::WmmaScale16Split,
                ),
                Condition::MatrixF8f6f4,
            ),
        ],
    },
    ClassInfo {
        class: A0Class::Fp8Clamp,
        name: "fp8_clamp",
        description: "In VOP3 form with CLAMP (bit 15) set, B0 converts to UE5M3 and A0 \
            ignores CLAMP. Refused: B0's UE5M3 conversion (NaN, overflow, rounding, the \
            stochastic form's noise bits) is not defined by the available sources, so no \
            exact emulation can be written.",
        pattern: r"v_cvt_(pk_fp8_f32|sr_fp8_f32)(_e64)?$|v_cvt_f32_fp8_e64$",
        encodings: &[
            when(
                grow(Vop3, 0x369, "v_cvt_pk_fp8_f32", Rule::None),
                Condition::Clamp,
            ),
            when(
                grow(Vop3, 0x36B, "v_cvt_sr_fp8_f32", Rule::None),
                Condition::Clamp,
            ),
            when(
                grow(Vop3, 0x1EC, "v_cvt_f32_fp8_e64", Rule::None),
                Condition::Clamp,
            ),
        ],
    },
    ClassInfo {
        class: A0Class::WmmaIntSpacing,
        name: "wmma_int_spacing",
        description: "An integer WMMA followed, in its function, by fewer than 8 `v_nop`s \
            before the first other VALU instruction, `ds_*_addtid_b32` (its A0 fix is VALU \
            code), control transfer (`s_branch`, \
            `s_cbranch_*`, `s_set_pc_i64`, `s_swap_pc_i64`, `s_rfe_i64`, `s_call_i64`, \
            `s_endpgm*`, `s_code_end`) or the function's end. A0 needs 8 independent VALU \
            slots (B0 4); inserting the missing `v_nop`s grows the code. Every other VALU is \
            taken as dependent (no operand analysis): this may report a site COMGR's \
            operand-aware scan would not, never the reverse. clang-22 emits 8 `v_nop`s, so \
            its output has no such site.",
        pattern: r"(v_wmma_i32_16x16x64_iu8|v_swmmac_i32_16x16x128_iu8)$",
        encodings: &[
            when(
                grow(Vop3p, 0x72, "v_wmma_i32_16x16x64_iu8", Rule::WmmaIntNops),
                Condition::FewerThan8Nops,
            ),
            when(
                grow(Vop3p, 0x7B, "v_swmmac_i32_16x16x128_iu8", Rule::WmmaIntNops),
                Condition::FewerThan8Nops,
            ),
        ],
    },
    ClassInfo {
        class: A0Class::FlatScratchBase64,
        name: "flat_scratch_base_64",
        description: "A 64-bit source operand naming `src_flat_scratch_base_lo` (selector \
            230) or `_hi` (231), both of which deliver the whole 64-bit base there on B0. A0 \
            accepts only selector 230 in scalar instructions and neither in vector ones. \
            Scalar (SOP1/SOP2/SOPC) with 231: same size (selector to 230); scalar with 230: \
            canonical, not a site; vector (VOP1/2/C/3, VOP3P): growth (the base must come \
            from an SGPR pair). Source of the facts: AMD's rocjitsu translator, \
            `semantic/gfx1250_flat_scratch_base.h` (ROCm/rocm-systems `emulation/rocjitsu`), \
            and LLVM's gfx1250 operand encodings (230/231). clang-22 emits it for \
            private-to-flat casts (`v_add_nc_u64 ..., src_flat_scratch_base_lo, ...`). Which \
            positions are 64 bits wide comes from LLVM's disassembler (the operand table). \
            The site's mnemonic is the family's name.",
        pattern: "",
        encodings: &[
            fsb(Sop1, "sop1", SameSize, Rule::FlatScratchBaseLo),
            fsb(Sop2, "sop2", SameSize, Rule::FlatScratchBaseLo),
            fsb(Sopc, "sopc", SameSize, Rule::FlatScratchBaseLo),
            fsb(Vop1, "vop1", Growth, Rule::FlatScratchBasePair),
            fsb(Vop2, "vop2", Growth, Rule::FlatScratchBasePair),
            fsb(Vopc, "vopc", Growth, Rule::FlatScratchBasePair),
            fsb(Vop3, "vop3", Growth, Rule::FlatScratchBasePair),
            fsb(Vop3p, "vop3p", Growth, Rule::FlatScratchBasePair),
        ],
    },
];

// The table is in `A0Class::ALL` order: `CLASSES[class as usize]` is its row.
const _: () = {
    let mut i = 0;
    while i < CLASSES.len() {
        assert!(CLASSES[i].class as usize == i);
        i += 1;
    }
};

impl A0Class {
    /// The class's row of [`CLASSES`].
    pub fn info(self) -> &'static ClassInfo {
        &CLASSES[self as usize]
    }
}

/// The number of encoding families (`Family` as an index).
const FAMILIES: usize = Family::Vimage as usize + 1;
/// Room for the encodings of one family (DS has the most, 14).
const PER_FAMILY: usize = 16;

/// The encodings of one family: `(class, encoding)`.
struct FamilyIndex {
    len: usize,
    entries: [(A0Class, &'static Encoding); PER_FAMILY],
}

/// Per family, its encodings: those of the classes matched by opcode first,
/// then the secondary ones, each group in table order (the order of an
/// instruction's sites). Built at compile time.
static BY_FAMILY: [FamilyIndex; FAMILIES] = {
    let mut index = [const {
        FamilyIndex {
            len: 0,
            entries: [(A0Class::ClusterLoad, &CLASSES[0].encodings[0]); PER_FAMILY],
        }
    }; FAMILIES];
    let mut pass = 0;
    while pass < 2 {
        let mut c = 0;
        while c < CLASSES.len() {
            let mut e = 0;
            while e < CLASSES[c].encodings.len() {
                let encoding = &CLASSES[c].encodings[e];
                if encoding.secondary == (pass == 1) {
                    let f = encoding.family as usize;
                    assert!(f < FAMILIES, "FAMILIES is not the number of families");
                    let slot = &mut index[f];
                    assert!(
                        slot.len < PER_FAMILY,
                        "more encodings of one family than PER_FAMILY"
                    );
                    slot.entries[slot.len] = (CLASSES[c].class, encoding);
                    slot.len += 1;
                }
                e += 1;
            }
            c += 1;
        }
        pass += 1;
    }
    index
};

/// The encodings of `family`, in the order an instruction's sites take.
pub(super) fn by_family(family: Family) -> &'static [(A0Class, &'static Encoding)] {
    let slot = &BY_FAMILY[family as usize];
    &slot.entries[..slot.len]
}

/// The family's name in the JSON export.
pub fn family_name(family: Family) -> &'static str {
    match family {
        Family::Sop2 => "sop2",
        Family::Sopk => "sopk",
        Family::Sop1 => "sop1",
        Family::Sopc => "sopc",
        Family::Sopp => "sopp",
        Family::Smem => "smem",
        Family::Vop1 => "vop1",
        Family::Vop2 => "vop2",
        Family::Vopc => "vopc",
        Family::Vop3 => "vop3",
        Family::Vop3p => "vop3p",
        Family::Vop3px2 => "vop3px2",
        Family::Vopd => "vopd",
        Family::Vopd3 => "vopd3",
        Family::Ds => "ds",
        Family::Vbuffer => "vbuffer",
        Family::Vflat => "vflat",
        Family::Vimage => "vimage",
    }
}

fn json_str(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// The table as the JSON document committed as `data/a0-classes.json`.
pub fn to_json() -> String {
    let mut out = String::from("{\n");
    out.push_str(
        "  \"comment\": \"Generated from rust/hotswap-code-object/src/gfx1250/classes.rs; \
         regenerate with HOTSWAP_UPDATE_CLASSES=1 cargo test -p hotswap-code-object classes\",\n",
    );
    out.push_str("  \"classes\": [\n");
    for (i, c) in CLASSES.iter().enumerate() {
        let fixes: Vec<String> = c.fixes().map(|f| json_str(f.as_str())).collect();
        out.push_str("    {\n");
        out.push_str(&format!("      \"name\": {},\n", json_str(c.name)));
        out.push_str(&format!(
            "      \"description\": {},\n",
            json_str(c.description)
        ));
        out.push_str(&format!("      \"pattern\": {},\n", json_str(c.pattern)));
        out.push_str(&format!("      \"fix\": [{}],\n", fixes.join(", ")));
        out.push_str("      \"encodings\": [\n");
        for (j, e) in c.encodings.iter().enumerate() {
            let opcode = e
                .opcode
                .map_or("null".into(), |o| json_str(&format!("{o:#x}")));
            let to = match e.rule {
                Rule::Opcode(o) => format!(", \"to_opcode\": {}", json_str(&format!("{o:#x}"))),
                _ => String::new(),
            };
            out.push_str(&format!(
                "        {{\"family\": {}, \"opcode\": {opcode}, \"condition\": {}, \
                 \"mnemonic\": {}, \"fix\": {}, \"rule\": {}{to}, \"replacement\": {}, \
                 \"secondary\": {}}}{}\n",
                json_str(family_name(e.family)),
                json_str(e.condition.as_str()),
                json_str(e.mnemonic),
                json_str(e.fix.as_str()),
                json_str(e.rule.as_str()),
                json_str(e.replacement),
                e.secondary,
                if j + 1 < c.encodings.len() { "," } else { "" }
            ));
        }
        out.push_str("      ]\n");
        out.push_str(if i + 1 < CLASSES.len() {
            "    },\n"
        } else {
            "    }\n"
        });
    }
    out.push_str("  ]\n}\n");
    out
}

/// The marker lines around the generated table in `docs/how-it-works.md`.
pub const DOCS_BEGIN: &str =
    "<!-- a0-classes: generated from rust/hotswap-code-object/src/gfx1250/classes.rs -->";
/// See [`DOCS_BEGIN`].
pub const DOCS_END: &str = "<!-- /a0-classes -->";

/// The class table of `docs/how-it-works.md` (between [`DOCS_BEGIN`] and
/// [`DOCS_END`], which it includes).
pub fn docs_table() -> String {
    let mut out = format!("{DOCS_BEGIN}\n\n");
    out.push_str("| Class | Instructions | Fix | A0 form | What |\n|---|---|---|---|---|\n");
    for c in CLASSES {
        let mut mnemonics: Vec<&str> = Vec::new();
        for e in c.encodings {
            if !mnemonics.contains(&e.mnemonic) {
                mnemonics.push(e.mnemonic);
            }
        }
        let opcode_forms: Vec<String> = c
            .encodings
            .iter()
            .filter(|e| matches!(e.rule, Rule::Opcode(_)))
            .map(|e| format!("`{}`", e.replacement))
            .collect();
        let mut forms: Vec<String> = Vec::new();
        for e in c.encodings {
            let form = match e.rule {
                Rule::Opcode(_) => format!("the opcode of {}", opcode_forms.join(", ")),
                Rule::SNop0 => "`s_nop 0`".into(),
                Rule::ScaleSrc2Vgpr0 => "`scale_src2` = 0x100".into(),
                Rule::FlatScratchBaseLo => "selector 231 → 230".into(),
                Rule::Ds2Split => "two single-address ops (native rewriter)".into(),
                Rule::WmmaK128Split => "two K=64 WMMAs (native rewriter)".into(),
                Rule::WmmaF4Split => "two 16x16x128 f8f6f4 WMMAs along M (native rewriter)".into(),
                Rule::WmmaF4Scale16Split => {
                    "four block-32 scaled WMMAs, M then K, scratch VGPRs (native rewriter)".into()
                }
                Rule::WmmaScale16Split => {
                    "two block-32 scaled WMMAs along K, scratch VGPRs (native rewriter)".into()
                }
                Rule::WmmaIntNops => "the missing `v_nop`s (native rewriter)".into(),
                Rule::DsAddtidAlu => {
                    "ALU lane address + `ds_load/store_b32` (native rewriter)".into()
                }
                Rule::TensorMaskClear => "mask cleared at the site (native rewriter)".into(),
                Rule::FlatScratchBasePair => {
                    "base from a scratch SGPR pair (native rewriter)".into()
                }
                Rule::None => "none in the native rewriter (refused)".into(),
            };
            if !forms.contains(&form) {
                forms.push(form);
            }
        }
        let instructions = if c.pattern.is_empty() {
            format!(
                "any {} with such an operand",
                mnemonics
                    .iter()
                    .map(|m| m.to_uppercase())
                    .collect::<Vec<_>>()
                    .join("/")
            )
        } else {
            mnemonics
                .iter()
                .map(|m| format!("`{m}`"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let mut conditions: Vec<&str> = Vec::new();
        for e in c.encodings {
            let condition = e.condition.as_str();
            if !matches!(
                e.condition,
                Condition::Always | Condition::MatrixF8f6f4 | Condition::MatrixF4
            ) && !conditions.contains(&condition)
            {
                conditions.push(condition);
            }
        }
        let instructions = if conditions.is_empty() {
            instructions
        } else {
            format!("{instructions} (condition: `{}`)", conditions.join("`, `"))
        };
        let fixes: Vec<&str> = c.fixes().map(Fix::as_str).collect();
        out.push_str(&format!(
            "| `{}` | {} | {} | {} | {} |\n",
            c.name,
            instructions,
            fixes.join(", "),
            forms.join("; "),
            c.description.replace('|', "\\|")
        ));
    }
    out.push_str(&format!("\n{DOCS_END}"));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    /// `path` must hold `want` between `begin` and `end` (the whole file when
    /// `begin` is empty); with HOTSWAP_UPDATE_CLASSES set it is rewritten.
    fn check_generated(
        path: &Path,
        want: &str,
        markers: Option<(&str, &str)>,
    ) -> Result<(), String> {
        let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let (start, end) = match markers {
            None => (0, text.len()),
            Some((begin, end)) => {
                let s = text
                    .find(begin)
                    .ok_or_else(|| format!("{}: no line {begin}", path.display()))?;
                let e = text[s..]
                    .find(end)
                    .map(|e| s + e + end.len())
                    .ok_or_else(|| format!("{}: no line {end} after {begin}", path.display()))?;
                (s, e)
            }
        };
        if text[start..end] == *want {
            return Ok(());
        }
        if std::env::var_os("HOTSWAP_UPDATE_CLASSES").is_some() {
            let updated = format!("{}{want}{}", &text[..start], &text[end..]);
            std::fs::write(path, updated).map_err(|e| format!("{}: {e}", path.display()))?;
            return Ok(());
        }
        Err(format!(
            "{} differs from the class table in gfx1250/classes.rs; regenerate with \
             HOTSWAP_UPDATE_CLASSES=1 cargo test -p hotswap-code-object classes",
            path.display()
        ))
    }

    #[test]
    fn classes_json_is_the_tables_export() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("data/a0-classes.json");
        check_generated(&path, &to_json(), None).unwrap();
    }

    #[test]
    fn classes_docs_table_is_the_tables_export() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/how-it-works.md");
        check_generated(&path, &docs_table(), Some((DOCS_BEGIN, DOCS_END))).unwrap();
    }

    #[test]
    fn classes_order_in_the_cli_docs_is_the_tables() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/cli.md");
        let text = std::fs::read_to_string(&path).unwrap();
        let start = text
            .find("in this order:")
            .expect("docs/cli.md: no class order");
        let end = start
            + text[start..]
                .find("(definitions")
                .expect("docs/cli.md: no (definitions");
        let listed: Vec<&str> = text[start..end].split('`').skip(1).step_by(2).collect();
        let names: Vec<&str> = CLASSES.iter().map(|c| c.name).collect();
        assert_eq!(
            listed, names,
            "docs/cli.md lists the classes in another order"
        );
    }

    #[test]
    fn classes_rows_are_consistent() {
        for c in CLASSES {
            assert_eq!(c.class.as_str(), c.name);
            assert!(!c.encodings.is_empty(), "{}", c.name);
            for e in c.encodings {
                let same_size = matches!(
                    e.rule,
                    Rule::Opcode(_) | Rule::SNop0 | Rule::ScaleSrc2Vgpr0 | Rule::FlatScratchBaseLo
                );
                assert_eq!(
                    same_size,
                    e.fix == Fix::SameSize,
                    "{}: {}",
                    c.name,
                    e.mnemonic
                );
                assert_eq!(
                    e.replacement.is_empty(),
                    e.fix == Fix::Growth || e.rule == Rule::FlatScratchBaseLo,
                    "{}: {}",
                    c.name,
                    e.mnemonic
                );
                assert_eq!(e.opcode.is_none(), c.pattern.is_empty(), "{}", c.name);
            }
        }
        // An instruction is named by at most one class by opcode, under one
        // condition: the classifier takes the first row that matches.
        let primary: Vec<(Family, Option<u16>, Condition)> = CLASSES
            .iter()
            .flat_map(|c| c.encodings.iter())
            .filter(|e| !e.secondary)
            .map(|e| (e.family, e.opcode, e.condition))
            .collect();
        for (i, k) in primary.iter().enumerate() {
            assert!(!primary[i + 1..].contains(k), "{k:?} twice");
        }
    }
}
