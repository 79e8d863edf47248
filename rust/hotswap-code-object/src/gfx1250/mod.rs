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

pub mod classes;
pub mod fields;
pub mod walker;

#[allow(clippy::all)]
#[rustfmt::skip]
mod operand_table;

use crate::elf::{self, AddressMap, STT_FUNC, STT_OBJECT};
use crate::isa::IsaError;
use crate::object::CodeObject;
use classes::{Condition, Encoding, Rule};
use walker::{DecodeError, Decoded, Family};

/// The classes of A0-relevant sites, with the stable names of the JSON output.
///
/// What each class matches, how it is fixed and why is data: its row of
/// [`classes::CLASSES`] (`A0Class::info`), exported as `data/a0-classes.json`
/// and as the class table of `docs/how-it-works.md`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum A0Class {
    /// `cluster_load_*`: same size, the matching `global_load_*`.
    ClusterLoad,
    /// `s_barrier_signal_isfirst`: same size, `s_barrier_signal`.
    BarrierSignalIsfirst,
    /// `s_clause`: same size, `s_nop 0` (the rewriter's policy decides).
    SClause,
    /// `s_sethalt`: same size, `s_nop 0`.
    SSethalt,
    /// DS two-address ops: growth (the DS2 split).
    Ds2addr,
    /// `ds_load_addtid_b32` / `ds_store_addtid_b32`: growth.
    DsAddtid,
    /// `tensor_load_to_lds`: growth.
    TensorLds,
    /// The dense K=128 FP8/BF8 WMMAs: growth.
    WmmaK128,
    /// The 32x16x128 f4 WMMA, standalone or scaled: growth.
    WmmaF4,
    /// Scaled WMMAs: same size (block-32 scales) or growth (block-16; the
    /// block-16 32x16x128 f4 form is a [`A0Class::WmmaF4`] site only).
    WmmaScale,
    /// FP8 conversions with CLAMP: growth.
    Fp8Clamp,
    /// An integer WMMA with fewer than 8 `v_nop`s after it: growth.
    WmmaIntSpacing,
    /// A 64-bit source naming the flat scratch base: same size (scalar) or
    /// growth (vector).
    FlatScratchBase64,
}

impl A0Class {
    /// Every class, in the order of the JSON output (the order of
    /// [`classes::CLASSES`]).
    pub const ALL: [A0Class; classes::CLASSES.len()] = {
        let mut all = [A0Class::ClusterLoad; classes::CLASSES.len()];
        let mut i = 0;
        while i < all.len() {
            all[i] = classes::CLASSES[i].class;
            i += 1;
        }
        all
    };

    /// The stable name (`cluster_load`, `s_clause`, ...).
    pub fn as_str(self) -> &'static str {
        self.info().name
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

/// The sites of `code`, a straight run of instructions (an emitter's
/// replacement) whose first byte is at `vaddr`, classified as in a function
/// of exactly these bytes (offsets: from `code`'s start). The walk stops at
/// the first encoding that cannot be sized.
pub fn sites_in(code: &[u8], vaddr: u64) -> Vec<Site> {
    let mut sites = Vec::new();
    let size = code.len() as u64;
    for insn in instructions(code, vaddr).map_while(Result::ok) {
        let at = insn.vaddr.wrapping_sub(vaddr);
        if may_be_a_site(insn.decoded, insn.bytes) {
            classify(&insn, at, code, at, size, &mut sites);
        }
    }
    sites
}

/// Analyses a gfx1250 / gfx12.5 code object (a bare ELF; see
/// [`crate::container`] for bundles and host binaries). Other processors give
/// [`AnalyzeError::NotGfx125`]; an object that is not an AMDGPU code object
/// gives [`AnalyzeError::Isa`]. A malformed symbol, section or descriptor is
/// skipped; a malformed instruction stream is reported in
/// [`Analysis::unknown`]. Never panics.
pub fn analyze(code_object: &[u8]) -> Result<Analysis, AnalyzeError> {
    analyze_object(&CodeObject::parse(code_object).map_err(AnalyzeError::Isa)?)
}

/// [`analyze`] of an object already parsed: the view's tables are read once
/// and stay there for the rewrite that follows.
pub fn analyze_object(object: &CodeObject<'_>) -> Result<Analysis, AnalyzeError> {
    analyze_object_with(object, &mut ())
}

/// Told the instruction boundaries of each function as [`analyze_object_with`]
/// walks it, so that a later stage needs no second decode of the code it
/// keeps boundaries for.
pub(crate) trait WalkObserver {
    /// The walk of a function starts: its address and, when mapped, its
    /// file offset.
    fn function_start(&mut self, vaddr: u64, file_offset: Option<u64>);
    /// An instruction starts `offset` bytes into the function (in order).
    fn instruction(&mut self, offset: u64);
    /// The walk of `function` (its sites found, `incomplete` set) ended
    /// `end` bytes into it.
    fn function_end(&mut self, function: &Function, end: u64);
}

/// No observer.
impl WalkObserver for () {
    fn function_start(&mut self, _: u64, _: Option<u64>) {}
    fn instruction(&mut self, _: u64) {}
    fn function_end(&mut self, _: &Function, _: u64) {}
}

/// [`analyze_object`], telling `observer` each function's instruction
/// boundaries as they are decoded.
pub(crate) fn analyze_object_with(
    object: &CodeObject<'_>,
    observer: &mut impl WalkObserver,
) -> Result<Analysis, AnalyzeError> {
    let code_object = object.bytes();
    let header = object.header();
    let processor = object.processor().map_err(AnalyzeError::Isa)?;
    if !is_gfx125(processor) {
        return Err(AnalyzeError::NotGfx125(processor));
    }
    let isa_name = object.isa_name().map_err(AnalyzeError::Isa)?;
    let map = object.address_map();
    let sections = object.sections();
    let mut table = object.symbols(elf::SHT_SYMTAB);
    if table.is_empty() {
        table = object.symbols(elf::SHT_DYNSYM);
    }
    let symbols = distinct_defined(table);

    let mut functions: Vec<(String, FunctionKind, u64, u64)> = symbols
        .iter()
        .filter(|s| s.sym_type == STT_FUNC)
        .map(|s| {
            let name = lossy(s.name);
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
            name: lossy(name),
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
            map,
            name,
            kind,
            vaddr,
            size,
            &mut analysis.unknown,
            observer,
        );
        analysis.functions.push(function);
    }
    Ok(analysis)
}

/// The defined symbols of `table` in table order, each (name, value, type)
/// once (its first entry). By sorting on the value first: names, long in
/// C++ code, are compared only between symbols at one address, and no
/// table makes it slower than a sort (a hash set would hash every name).
fn distinct_defined<'t, 'a>(table: &'t [elf::Symbol<'a>]) -> Vec<&'t elf::Symbol<'a>> {
    let key = |i: usize| {
        let s = &table[i];
        (s.value, s.sym_type, s.name)
    };
    let mut order: Vec<usize> = (0..table.len())
        .filter(|&i| table[i].is_defined())
        .collect();
    // Equal keys stay in table order: the first of each run is kept.
    order.sort_by(|&a, &b| key(a).cmp(&key(b)));
    let mut kept: Vec<usize> = Vec::with_capacity(order.len());
    for (k, &i) in order.iter().enumerate() {
        if k == 0 || key(order[k - 1]) != key(i) {
            kept.push(i);
        }
    }
    kept.sort_unstable();
    kept.into_iter().map(|i| &table[i]).collect()
}

/// `name` as a string, invalid UTF-8 replaced (checked the fast way first:
/// names are almost always ASCII).
fn lossy(name: &[u8]) -> String {
    match std::str::from_utf8(name) {
        Ok(s) => s.to_owned(),
        Err(_) => String::from_utf8_lossy(name).into_owned(),
    }
}

/// Walks one function and classifies its instructions, telling `observer`
/// where each one starts.
#[allow(clippy::too_many_arguments)]
fn walk_function(
    code_object: &[u8],
    map: &AddressMap,
    name: String,
    kind: FunctionKind,
    vaddr: u64,
    size: u64,
    unknown: &mut Vec<Undecodable>,
    observer: &mut impl WalkObserver,
) -> Function {
    let file_offset = map.file_offset(vaddr);
    observer.function_start(vaddr, file_offset);
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
        observer.function_end(&function, 0);
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
        observer.function_end(&function, 0);
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
                observer.instruction(at);
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
    observer.function_end(&function, at);
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

/// Per family, a bit per opcode (10 bits) of the encodings in
/// [`classes::CLASSES`] (every opcode for an encoding of the whole family),
/// except those matched on operands ([`Condition::FlatScratchBase64`], which
/// [`may_name_flat_scratch_base`] stands in for). Built from the table at
/// compile time, so a new class needs nothing here.
const SITE_OPS: [[u64; 16]; FAMILIES] = {
    let mut t = [[0u64; 16]; FAMILIES];
    let mut c = 0;
    while c < classes::CLASSES.len() {
        let encodings = classes::CLASSES[c].encodings;
        let mut i = 0;
        while i < encodings.len() {
            let e = &encodings[i];
            let f = e.family as usize;
            match (e.condition, e.opcode) {
                (Condition::FlatScratchBase64, _) => {}
                (_, Some(op)) => t[f][op as usize / 64] |= 1 << (op % 64),
                (_, None) => t[f] = [u64::MAX; 16],
            }
            i += 1;
        }
        c += 1;
    }
    t
};

/// Where an instruction sits in its function, for [`Condition::FewerThan8Nops`]:
/// the function's bytes from its start, the instruction's offset in them and
/// the function's size.
#[derive(Clone, Copy)]
struct Context<'a> {
    code: &'a [u8],
    at: u64,
    size: u64,
}

/// Whether `insn` meets `condition` (`context`: `None` outside a function walk,
/// where the forward scan cannot be made).
#[inline]
fn holds(condition: Condition, insn: &Instruction<'_>, context: Option<Context<'_>>) -> bool {
    let w0 = w(insn.bytes, 0);
    match condition {
        Condition::Always => true,
        Condition::GlobalSegment => w0 >> 24 == 0xEE,
        Condition::Clamp => w0 & (1 << 15) != 0,
        Condition::MatrixF8f6f4 => (w(insn.bytes, 2) >> 16) & 0xFF != 0x88,
        Condition::MatrixF4 => (w(insn.bytes, 2) >> 16) & 0xFF == 0x88,
        Condition::FewerThan8Nops => context.is_some_and(|c| {
            let len = u64::from(insn.decoded.len);
            !enough_nops(c.code, c.at + len, c.size)
        }),
        Condition::FlatScratchBase64 => flat_scratch_base_64(insn).is_some(),
    }
}

/// The encoding of `class` that `insn` is, if any.
fn encoding_of(
    class: A0Class,
    insn: &Instruction<'_>,
    context: Option<Context<'_>>,
) -> Option<&'static Encoding> {
    let d = insn.decoded;
    class.info().encodings.iter().find(|e| {
        e.family == d.family
            && e.opcode.is_none_or(|op| op == d.op)
            && holds(e.condition, insn, context)
    })
}

/// Appends the sites of one instruction, in [`classes::CLASSES`] order, the
/// classes matched by opcode before the secondary ones. `code`/`at`/`size`:
/// the function's bytes from its start, the instruction's offset in them, the
/// function's size (for the forward scan of integer WMMAs).
fn classify(
    insn: &Instruction<'_>,
    file_offset: u64,
    code: &[u8],
    at: u64,
    size: u64,
    sites: &mut Vec<Site>,
) {
    let d = insn.decoded;
    let context = Some(Context { code, at, size });
    for &(class, e) in classes::by_family(d.family) {
        if e.opcode.is_some_and(|op| op != d.op) || !holds(e.condition, insn, context) {
            continue;
        }
        let needs_change = match e.rule {
            Rule::ScaleSrc2Vgpr0 => (w(insn.bytes, 1) >> 18) & 0x1FF != 0x100,
            _ => true,
        };
        sites.push(Site {
            vaddr: insn.vaddr,
            file_offset,
            len: d.len,
            class,
            mnemonic: e.mnemonic,
            fix: e.fix,
            needs_change,
        });
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

/// Whether 8 `v_nop`s follow an integer WMMA before any other VALU, an
/// instruction whose A0 fix is VALU code (addtid), a control transfer or the
/// function's end. `at`: function offset of the next instruction.
fn enough_nops(code: &[u8], at: u64, size: u64) -> bool {
    let (Ok(at), Ok(size)) = (usize::try_from(at), usize::try_from(size)) else {
        return false;
    };
    code.get(at..size.min(code.len()))
        .is_some_and(|rest| int_wmma_nops(rest) >= INT_WMMA_A0_NOPS)
}

/// The `v_nop`s an integer WMMA needs after it on A0 (B0 needs 4).
pub const INT_WMMA_A0_NOPS: u32 = 8;

/// The `v_nop`s at the start of `code` (the bytes after an integer WMMA, to
/// its function's end), counted up to [`INT_WMMA_A0_NOPS`] and until the
/// first other VALU instruction, `ds_{load,store}_addtid_b32` (its A0 fix is
/// VALU code in that slot), control transfer or instruction the walker cannot
/// size. Other instructions (SALU, memory, waits) neither count nor end it.
/// The classifier and the padding emitter both count with this.
pub fn int_wmma_nops(code: &[u8]) -> u32 {
    let mut nops = 0;
    for insn in instructions(code, 0) {
        let Ok(insn) = insn else { break };
        let d = insn.decoded;
        if matches!((d.family, d.op), (Family::Vop1, 0) | (Family::Vop3, 0x180)) {
            nops += 1;
            if nops >= INT_WMMA_A0_NOPS {
                break;
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
        let becomes_valu = d.family == Family::Ds && matches!(d.op, 0xB0 | 0xB1);
        if valu || control || becomes_valu {
            break;
        }
    }
    nops
}

/// The bit position of the opcode field of a family whose same-size fix may
/// change the opcode ([`Rule::Opcode`]).
fn opcode_shift(family: Family) -> Option<u32> {
    match family {
        Family::Vflat => Some(14),
        Family::Sop1 => Some(8),
        _ => None,
    }
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
    let insn = Instruction {
        vaddr: 0,
        bytes: original,
        decoded: d,
    };
    let e = encoding_of(class, &insn, None)?;
    if e.fix != Fix::SameSize {
        return None;
    }
    let mut out = original.to_vec();
    let set_w = |out: &mut Vec<u8>, i: usize, v: u32| {
        out[i * 4..i * 4 + 4].copy_from_slice(&v.to_le_bytes())
    };
    let w0 = w(original, 0);
    match e.rule {
        Rule::Opcode(to) => {
            let shift = opcode_shift(d.family)?;
            set_w(
                &mut out,
                0,
                (w0 & !(0xFF << shift)) | (u32::from(to) << shift),
            );
        }
        Rule::SNop0 => set_w(&mut out, 0, 0xBF80_0000),
        Rule::ScaleSrc2Vgpr0 => {
            let w1 = w(original, 1);
            set_w(&mut out, 1, (w1 & !(0x1FF << 18)) | (0x100 << 18));
        }
        Rule::FlatScratchBaseLo => {
            let (_, wide) = walker::salu_sources(d.family, d.op)?;
            let mut v = w0;
            for (i, shift) in [0, 8].into_iter().enumerate() {
                if wide & (1 << i) != 0 && (v >> shift) & 0xFF == FLAT_SCRATCH_BASE_HI {
                    v = (v & !(0xFF << shift)) | (FLAT_SCRATCH_BASE_LO << shift);
                }
            }
            set_w(&mut out, 0, v);
        }
        Rule::Ds2Split
        | Rule::WmmaK128Split
        | Rule::WmmaF4Split
        | Rule::WmmaF4Scale16Split
        | Rule::WmmaScale16Split
        | Rule::WmmaIntNops
        | Rule::DsAddtidAlu
        | Rule::TensorMaskClear
        | Rule::FlatScratchBasePair
        | Rule::None => return None,
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

    /// A vector read of the flat scratch base needs a change (an SGPR pair,
    /// `rewrite::emit::flat_scratch_base`); the scalar `_lo` form is canonical.
    #[test]
    fn vector_flat_scratch_base_reads_need_a_change() {
        let sites = |bytes: &[u8]| {
            let decoded = walker::decode(bytes).unwrap();
            let insn = Instruction {
                vaddr: 0,
                bytes,
                decoded,
            };
            let mut sites = Vec::new();
            classify(&insn, 0, bytes, 0, bytes.len() as u64, &mut sites);
            sites
        };
        // v_add_nc_u64_e32 v[0:1], src_flat_scratch_base_lo, v[2:3]
        let v = sites(&[0xe6, 0x04, 0x00, 0x50]);
        assert_eq!(v.len(), 1);
        assert_eq!(
            (v[0].class, v[0].fix),
            (A0Class::FlatScratchBase64, Fix::Growth)
        );
        assert!(v[0].needs_change);
        // s_mov_b64 s[0:1], src_flat_scratch_base_hi: same size, needs a change.
        let s = sites(&[0xe7, 0x01, 0x80, 0xbe]);
        assert!(s.len() == 1 && s[0].fix == Fix::SameSize && s[0].needs_change);
        // s_mov_b64 s[0:1], src_flat_scratch_base_lo: no site.
        assert!(sites(&[0xe6, 0x01, 0x80, 0xbe]).is_empty());
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
    fn each_defined_symbol_is_kept_once_in_table_order() {
        let sym = |name: &'static [u8], value: u64, sym_type: u8, shndx: u16| elf::Symbol {
            name,
            sym_type,
            bind: 0,
            shndx,
            value,
            size: 4,
        };
        let table = [
            sym(b"b", 0x200, STT_FUNC, 1),
            sym(b"a", 0x100, STT_FUNC, 1),
            sym(b"u", 0x100, STT_FUNC, 0), // undefined
            sym(b"b", 0x200, STT_FUNC, 2), // the same (name, value, type)
            sym(b"b", 0x200, STT_OBJECT, 1),
            sym(b"c", 0x100, STT_FUNC, 1),
            sym(b"a", 0x100, STT_FUNC, 1),
        ];
        let kept: Vec<(&[u8], u64, u8, u16)> = distinct_defined(&table)
            .into_iter()
            .map(|s| (s.name, s.value, s.sym_type, s.shndx))
            .collect();
        assert_eq!(
            kept,
            [
                (&b"b"[..], 0x200, STT_FUNC, 1),
                (&b"a"[..], 0x100, STT_FUNC, 1),
                (&b"b"[..], 0x200, STT_OBJECT, 1),
                (&b"c"[..], 0x100, STT_FUNC, 1),
            ]
        );
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
