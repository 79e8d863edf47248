//! `hotswap cache warm PATH...`: pretranslation. Every gfx1250 code object in
//! the files and directories (recursively; symbolic links are not followed) —
//! bare objects, offload bundles and compressed bundles, also inside a host
//! ELF's `.hip_fatbin` (the container reader `hotswap inspect` uses) — is
//! rewritten through the backend the tool would pick on this machine (or
//! `--backend`) and stored in the cache (or `--into DIR`) under the key a
//! later load on an A0 GPU computes, through the tool's own cache code
//! ([`hsa_hotswap::cli_api::Pretranslator`]). Objects run in parallel over
//! the cores; a progress bar counts files on a terminal. A second run finds
//! every answer in the cache and rewrites nothing.
//!
//! The tool's identity (part of every key) is that of the tool library loads
//! will use: `--tool LIB`, else the `libhsa-hotswap.so` that `HSA_TOOLS_LIB`
//! names by path, else the one installed next to this command. It must be of
//! this command's build (installed together): the native rewriter that warms
//! is this command's copy.
//!
//! JSON (`--json`):
//!
//! ```text
//! {"entries_dir", "backend", "tool_library", "files": N, "objects": N,
//!  "candidates": N, "not_candidates": N, "rewritten": N, "unchanged": N,
//!  "refused": N, "unsupported": N, "failed": N, "rewriter_calls": N,
//!  "already_cached": N, "input_bytes": N, "output_bytes": N, "seconds": F,
//!  "refusals": [{"file", "bundle_id", "reason"}],
//!  "errors": [{"file", "error"}]}
//! ```
//! `objects`: every code object found (what `hotswap inspect` lists);
//! `candidates`: those a load on a gfx1250 A0 GPU rewrites; `rewritten`,
//! `unchanged`, `refused`, `unsupported`: their answers (`rewriter_calls` of
//! them made now, `already_cached` found); `input_bytes`: the candidates'
//! size; `output_bytes`: the rewritten objects' size.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;

use hotswap_code_object::container::{self, BUNDLE_MAGIC, CCOB_MAGIC};
use hsa_hotswap::cli_api::{
    adopt_tool_identity, is_hotswap_library, parse_tool_names, Config, Pretranslator, ToolNames,
    WarmAnswer, Warmed,
};
use serde::Serialize;

use crate::progress::Progress;

/// One refusal.
#[derive(Debug, Serialize)]
pub struct Refusal {
    file: String,
    bundle_id: Option<String>,
    reason: String,
}

/// A file or object that could not be read or rewritten.
#[derive(Debug, Serialize)]
pub struct Problem {
    file: String,
    error: String,
}

/// The summary.
#[derive(Debug, Default, Serialize)]
pub struct Summary {
    entries_dir: String,
    backend: String,
    tool_library: String,
    files: usize,
    /// Every code object found.
    pub objects: usize,
    /// Those a load on an A0 GPU rewrites.
    pub candidates: usize,
    not_candidates: usize,
    /// Answers: new bytes.
    pub rewritten: usize,
    unchanged: usize,
    refused: usize,
    unsupported: usize,
    failed: usize,
    /// Rewrites made by this run.
    pub rewriter_calls: usize,
    /// Answers found in the cache.
    pub already_cached: usize,
    input_bytes: u64,
    output_bytes: u64,
    seconds: f64,
    refusals: Vec<Refusal>,
    errors: Vec<Problem>,
}

/// The options of `warm`.
#[derive(Debug, Default)]
pub struct Options<'a> {
    /// `--backend`: `native` or a library's absolute path.
    pub backend: Option<&'a str>,
    /// `--tool`: the tool library whose keys to compute.
    pub tool: Option<&'a Path>,
    /// `--into`: a store directory instead of the cache.
    pub into: Option<&'a Path>,
    /// `--from`: export from a store directory instead of the cache.
    pub from: Option<&'a Path>,
    /// `--jobs`: worker threads (default: the cores).
    pub jobs: Option<usize>,
}

/// The tool library loads will use: `HSA_TOOLS_LIB`'s entry naming it by
/// absolute path, else the one installed next to this command.
pub(crate) fn tool_library(config: &Config) -> Option<PathBuf> {
    if let Some(ToolNames::Returned(names)) = config.tools_lib.as_deref().map(parse_tool_names) {
        for name in names {
            if is_hotswap_library(&name) && name.starts_with(b"/") {
                return Some(PathBuf::from(String::from_utf8_lossy(&name).into_owned()));
            }
        }
    }
    crate::doctor::loader::installed_with_cli().map(PathBuf::from)
}

/// Every regular file under `paths` (directories recursively, in name order;
/// symbolic links are not followed).
fn walk(paths: &[PathBuf], errors: &mut Vec<Problem>) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut stack: Vec<PathBuf> = paths.iter().rev().cloned().collect();
    while let Some(path) = stack.pop() {
        match std::fs::symlink_metadata(&path) {
            Ok(m) if m.is_file() => files.push(path),
            Ok(m) if m.is_dir() => match std::fs::read_dir(&path) {
                Ok(entries) => {
                    let mut children: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
                    children.sort();
                    stack.extend(children.into_iter().rev());
                }
                Err(e) => errors.push(Problem {
                    file: path.display().to_string(),
                    error: e.to_string(),
                }),
            },
            Ok(_) => {} // a symbolic link, a device, a socket
            Err(e) => errors.push(Problem {
                file: path.display().to_string(),
                error: e.to_string(),
            }),
        }
    }
    files
}

/// Whether the file may hold code objects (an ELF, a bundle or a compressed
/// bundle), from its first bytes: other files are not read whole.
fn may_contain(path: &Path) -> std::io::Result<bool> {
    use std::io::Read;
    let mut head = [0u8; 24];
    let mut file = std::fs::File::open(path)?;
    let mut got = 0;
    while got < head.len() {
        match file.read(&mut head[got..])? {
            0 => break,
            n => got += n,
        }
    }
    let head = &head[..got];
    Ok(head.starts_with(b"\x7fELF")
        || head.starts_with(BUNDLE_MAGIC)
        || head.starts_with(CCOB_MAGIC))
}

/// Runs the warm of `paths` with `options`; the summary, or why nothing could
/// be warmed.
pub fn warm(paths: &[PathBuf], options: &Options<'_>) -> Result<Summary, String> {
    let start = Instant::now();
    let config = Config::from_env();
    let tool = match options.tool {
        Some(t) => t.to_path_buf(),
        None => tool_library(&config).ok_or(
            "no tool library found (HSA_TOOLS_LIB names none by path, none is installed next \
             to this command): name it with --tool",
        )?,
    };
    adopt_tool_identity(&tool.display().to_string())?;
    let warmer = Pretranslator::new(&config, options.backend, options.into)?;
    let mut summary = Summary {
        entries_dir: warmer.entries_dir().display().to_string(),
        backend: warmer.backend().to_owned(),
        tool_library: tool.display().to_string(),
        ..Summary::default()
    };
    let files = walk(paths, &mut summary.errors);
    summary.files = files.len();
    let workers = options
        .jobs
        .or_else(|| std::thread::available_parallelism().ok().map(usize::from))
        .unwrap_or(1)
        .max(1);
    let progress = Progress::new("files", files.len());
    let summary = Mutex::new(summary);
    let record =
        |f: &dyn Fn(&mut Summary)| f(&mut summary.lock().unwrap_or_else(|e| e.into_inner()));
    for path in &files {
        let name = path.display().to_string();
        let bytes = match may_contain(path).and_then(|may| {
            if may {
                std::fs::read(path).map(Some)
            } else {
                Ok(None)
            }
        }) {
            Ok(Some(bytes)) => bytes,
            Ok(None) => {
                progress.tick();
                continue;
            }
            Err(e) => {
                record(&|s| {
                    s.errors.push(Problem {
                        file: name.clone(),
                        error: e.to_string(),
                    })
                });
                progress.tick();
                continue;
            }
        };
        let contents = container::find(&bytes);
        let objects = contents.objects;
        record(&|s| s.objects += objects.len());
        let next = AtomicUsize::new(0);
        std::thread::scope(|scope| {
            for _ in 0..workers.min(objects.len()) {
                scope.spawn(|| loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(object) = objects.get(i) else {
                        break;
                    };
                    let warmed = warmer.warm(&object.bytes);
                    record(&|s| {
                        tally(
                            s,
                            &name,
                            object.bundle_id.as_deref(),
                            &object.bytes,
                            &warmed,
                        )
                    });
                });
            }
        });
        progress.tick();
    }
    progress.finish();
    let mut summary = summary.into_inner().unwrap_or_else(|e| e.into_inner());
    summary.seconds = start.elapsed().as_secs_f64();
    Ok(summary)
}

fn tally(s: &mut Summary, file: &str, bundle_id: Option<&str>, input: &[u8], warmed: &Warmed) {
    let (answer, already) = match warmed {
        Warmed::NotCandidate(_) => {
            s.not_candidates += 1;
            return;
        }
        Warmed::Failed(why) => {
            s.candidates += 1;
            s.failed += 1;
            s.input_bytes += input.len() as u64;
            s.errors.push(Problem {
                file: format!(
                    "{file}{}",
                    bundle_id.map_or(String::new(), |b| format!(" ({b})"))
                ),
                error: why.clone(),
            });
            return;
        }
        Warmed::Answered { answer, already } => (answer, *already),
    };
    s.candidates += 1;
    s.input_bytes += input.len() as u64;
    if already {
        s.already_cached += 1;
    } else {
        s.rewriter_calls += 1;
    }
    match answer {
        WarmAnswer::Rewritten(size) => {
            s.rewritten += 1;
            s.output_bytes += *size as u64;
        }
        WarmAnswer::Unchanged => s.unchanged += 1,
        WarmAnswer::Refused(reason) => {
            s.refused += 1;
            s.refusals.push(Refusal {
                file: file.to_owned(),
                bundle_id: bundle_id.map(str::to_owned),
                reason: reason.clone(),
            });
        }
        WarmAnswer::Unsupported => s.unsupported += 1,
    }
}

/// Writes the human summary.
pub fn print_human(o: &mut dyn std::io::Write, s: &Summary) -> std::io::Result<()> {
    writeln!(o, "warmed {} (backend: {})", s.entries_dir, s.backend)?;
    writeln!(o, "  tool library: {}", s.tool_library)?;
    writeln!(
        o,
        "  {} files, {} code objects, {} for gfx1250 A0 ({} bytes)",
        s.files, s.objects, s.candidates, s.input_bytes
    )?;
    writeln!(
        o,
        "  {} rewritten ({} bytes), {} unchanged, {} refused, {} unsupported, {} failed",
        s.rewritten, s.output_bytes, s.unchanged, s.refused, s.unsupported, s.failed
    )?;
    writeln!(
        o,
        "  {} rewrites made now, {} answers already cached; {:.2} s",
        s.rewriter_calls, s.already_cached, s.seconds
    )?;
    for r in &s.refusals {
        let id = r
            .bundle_id
            .as_deref()
            .map_or(String::new(), |b| format!(" ({b})"));
        writeln!(o, "  refused: {}{id}: {}", r.file, r.reason)?;
    }
    for e in &s.errors {
        writeln!(o, "  error: {}: {}", e.file, e.error)?;
    }
    Ok(())
}

/// `hotswap rewrite --cache IN -o OUT`.
#[derive(Debug, Serialize)]
pub struct CachedRewrite {
    input: String,
    output: Option<String>,
    /// `rewritten`, `unchanged`, `refused`, `unsupported` or `error`.
    status: &'static str,
    message: Option<String>,
    /// The answer was in the cache (no rewrite made).
    cached: bool,
    entries_dir: Option<String>,
}

/// `hotswap rewrite --cache`: the answer for one bare code object through
/// the tool's cache and the backend the tool would pick (or `backend`), as
/// `warm` stores it; the output written when rewritten (the input copied
/// when unchanged). Exit statuses as `rewrite`'s.
pub fn rewrite_cached(input: &Path, output: &Path, backend: Option<&str>) -> (CachedRewrite, u8) {
    let mut r = CachedRewrite {
        input: input.display().to_string(),
        output: None,
        status: "error",
        message: None,
        cached: false,
        entries_dir: None,
    };
    let fail = |mut r: CachedRewrite, why: String| {
        r.message = Some(why);
        (r, crate::exit::BAD_INPUT)
    };
    let config = Config::from_env();
    let Some(tool) = tool_library(&config) else {
        return fail(r, "no tool library found (HSA_TOOLS_LIB names none by path, none is installed next to this command)".into());
    };
    if let Err(why) = adopt_tool_identity(&tool.display().to_string()) {
        return fail(r, why);
    }
    let warmer = match Pretranslator::new(&config, backend, None) {
        Ok(w) => w,
        Err(why) => return fail(r, why),
    };
    r.entries_dir = Some(warmer.entries_dir().display().to_string());
    let bytes = match std::fs::read(input) {
        Ok(b) => b,
        Err(e) => return fail(r, format!("cannot read {}: {e}", input.display())),
    };
    let (warmed, new) = warmer.answer(&bytes);
    let (answer, already) = match warmed {
        Warmed::Answered { answer, already } => (answer, already),
        Warmed::NotCandidate(why) | Warmed::Failed(why) => return fail(r, why),
    };
    r.cached = already;
    let (status, code, write): (&'static str, u8, Option<&[u8]>) = match &answer {
        WarmAnswer::Rewritten(_) => ("rewritten", crate::exit::OK, new.as_deref()),
        WarmAnswer::Unchanged => ("unchanged", crate::exit::OK, Some(&bytes[..])),
        WarmAnswer::Refused(why) => {
            r.message = Some(why.clone());
            ("refused", crate::exit::REFUSED, None)
        }
        WarmAnswer::Unsupported => ("unsupported", crate::exit::REFUSED, None),
    };
    r.status = status;
    if let Some(out) = write {
        if let Err(e) = std::fs::write(output, out) {
            r.status = "error";
            return fail(r, format!("cannot write {}: {e}", output.display()));
        }
        r.output = Some(output.display().to_string());
    }
    (r, code)
}

/// The human line of `rewrite --cache`.
pub fn print_cached(r: &CachedRewrite) -> std::io::Result<()> {
    use std::io::Write;
    let mut o = std::io::stdout().lock();
    let whence = if r.cached {
        "found in the cache"
    } else {
        "rewritten and stored"
    };
    match (&r.output, &r.message) {
        (Some(out), _) => writeln!(o, "{}: {} ({whence}) -> {out}", r.input, r.status)?,
        (None, Some(why)) => writeln!(o, "{}: {}: {why}", r.input, r.status)?,
        (None, None) => writeln!(o, "{}: {}", r.input, r.status)?,
    }
    if let Some(dir) = &r.entries_dir {
        writeln!(o, "  cache: {dir}")?;
    }
    Ok(())
}
