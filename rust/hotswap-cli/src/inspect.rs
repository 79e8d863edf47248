//! `hotswap inspect FILE...`: every code object found in the files and, for
//! gfx125x objects, every function with its A0 findings.
//!
//! JSON (`--json`), one document:
//!
//! ```text
//! {"code_objects": [{
//!    "file": "k.o", "bundle_id": "hipv4-amdgcn-amd-amdhsa--gfx1250" | null,
//!    "container": "bare" | "bundle" | "compressed-bundle", "in_host_elf": false,
//!    "isa": "amdgcn-amd-amdhsa--gfx1250" | null, "code_object_version": 5 | null,
//!    "size": 5432, "kernels": ["add_one"],
//!    "functions": [{"name": "add_one", "kind": "symbol" | "kernel-entry",
//!                   "offset": 6400, "size": 120, "instructions": 30,
//!                   "a0": {"cluster_load": 0, ..., "s_clause": 1, ...},
//!                   "sites": [{"offset": 6420, "length": 4, "class": "s_clause",
//!                              "mnemonic": "s_clause", "fix": "same-size",
//!                              "needs_change": true}]}],
//!    "complete": true, "unknown": [],
//!    "note": "..."}],
//!  "errors": [{"file": "x", "error": "..."}]}
//! ```
//!
//! An object `hotswap rewrite` grew (it carries the `.note.hotswap.moved`
//! marker) also has `"moved_functions": [{"name", "original_vaddr",
//! "original_size", "new_vaddr", "new_size"}]`, each moved function's original
//! copy in `functions` has `"moved_to": VADDR` and, when its entry jumps
//! there (a gateway), `"gateway": "s_branch" | "far-jump"`,
//! and `"pending_sites"` counts the A0 sites still needing a change outside
//! those original copies (`s_clause` kept by policy and the rewriter's own
//! tensor-mask fixes not counted): 0 when nothing reachable still needs a
//! change.
//!
//! Offsets are ELF virtual addresses. `functions`, `complete` and `unknown`
//! are present only for analysed (gfx125x) objects; `note` says why another
//! object was not analysed. `a0` lists every class, zero counts included.

use std::borrow::Cow;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use hotswap_code_object::container::{self, Found, Kind};
use hotswap_code_object::gfx1250::{self, A0Class, AnalyzeError, FunctionKind};
use hotswap_code_object::object::CodeObject as View;
use hotswap_code_object::{isa, rewrite};
use serde::ser::SerializeMap;
use serde::{Serialize, Serializer};

use crate::exit;
use crate::progress::Progress;

mod json;
mod sparse;
mod stream;

use stream::Stream;

/// The whole report.
#[derive(Debug, Default, Serialize)]
pub struct Report {
    /// Every code object found, in input order.
    pub code_objects: Vec<CodeObject>,
    /// What could not be read (a file, or a container inside it).
    pub errors: Vec<FileError>,
}

/// A file or container that could not be read.
#[derive(Debug, Serialize)]
pub struct FileError {
    /// The file, as given.
    pub file: String,
    /// Why.
    pub error: String,
}

/// One code object.
#[derive(Debug, Serialize)]
pub struct CodeObject {
    /// The file it was found in, as given.
    pub file: String,
    /// The offload-bundle entry id; `null` for a bare code object.
    pub bundle_id: Option<String>,
    /// `bare`, `bundle` or `compressed-bundle`.
    pub container: &'static str,
    /// Found in a host binary's `.hip_fatbin` section.
    pub in_host_elf: bool,
    /// The ISA name, as COMGR spells it; `null` when not an AMDGPU code object.
    pub isa: Option<String>,
    /// The code object version (4, 5, 6).
    pub code_object_version: Option<u8>,
    /// Size in bytes.
    pub size: u64,
    /// Kernel names (metadata note; else the kernel descriptor symbols).
    pub kernels: Vec<String>,
    /// The functions (gfx125x objects only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub functions: Option<Vec<Function>>,
    /// Every function walked to its end (gfx125x objects only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub complete: Option<bool>,
    /// Encodings that stopped a walk (gfx125x objects only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unknown: Option<Vec<Unknown>>,
    /// Why the object was not analysed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// Where `--extract` wrote the object.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub extracted: Option<String>,
    /// The functions `hotswap rewrite` moved (a grown object only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub moved_functions: Option<Vec<Moved>>,
    /// A0 sites needing a change outside the moved-away originals (a grown
    /// object only; `s_clause` not counted).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pending_sites: Option<usize>,
}

/// A function `hotswap rewrite` moved.
#[derive(Debug, Serialize)]
pub struct Moved {
    /// The name of the function at the original address.
    pub name: String,
    /// The original (no longer entered) copy.
    pub original_vaddr: u64,
    /// Its size.
    pub original_size: u64,
    /// The copy that runs.
    pub new_vaddr: u64,
    /// Its size.
    pub new_size: u64,
}

/// One function.
#[derive(Debug, Serialize)]
pub struct Function {
    /// Symbol name (the kernel's for a kernel entry).
    pub name: String,
    /// `symbol`: a defined `STT_FUNC` symbol; `kernel-entry`: a kernel entry
    /// no sized function symbol covers, walked to the next symbol.
    pub kind: &'static str,
    /// Virtual address of the first instruction.
    pub offset: u64,
    /// Size in bytes.
    pub size: u64,
    /// Instructions that start in `[offset, offset + size)`.
    pub instructions: u64,
    /// Site count per class, every class.
    pub a0: ClassCounts,
    /// The sites, in address order.
    pub sites: Vec<Site>,
    /// For a moved function's original copy: where the copy that runs is.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub moved_to: Option<u64>,
    /// For such a copy: how its entry jumps to the copy that runs
    /// (`s_branch` or `far-jump`), when it is a gateway to it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gateway: Option<&'static str>,
}

/// Site counts in [`A0Class::ALL`] order.
#[derive(Debug)]
pub struct ClassCounts(pub [usize; A0Class::ALL.len()]);

impl Serialize for ClassCounts {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.0.len()))?;
        for (class, count) in A0Class::ALL.iter().zip(self.0) {
            map.serialize_entry(class.as_str(), &count)?;
        }
        map.end()
    }
}

/// One A0 site.
#[derive(Debug, Serialize)]
pub struct Site {
    /// Virtual address of the instruction.
    pub offset: u64,
    /// Its length in bytes.
    pub length: u8,
    /// The class's stable name.
    pub class: &'static str,
    /// The instruction's mnemonic.
    pub mnemonic: &'static str,
    /// `same-size` or `growth`.
    pub fix: &'static str,
    /// False only for a same-size site already in its A0 form.
    pub needs_change: bool,
}

/// An encoding that stopped a walk.
#[derive(Debug, Serialize)]
pub struct Unknown {
    /// The function.
    pub function: String,
    /// Virtual address.
    pub offset: u64,
    /// Its first dword, when 4 bytes remain.
    pub first_dword: Option<u32>,
}

/// Runs `hotswap inspect`.
pub fn run(files: &[PathBuf], json: bool, show_sites: bool, extract: Option<&Path>) -> u8 {
    let stdout = || std::io::BufWriter::with_capacity(64 << 10, std::io::stdout());
    // On a terminal the progress bar draws on the same screen: the document
    // is printed after it, whole.
    let stream = json && extract.is_none() && !std::io::IsTerminal::is_terminal(&std::io::stdout());
    let (report, printed) = if stream {
        // Each code object is written as soon as it and those before it are described.
        let stream = Stream::new(stdout());
        let report = inspect_with(files, None, Some(&stream));
        let printed = stream
            .finish(report.code_objects.len(), &report.errors)
            .map(drop);
        (report, printed)
    } else {
        // --extract adds to the objects after they are described: printed after.
        let report = inspect_with(files, extract, None::<&Stream<Vec<u8>>>);
        let printed = if json {
            write_json(stdout(), &report).map(drop)
        } else {
            print_human(&report, show_sites)
        };
        (report, printed)
    };
    if let Err(e) = printed {
        if e.kind() != std::io::ErrorKind::BrokenPipe {
            eprintln!("hotswap: cannot write the report: {e}");
        }
        return exit::BAD_INPUT;
    }
    status(&report)
}

/// Writes the report to `out` as `crate::print_json` does, byte for byte, and
/// returns `out`.
fn write_json<W: std::io::Write>(out: W, report: &Report) -> std::io::Result<W> {
    let stream = Stream::new(out);
    for (i, object) in report.code_objects.iter().enumerate() {
        stream.put(i, object);
    }
    stream.finish(report.code_objects.len(), &report.errors)
}

/// The JSON document of `--json`, with its final newline (all of it in memory).
#[cfg(test)]
fn json_document(report: &Report) -> std::io::Result<Vec<u8>> {
    write_json(Vec::new(), report)
}

/// The exit status of a report: 0 when every input was read, else 1.
pub fn status(report: &Report) -> u8 {
    if report.errors.is_empty() {
        exit::OK
    } else {
        exit::BAD_INPUT
    }
}

/// Reads every file, finds its code objects and analyses them (on every
/// core); with `extract`, writes each object into that directory.
#[cfg(test)]
pub fn inspect(files: &[PathBuf], extract: Option<&Path>) -> Report {
    inspect_with(files, extract, None::<&Stream<Vec<u8>>>)
}

/// `inspect`; with `stream`, each worker also puts the code objects it
/// describes into the JSON document, while they are at hand.
fn inspect_with<W: std::io::Write + Send>(
    files: &[PathBuf],
    extract: Option<&Path>,
    stream: Option<&Stream<W>>,
) -> Report {
    let mut report = Report::default();
    let mut inputs: Vec<(usize, String, sparse::Input)> = Vec::with_capacity(files.len());
    // --extract writes every object whole; otherwise only what inspect reads.
    let reads = parallel_map(files, |path| {
        if extract.is_some() {
            std::fs::read(path).map(sparse::Input::whole)
        } else {
            sparse::read(path)
        }
    });
    for (i, (path, read)) in files.iter().zip(reads).enumerate() {
        let name = path.display().to_string();
        match read {
            Ok(input) => inputs.push((i, name, input)),
            Err(e) => report.errors.push(FileError {
                file: name,
                error: e.to_string(),
            }),
        }
    }
    let mut found: Vec<(&(usize, String, sparse::Input), Found<'_>)> = Vec::new();
    for input in &inputs {
        let (_, name, read) = input;
        let contents = container::find(&read.bytes);
        for e in contents.errors {
            report.errors.push(FileError {
                file: name.clone(),
                error: e.to_string(),
            });
        }
        found.extend(contents.objects.into_iter().map(|o| (input, o)));
    }
    // The largest entry left unread: the size of each worker's buffer.
    let largest = inputs
        .iter()
        .flat_map(|(_, _, read)| read.deferred.iter().map(|&(_, size)| size))
        .max()
        .unwrap_or(0);

    let progress = Progress::new("code objects", found.len());
    let next = AtomicUsize::new(0);
    let workers = std::thread::available_parallelism()
        .map_or(1, usize::from)
        .min(found.len().max(1));
    type Described = (usize, CodeObject, Option<FileError>);
    let done: Vec<Vec<Described>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..workers)
            .map(|_| {
                scope.spawn(|| {
                    let mut mine = Vec::new();
                    let mut scratch = sparse::Scratch::new(largest);
                    // The file of the last deferred object (objects come in file order).
                    let mut open: Option<(usize, std::io::Result<std::fs::File>)> = None;
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let Some(((index, file, input), object)) = found.get(i) else {
                            break;
                        };
                        let deferred = match (&object.bytes, object.offset) {
                            (Cow::Borrowed(b), Some(at)) if input.is_deferred(at, b.len()) => {
                                Some(at)
                            }
                            _ => None,
                        };
                        let (described, error) = match deferred {
                            None => (describe(file, object, &object.bytes), None),
                            Some(at) => {
                                if open.as_ref().is_some_and(|(f, _)| f != index) {
                                    open = None;
                                }
                                let (_, opened) = open.get_or_insert_with(|| {
                                    (*index, std::fs::File::open(&files[*index]))
                                });
                                let size = object.bytes.len();
                                let read = match opened {
                                    Ok(f) => scratch.object(f, at, size),
                                    Err(e) => Err(std::io::Error::new(e.kind(), e.to_string())),
                                };
                                match read {
                                    Ok(bytes) => (describe(file, object, bytes), None),
                                    // The file changed or cannot be read again:
                                    // the object as far as it reads, and the error.
                                    Err(e) => (
                                        describe(file, object, &vec![0; size]),
                                        Some(FileError {
                                            file: file.clone(),
                                            error: format!(
                                                "cannot read the code object at {at:#x}: {e}"
                                            ),
                                        }),
                                    ),
                                }
                            }
                        };
                        if let Some(stream) = stream {
                            stream.put(i, &described);
                        }
                        mine.push((i, described, error));
                        progress.tick();
                    }
                    mine
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("an inspect worker panicked"))
            .collect()
    });
    let mut results: Vec<Described> = done.into_iter().flatten().collect();
    progress.finish();
    results.sort_by_key(|&(i, _, _)| i);
    for (_, object, error) in results {
        report.code_objects.push(object);
        report.errors.extend(error);
    }
    // A fixed order of errors whatever the read order: by file as given.
    report
        .errors
        .sort_by_key(|e| files.iter().position(|f| f.display().to_string() == e.file));
    if let Some(dir) = extract {
        if let Err(e) = std::fs::create_dir_all(dir) {
            report.errors.push(FileError {
                file: dir.display().to_string(),
                error: format!("cannot create the extraction directory: {e}"),
            });
            return report;
        }
        for (i, (object, (_, found))) in report.code_objects.iter_mut().zip(&found).enumerate() {
            let path = dir.join(extracted_name(i, object));
            match std::fs::write(&path, &found.bytes) {
                Ok(()) => object.extracted = Some(path.display().to_string()),
                Err(e) => report.errors.push(FileError {
                    file: path.display().to_string(),
                    error: format!("cannot extract: {e}"),
                }),
            }
        }
    }
    report
}

/// `f` of every item, in order, computed on every core.
fn parallel_map<T: Sync, R: Send>(items: &[T], f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let next = AtomicUsize::new(0);
    let workers = std::thread::available_parallelism()
        .map_or(1, usize::from)
        .min(items.len().max(1));
    let mut results: Vec<(usize, R)> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..workers)
            .map(|_| {
                scope.spawn(|| {
                    let mut mine = Vec::new();
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let Some(item) = items.get(i) else {
                            break;
                        };
                        mine.push((i, f(item)));
                    }
                    mine
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().expect("an inspect worker panicked"))
            .collect()
    });
    results.sort_by_key(|&(i, _)| i);
    results.into_iter().map(|(_, r)| r).collect()
}

/// `<index>-<file name>-<processor>.co` for `--extract`.
fn extracted_name(index: usize, object: &CodeObject) -> String {
    let file = Path::new(&object.file)
        .file_name()
        .map_or("input".into(), |n| n.to_string_lossy().into_owned());
    let processor = object
        .isa
        .as_deref()
        .map_or("unknown", hotswap_code_object::isa_name::processor_of);
    let clean = |s: &str| -> String {
        s.chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '.' || c == '-' || c == '_' {
                    c
                } else {
                    '_'
                }
            })
            .collect()
    };
    format!("{index:04}-{}-{}.co", clean(&file), clean(processor))
}

/// Everything `inspect` says about one code object.
fn describe(file: &str, found: &Found<'_>, bytes: &[u8]) -> CodeObject {
    // One parse: the name, the metadata, the analysis and the moved-function
    // map read the same view.
    let view = View::parse(bytes);
    let header = view.as_ref().ok().map(|v| *v.header());
    let amdgpu = header.is_some_and(|h| isa::check_amdgpu_hsa(&h).is_ok());
    let isa_name = match &view {
        Ok(v) => hsa_hotswap::cli_api::isa_name(v),
        Err(e) => Err(e.clone()),
    };
    let mut object = CodeObject {
        file: file.to_owned(),
        bundle_id: found.bundle_id.clone(),
        container: match found.kind {
            Kind::Bare => "bare",
            Kind::Bundle => "bundle",
            Kind::CompressedBundle { .. } => "compressed-bundle",
        },
        in_host_elf: found.in_host_elf,
        isa: isa_name.as_ref().ok().cloned(),
        code_object_version: header
            .filter(|_| amdgpu)
            .map(|h| h.abi_version.saturating_add(2)),
        size: bytes.len() as u64,
        kernels: Vec::new(),
        functions: None,
        complete: None,
        unknown: None,
        note: None,
        extracted: None,
        moved_functions: None,
        pending_sites: None,
    };
    if let (true, Ok(view)) = (amdgpu, &view) {
        if let Ok(m) = view.metadata() {
            object.kernels = m
                .kernels
                .iter()
                .filter_map(|k| k.name.map(str::to_owned))
                .collect();
        }
    }
    let analysis = match &view {
        Ok(view) => gfx1250::analyze_object(view),
        Err(e) => Err(AnalyzeError::Isa(e.clone())),
    };
    match analysis {
        Ok(mut analysis) => {
            if object.kernels.is_empty() {
                object.kernels = std::mem::take(&mut analysis.kernels)
                    .into_iter()
                    .map(|k| k.name)
                    .collect();
            }
            object.complete = Some(analysis.is_complete());
            // Tensor loads whose mask SGPR's only reaching definition yields
            // a zero mask (the rewriter's definition-site form, by the same
            // proof): they need nothing.
            let cleared = view
                .as_ref()
                .map(|v| rewrite::mask_definition::cleared_sites(v, &analysis))
                .unwrap_or_default();
            if !cleared.is_empty() {
                for s in analysis
                    .functions
                    .iter_mut()
                    .flat_map(|f| f.sites.iter_mut())
                {
                    if cleared.binary_search(&s.vaddr).is_ok() {
                        s.needs_change = false;
                    }
                }
            }
            let map = view.as_ref().ok().and_then(rewrite::moved_functions_of);
            if let Some(map) = &map {
                let inside = |vaddr: u64| {
                    map.iter().any(|m| {
                        vaddr >= m.original_vaddr && vaddr - m.original_vaddr < m.original_size
                    })
                };
                // A tensor load right after its mask's clear in a moved
                // function's image is the rewriter's own fix.
                let bytes = view.as_ref().map_or(&[][..], |v| v.bytes());
                object.pending_sites = Some(
                    analysis
                        .functions
                        .iter()
                        .flat_map(|f| f.sites.iter().map(move |s| (f, s)))
                        .filter(|(_, s)| s.needs_change && s.class != A0Class::SClause)
                        .filter(|(_, s)| !inside(s.vaddr))
                        .filter(|(f, s)| {
                            s.class != A0Class::TensorLds
                                || !rewrite::own_tensor_mask_fix(bytes, f, s, map)
                        })
                        .count(),
                );
                object.moved_functions = Some(
                    map.iter()
                        .map(|m| Moved {
                            name: analysis
                                .functions
                                .iter()
                                .find(|f| f.vaddr == m.original_vaddr)
                                .map_or_else(String::new, |f| f.name.clone()),
                            original_vaddr: m.original_vaddr,
                            original_size: m.original_size,
                            new_vaddr: m.new_vaddr,
                            new_size: m.new_size,
                        })
                        .collect(),
                );
            }
            object.unknown = Some(
                analysis
                    .unknown
                    .into_iter()
                    .map(|u| Unknown {
                        function: u.function,
                        offset: u.vaddr,
                        first_dword: u.first_dword,
                    })
                    .collect(),
            );
            let mut functions: Vec<Function> =
                analysis.functions.into_iter().map(function).collect();
            if let Some(map) = &map {
                for f in &mut functions {
                    f.moved_to = map
                        .iter()
                        .find(|m| m.original_vaddr == f.offset && m.original_size == f.size)
                        .map(|m| m.new_vaddr);
                    f.gateway = f.moved_to.and_then(|to| {
                        let view = view.as_ref().ok()?;
                        let map = view.address_map();
                        let len = 20.min(f.size);
                        let code = map.bytes(view.bytes(), f.offset, len)?;
                        rewrite::read_gateway(f.offset, code)
                            .filter(|&(_, target)| target == to)
                            .map(|(kind, _)| kind.as_str())
                    });
                }
            }
            object.functions = Some(functions);
        }
        Err(AnalyzeError::NotGfx125(processor)) => {
            object.note = Some(format!("{processor} code object: only gfx125x is analysed"));
        }
        Err(AnalyzeError::Isa(e)) => {
            object.note = Some(match &isa_name {
                // The table lacks the processor but COMGR named it: not gfx125x.
                Ok(name) => format!("{name}: not analysed ({e})"),
                Err(_) => format!("not an analysable AMDGPU code object: {e}"),
            });
        }
    }
    object
}

fn function(f: gfx1250::Function) -> Function {
    let mut counts = [0usize; A0Class::ALL.len()];
    for site in &f.sites {
        if let Some(i) = A0Class::ALL.iter().position(|&c| c == site.class) {
            counts[i] += 1;
        }
    }
    Function {
        name: f.name,
        kind: match f.kind {
            FunctionKind::Symbol => "symbol",
            FunctionKind::KernelEntry => "kernel-entry",
        },
        offset: f.vaddr,
        size: f.size,
        instructions: f.instructions,
        a0: ClassCounts(counts),
        sites: f
            .sites
            .iter()
            .map(|s| Site {
                offset: s.vaddr,
                length: s.len,
                class: s.class.as_str(),
                mnemonic: s.mnemonic,
                fix: s.fix.as_str(),
                needs_change: s.needs_change,
            })
            .collect(),
        moved_to: None,
        gateway: None,
    }
}

/// The human report.
fn print_human(report: &Report, show_sites: bool) -> std::io::Result<()> {
    use std::io::Write;
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let mut current_file: Option<&str> = None;
    let (mut analysed, mut sites, mut growth) = (0usize, 0usize, 0usize);
    for object in &report.code_objects {
        if current_file != Some(&object.file) {
            writeln!(out, "{}", object.file)?;
            current_file = Some(&object.file);
        }
        let mut line = format!(
            "  {}{}  {} bytes",
            object
                .bundle_id
                .as_deref()
                .map_or(String::new(), |id| format!("{id}: ")),
            object.isa.as_deref().unwrap_or("(no AMDGPU ISA)"),
            object.size
        );
        if let Some(v) = object.code_object_version {
            line.push_str(&format!(", code object v{v}"));
        }
        if object.container == "compressed-bundle" {
            line.push_str(", compressed");
        }
        writeln!(out, "{line}")?;
        if !object.kernels.is_empty() {
            writeln!(
                out,
                "    kernels ({}): {}",
                object.kernels.len(),
                object.kernels.join(", ")
            )?;
        }
        if let Some(note) = &object.note {
            writeln!(out, "    {note}")?;
        }
        let Some(functions) = &object.functions else {
            continue;
        };
        analysed += 1;
        let width = functions
            .iter()
            .map(|f| f.name.len())
            .max()
            .unwrap_or(8)
            .clamp(8, 48);
        writeln!(
            out,
            "    {:<width$}  {:>10}  {:>8}  {:>7}  A0 sites",
            "function", "offset", "size", "insns"
        )?;
        for f in functions {
            let summary: Vec<String> = A0Class::ALL
                .iter()
                .zip(&f.a0.0)
                .filter(|(_, &n)| n > 0)
                .map(|(c, n)| format!("{c} {n}"))
                .collect();
            writeln!(
                out,
                "    {:<width$}  {:>#10x}  {:>8}  {:>7}  {}{}",
                f.name,
                f.offset,
                f.size,
                f.instructions,
                if summary.is_empty() {
                    "-".to_owned()
                } else {
                    summary.join(", ")
                },
                f.moved_to.map_or(String::new(), |to| match f.gateway {
                    Some(kind) =>
                        format!("  (moved to {to:#x}: its entry is a gateway there, {kind})"),
                    None => format!("  (moved to {to:#x}: this copy is no longer entered)"),
                })
            )?;
            for s in &f.sites {
                sites += 1;
                if s.fix == "growth" {
                    growth += 1;
                }
                if show_sites {
                    writeln!(
                        out,
                        "      {:#x}  {}  {} ({}{})",
                        s.offset,
                        s.mnemonic,
                        s.class,
                        s.fix,
                        if s.needs_change { "" } else { ", already A0" }
                    )?;
                }
            }
        }
        for m in object.moved_functions.iter().flatten() {
            writeln!(
                out,
                "    moved by hotswap rewrite: {} {:#x} ({} bytes) -> {:#x} ({} bytes)",
                m.name, m.original_vaddr, m.original_size, m.new_vaddr, m.new_size
            )?;
        }
        if let Some(n) = object.pending_sites {
            writeln!(
                out,
                "    {}",
                if n == 0 {
                    "rewritten for A0: nothing reachable still needs a change".to_owned()
                } else {
                    format!("{n} A0 site(s) outside the moved-away copies still need a change")
                }
            )?;
        }
        if object.complete == Some(false) {
            for u in object.unknown.iter().flatten() {
                writeln!(
                    out,
                    "    INCOMPLETE: {} stops at {:#x} (first dword {})",
                    u.function,
                    u.offset,
                    u.first_dword
                        .map_or("-".to_owned(), |w| format!("{w:#010x}"))
                )?;
            }
        }
    }
    for e in &report.errors {
        writeln!(out, "error: {}: {}", e.file, e.error)?;
    }
    writeln!(
        out,
        "{} code objects, {analysed} analysed (gfx125x); {sites} A0 sites, {} same-size, {growth} growth",
        report.code_objects.len(),
        sites - growth
    )?;
    out.flush()
}
