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
//!     "fixed": [SITE], "kept": [SITE], "remaining": [SITE], "retag": "..." | null}]}
//! SITE: {"function": "k", "offset": 6400, "class": "cluster_load", "mnemonic": "cluster_load_b32"}
//! ```

use std::io::Write;
use std::path::Path;

use hotswap_code_object::container::{self, Kind, BUNDLE_MAGIC, CCOB_MAGIC};
use hotswap_code_object::elf::Header;
use hotswap_code_object::rewrite::{self, ClausePolicy, Options, Retag, RewriteError, SiteInfo};
use hotswap_code_object::{isa, EM_AMDGPU};
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
}

fn sites(list: &[SiteInfo]) -> Vec<SiteOut> {
    list.iter()
        .map(|s| SiteOut {
            function: s.function.to_string(),
            offset: s.vaddr,
            class: s.class.as_str(),
            mnemonic: s.mnemonic,
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
    let isa_name = isa::isa_name(bytes).ok();
    let mut o = ObjectOutcome {
        bundle_id,
        isa: isa_name,
        result: "refused",
        refusal: None,
        fixed: Vec::new(),
        kept: Vec::new(),
        remaining: Vec::new(),
        retag: None,
    };
    match rewrite::rewrite_b0_to_a0(bytes, options) {
        Ok(r) => {
            o.result = if r.bytes == bytes {
                "unchanged"
            } else {
                "rewritten"
            };
            o.fixed = sites(&r.report.fixed);
            o.kept = sites(&r.report.kept);
            o.remaining = sites(&r.report.remaining);
            o.retag = r.report.retag.map(retag_text);
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
        Outcome {
            input: input.display().to_string(),
            output: None,
            status: "error",
            message: Some(message),
            code_objects: Vec::new(),
        },
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
                objects.push(ObjectOutcome {
                    bundle_id: found.bundle_id.clone(),
                    isa: isa::isa_name(&found.bytes).ok(),
                    result: "skipped",
                    refusal: None,
                    fixed: Vec::new(),
                    kept: Vec::new(),
                    remaining: Vec::new(),
                    retag: None,
                });
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
                    return error(
                        input,
                        "a rewritten entry changed size: not re-assembled".into(),
                    )
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
                let (mut outcome, status) = error(input, message.unwrap_or_default());
                outcome.code_objects = objects;
                return (outcome, status);
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
        let (mut outcome, status) = error(input, format!("cannot write {}: {e}", output.display()));
        outcome.code_objects = objects;
        return (outcome, status);
    }
    let partial = objects.iter().any(|o| !o.remaining.is_empty());
    (
        Outcome {
            input: input.display().to_string(),
            output: Some(output.display().to_string()),
            status: if partial { "partial" } else { "complete" },
            message: None,
            code_objects: objects,
        },
        if partial { exit::PARTIAL } else { exit::OK },
    )
}

fn refuse(input: &Path, objects: Vec<ObjectOutcome>, message: String) -> (Outcome, u8) {
    (
        Outcome {
            input: input.display().to_string(),
            output: None,
            status: "refused",
            message: Some(message),
            code_objects: objects,
        },
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
        for s in &c.fixed {
            writeln!(
                w,
                "  fixed      {} ({}) in {} at {:#x}",
                s.class, s.mnemonic, s.function, s.offset
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
            writeln!(
                w,
                "  REMAINS    {} ({}) in {} at {:#x}: needs code growth",
                s.class, s.mnemonic, s.function, s.offset
            )?;
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
