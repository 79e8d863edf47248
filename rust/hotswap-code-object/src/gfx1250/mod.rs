//! gfx1250 code analysis: the instruction walker and the A0 classifier.
//!
//! [`analyze`] takes one gfx1250 (or gfx12.5) code object and returns, for each
//! function, its instruction count and every site A0 silicon needs changed,
//! with the site's virtual address, its file offset and length (what a rewriter
//! patches), its class, its mnemonic and whether a same-size fix exists
//! ([`Fix`]). [`same_size_fix`] gives the replacement bytes of a same-size site.
//!
//! Functions: every defined `STT_FUNC` symbol (`.symtab`, else `.dynsym`), its
//! instructions being those that start in `[st_value, st_value + st_size)`; plus,
//! for each kernel whose entry (from its kernel descriptor, `<name>.kd`) no sized
//! function symbol covers, a function named after the kernel, walked from the
//! entry to the next function symbol or the end of its section.
//!
//! Fail closed: an encoding the walker cannot size stops that function's walk
//! and is listed in [`Analysis::unknown`] (virtual address, first dword); the
//! analysis is then incomplete ([`Analysis::is_complete`]) and a rewriter must
//! not rely on it. Nothing is ever guessed.
//!
//! The class definitions are on [`A0Class`]'s variants.
//!
//! Every code object of a file, per function, as the `hotswap inspect` JSON
//! wants it:
//!
//! ```
//! use hotswap_code_object::container;
//! use hotswap_code_object::gfx1250::{self, A0Class};
//!
//! let file: &[u8] = hotswap_code_object::GFX1250_PROBE; // or a bundle, a host .so...
//! for found in container::find(file).objects {
//!     let Ok(analysis) = gfx1250::analyze(&found.bytes) else {
//!         continue; // another processor, or not a code object
//!     };
//!     for f in &analysis.functions {
//!         let a0: Vec<(&str, usize)> = f.counts().map(|(c, n)| (c.as_str(), n)).collect();
//!         assert_eq!(a0.len(), A0Class::ALL.len());
//!         for s in &f.sites {
//!             let _ = (s.vaddr, s.class.as_str(), s.mnemonic, s.fix.as_str());
//!         }
//!     }
//! }
//! ```
//!
//! A same-size rewrite patches `file_offset..file_offset + len` of the code
//! object's bytes, after checking [`Analysis::is_complete`] and that no site
//! needs growth:
//!
//! ```
//! use hotswap_code_object::gfx1250::{self, Fix};
//!
//! let original: &[u8] = hotswap_code_object::GFX1250_PROBE;
//! let analysis = gfx1250::analyze(original).unwrap();
//! assert!(analysis.is_complete() && analysis.sites().all(|s| s.fix == Fix::SameSize));
//! let mut out = original.to_vec();
//! for site in analysis.sites().filter(|s| s.needs_change) {
//!     let range = site.file_offset as usize..site.file_offset as usize + usize::from(site.len);
//!     let fixed = gfx1250::same_size_fix(site.class, &out[range.clone()]).unwrap();
//!     out[range].copy_from_slice(&fixed);
//! }
//! ```

pub mod walker;

#[allow(clippy::all)]
#[rustfmt::skip]
mod operand_table;

use crate::elf::{self, AddressMap, Header, STT_FUNC, STT_OBJECT};
use crate::isa::{self, IsaError};
use walker::{DecodeError, Decoded, Family};

/// The classes of A0-relevant sites, with the stable names of the JSON output.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum A0Class {
    /// `cluster_load_b32/b64/b128` and `cluster_load_async_to_lds_b8/b32/b64/b128`
    /// (any address form): A0 must not execute cluster multicast. Same size: the
    /// matching `global_load*` opcode (same operands; `global_load` never reads
    /// `M0.wg_mask`).
    ClusterLoad,
    /// `s_barrier_signal_isfirst` (either operand form). Same size:
    /// `s_barrier_signal` with the same operand (drops the SCC result; a later
    /// SCC reader sees a stale value, accepted because the A0 isfirst result is
    /// unreliable anyway).
    BarrierSignalIsfirst,
    /// `s_clause`: same size, `s_nop 0`. Whether a clause must change is the
    /// rewriter's policy; every clause is reported.
    SClause,
    /// `s_sethalt`: same size, `s_nop 0` (a halt before LD_SCALE breaks the
    /// implicit LD_SCALE+WMMA clause on A0).
    SSethalt,
    /// DS two-address ops (`ds_load_2addr*`, `ds_store_2addr*`,
    /// `ds_storexchg_2addr*`, 12 opcodes): A0 needs DS2 addresses aligned to the
    /// payload; the split into two single-address ops grows the code.
    Ds2addr,
    /// `ds_load_addtid_b32` / `ds_store_addtid_b32`: A0 reads 16 bits of M0,
    /// B0 20; the emulation grows the code.
    DsAddtid,
    /// `tensor_load_to_lds` (every operand form): a non-zero workgroup mask is a
    /// cluster multicast that hangs A0. Reported as growth: the same-size
    /// definition-site literal rewrite needs a data-flow proof this analysis
    /// does not make.
    TensorLds,
    /// The eight dense K=128 FP8/BF8 WMMAs (`v_wmma_{f16,f32}_16x16x128_{fp8,bf8}_{fp8,bf8}`,
    /// VOP3P 0x80-0x87): absent on A0, split in two along K (growth).
    WmmaK128,
    /// `v_wmma_f32_32x16x128_f4`, standalone or scaled: absent on A0, split along
    /// M (growth).
    WmmaF4,
    /// Scaled WMMAs (VOP3PX2/PX3, 16 bytes). Block-32 scales
    /// (`v_wmma_scale_*`): same size, the unused `scale_src2` field (bits
    /// \[58:50\]) set to 0x100 (VGPR0), [`Site::needs_change`] telling whether it
    /// is not already; block-16 scales (`v_wmma_scale16_*`): split (growth).
    WmmaScale,
    /// `v_cvt_pk_fp8_f32`, `v_cvt_sr_fp8_f32`, `v_cvt_f32_fp8` in VOP3 form with
    /// CLAMP (bit 15) set: B0 converts to UE5M3, A0 ignores CLAMP; the software
    /// emulation grows the code.
    Fp8Clamp,
    /// An integer WMMA (`v_wmma_i32_16x16x64_iu8`, `v_swmmac_i32_16x16x128_iu8`)
    /// followed, in its function, by fewer than 8 `v_nop`s before the first other
    /// VALU instruction, control transfer (`s_branch`, `s_cbranch_*`,
    /// `s_set_pc_i64`, `s_swap_pc_i64`, `s_rfe_i64`, `s_call_i64`, `s_endpgm*`,
    /// `s_code_end`) or the function's end. A0 needs 8 independent VALU slots
    /// (B0 4); inserting the missing `v_nop`s grows the code. Every other VALU is
    /// taken as dependent (no operand analysis): this may report a site COMGR's
    /// operand-aware scan would not, never the reverse. clang-22 emits 8
    /// `v_nop`s, so its output has no such site.
    WmmaIntSpacing,
    /// A 64-bit source operand naming `src_flat_scratch_base_lo` (selector 230)
    /// or `_hi` (231), both of which deliver the whole 64-bit base there on B0.
    /// A0 accepts only selector 230 in scalar instructions and neither in vector
    /// ones. Scalar (SOP1/SOP2/SOPC) with 231: same size (selector to 230);
    /// scalar with 230: canonical, not a site; vector (VOP1/2/C/3, VOP3P,
    /// VOPD/VOPD3): growth (the base must come from an SGPR pair). Source of the
    /// facts: AMD's rocjitsu translator, `semantic/gfx1250_flat_scratch_base.h`
    /// (ROCm/rocm-systems `emulation/rocjitsu`), and LLVM's gfx1250 operand
    /// encodings (230/231). clang-22 emits it for private-to-flat casts
    /// (`v_add_nc_u64 ..., src_flat_scratch_base_lo, ...`). Which positions are
    /// 64 bits wide comes from LLVM's disassembler (the operand table).
    FlatScratchBase64,
}

impl A0Class {
    /// Every class, in the order of the JSON output.
    pub const ALL: [A0Class; 13] = [
        A0Class::ClusterLoad,
        A0Class::BarrierSignalIsfirst,
        A0Class::SClause,
        A0Class::SSethalt,
        A0Class::Ds2addr,
        A0Class::DsAddtid,
        A0Class::TensorLds,
        A0Class::WmmaK128,
        A0Class::WmmaF4,
        A0Class::WmmaScale,
        A0Class::Fp8Clamp,
        A0Class::WmmaIntSpacing,
        A0Class::FlatScratchBase64,
    ];

    /// The stable name (`cluster_load`, `s_clause`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::ClusterLoad => "cluster_load",
            Self::BarrierSignalIsfirst => "barrier_signal_isfirst",
            Self::SClause => "s_clause",
            Self::SSethalt => "s_sethalt",
            Self::Ds2addr => "ds_2addr",
            Self::DsAddtid => "ds_addtid",
            Self::TensorLds => "tensor_lds",
            Self::WmmaK128 => "wmma_k128",
            Self::WmmaF4 => "wmma_f4",
            Self::WmmaScale => "wmma_scale",
            Self::Fp8Clamp => "fp8_clamp",
            Self::WmmaIntSpacing => "wmma_int_spacing",
            Self::FlatScratchBase64 => "flat_scratch_base_64",
        }
    }

    /// The class with stable name `name`.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|c| c.as_str() == name)
    }
}

impl std::fmt::Display for A0Class {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Whether A0 can be served without moving code.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Fix {
    /// A replacement of the same length exists ([`same_size_fix`]).
    SameSize,
    /// The fix needs more code than the site holds.
    Growth,
}

impl Fix {
    /// `same-size` or `growth`, as in the JSON output.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::SameSize => "same-size",
            Self::Growth => "growth",
        }
    }
}

/// One A0-relevant instruction (an instruction in two classes gives two sites).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Site {
    /// Virtual address of the instruction.
    pub vaddr: u64,
    /// Offset of the instruction in the code object's bytes.
    pub file_offset: u64,
    /// Length of the instruction in bytes.
    pub len: u8,
    /// The class.
    pub class: A0Class,
    /// The instruction's LLVM mnemonic.
    pub mnemonic: &'static str,
    /// Whether a same-size fix exists.
    pub fix: Fix,
    /// Whether the bytes must change for A0: `false` only for a same-size site
    /// already in its A0 form (a scaled WMMA whose `scale_src2` is already 0x100).
    pub needs_change: bool,
}

/// How a function was found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FunctionKind {
    /// A defined `STT_FUNC` symbol.
    Symbol,
    /// A kernel entry no sized function symbol covers.
    KernelEntry,
}

/// One walked function.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Function {
    /// Symbol name (the kernel's name for a [`FunctionKind::KernelEntry`]).
    pub name: String,
    /// How it was found.
    pub kind: FunctionKind,
    /// Virtual address of the first instruction.
    pub vaddr: u64,
    /// File offset of the first instruction (`None` when no segment maps it).
    pub file_offset: Option<u64>,
    /// Size in bytes of the walked range.
    pub size: u64,
    /// Number of instructions that start in the range (up to an undecodable one).
    pub instructions: u64,
    /// Whether the walk stopped at an undecodable encoding (listed in [`Analysis::unknown`]).
    pub incomplete: bool,
    /// The A0 sites, in address order.
    pub sites: Vec<Site>,
}

impl Function {
    /// The number of sites of `class`.
    pub fn count(&self, class: A0Class) -> usize {
        self.sites.iter().filter(|s| s.class == class).count()
    }

    /// The number of sites of every class, in [`A0Class::ALL`] order.
    pub fn counts(&self) -> impl Iterator<Item = (A0Class, usize)> + '_ {
        A0Class::ALL.into_iter().map(|c| (c, self.count(c)))
    }
}

/// An encoding the walker could not size.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Undecodable {
    /// The function whose walk it stopped.
    pub function: String,
    /// Its virtual address.
    pub vaddr: u64,
    /// Its first dword (`None` when fewer than 4 bytes remain).
    pub first_dword: Option<u32>,
    /// Why: unknown encoding or not enough bytes.
    pub reason: DecodeError,
}

/// A kernel, from its descriptor symbol.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Kernel {
    /// The kernel's name (the descriptor symbol without `.kd`).
    pub name: String,
    /// Virtual address of the kernel descriptor.
    pub descriptor_vaddr: u64,
    /// Virtual address of the entry (`None` when the descriptor is unreadable).
    pub entry_vaddr: Option<u64>,
}

/// The analysis of one code object.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Analysis {
    /// The ISA name from the header, e.g. `amdgcn-amd-amdhsa--gfx1250`.
    pub isa: String,
    /// The processor, e.g. `gfx1250`.
    pub processor: &'static str,
    /// The code object version (4, 5 or 6).
    pub code_object_version: u8,
    /// The kernels (descriptor symbols), in symbol-table order.
    pub kernels: Vec<Kernel>,
    /// The functions, in address order.
    pub functions: Vec<Function>,
    /// Encodings that stopped a walk; empty when the analysis is complete.
    pub unknown: Vec<Undecodable>,
}

impl Analysis {
    /// Whether every function was walked to its end. A rewriter must refuse an
    /// incomplete analysis.
    pub fn is_complete(&self) -> bool {
        self.unknown.is_empty()
    }

    /// Every site of every function, in function order.
    pub fn sites(&self) -> impl Iterator<Item = &Site> {
        self.functions.iter().flat_map(|f| f.sites.iter())
    }

    /// The total instruction count.
    pub fn instructions(&self) -> u64 {
        self.functions.iter().map(|f| f.instructions).sum()
    }
}

/// Why a code object was not analysed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AnalyzeError {
    /// Not an AMDGPU HSA code object whose ISA the header names.
    Isa(IsaError),
    /// A code object for another processor (its name): not analysed.
    NotGfx125(&'static str),
}

impl std::fmt::Display for AnalyzeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Isa(e) => write!(f, "{e}"),
            Self::NotGfx125(p) => write!(f, "{p} code object: only gfx125x is analysed"),
        }
    }
}

impl std::error::Error for AnalyzeError {}

/// Whether `processor` is one this analysis applies to (the gfx12.5 family).
pub fn is_gfx125(processor: &str) -> bool {
    processor.starts_with("gfx125") || processor == "gfx12-5-generic"
}

/// One instruction from [`instructions`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Instruction<'a> {
    /// Its virtual address.
    pub vaddr: u64,
    /// Its bytes (exactly its length).
    pub bytes: &'a [u8],
    /// What the walker decoded.
    pub decoded: Decoded,
}

/// Walks the instructions of `code`, whose first byte is at `vaddr`, until the
/// end of `code` or the first encoding that cannot be sized (yielded as `Err`
/// with its address, after which the iteration ends).
pub fn instructions(
    code: &[u8],
    vaddr: u64,
) -> impl Iterator<Item = Result<Instruction<'_>, (u64, DecodeError)>> + '_ {
    let mut at = 0usize;
    let mut done = false;
    std::iter::from_fn(move || {
        if done || at >= code.len() {
            return None;
        }
        let here = vaddr.wrapping_add(at as u64);
        match walker::decode(&code[at..]) {
            Ok(decoded) => {
                let len = usize::from(decoded.len);
                let bytes = &code[at..at + len];
                at += len;
                Some(Ok(Instruction {
                    vaddr: here,
                    bytes,
                    decoded,
                }))
            }
            Err(e) => {
                done = true;
                Some(Err((here, e)))
            }
        }
    })
}

/// Analyses a gfx1250 / gfx12.5 code object (a bare ELF; see
/// [`crate::container`] for bundles and host binaries). Other processors give
/// [`AnalyzeError::NotGfx125`]; an object that is not an AMDGPU code object
/// gives [`AnalyzeError::Isa`]. A malformed symbol, section or descriptor is
/// skipped; a malformed instruction stream is reported in
/// [`Analysis::unknown`]. Never panics.
pub fn analyze(code_object: &[u8]) -> Result<Analysis, AnalyzeError> {
    let header = Header::parse(code_object).map_err(|e| AnalyzeError::Isa(isa::elf_error(e)))?;
    let processor = isa::processor_from_header(&header).map_err(AnalyzeError::Isa)?;
    if !is_gfx125(processor) {
        return Err(AnalyzeError::NotGfx125(processor));
    }
    let isa_name = isa::isa_name_from_header(&header).map_err(AnalyzeError::Isa)?;
    let map = AddressMap::new(&header, code_object);
    let sections = header.sections(code_object);
    let mut symbols = header.symbols(code_object, elf::SHT_SYMTAB);
    if symbols.is_empty() {
        symbols = header.symbols(code_object, elf::SHT_DYNSYM);
    }
    let mut seen = std::collections::HashSet::new();
    symbols.retain(|s| s.is_defined() && seen.insert((s.name, s.value, s.sym_type)));

    let mut functions: Vec<(String, FunctionKind, u64, u64)> = symbols
        .iter()
        .filter(|s| s.sym_type == STT_FUNC)
        .map(|s| {
            let name = String::from_utf8_lossy(s.name).into_owned();
            (name, FunctionKind::Symbol, s.value, s.size)
        })
        .collect();

    let mut kernels = Vec::new();
    for s in symbols.iter().filter(|s| s.sym_type == STT_OBJECT) {
        let Some(name) = s.name.strip_suffix(b".kd") else {
            continue;
        };
        // kernel_code_entry_byte_offset: a signed 64-bit offset at byte 16.
        let entry_vaddr = map
            .bytes(code_object, s.value, 64)
            .and_then(|kd| elf::u64_at(kd, 16))
            .map(|offset| s.value.wrapping_add(offset));
        kernels.push(Kernel {
            name: String::from_utf8_lossy(name).into_owned(),
            descriptor_vaddr: s.value,
            entry_vaddr,
        });
    }
    for k in &kernels {
        let Some(entry) = k.entry_vaddr else { continue };
        let covered = functions
            .iter()
            .any(|&(_, _, v, size)| entry >= v && entry - v < size);
        if covered {
            continue;
        }
        // From the entry to the next function symbol or the end of its section.
        let Some(section) = sections
            .iter()
            .find(|s| s.flags & elf::SHF_EXECINSTR != 0 && s.contains_vaddr(entry))
        else {
            continue;
        };
        let end = functions
            .iter()
            .map(|&(_, _, v, _)| v)
            .filter(|&v| v > entry)
            .fold(section.addr.saturating_add(section.size), u64::min);
        functions.push((
            k.name.clone(),
            FunctionKind::KernelEntry,
            entry,
            end - entry,
        ));
    }
    functions.sort_by_key(|&(_, _, v, _)| v);

    let mut analysis = Analysis {
        isa: isa_name,
        processor,
        code_object_version: header.abi_version.saturating_add(2),
        kernels,
        functions: Vec::with_capacity(functions.len()),
        unknown: Vec::new(),
    };
    for (name, kind, vaddr, size) in functions {
        let function = walk_function(
            code_object,
            &map,
            name,
            kind,
            vaddr,
            size,
            &mut analysis.unknown,
        );
        analysis.functions.push(function);
    }
    Ok(analysis)
}

/// Walks one function and classifies its instructions.
fn walk_function(
    code_object: &[u8],
    map: &AddressMap,
    name: String,
    kind: FunctionKind,
    vaddr: u64,
    size: u64,
    unknown: &mut Vec<Undecodable>,
) -> Function {
    let file_offset = map.file_offset(vaddr);
    let mut function = Function {
        name,
        kind,
        vaddr,
        file_offset,
        size,
        instructions: 0,
        incomplete: false,
        sites: Vec::new(),
    };
    if size == 0 {
        return function;
    }
    // The instructions start in [vaddr, vaddr + size); the last may end past it,
    // within the mapped bytes.
    let (Some(start), Some(code)) = (file_offset, map.tail(code_object, vaddr)) else {
        function.incomplete = true;
        unknown.push(Undecodable {
            function: function.name.clone(),
            vaddr,
            first_dword: None,
            reason: DecodeError::Truncated,
        });
        return function;
    };
    // As `instructions` walks, without its iterator: the decoded instruction
    // stays in registers (through the iterator's `Option<Result<..>>` it went
    // to memory in pieces and was read back whole, a stalled load each time).
    let mut at = 0u64;
    while at < size {
        let offset = usize::try_from(at).unwrap_or(usize::MAX);
        let Some(rest) = code.get(offset..).filter(|rest| !rest.is_empty()) else {
            function.incomplete = true;
            unknown.push(Undecodable {
                function: function.name.clone(),
                vaddr: vaddr.wrapping_add(at),
                first_dword: None,
                reason: DecodeError::Truncated,
            });
            break;
        };
        match walker::decode(rest) {
            Ok(decoded) => {
                let len = usize::from(decoded.len);
                let bytes = &rest[..len];
                function.instructions += 1;
                if may_be_a_site(decoded, bytes) {
                    let insn = Instruction {
                        vaddr: vaddr.wrapping_add(at),
                        bytes,
                        decoded,
                    };
                    classify(&insn, start + at, code, at, size, &mut function.sites);
                }
                at += len as u64;
            }
            Err(reason) => {
                function.incomplete = true;
                unknown.push(Undecodable {
                    function: function.name.clone(),
                    vaddr: vaddr.wrapping_add(at),
                    first_dword: rest.first_chunk::<4>().map(|b| u32::from_le_bytes(*b)),
                    reason,
                });
                break;
            }
        }
    }
    function
}

/// The first dword of an instruction.
fn w(bytes: &[u8], i: usize) -> u32 {
    bytes
        .get(i * 4..i * 4 + 4)
        .map_or(0, |b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
}

/// `SRC_FLAT_SCRATCH_BASE_LO` / `_HI` operand selectors.
const FLAT_SCRATCH_BASE_LO: u32 = 230;
const FLAT_SCRATCH_BASE_HI: u32 = 231;

/// Whether [`classify`] may find a site in the instruction `d` decoded from
/// `bytes`: false for most instructions, told without a branch per family (the
/// families of a function's instructions follow no pattern a branch predictor
/// learns), so that `classify` runs for few of them. By value: the decoded
/// fields stay in registers.
fn may_be_a_site(d: Decoded, bytes: &[u8]) -> bool {
    let op = usize::from(d.op);
    let row = &SITE_OPS[d.family as usize];
    let class = row
        .get(op / 64)
        .is_some_and(|bits| bits >> (op % 64) & 1 != 0);
    class || may_name_flat_scratch_base(w(bytes, 0), w(bytes, 1))
}

/// Whether any source field [`flat_scratch_base_64`] looks at, whatever the
/// family, holds `SRC_FLAT_SCRATCH_BASE_LO` or `_HI`.
fn may_name_flat_scratch_base(w0: u32, w1: u32) -> bool {
    let fsb = |v: u32| v & !1 == FLAT_SCRATCH_BASE_LO;
    fsb(w0 & 0xFF)
        | fsb((w0 >> 8) & 0xFF)
        | fsb(w0 & 0x1FF)
        | fsb(w1 & 0x1FF)
        | fsb((w1 >> 9) & 0x1FF)
        | fsb((w1 >> 18) & 0x1FF)
}

/// The number of [`Family`] variants.
const FAMILIES: usize = Family::Vimage as usize + 1;

/// Per family, a bit per opcode (10 bits) for which [`classify`] may report a
/// class other than [`A0Class::FlatScratchBase64`]: [`reports_a_class`].
const SITE_OPS: [[u64; 16]; FAMILIES] = {
    let families = [
        Family::Sop2,
        Family::Sopk,
        Family::Sop1,
        Family::Sopc,
        Family::Sopp,
        Family::Smem,
        Family::Vop1,
        Family::Vop2,
        Family::Vopc,
        Family::Vop3,
        Family::Vop3p,
        Family::Vop3px2,
        Family::Vopd,
        Family::Vopd3,
        Family::Ds,
        Family::Vbuffer,
        Family::Vflat,
        Family::Vimage,
    ];
    let mut t = [[0u64; 16]; FAMILIES];
    let mut f = 0;
    while f < families.len() {
        let mut op = 0u16;
        while op < 1024 {
            if reports_a_class(families[f], op) {
                t[families[f] as usize][op as usize / 64] |= 1 << (op % 64);
            }
            op += 1;
        }
        f += 1;
    }
    t
};

/// The families and opcodes of the class arms of [`classify`] (a superset:
/// the arms look at more than the opcode).
const fn reports_a_class(family: Family, op: u16) -> bool {
    match family {
        Family::Sopp => matches!(op, 0x05 | 0x02),
        Family::Sop1 => op == 0x4F,
        Family::Vflat => cluster_load(op).is_some(),
        Family::Ds => ds_2addr(op).is_some() || matches!(op, 0xB0 | 0xB1),
        Family::Vimage => op == 0xC4,
        Family::Vop3p => wmma_k128(op).is_some() || matches!(op, 0x88 | 0x72 | 0x7B),
        Family::Vop3px2 => true,
        Family::Vop3 => matches!(op, 0x369 | 0x36B | 0x1EC),
        _ => false,
    }
}

/// Appends the sites of one instruction. `code`/`at`/`size`: the function's
/// bytes from its start, the instruction's offset in them, the function's size
/// (for the forward scan of integer WMMAs).
fn classify(
    insn: &Instruction<'_>,
    file_offset: u64,
    code: &[u8],
    at: u64,
    size: u64,
    sites: &mut Vec<Site>,
) {
    let d = insn.decoded;
    let w0 = w(insn.bytes, 0);
    let mut push = |class: A0Class, mnemonic: &'static str, fix: Fix, needs_change: bool| {
        sites.push(Site {
            vaddr: insn.vaddr,
            file_offset,
            len: d.len,
            class,
            mnemonic,
            fix,
            needs_change,
        })
    };
    match d.family {
        Family::Sopp => match d.op {
            0x05 => push(A0Class::SClause, "s_clause", Fix::SameSize, true),
            0x02 => push(A0Class::SSethalt, "s_sethalt", Fix::SameSize, true),
            _ => {}
        },
        Family::Sop1 if d.op == 0x4F => push(
            A0Class::BarrierSignalIsfirst,
            "s_barrier_signal_isfirst",
            Fix::SameSize,
            true,
        ),
        Family::Vflat if w0 >> 24 == 0xEE => {
            if let Some((mnemonic, _)) = cluster_load(d.op) {
                push(A0Class::ClusterLoad, mnemonic, Fix::SameSize, true);
            }
        }
        Family::Ds => {
            if let Some(m) = ds_2addr(d.op) {
                push(A0Class::Ds2addr, m, Fix::Growth, true);
            } else if d.op == 0xB1 {
                push(A0Class::DsAddtid, "ds_load_addtid_b32", Fix::Growth, true);
            } else if d.op == 0xB0 {
                push(A0Class::DsAddtid, "ds_store_addtid_b32", Fix::Growth, true);
            }
        }
        Family::Vimage if d.op == 0xC4 => {
            push(A0Class::TensorLds, "tensor_load_to_lds", Fix::Growth, true)
        }
        Family::Vop3p => {
            if let Some(m) = wmma_k128(d.op) {
                push(A0Class::WmmaK128, m, Fix::Growth, true);
            } else if d.op == 0x88 {
                push(
                    A0Class::WmmaF4,
                    "v_wmma_f32_32x16x128_f4",
                    Fix::Growth,
                    true,
                );
            } else if matches!(d.op, 0x72 | 0x7B) {
                let next = at + u64::from(d.len);
                if !enough_nops(code, insn.vaddr + u64::from(d.len), next, size) {
                    let m = if d.op == 0x72 {
                        "v_wmma_i32_16x16x64_iu8"
                    } else {
                        "v_swmmac_i32_16x16x128_iu8"
                    };
                    push(A0Class::WmmaIntSpacing, m, Fix::Growth, true);
                }
            }
        }
        Family::Vop3px2 => {
            let f4 = (w(insn.bytes, 2) >> 16) & 0xFF == 0x88;
            let scale16 = d.op == 0x3A;
            let mnemonic = match (scale16, f4) {
                (false, false) => "v_wmma_scale_f32_16x16x128_f8f6f4",
                (true, false) => "v_wmma_scale16_f32_16x16x128_f8f6f4",
                (false, true) => "v_wmma_scale_f32_32x16x128_f4",
                (true, true) => "v_wmma_scale16_f32_32x16x128_f4",
            };
            if scale16 {
                push(A0Class::WmmaScale, mnemonic, Fix::Growth, true);
            } else {
                let scale_src2 = (w(insn.bytes, 1) >> 18) & 0x1FF;
                push(
                    A0Class::WmmaScale,
                    mnemonic,
                    Fix::SameSize,
                    scale_src2 != 0x100,
                );
            }
            if f4 {
                push(A0Class::WmmaF4, mnemonic, Fix::Growth, true);
            }
        }
        Family::Vop3 => {
            let clamp = w0 & (1 << 15) != 0;
            let m = match d.op {
                0x369 => Some("v_cvt_pk_fp8_f32"),
                0x36B => Some("v_cvt_sr_fp8_f32"),
                0x1EC => Some("v_cvt_f32_fp8_e64"),
                _ => None,
            };
            if let (true, Some(m)) = (clamp, m) {
                push(A0Class::Fp8Clamp, m, Fix::Growth, true);
            }
        }
        _ => {}
    }
    if let Some(fix) = flat_scratch_base_64(insn) {
        push(
            A0Class::FlatScratchBase64,
            vop_mnemonic(d),
            fix,
            fix == Fix::SameSize,
        );
    }
}

/// A generic mnemonic for a flat_scratch_base_64 site: the walker names only
/// the opcodes of the A0 classes, so the family stands in for the rest.
fn vop_mnemonic(d: Decoded) -> &'static str {
    match d.family {
        Family::Sop1 => "sop1",
        Family::Sop2 => "sop2",
        Family::Sopc => "sopc",
        Family::Vop1 => "vop1",
        Family::Vop2 => "vop2",
        Family::Vopc => "vopc",
        Family::Vop3 => "vop3",
        Family::Vop3p => "vop3p",
        Family::Vopd => "vopd",
        Family::Vopd3 => "vopd3",
        _ => "other",
    }
}

/// Whether a 64-bit source of `insn` names the flat scratch base, and how A0 is
/// served: scalar with selector 231 → same size; vector → growth.
fn flat_scratch_base_64(insn: &Instruction<'_>) -> Option<Fix> {
    let d = insn.decoded;
    let w0 = w(insn.bytes, 0);
    let w1 = w(insn.bytes, 1);
    let is_fsb = |v: u32| v == FLAT_SCRATCH_BASE_LO || v == FLAT_SCRATCH_BASE_HI;
    let wide_fields = |fields: [u32; 3], wide: u8| -> [bool; 3] {
        [0, 1, 2].map(|i| wide & (1 << i) != 0 && is_fsb(fields[i]))
    };
    match d.family {
        Family::Sop1 | Family::Sop2 | Family::Sopc => {
            let (_, wide) = walker::salu_sources(d.family, d.op)?;
            let fields = [w0 & 0xFF, (w0 >> 8) & 0xFF, 0];
            let hit = wide_fields(fields, wide);
            let hi = (0..2).any(|i| hit[i] && fields[i] == FLAT_SCRATCH_BASE_HI);
            hi.then_some(Fix::SameSize)
        }
        Family::Vop1 | Family::Vop2 | Family::Vopc => {
            let (_, wide) = walker::vop_short_sources(d.family, d.op)?;
            let hit = wide_fields([w0 & 0x1FF, 0, 0], wide);
            hit[0].then_some(Fix::Growth)
        }
        Family::Vop3 | Family::Vop3p => {
            let (_, wide) = if d.family == Family::Vop3 {
                walker::vop3_sources(d.op)
            } else {
                walker::vop3p_sources(d.op)
            };
            let fields = [w1 & 0x1FF, (w1 >> 9) & 0x1FF, (w1 >> 18) & 0x1FF];
            wide_fields(fields, wide)
                .contains(&true)
                .then_some(Fix::Growth)
        }
        _ => None,
    }
}

/// Whether 8 `v_nop`s follow an integer WMMA before any other VALU, control
/// transfer or the function's end. `vaddr`/`at`: address and function offset of
/// the next instruction.
fn enough_nops(code: &[u8], vaddr: u64, at: u64, size: u64) -> bool {
    const NEEDED: u32 = 8;
    let Some(rest) = usize::try_from(at).ok().and_then(|a| code.get(a..)) else {
        return false;
    };
    let mut nops = 0;
    let mut offset = at;
    for insn in instructions(rest, vaddr) {
        if offset >= size {
            return false;
        }
        let Ok(insn) = insn else { return false };
        offset += insn.bytes.len() as u64;
        let d = insn.decoded;
        let is_nop = matches!((d.family, d.op), (Family::Vop1, 0) | (Family::Vop3, 0x180));
        if is_nop {
            nops += 1;
            if nops >= NEEDED {
                return true;
            }
            continue;
        }
        let valu = matches!(
            d.family,
            Family::Vop1
                | Family::Vop2
                | Family::Vopc
                | Family::Vop3
                | Family::Vop3p
                | Family::Vop3px2
                | Family::Vopd
                | Family::Vopd3
        );
        let control = match d.family {
            Family::Sopp => matches!(d.op, 0x1F..=0x26 | 0x30 | 0x31),
            Family::Sop1 => matches!(d.op, 0x48..=0x4A),
            Family::Sopk => d.op == 0x14,
            _ => false,
        };
        if valu || control {
            return false;
        }
    }
    false
}

/// The mnemonic and the `global_load*` opcode of a cluster load opcode.
const fn cluster_load(op: u16) -> Option<(&'static str, u16)> {
    Some(match op {
        0x67 => ("cluster_load_b32", 0x14),
        0x68 => ("cluster_load_b64", 0x15),
        0x69 => ("cluster_load_b128", 0x17),
        0x6A => ("cluster_load_async_to_lds_b8", 0x5F),
        0x6B => ("cluster_load_async_to_lds_b32", 0x60),
        0x6C => ("cluster_load_async_to_lds_b64", 0x61),
        0x6D => ("cluster_load_async_to_lds_b128", 0x62),
        _ => return None,
    })
}

/// The mnemonic of a DS two-address opcode.
const fn ds_2addr(op: u16) -> Option<&'static str> {
    Some(match op {
        0x37 => "ds_load_2addr_b32",
        0x77 => "ds_load_2addr_b64",
        0x38 => "ds_load_2addr_stride64_b32",
        0x78 => "ds_load_2addr_stride64_b64",
        0x0E => "ds_store_2addr_b32",
        0x4E => "ds_store_2addr_b64",
        0x0F => "ds_store_2addr_stride64_b32",
        0x4F => "ds_store_2addr_stride64_b64",
        0x2E => "ds_storexchg_2addr_rtn_b32",
        0x6E => "ds_storexchg_2addr_rtn_b64",
        0x2F => "ds_storexchg_2addr_stride64_rtn_b32",
        0x6F => "ds_storexchg_2addr_stride64_rtn_b64",
        _ => return None,
    })
}

/// The mnemonic of a K=128 FP8/BF8 WMMA opcode.
const fn wmma_k128(op: u16) -> Option<&'static str> {
    Some(match op {
        0x80 => "v_wmma_f32_16x16x128_fp8_fp8",
        0x81 => "v_wmma_f32_16x16x128_fp8_bf8",
        0x82 => "v_wmma_f32_16x16x128_bf8_fp8",
        0x83 => "v_wmma_f32_16x16x128_bf8_bf8",
        0x84 => "v_wmma_f16_16x16x128_fp8_fp8",
        0x85 => "v_wmma_f16_16x16x128_fp8_bf8",
        0x86 => "v_wmma_f16_16x16x128_bf8_fp8",
        0x87 => "v_wmma_f16_16x16x128_bf8_bf8",
        _ => return None,
    })
}

/// The A0 form of a same-size site: the replacement for `original`, the
/// site's `len` bytes. `None` when `class` has no same-size fix or `original` is
/// not an instruction of that class. Idempotent on an A0 form only for
/// [`A0Class::WmmaScale`] (whose A0 form is itself); the others turn into
/// another instruction.
pub fn same_size_fix(class: A0Class, original: &[u8]) -> Option<Vec<u8>> {
    let d = walker::decode(original).ok()?;
    if usize::from(d.len) != original.len() {
        return None;
    }
    let mut out = original.to_vec();
    let set_w = |out: &mut Vec<u8>, i: usize, v: u32| {
        out[i * 4..i * 4 + 4].copy_from_slice(&v.to_le_bytes())
    };
    let w0 = w(original, 0);
    match (class, d.family) {
        (A0Class::ClusterLoad, Family::Vflat) if w0 >> 24 == 0xEE => {
            let (_, global) = cluster_load(d.op)?;
            set_w(
                &mut out,
                0,
                (w0 & !(0xFF << 14)) | (u32::from(global) << 14),
            );
        }
        (A0Class::BarrierSignalIsfirst, Family::Sop1) if d.op == 0x4F => {
            set_w(&mut out, 0, (w0 & !0xFF00) | (0x4E << 8));
        }
        (A0Class::SClause, Family::Sopp) if d.op == 0x05 => set_w(&mut out, 0, 0xBF80_0000),
        (A0Class::SSethalt, Family::Sopp) if d.op == 0x02 => set_w(&mut out, 0, 0xBF80_0000),
        (A0Class::WmmaScale, Family::Vop3px2) if d.op == 0x35 => {
            let w1 = w(original, 1);
            set_w(&mut out, 1, (w1 & !(0x1FF << 18)) | (0x100 << 18));
        }
        (A0Class::FlatScratchBase64, Family::Sop1 | Family::Sop2 | Family::Sopc) => {
            let fix = flat_scratch_base_64(&Instruction {
                vaddr: 0,
                bytes: original,
                decoded: d,
            });
            if fix != Some(Fix::SameSize) {
                return None;
            }
            let (_, wide) = walker::salu_sources(d.family, d.op)?;
            let mut v = w0;
            for (i, shift) in [0, 8].into_iter().enumerate() {
                if wide & (1 << i) != 0 && (v >> shift) & 0xFF == FLAT_SCRATCH_BASE_HI {
                    v = (v & !(0xFF << shift)) | (FLAT_SCRATCH_BASE_LO << shift);
                }
            }
            set_w(&mut out, 0, v);
        }
        _ => return None,
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::GFX1250_PROBE;

    /// `may_be_a_site` is false only where `classify` finds nothing: every
    /// value of the first dword's high half, then of its low half, each with
    /// random other bits; and the opcode table covers every family.
    #[test]
    fn the_site_filter_never_hides_a_site() {
        let index = |f: Family| match f {
            Family::Sop2
            | Family::Sopk
            | Family::Sop1
            | Family::Sopc
            | Family::Sopp
            | Family::Smem
            | Family::Vop1
            | Family::Vop2
            | Family::Vopc
            | Family::Vop3
            | Family::Vop3p
            | Family::Vop3px2
            | Family::Vopd
            | Family::Vopd3
            | Family::Ds
            | Family::Vbuffer
            | Family::Vflat
            | Family::Vimage => f as usize,
        };
        assert_eq!(index(Family::Vimage) + 1, FAMILIES);
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let (mut checked, mut filtered) = (0, 0);
        for half in 0..=0xFFFFu32 {
            for variant in 0..8 {
                let r = next();
                let w0 = if variant < 4 {
                    half << 16 | (r as u32 & 0xFFFF)
                } else {
                    (r as u32 & 0xFFFF_0000) | half
                };
                let mut bytes = [0u8; 20];
                bytes[..4].copy_from_slice(&w0.to_le_bytes());
                bytes[4..12].copy_from_slice(&next().to_le_bytes());
                bytes[12..20].copy_from_slice(&r.to_le_bytes());
                let Ok(decoded) = walker::decode(&bytes) else {
                    continue;
                };
                let insn = Instruction {
                    vaddr: 0,
                    bytes: &bytes[..usize::from(decoded.len)],
                    decoded,
                };
                checked += 1;
                if !may_be_a_site(decoded, insn.bytes) {
                    filtered += 1;
                    let mut sites = Vec::new();
                    classify(&insn, 0, &bytes, 0, 20, &mut sites);
                    assert!(sites.is_empty(), "{decoded:?} {w0:#010x}: {sites:?}");
                }
            }
        }
        assert!(filtered > checked / 2, "{filtered} of {checked}");
    }

    #[test]
    fn class_names_are_stable() {
        let names: Vec<&str> = A0Class::ALL.iter().map(|c| c.as_str()).collect();
        assert_eq!(
            names,
            [
                "cluster_load",
                "barrier_signal_isfirst",
                "s_clause",
                "s_sethalt",
                "ds_2addr",
                "ds_addtid",
                "tensor_lds",
                "wmma_k128",
                "wmma_f4",
                "wmma_scale",
                "fp8_clamp",
                "wmma_int_spacing",
                "flat_scratch_base_64"
            ]
        );
        for c in A0Class::ALL {
            assert_eq!(A0Class::from_name(c.as_str()), Some(c));
        }
        assert_eq!(Fix::SameSize.as_str(), "same-size");
        assert_eq!(Fix::Growth.as_str(), "growth");
    }

    #[test]
    fn probe_object_is_walked_completely() {
        let a = analyze(GFX1250_PROBE).unwrap();
        assert!(a.is_complete());
        assert_eq!(a.isa, "amdgcn-amd-amdhsa--gfx1250");
        assert_eq!(a.processor, "gfx1250");
        assert_eq!(a.code_object_version, 5);
        let names: Vec<(&str, u64, u64, u64)> = a
            .functions
            .iter()
            .map(|f| (f.name.as_str(), f.vaddr, f.size, f.instructions))
            .collect();
        // llvm-objdump-22: 6 instructions in hotswap_kernel, 5 in the callee.
        assert_eq!(
            names,
            [
                ("hotswap_kernel", 0x1600, 44, 6),
                ("__clang_ocl_kern_imp_hotswap_kernel", 0x162c, 28, 5)
            ]
        );
        assert_eq!(a.functions[0].file_offset, Some(0x600));
        assert_eq!(a.kernels.len(), 1);
        assert_eq!(a.kernels[0].name, "hotswap_kernel");
        assert_eq!(a.kernels[0].entry_vaddr, Some(0x1600));
        assert_eq!(a.sites().count(), 0);
    }

    #[test]
    fn other_processors_are_not_analysed() {
        let mut gfx942 = GFX1250_PROBE.to_vec();
        gfx942[48..52].copy_from_slice(&0x4cu32.to_le_bytes());
        assert_eq!(analyze(&gfx942), Err(AnalyzeError::NotGfx125("gfx942")));
        assert!(matches!(analyze(b"not an elf"), Err(AnalyzeError::Isa(_))));
    }

    #[test]
    fn a_cut_text_section_makes_the_analysis_incomplete() {
        let mut o = GFX1250_PROBE.to_vec();
        // An unknown encoding (VEXPORT) as hotswap_kernel's third instruction.
        o[0x610..0x614].copy_from_slice(&0xF800_0000u32.to_le_bytes());
        let a = analyze(&o).unwrap();
        assert!(!a.is_complete());
        assert_eq!(
            a.unknown,
            [Undecodable {
                function: "hotswap_kernel".into(),
                vaddr: 0x1610,
                first_dword: Some(0xF800_0000),
                reason: DecodeError::Unknown
            }]
        );
        assert!(a.functions[0].incomplete);
        assert_eq!(a.functions[0].instructions, 2);
    }

    fn fix(class: A0Class, bytes: &[u8]) -> Option<Vec<u8>> {
        same_size_fix(class, bytes)
    }

    #[test]
    fn same_size_fixes_match_llvm_encodings() {
        // Expected bytes from llvm-mc-22 -show-encoding (gfx1250-a0.md §3.4).
        let cluster = [0x7c, 0xc0, 0x19, 0xee, 0, 0, 0, 0, 2, 0, 0, 0];
        let global = [0x7c, 0x00, 0x05, 0xee, 0, 0, 0, 0, 2, 0, 0, 0];
        assert_eq!(fix(A0Class::ClusterLoad, &cluster).unwrap(), global);
        // saddr form: same op field change, saddr kept.
        let cluster_saddr = [0x02, 0x00, 0x1a, 0xee, 0, 0, 0, 0, 1, 0, 0, 0];
        let global_saddr = [0x02, 0x40, 0x05, 0xee, 0, 0, 0, 0, 1, 0, 0, 0];
        assert_eq!(
            fix(A0Class::ClusterLoad, &cluster_saddr).unwrap(),
            global_saddr
        );
        // cluster_load_async_to_lds_b128 -> global_load_async_to_lds_b128.
        let async128 = [0x7c, 0x40, 0x1b, 0xee, 1, 0, 0, 0, 2, 0, 0, 0];
        let gasync128 = [0x7c, 0x80, 0x18, 0xee, 1, 0, 0, 0, 2, 0, 0, 0];
        assert_eq!(fix(A0Class::ClusterLoad, &async128).unwrap(), gasync128);
        assert_eq!(
            fix(A0Class::BarrierSignalIsfirst, &[0xc1, 0x4f, 0x80, 0xbe]).unwrap(),
            [0xc1, 0x4e, 0x80, 0xbe]
        );
        assert_eq!(
            fix(A0Class::SClause, &[0x01, 0x00, 0x85, 0xbf]).unwrap(),
            [0, 0, 0x80, 0xbf]
        );
        assert_eq!(
            fix(A0Class::SSethalt, &[0x00, 0x00, 0x82, 0xbf]).unwrap(),
            [0, 0, 0x80, 0xbf]
        );
        // scale_src2 (bits [58:50]) already 0x100 in clang-22 output: unchanged.
        let scale = [
            0, 0, 0x35, 0xcc, 2, 7, 2, 4, 0, 0, 0x33, 0xcc, 8, 0x31, 0xa2, 4,
        ];
        assert_eq!(fix(A0Class::WmmaScale, &scale).unwrap(), scale);
        let mut stale = scale;
        stale[6] = 0x02 & 0x03;
        stale[7] = 0x00; // scale_src2 = 0 (an SGPR)
        assert_eq!(fix(A0Class::WmmaScale, &stale).unwrap(), scale);
        // s_mov_b64 s[0:1], src_flat_scratch_base_hi -> ..._lo.
        assert_eq!(
            fix(A0Class::FlatScratchBase64, &[0xe7, 0x01, 0x80, 0xbe]).unwrap(),
            [0xe6, 0x01, 0x80, 0xbe]
        );
        // A 32-bit read of the high half is not a site: no fix.
        assert_eq!(
            fix(A0Class::FlatScratchBase64, &[0xe7, 0x00, 0x80, 0xbe]),
            None
        );
        // Growth classes and mismatched bytes have none.
        assert_eq!(fix(A0Class::Ds2addr, &[1, 2, 0xdc, 0xd8, 2, 0, 0, 0]), None);
        assert_eq!(fix(A0Class::SClause, &[0xc1, 0x4f, 0x80, 0xbe]), None);
        assert_eq!(fix(A0Class::SClause, &[0x01, 0x00, 0x85]), None);
    }
}
