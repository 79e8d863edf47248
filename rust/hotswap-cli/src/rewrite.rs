//! `hotswap rewrite IN -o OUT`: the native B0→A0 rewrite
//! ([`hotswap_code_object::rewrite`]) of one gfx1250 code object, or of every
//! gfx1250 entry of an uncompressed offload bundle (other entries are copied
//! as they are; the rewrite keeps each object's size, so the bundle keeps its
//! layout byte for byte outside the rewritten entries).
//!
//! Exit statuses: 0 complete (every site A0 needs changed is fixed, or none
//! was needed); 3 refused (nothing written: a site needs code growth, the
//! analysis is incomplete, not a gfx1250 object, ...); 4 partial (only with
//! `--allow-partial`: written, growth sites remain); 1 unreadable input,
//! unsupported container or unwritable output.
//!
//! JSON (`--json`):
//!
//! ```text
//! {"input": "in.co", "output": "out.co" | null,
//!  "status": "complete" | "partial" | "refused" | "error", "message": "..." | null,
//!  "code_objects": [{"bundle_id": ... | null, "isa": ... | null,
//!     "result": "rewritten" | "unchanged" | "refused" | "skipped",
//!     "refusal": {"kind": "needs_growth", "message": "..."} | null,
//!     "fixed": [SITE], "kept": [SITE], "remaining": [SITE], "retag": "..." | null,
//!     "moved_functions": [MOVED], "islands": [ISLAND], "gateways": [GATEWAY],
//!     "relocations": [RELOCATION], "sites": [CHANGE], "register_counts": [RAISE]}],
//!  "moved_functions": [MOVED + "code_object"], "sites": [CHANGE + "code_object"]}
//! SITE: {"function": "k", "offset": 6400, "class": "cluster_load", "mnemonic": "cluster_load_b32"}
//!       (+ "reason": "..." for a remaining site whose class's emitter refused it)
//! MOVED: {"name", "original_vaddr", "original_size", "new_vaddr", "new_size", "symbol"}
//! ISLAND: {"function", "vaddr", "target", "before_original_vaddr"}: an `s_branch` placed after
//!         an instruction with no fall-through, which a branch of the moved function whose
//!         destination the splits put out of reach goes through
//! GATEWAY: {"function", "old_entry", "new_entry", "kind": "s_branch" | "far-jump",
//!          "registers": "" | "s[0:1]" | "vcc", "len"}: the old entry of a moved function,
//!          overwritten (`len` bytes, whole instructions) by a jump to its image
//! RELOCATION: {"offset", "kind": "R_AMDGPU_ABS64" | "R_AMDGPU_RELATIVE64", "function",
//!          "old_target", "new_target"}: a dynamic relocation (a function-pointer table entry,
//!          a GOT slot) into a moved function, its addend re-aimed at the image
//! CHANGE: {"class", "mnemonic", "function", "original_vaddr", "new_vaddr", "new_len",
//!          "fix": "same-size" | "ds2-split" | "ds2-split-swapped" | "wmma-k128-split" | ...,
//!          "scratch": [SCRATCH] (only when registers were taken),
//!          "note": "..." (only when the fix is not exact: the K splits' rounding),
//!          "definition_vaddr": N (only for "tensor-mask-clear-at-definition": the mask
//!          SGPR's only reaching definition, changed in place; the site keeps its bytes
//!          and address, new_vaddr = original_vaddr)}
//! SCRATCH: {"class": "vgpr" | "sgpr", "first", "count", "tier": "dead" | "above-allocation"}
//! RAISE: {"kernel", "class": "vgpr" | "sgpr", "old_count", "new_count",
//!         "occupancy": [before, after] | null}: a kernel whose register count (descriptor
//!         and metadata) was raised for scratch registers above its allocation
//! ```
//! `code_object` is the index in `code_objects`. A CHANGE's `new_vaddr` is
//! where the executed copy of the site is: in a moved function, the copy's
//! address; otherwise the site's own. A bundle whose gfx1250 entry grew is
//! not re-assembled: rewrite the extracted object (`hotswap inspect
//! --extract`).

use std::io::Write;
use std::path::Path;

use hotswap_code_object::container::{self, Kind, BUNDLE_MAGIC, CCOB_MAGIC};
use hotswap_code_object::elf::Header;
use hotswap_code_object::rewrite::{self, ClausePolicy, Options, Retag, RewriteError, SiteInfo};
use hotswap_code_object::{isa, CodeObject, EM_AMDGPU};
use serde::Serialize;

use crate::exit;

/// The JSON document.
#[derive(Debug, Serialize)]
pub struct Outcome {
    /// The input, as given.
    pub input: String,
    /// The output, when written.
    pub output: Option<String>,
    /// `complete`, `partial`, `refused` or `error`.
    pub status: &'static str,
    /// Why, for `refused` and `error`.
    pub message: Option<String>,
    /// Each code object of the input.
    pub code_objects: Vec<ObjectOutcome>,
    /// Every moved function of every code object.
    pub moved_functions: Vec<MovedOut>,
    /// Every changed site of every code object.
    pub sites: Vec<ChangeOut>,
}

impl Outcome {
    fn new(
        input: &Path,
        output: Option<String>,
        status: &'static str,
        message: Option<String>,
        code_objects: Vec<ObjectOutcome>,
    ) -> Self {
        let mut moved_functions = Vec::new();
        let mut sites = Vec::new();
        for (i, o) in code_objects.iter().enumerate() {
            moved_functions.extend(o.moved_functions.iter().cloned().map(|mut m| {
                m.code_object = Some(i);
                m
            }));
            sites.extend(o.sites.iter().cloned().map(|mut c| {
                c.code_object = Some(i);
                c
            }));
        }
        Outcome {
            input: input.display().to_string(),
            output,
            status,
            message,
            code_objects,
            moved_functions,
            sites,
        }
    }
}

/// What happened to one code object.
#[derive(Debug, Serialize)]
pub struct ObjectOutcome {
    /// The bundle entry id (`null` for a bare object).
    pub bundle_id: Option<String>,
    /// Its ISA name.
    pub isa: Option<String>,
    /// `rewritten`, `unchanged`, `refused` or `skipped` (not gfx1250).
    pub result: &'static str,
    /// Why it was refused.
    pub refusal: Option<Refusal>,
    /// Sites fixed.
    pub fixed: Vec<SiteOut>,
    /// Same-size sites left by policy (`s_clause`).
    pub kept: Vec<SiteOut>,
    /// Growth sites left (`--allow-partial`).
    pub remaining: Vec<SiteOut>,
    /// The metadata retag.
    pub retag: Option<String>,
    /// The functions moved into the appended code segment.
    pub moved_functions: Vec<MovedOut>,
    /// Branch islands in moved code.
    pub islands: Vec<IslandOut>,
    /// The old entries of moved functions made jumps to their images.
    pub gateways: Vec<GatewayOut>,
    /// The dynamic relocations re-aimed at moved code.
    pub relocations: Vec<RelocationOut>,
    /// Every site changed: where it was, where its replacement is.
    pub sites: Vec<ChangeOut>,
    /// Kernels whose register counts were raised.
    pub register_counts: Vec<RaiseOut>,
}

/// A raised register count in the JSON document.
#[derive(Clone, Debug, Serialize)]
pub struct RaiseOut {
    /// The kernel.
    pub kernel: String,
    /// `vgpr` or `sgpr`.
    pub class: &'static str,
    /// The count before.
    pub old_count: u16,
    /// The count after.
    pub new_count: u16,
    /// Waves per SIMD before and after (VGPRs).
    pub occupancy: Option<(u8, u8)>,
}

/// Scratch registers a site's replacement took, in the JSON document.
#[derive(Clone, Debug, Serialize)]
pub struct ScratchOut {
    /// `vgpr` or `sgpr`.
    pub class: &'static str,
    /// The first register.
    pub first: u16,
    /// How many.
    pub count: u16,
    /// `dead` or `above-allocation`.
    pub tier: &'static str,
}

impl ObjectOutcome {
    fn empty(bundle_id: Option<String>, isa: Option<String>, result: &'static str) -> Self {
        ObjectOutcome {
            bundle_id,
            isa,
            result,
            refusal: None,
            fixed: Vec::new(),
            kept: Vec::new(),
            remaining: Vec::new(),
            retag: None,
            moved_functions: Vec::new(),
            islands: Vec::new(),
            gateways: Vec::new(),
            relocations: Vec::new(),
            sites: Vec::new(),
            register_counts: Vec::new(),
        }
    }
}

/// A moved function in the JSON document.
#[derive(Clone, Debug, Serialize)]
pub struct MovedOut {
    /// Its name.
    pub name: String,
    /// Where it was (its original copy is still there, no longer entered).
    pub original_vaddr: u64,
    /// Its original size.
    pub original_size: u64,
    /// Where its copy is.
    pub new_vaddr: u64,
    /// The copy's size.
    pub new_size: u64,
    /// The copy's symbol.
    pub symbol: String,
    /// The index of its code object (top-level list only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub code_object: Option<usize>,
}

/// A branch island in the JSON document.
#[derive(Clone, Debug, Serialize)]
pub struct IslandOut {
    /// The moved function holding it.
    pub function: String,
    /// Its address.
    pub vaddr: u64,
    /// Where it branches.
    pub target: u64,
    /// The original address of the instruction it precedes.
    pub before_original_vaddr: u64,
}

/// A re-aimed relocation in the JSON document.
#[derive(Clone, Debug, Serialize)]
pub struct RelocationOut {
    /// The location it patches.
    pub offset: u64,
    /// Its type.
    pub kind: &'static str,
    /// The moved function it refers to.
    pub function: String,
    /// Where it pointed (the old copy).
    pub old_target: u64,
    /// Where it points now (the image).
    pub new_target: u64,
}

/// A gateway in the JSON document.
#[derive(Clone, Debug, Serialize)]
pub struct GatewayOut {
    /// The moved function.
    pub function: String,
    /// Its old entry, where the gateway is.
    pub old_entry: u64,
    /// Its image's entry, where the gateway jumps.
    pub new_entry: u64,
    /// `s_branch` or `far-jump`.
    pub kind: &'static str,
    /// The SGPR pair a far jump clobbers (`""` for an `s_branch`).
    pub registers: String,
    /// The bytes it overwrites.
    pub len: u32,
}

/// A changed site in the JSON document.
#[derive(Clone, Debug, Serialize)]
pub struct ChangeOut {
    /// The class.
    pub class: &'static str,
    /// The mnemonic before the fix.
    pub mnemonic: &'static str,
    /// The function holding it.
    pub function: String,
    /// Its address in the input.
    pub original_vaddr: u64,
    /// The address of its (first) replacement instruction in the output.
    pub new_vaddr: u64,
    /// The replacement's length.
    pub new_len: u32,
    /// `same-size` or the emitter's fix name (`ds2-split`, ...).
    pub fix: &'static str,
    /// Scratch registers the replacement took.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub scratch: Vec<ScratchOut>,
    /// What the fix does to results when it is not exact.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<&'static str>,
    /// For `tensor-mask-clear-at-definition`: the address of the mask
    /// SGPR's definition changed in place (the site keeps its bytes).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub definition_vaddr: Option<u64>,
    /// The index of its code object (top-level list only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub code_object: Option<usize>,
}

/// A refusal.
#[derive(Debug, Serialize)]
pub struct Refusal {
    /// The rewriter's stable kind (`needs_growth`, `incomplete`, ...).
    pub kind: &'static str,
    /// Its message.
    pub message: String,
    /// The growth sites, for `needs_growth`.
    pub sites: Vec<SiteOut>,
}

/// A site in the JSON document.
#[derive(Debug, Serialize)]
pub struct SiteOut {
    /// The function holding it.
    pub function: String,
    /// Its virtual address.
    pub offset: u64,
    /// The class.
    pub class: &'static str,
    /// The mnemonic before the fix.
    pub mnemonic: &'static str,
    /// For a remaining site whose class has an emitter: why it refused.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

fn sites(list: &[SiteInfo]) -> Vec<SiteOut> {
    list.iter()
        .map(|s| SiteOut {
            function: s.function.to_string(),
            offset: s.vaddr,
            class: s.class.as_str(),
            mnemonic: s.mnemonic,
            reason: None,
        })
        .collect()
}

/// Every changed site, in input order, as the rewrite reports it (same-size
/// fixes at their executed copy, sites fixed by growth at their
/// replacement).
fn changes(report: &rewrite::Report) -> Vec<ChangeOut> {
    report
        .changes()
        .into_iter()
        .map(|c| ChangeOut {
            class: c.site.class.as_str(),
            mnemonic: c.site.mnemonic,
            function: c.site.function.to_string(),
            original_vaddr: c.site.vaddr,
            new_vaddr: c.new_vaddr,
            new_len: c.new_len,
            fix: c.fix,
            scratch: c
                .scratch
                .iter()
                .map(|t| ScratchOut {
                    class: t.class.as_str(),
                    first: t.first,
                    count: t.count,
                    tier: t.tier,
                })
                .collect(),
            note: c.note,
            definition_vaddr: c.definition_vaddr,
            code_object: None,
        })
        .collect()
}

fn retag_text(r: Retag) -> String {
    match r {
        Retag::NoNote => "no metadata note".into(),
        Retag::NoRevision => "no .gfx1250_revision in the metadata".into(),
        Retag::AlreadyA0(n) => format!("{n} .gfx1250_revision already A0"),
        Retag::Retagged(n) => format!("{n} .gfx1250_revision set to A0"),
        Retag::KeptSizeChanged(n) => {
            format!("{n} .gfx1250_revision kept (re-encoding would change the note's size)")
        }
    }
}

/// Rewrites one bare object; `Err` is a refusal.
fn one(
    bytes: &[u8],
    options: &Options,
    bundle_id: Option<String>,
) -> (ObjectOutcome, Option<Vec<u8>>) {
    // One parse: the name and the rewrite read the same view.
    let object = CodeObject::parse(bytes).map_err(RewriteError::NotCodeObject);
    let isa_name = object.as_ref().ok().and_then(|o| o.isa_name().ok());
    let mut o = ObjectOutcome::empty(bundle_id, isa_name, "refused");
    match object.and_then(|object| rewrite::rewrite_object(&object, options)) {
        Ok(r) => {
            o.result = if r.bytes == bytes {
                "unchanged"
            } else {
                "rewritten"
            };
            o.fixed = sites(&r.report.fixed);
            o.kept = sites(&r.report.kept);
            o.remaining = sites(&r.report.remaining);
            for (out, site) in o.remaining.iter_mut().zip(&r.report.remaining) {
                out.reason = r
                    .report
                    .growth_refused
                    .iter()
                    .find(|g| g.site.vaddr == site.vaddr && g.site.class == site.class)
                    .map(|g| g.reason.clone());
            }
            o.retag = r.report.retag.map(retag_text);
            o.moved_functions = r
                .report
                .moved
                .iter()
                .map(|m| MovedOut {
                    name: m.name.to_string(),
                    original_vaddr: m.original_vaddr,
                    original_size: m.original_size,
                    new_vaddr: m.new_vaddr,
                    new_size: m.new_size,
                    symbol: m.symbol.clone(),
                    code_object: None,
                })
                .collect();
            o.islands = r
                .report
                .islands
                .iter()
                .map(|i| IslandOut {
                    function: i.function.to_string(),
                    vaddr: i.vaddr,
                    target: i.target,
                    before_original_vaddr: i.before_original_vaddr,
                })
                .collect();
            o.gateways = r
                .report
                .gateways
                .iter()
                .map(|g| GatewayOut {
                    function: g.function.to_string(),
                    old_entry: g.old_entry,
                    new_entry: g.new_entry,
                    kind: g.kind.as_str(),
                    registers: g.kind.registers(),
                    len: g.len,
                })
                .collect();
            o.relocations = r
                .report
                .relocations
                .iter()
                .map(|x| RelocationOut {
                    offset: x.offset,
                    kind: x.kind,
                    function: x.function.to_string(),
                    old_target: x.old_target,
                    new_target: x.new_target,
                })
                .collect();
            o.sites = changes(&r.report);
            o.register_counts = r
                .report
                .raised
                .iter()
                .map(|c| RaiseOut {
                    kernel: c.name.clone(),
                    class: c.class.as_str(),
                    old_count: c.old_count,
                    new_count: c.new_count,
                    occupancy: c.occupancy,
                })
                .collect();
            (o, Some(r.bytes))
        }
        Err(e) => {
            o.refusal = Some(Refusal {
                kind: e.kind(),
                message: e.to_string(),
                sites: match &e {
                    RewriteError::NeedsGrowth(s) => sites(s),
                    _ => Vec::new(),
                },
            });
            (o, None)
        }
    }
}

/// Runs `hotswap rewrite`.
pub fn run(input: &Path, output: &Path, json: bool, options: Options) -> u8 {
    let (outcome, status) = rewrite_file(input, output, options);
    let printed = if json {
        crate::print_json(&outcome)
    } else {
        print_human(&outcome)
    };
    if let Err(e) = printed {
        if e.kind() != std::io::ErrorKind::BrokenPipe {
            eprintln!("hotswap: cannot write the summary: {e}");
        }
    }
    status
}

fn error(input: &Path, message: String) -> (Outcome, u8) {
    (
        Outcome::new(input, None, "error", Some(message), Vec::new()),
        exit::BAD_INPUT,
    )
}

/// The rewrite and its exit status.
pub fn rewrite_file(input: &Path, output: &Path, options: Options) -> (Outcome, u8) {
    let bytes = match std::fs::read(input) {
        Ok(b) => b,
        Err(e) => return error(input, format!("cannot read {}: {e}", input.display())),
    };
    let same_file = match (std::fs::canonicalize(input), std::fs::canonicalize(output)) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    };
    if same_file {
        return error(input, "the output must not be the input".into());
    }
    let mut objects = Vec::new();
    let out_bytes: Option<Vec<u8>>;
    if bytes.starts_with(BUNDLE_MAGIC) {
        let contents = container::find(&bytes);
        if let Some(e) = contents.errors.first() {
            return error(input, format!("unreadable offload bundle: {e}"));
        }
        let mut out = bytes.clone();
        let mut refused = false;
        let mut any = false;
        for found in &contents.objects {
            let gfx1250 = isa::processor(&found.bytes) == Ok("gfx1250");
            let (Kind::Bundle, Some(offset), true) = (found.kind, found.offset, gfx1250) else {
                objects.push(ObjectOutcome::empty(
                    found.bundle_id.clone(),
                    isa::isa_name(&found.bytes).ok(),
                    "skipped",
                ));
                continue;
            };
            any = true;
            let (o, rewritten) = one(&found.bytes, &options, found.bundle_id.clone());
            match rewritten {
                // Same size by construction; checked so that a layout is never broken.
                Some(r) if r.len() == found.bytes.len() => {
                    let start = offset as usize;
                    out[start..start + r.len()].copy_from_slice(&r);
                }
                Some(_) => {
                    objects.push(o);
                    let message = "a gfx1250 entry grew (code moved for the DS two-address \
                                   split): an offload bundle is not re-assembled; rewrite the \
                                   extracted object (hotswap inspect --extract)";
                    return (
                        Outcome::new(input, None, "error", Some(message.into()), objects),
                        exit::BAD_INPUT,
                    );
                }
                None => refused = true,
            }
            objects.push(o);
        }
        if !any {
            return refuse(input, objects, "the bundle has no gfx1250 entry".into());
        }
        if refused {
            return refuse(input, objects, "a gfx1250 entry was refused".into());
        }
        out_bytes = Some(out);
    } else if bytes.starts_with(CCOB_MAGIC) {
        return error(
            input,
            "a compressed offload bundle: decompress it first (clang-offload-bundler --unbundle, \
             or rebuild without --offload-compress)"
                .into(),
        );
    } else {
        match Header::parse(&bytes) {
            Ok(h) if h.machine == EM_AMDGPU => {}
            Ok(_) => {
                return error(
                    input,
                    "a host binary: extract its .hip_fatbin bundle first (hotswap rewrites code \
                     objects and uncompressed offload bundles)"
                        .into(),
                )
            }
            Err(e) => {
                return error(
                    input,
                    format!("not a code object or offload bundle: {}", e.reason()),
                )
            }
        }
        let (o, rewritten) = one(&bytes, &options, None);
        let not_code_object = o
            .refusal
            .as_ref()
            .is_some_and(|r| r.kind == "not_code_object");
        objects.push(o);
        match rewritten {
            Some(r) => out_bytes = Some(r),
            None if not_code_object => {
                let message = objects[0].refusal.as_ref().map(|r| r.message.clone());
                let outcome = Outcome::new(input, None, "error", message, objects);
                return (outcome, exit::BAD_INPUT);
            }
            None => {
                let message = objects[0].refusal.as_ref().map(|r| r.message.clone());
                return refuse(input, objects, message.unwrap_or_default());
            }
        }
    }
    let Some(out) = out_bytes else {
        return error(input, "nothing to write".into());
    };
    if let Err(e) = write_atomically(output, &out) {
        let message = format!("cannot write {}: {e}", output.display());
        return (
            Outcome::new(input, None, "error", Some(message), objects),
            exit::BAD_INPUT,
        );
    }
    let partial = objects.iter().any(|o| !o.remaining.is_empty());
    (
        Outcome::new(
            input,
            Some(output.display().to_string()),
            if partial { "partial" } else { "complete" },
            None,
            objects,
        ),
        if partial { exit::PARTIAL } else { exit::OK },
    )
}

fn refuse(input: &Path, objects: Vec<ObjectOutcome>, message: String) -> (Outcome, u8) {
    (
        Outcome::new(input, None, "refused", Some(message), objects),
        exit::REFUSED,
    )
}

/// Writes `bytes` to a temporary file next to `path`, then renames it over
/// `path`: a reader never sees a partial output.
fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .map_or("out".into(), |n| n.to_string_lossy().into_owned());
    let tmp = dir.join(format!(".{name}.hotswap-{}", std::process::id()));
    let result = (|| {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

/// The human summary.
fn print_human(o: &Outcome) -> std::io::Result<()> {
    let stdout = std::io::stdout();
    let mut w = std::io::BufWriter::new(stdout.lock());
    for c in &o.code_objects {
        writeln!(
            w,
            "{}{}: {}",
            c.bundle_id
                .as_deref()
                .map_or(String::new(), |b| format!("{b}: ")),
            c.isa.as_deref().unwrap_or("(no AMDGPU ISA)"),
            c.result
        )?;
        for s in &c.sites {
            if let Some(d) = s.definition_vaddr {
                writeln!(
                    w,
                    "  fixed      {} ({}) in {} at {:#x}: its mask's definition at {:#x} changed \
                     in place ({})",
                    s.class, s.mnemonic, s.function, s.original_vaddr, d, s.fix
                )?;
            } else if s.fix == "same-size" && s.new_vaddr == s.original_vaddr {
                writeln!(
                    w,
                    "  fixed      {} ({}) in {} at {:#x}",
                    s.class, s.mnemonic, s.function, s.original_vaddr
                )?;
            } else {
                writeln!(
                    w,
                    "  fixed      {} ({}) in {} at {:#x} -> {:#x} ({} bytes, {})",
                    s.class,
                    s.mnemonic,
                    s.function,
                    s.original_vaddr,
                    s.new_vaddr,
                    s.new_len,
                    s.fix
                )?;
            }
            for t in &s.scratch {
                writeln!(
                    w,
                    "             scratch {} {}{}..{} ({})",
                    t.class,
                    &t.class[..1],
                    t.first,
                    u32::from(t.first) + u32::from(t.count) - 1,
                    t.tier
                )?;
            }
            if let Some(n) = s.note {
                writeln!(w, "             note: {n}")?;
            }
        }
        for r in &c.register_counts {
            writeln!(
                w,
                "  counts     kernel {}: {} count {} -> {}{}",
                r.kernel,
                r.class,
                r.old_count,
                r.new_count,
                r.occupancy.map_or(String::new(), |(a, b)| format!(
                    " (waves per SIMD {a} -> {b})"
                ))
            )?;
        }
        for m in &c.moved_functions {
            writeln!(
                w,
                "  moved      {} {:#x} ({} bytes) -> {:#x} ({} bytes) as {}",
                m.name, m.original_vaddr, m.original_size, m.new_vaddr, m.new_size, m.symbol
            )?;
        }
        for i in &c.islands {
            writeln!(
                w,
                "  island     s_branch at {:#x} -> {:#x} in {} (a branch out of reach after the splits)",
                i.vaddr, i.target, i.function
            )?;
        }
        for g in &c.gateways {
            let through = if g.registers.is_empty() {
                String::new()
            } else {
                format!(" through {}", g.registers)
            };
            writeln!(
                w,
                "  gateway    {} old entry {:#x} -> {:#x} ({}{through}, {} bytes)",
                g.function, g.old_entry, g.new_entry, g.kind, g.len
            )?;
        }
        for x in &c.relocations {
            writeln!(
                w,
                "  relocation {} at {:#x} -> {:#x} (was {:#x}, in {})",
                x.kind, x.offset, x.new_target, x.old_target, x.function
            )?;
        }
        if !c.kept.is_empty() {
            writeln!(
                w,
                "  kept       {} s_clause (left as they are: the default clause policy)",
                c.kept.len()
            )?;
        }
        for s in &c.remaining {
            match &s.reason {
                None => writeln!(
                    w,
                    "  REMAINS    {} ({}) in {} at {:#x}: needs code growth",
                    s.class, s.mnemonic, s.function, s.offset
                )?,
                Some(why) => writeln!(
                    w,
                    "  REMAINS    {} ({}) in {} at {:#x}: growth refused: {why}",
                    s.class, s.mnemonic, s.function, s.offset
                )?,
            }
        }
        if let Some(r) = &c.refusal {
            writeln!(w, "  refused ({}): {}", r.kind, r.message)?;
            for s in &r.sites {
                writeln!(
                    w,
                    "    needs growth: {} ({}) in {} at {:#x}",
                    s.class, s.mnemonic, s.function, s.offset
                )?;
            }
        }
        if let Some(r) = &c.retag {
            writeln!(w, "  metadata: {r}")?;
        }
    }
    match o.status {
        "complete" => writeln!(
            w,
            "complete: {} written",
            o.output.as_deref().unwrap_or_default()
        )?,
        "partial" => writeln!(
            w,
            "PARTIAL: {} written; growth sites remain (A0 may still fault on them)",
            o.output.as_deref().unwrap_or_default()
        )?,
        "refused" => writeln!(
            w,
            "refused: {}; nothing written",
            o.message.as_deref().unwrap_or_default()
        )?,
        _ => writeln!(w, "error: {}", o.message.as_deref().unwrap_or_default())?,
    }
    w.flush()
}

/// The options from the command line.
pub fn options(allow_partial: bool, replace_clauses: bool) -> Options {
    Options {
        allow_partial,
        clauses: if replace_clauses {
            ClausePolicy::ReplaceWithNop
        } else {
            ClausePolicy::Keep
        },
    }
}
