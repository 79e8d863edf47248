//! `hotswap doctor`: what would happen if an application started now, from
//! the files and the environment of this process, without initialising ROCr:
//!
//! - the GPUs of the KFD topology (sysfs) and which are rewrite candidates
//!   ([`topology`]);
//! - which ROCr (`libhsa-runtime64.so.1`) the loader finds and what that ROCr
//!   knows, read from the file: the `HSA_TOOLS_LIB` tool loader,
//!   rocprofiler-register (`DT_NEEDED`) and its v1-tool gate, its own hotswap
//!   hook and the variables deciding it, strict A0 reporting;
//! - `HSA_TOOLS_LIB` as ROCr parses it, and where `dlopen` from ROCr finds each
//!   entry ([`loader`]);
//! - this tool's variables, the COMGR it links, and every rewriter backend,
//!   usable or why not (loaded and probed exactly as the tool does);
//! - a verdict: what the tool would do, and every reason it would not.

pub mod gates;
mod inputs;
pub mod loader;
#[cfg(test)]
mod tests;
pub mod topology;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use hsa_hotswap::cli_api::{self, AgentTarget, BackendKind, Config, LoadConfig, ToolNames};
use hsa_hotswap::cli_api::{HOTSWAP_TOOL_LIBRARY_NAME, HSA_HOTSWAP_ENABLE, ROCR_HOOK_LIBRARY};
use serde::Serialize;

pub use gates::{GateReading, RegisterGate, Secure};
pub use inputs::Inputs;
use loader::{Dynamic, Located, Search};

/// ROCr's SONAME, what applications link.
pub const ROCR_SONAME: &str = "libhsa-runtime64.so.1";
/// The COMGR SONAME the CLI was built against (`HOTSWAP_COMGR_SONAME`, set by CMake).
const BUILD_COMGR_SONAME: Option<&str> = option_env!("HOTSWAP_COMGR_SONAME");
/// COMGR SONAMEs tried when neither the tool nor the build names one.
const COMGR_SONAMES: [&str; 2] = ["libamd_comgr.so.3", "libamd_comgr.so.2"];

/// Environment variables as seen now: name → value (`null` when unset).
pub type Variables = BTreeMap<&'static str, Option<String>>;

/// The whole report.
#[derive(Debug, Serialize)]
pub struct Report {
    /// The GPUs.
    pub gpus: Gpus,
    /// The ROCr an application would load.
    pub rocr: Rocr,
    /// `HSA_TOOLS_LIB` as ROCr reads it.
    pub tools_lib: ToolsLib,
    /// rocprofiler-register's gate on `HSA_TOOLS_LIB` tools.
    pub rocprofiler_register: RegisterGate,
    /// ROCr's own hotswap hook.
    pub rocr_hook: RocrHook,
    /// This tool.
    pub tool: Tool,
    /// The COMGR the tool links.
    pub comgr: Comgr,
    /// The rewriter backends.
    pub rewriters: Rewriters,
    /// The persistent rewrite cache.
    pub rewrite_cache: crate::cache::Report,
    /// What would happen, most decisive first.
    pub verdict: Vec<String>,
}

/// The KFD topology.
#[derive(Debug, Serialize)]
pub struct Gpus {
    /// The topology directory read.
    pub topology: String,
    /// Whether it exists.
    pub kfd: bool,
    /// Whether `/dev/kfd` exists (ROCr opens it).
    pub dev_kfd: bool,
    /// Variables that change what ROCr sees.
    pub variables: Variables,
    /// Every node, GPU or CPU.
    pub nodes: Vec<GpuNode>,
    /// Nodes whose properties could not be read.
    pub unreadable: Vec<String>,
    /// How many GPUs are rewrite candidates.
    pub rewrite_candidates: usize,
}

/// One topology node.
#[derive(Debug, Serialize)]
pub struct GpuNode {
    /// The node number.
    pub node: u32,
    /// `gpu` or `cpu`.
    pub kind: &'static str,
    /// The processor (`gfx1250`), GPUs only.
    pub gfx: Option<String>,
    /// `gfx_target_version` (after `HSA_OVERRIDE_GFX_VERSION`).
    pub gfx_target_version: u64,
    /// The ASIC revision (capability bits 25:22).
    pub asic_revision: u32,
    /// `A0` for a gfx1250 of revision 0, `B0 or later` for another revision.
    pub stepping: Option<&'static str>,
    /// The first ISA's processor ROCr reports (`gfx1250-strict` for an A0 with
    /// strict reporting on).
    pub rocr_reports: Option<String>,
    /// Some code object could be rewritten for it.
    pub rewrite_candidate: bool,
    /// The KFD `name` file.
    pub name: Option<String>,
}

/// What this ROCr is and knows.
#[derive(Debug, Serialize)]
pub struct Rocr {
    /// Where the loader finds `libhsa-runtime64.so.1` for an application.
    pub library: Option<Located>,
    /// The library's version suffix (`1.5.0`).
    pub version: Option<String>,
    /// Its `DT_NEEDED`.
    pub needed: Vec<String>,
    /// Its `DT_RUNPATH`.
    pub runpath: Vec<String>,
    /// Links rocprofiler-register (ROCm 6 and later).
    pub links_rocprofiler_register: bool,
    /// Names `HSA_TOOLS_ROCPROFILER_V1_TOOLS` (its gate on v1 tools).
    pub v1_tools_gate: bool,
    /// Names `libhsa-hotswap.so` (builds of mid-2026, rocm-systems #7629, exempted
    /// it from that gate by name; current `LoadTools` has no such exemption).
    pub names_this_tool: bool,
    /// Names `libhsa_hotswap_rocjitsu.so` (its own hotswap hook).
    pub knows_hotswap_hook: bool,
    /// Names `HSA_HOTSWAP_DISABLE`.
    pub reads_hotswap_disable: bool,
    /// Names `HSA_HOTSWAP_ENABLE` (the opt-in hook).
    pub reads_hotswap_enable: bool,
    /// Names `HSA_DISABLE_GFX12_STRICT` (strict A0 reporting).
    pub reads_gfx12_strict: bool,
}

/// `HSA_TOOLS_LIB`.
#[derive(Debug, Serialize)]
pub struct ToolsLib {
    /// The value (lossy UTF-8), `null` when unset.
    pub value: Option<String>,
    /// ROCr's parser never returns (a trailing lone `\`): `hsa_init` hangs.
    pub never_returns: bool,
    /// ROCr would `dlopen` an entry whose file name is `libhsa-hotswap.so`.
    pub names_hotswap: bool,
    /// Every entry ROCr returns, in order.
    pub entries: Vec<ToolEntry>,
    /// ROCr ignores `HSA_TOOLS_LIB` in `AT_SECURE` processes.
    pub secure: Secure,
}

/// One `HSA_TOOLS_LIB` entry.
#[derive(Debug, Serialize)]
pub struct ToolEntry {
    /// The name ROCr passes to `dlopen`.
    pub name: String,
    /// It is this tool.
    pub is_hotswap: bool,
    /// It is ROCr's hotswap hook.
    pub is_rocr_hook: bool,
    /// Where `dlopen` from ROCr finds it.
    pub found: Option<Located>,
}

/// ROCr's own hotswap hook.
#[derive(Debug, Serialize)]
pub struct RocrHook {
    /// This ROCr has the hook.
    pub known_to_rocr: bool,
    /// The deciding variables.
    pub variables: Variables,
    /// The variables leave the hook on.
    pub enabled_by_variables: bool,
    /// A gfx1250 A0 GPU is present (the hook loads only then).
    pub a0_gpu: bool,
    /// Where ROCr would find `libhsa_hotswap_rocjitsu.so`.
    pub library: Option<Located>,
    /// `HSA_TOOLS_LIB` names it.
    pub named_in_tools_lib: bool,
    /// It would be loaded (by ROCr or through `HSA_TOOLS_LIB`).
    pub would_load: bool,
    /// The gate this ROCr uses, as its strings tell (`HSA_HOTSWAP_DISABLE` or
    /// `HSA_HOTSWAP_ENABLE`); `null`: cannot tell, both readings below.
    pub gate: Option<&'static str>,
    /// Each gate that may apply, and whether it lets the hook in now (empty
    /// when this ROCr has no hook).
    pub readings: Vec<GateReading>,
    /// Why.
    pub explanation: String,
    /// What to set to keep it off and use this tool (`null`: it stays off).
    pub set: Option<String>,
}

/// This tool.
#[derive(Debug, Serialize)]
pub struct Tool {
    /// The library ROCr would load (from `HSA_TOOLS_LIB`), else where the
    /// loader would find `libhsa-hotswap.so` by name, else the one installed
    /// with this command.
    pub library: Option<Located>,
    /// `libhsa-hotswap.so` installed next to this command (`../lib*`).
    pub installed_with_cli: Option<String>,
    /// The tool's variables.
    pub variables: Variables,
    /// `HSA_HOTSWAP_DISABLE` without `HSA_HOTSWAP_TOOL_ENABLE`.
    pub disabled: bool,
    /// `AMD_COMGR_HOTSWAP_ENTRY_TRAMPOLINES`.
    pub entry_trampolines: bool,
    /// ROCr would load it.
    pub would_load: bool,
    /// It would rewrite code objects.
    pub would_rewrite: bool,
}

/// The COMGR the tool links.
#[derive(Debug, Serialize)]
pub struct Comgr {
    /// Its SONAME.
    pub soname: Option<String>,
    /// Where the SONAME comes from: `tool` (its `DT_NEEDED`), `build` (this
    /// command's build) or `default` (the first found of .so.3 and .so.2).
    pub soname_from: &'static str,
    /// Where the loader finds it.
    pub library: Option<Located>,
    /// Its version suffix.
    pub version: Option<String>,
}

/// The rewriter backends.
#[derive(Debug, Serialize)]
pub struct Rewriters {
    /// Each candidate in the tool's order.
    pub candidates: Vec<Candidate>,
    /// The first usable one: what the tool would use.
    pub selected: Option<String>,
}

/// One backend candidate.
#[derive(Debug, Serialize)]
pub struct Candidate {
    /// Its name.
    pub name: &'static str,
    /// What the backend is (the registry's summary), `null` when
    /// `HSA_HOTSWAP_REWRITER` names a library that is no usable backend.
    pub summary: Option<&'static str>,
    /// Usable.
    pub usable: bool,
    /// Its description when usable, else why not.
    pub detail: String,
}

/// Runs `hotswap doctor`.
pub fn run(json: bool) -> u8 {
    let report = diagnose(&|name| std::env::var_os(name).map(|v| v.to_string_lossy().into_owned()));
    let printed = if json {
        crate::print_json(&report)
    } else {
        print_human(&report)
    };
    match printed {
        Ok(()) => crate::exit::OK,
        Err(e) => {
            if e.kind() != std::io::ErrorKind::BrokenPipe {
                eprintln!("hotswap: cannot write the report: {e}");
            }
            crate::exit::BAD_INPUT
        }
    }
}

fn variables(env: &dyn Fn(&str) -> Option<String>, names: &[&'static str]) -> Variables {
    names.iter().map(|&n| (n, env(n))).collect()
}

/// True when `needle` occurs in `haystack`.
fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

/// The report for the environment `env` on this machine.
pub fn diagnose(env: &dyn Fn(&str) -> Option<String>) -> Report {
    diagnose_with(env, &Inputs::system())
}

/// The report for the environment `env` and the files of `inputs`.
pub fn diagnose_with(env: &dyn Fn(&str) -> Option<String>, inputs: &Inputs) -> Report {
    // The process's snapshot (rewriter, cache) and OnLoad's (switch, opt-in).
    let config = Config::from_lookup(env);
    let load = LoadConfig::from_lookup(env);
    let cache = &inputs.ld_so_cache;
    let ld_library_path = env("LD_LIBRARY_PATH");
    let app_search = Search {
        ld_library_path: ld_library_path.as_deref(),
        cache,
        ..Search::default()
    };

    // --- ROCr ---------------------------------------------------------------
    let rocr_library = loader::search(ROCR_SONAME, &app_search);
    let rocr_path = rocr_library.as_ref().map(|l| PathBuf::from(&l.path));
    let rocr_dynamic = rocr_path.as_deref().and_then(loader::dynamic);
    let rocr_bytes = rocr_library
        .as_ref()
        .and_then(|l| std::fs::read(&l.real_path).ok())
        .unwrap_or_default();
    let knows = |s: &str| contains(&rocr_bytes, s.as_bytes());
    let rocr = Rocr {
        version: rocr_library
            .as_ref()
            .and_then(|l| loader::version_suffix(&l.real_path)),
        needed: rocr_dynamic
            .as_ref()
            .map(|d| d.needed.clone())
            .unwrap_or_default(),
        runpath: rocr_dynamic
            .as_ref()
            .map(|d| d.runpath.clone())
            .unwrap_or_default(),
        links_rocprofiler_register: rocr_dynamic.as_ref().is_some_and(|d| {
            d.needed
                .iter()
                .any(|n| n.starts_with("librocprofiler-register"))
        }),
        v1_tools_gate: knows("HSA_TOOLS_ROCPROFILER_V1_TOOLS"),
        names_this_tool: knows(HOTSWAP_TOOL_LIBRARY_NAME),
        knows_hotswap_hook: knows(ROCR_HOOK_LIBRARY),
        reads_hotswap_disable: knows(cli_api::HSA_HOTSWAP_DISABLE),
        reads_hotswap_enable: knows("HSA_HOTSWAP_ENABLE"),
        reads_gfx12_strict: knows("HSA_DISABLE_GFX12_STRICT"),
        library: rocr_library,
    };
    // dlopen from ROCr: its RUNPATH, LD_LIBRARY_PATH, the cache.
    let rocr_search = Search {
        caller: rocr_path.as_deref(),
        caller_dynamic: rocr_dynamic.as_ref(),
        ..app_search.clone()
    };

    // --- GPUs -----------------------------------------------------------------
    let gpus = gpus(env, &load, &rocr, &inputs.root);
    let a0_gpu = gpus
        .nodes
        .iter()
        .any(|n| n.gfx.as_deref() == Some("gfx1250") && n.asic_revision == 0 && n.kind == "gpu");

    // --- HSA_TOOLS_LIB ------------------------------------------------------------
    let raw = config.tools_lib.clone();
    let (names, never_returns) = match raw.as_deref().map(cli_api::parse_tool_names) {
        None => (Vec::new(), false),
        Some(ToolNames::Returned(names)) => (names, false),
        Some(ToolNames::NeverReturns { completed }) => (completed, true),
    };
    let entries: Vec<ToolEntry> = names
        .iter()
        .map(|n| {
            let name = String::from_utf8_lossy(n).into_owned();
            ToolEntry {
                is_hotswap: cli_api::is_hotswap_library(n),
                is_rocr_hook: name.rsplit('/').next() == Some(ROCR_HOOK_LIBRARY),
                found: loader::search(&name, &rocr_search),
                name,
            }
        })
        .collect();
    let tools_lib = ToolsLib {
        value: raw
            .as_deref()
            .map(|v| String::from_utf8_lossy(v).into_owned()),
        never_returns,
        names_hotswap: raw.as_deref().is_some_and(cli_api::names_hotswap),
        entries,
        secure: gates::secure_process(),
    };

    // --- rocprofiler-register ---------------------------------------------------------
    let rocprofiler_register = gates::register_gate(env, &rocr);

    // --- ROCr's hook -----------------------------------------------------------------------
    let strict_named_a0 = gpus
        .nodes
        .iter()
        .any(|n| n.rocr_reports.as_deref() == Some("gfx1250-strict"));
    let rocr_hook = rocr_hook(
        env,
        &rocr,
        &rocr_search,
        &tools_lib,
        &rocprofiler_register,
        a0_gpu,
        strict_named_a0,
    );

    // --- the tool ---------------------------------------------------------------------------
    let installed_with_cli = loader::installed_with_cli();
    let named_entry = tools_lib
        .entries
        .iter()
        .find(|e| e.is_hotswap && e.found.is_some())
        .and_then(|e| e.found.clone());
    let library = named_entry
        .clone()
        .or_else(|| loader::search(HOTSWAP_TOOL_LIBRARY_NAME, &rocr_search))
        .or_else(|| {
            installed_with_cli.as_ref().map(|p| Located {
                path: p.clone(),
                real_path: p.clone(),
                found_by: loader::FoundBy::Path,
            })
        });
    let tool_dynamic = library
        .as_ref()
        .and_then(|l| loader::dynamic(Path::new(&l.path)));

    // --- COMGR and the rewriters -------------------------------------------------------------
    let comgr = comgr(tool_dynamic.as_ref(), library.as_ref(), &app_search);
    let candidates: Vec<Candidate> = cli_api::rewriter_candidates(&config)
        .into_iter()
        .map(|candidate| {
            let name = candidate.name;
            // Inside an application the tool looks for the translator next to the
            // ROCr loaded there; this process has no ROCr loaded, so look next to
            // the one the loader finds.
            let result = match (candidate.kind, candidate.result, &rocr.library) {
                (Some(BackendKind::Rocjitsu), Err(why), Some(l)) => rocjitsu_next_to(&l.real_path)
                    .unwrap_or_else(|| {
                        let dir = Path::new(&l.real_path).parent().unwrap_or(Path::new("/"));
                        Err(format!(
                            "{why}; none next to the ROCr found ({}) either",
                            dir.display()
                        ))
                    }),
                (_, result, _) => result,
            };
            Candidate {
                name,
                summary: candidate.kind.map(cli_api::backend_summary),
                usable: result.is_ok(),
                detail: result.unwrap_or_else(|why| why),
            }
        })
        .collect();
    let rewriters = Rewriters {
        selected: candidates
            .iter()
            .find(|c| c.usable)
            .map(|c| c.detail.clone()),
        candidates,
    };

    let would_load = tools_lib.names_hotswap
        && named_entry.is_some()
        && gpus.kfd
        && gpus.dev_kfd
        && rocr.library.is_some()
        && rocprofiler_register.tools_lib != "skipped";
    let disabled = load.tool_disabled();
    let tool = Tool {
        library,
        installed_with_cli,
        variables: variables(
            env,
            &[
                cli_api::HSA_HOTSWAP_DISABLE,
                cli_api::HSA_HOTSWAP_TOOL_ENABLE,
                cli_api::AMD_COMGR_HOTSWAP_ENTRY_TRAMPOLINES,
                cli_api::HSA_HOTSWAP_REWRITER,
                cli_api::HSA_HOTSWAP_NATIVE_ALLOW_PARTIAL,
                cli_api::HSA_HOTSWAP_LOG,
                cli_api::HSA_HOTSWAP_LOG_LEVEL,
                cli_api::HSA_HOTSWAP_VERBOSE,
                cli_api::HSA_HOTSWAP_CACHE,
                cli_api::HSA_HOTSWAP_CACHE_DIR,
                cli_api::HSA_HOTSWAP_CACHE_MAX,
                cli_api::HSA_HOTSWAP_CACHE_LOCK_TIMEOUT,
                cli_api::HSA_HOTSWAP_CACHE_STORE,
            ],
        ),
        disabled,
        entry_trampolines: load.entry_trampolines,
        would_load,
        would_rewrite: would_load
            && !disabled
            && !rocr_hook.would_load
            && gpus.rewrite_candidates > 0
            && rewriters.selected.is_some(),
    };
    let mut report = Report {
        gpus,
        rocr,
        tools_lib,
        rocprofiler_register,
        rocr_hook,
        tool,
        comgr,
        rewriters,
        rewrite_cache: crate::cache::report(&config),
        verdict: Vec::new(),
    };
    report.verdict = verdict(&report);
    report
}

/// The GPUs of the topology, as ROCr would report them.
fn gpus(env: &dyn Fn(&str) -> Option<String>, load: &LoadConfig, rocr: &Rocr, root: &Path) -> Gpus {
    let topology = topology::read(root);
    let override_value = env("HSA_OVERRIDE_GFX_VERSION");
    let overridden = topology::override_version(override_value.as_deref());
    let strict_on =
        rocr.reads_gfx12_strict && env("HSA_DISABLE_GFX12_STRICT").is_some_and(|v| v.trim() == "0");
    let nodes: Vec<GpuNode> = topology
        .nodes
        .iter()
        .map(|n| {
            if !n.is_gpu() {
                return GpuNode {
                    node: n.id,
                    kind: "cpu",
                    gfx: None,
                    gfx_target_version: 0,
                    asic_revision: 0,
                    stepping: None,
                    rocr_reports: None,
                    rewrite_candidate: false,
                    name: n.name.clone(),
                };
            }
            let version = overridden.unwrap_or(n.get("gfx_target_version"));
            let gfx = topology::gfx_name(version);
            let revision = n.asic_revision();
            let is_gfx1250 = gfx.as_deref() == Some("gfx1250");
            let reports = gfx.as_ref().map(|g| {
                if is_gfx1250 && revision == 0 && strict_on {
                    "gfx1250-strict".to_owned()
                } else {
                    g.clone()
                }
            });
            let candidate = reports.as_deref().is_some_and(|g| {
                cli_api::has_candidate(
                    AgentTarget {
                        gfx: g,
                        revision: Some(revision),
                    },
                    load.entry_trampolines,
                )
            });
            GpuNode {
                node: n.id,
                kind: "gpu",
                stepping: is_gfx1250.then_some(if revision == 0 { "A0" } else { "B0 or later" }),
                gfx,
                gfx_target_version: version,
                asic_revision: revision,
                rocr_reports: reports,
                rewrite_candidate: candidate,
                name: n.name.clone(),
            }
        })
        .collect();
    Gpus {
        topology: topology.directory.display().to_string(),
        kfd: topology.present,
        dev_kfd: topology::dev_kfd(root),
        variables: variables(
            env,
            &[
                "HSA_OVERRIDE_GFX_VERSION",
                "HSA_DISABLE_GFX12_STRICT",
                "ROCR_VISIBLE_DEVICES",
                "HIP_VISIBLE_DEVICES",
            ],
        ),
        rewrite_candidates: nodes.iter().filter(|n| n.rewrite_candidate).count(),
        nodes,
        unreadable: topology
            .unreadable
            .iter()
            .map(|(n, e)| format!("node {n}: {e}"))
            .collect(),
    }
}

/// ROCr's own hotswap hook (`Runtime::LoadHotswapTool`), predicted by
/// [`gates::predict_hook`].
fn rocr_hook(
    env: &dyn Fn(&str) -> Option<String>,
    rocr: &Rocr,
    rocr_search: &Search<'_>,
    tools_lib: &ToolsLib,
    register: &RegisterGate,
    a0_gpu: bool,
    strict_named_a0: bool,
) -> RocrHook {
    let vars = variables(env, &[cli_api::HSA_HOTSWAP_DISABLE, HSA_HOTSWAP_ENABLE]);
    // Next to ROCr, then the default search from ROCr.
    let library = rocr
        .library
        .as_ref()
        .and_then(|l| {
            let next_to = Path::new(&l.real_path).with_file_name(ROCR_HOOK_LIBRARY);
            loader::is_loadable(&next_to).then(|| Located {
                path: next_to.display().to_string(),
                real_path: std::fs::canonicalize(&next_to)
                    .unwrap_or_else(|_| next_to.clone())
                    .display()
                    .to_string(),
                found_by: loader::FoundBy::NextTo,
            })
        })
        .or_else(|| loader::search(ROCR_HOOK_LIBRARY, rocr_search));
    let named_in_tools_lib = tools_lib
        .entries
        .iter()
        .any(|e| e.is_rocr_hook && e.found.is_some());
    let facts = gates::HookFacts {
        known: rocr.knows_hotswap_hook,
        reads_disable: rocr.reads_hotswap_disable,
        reads_enable: rocr.reads_hotswap_enable,
        a0_gpu,
        strict_named_a0,
        library_found: library.is_some(),
        named_in_tools_lib,
        tools_lib_loads: register.tools_lib != "skipped",
    };
    let prediction = gates::predict_hook(env, &facts);
    RocrHook {
        known_to_rocr: rocr.knows_hotswap_hook,
        enabled_by_variables: gates::readings(env, prediction.gate)
            .iter()
            .any(|r| r.opens),
        readings: if rocr.knows_hotswap_hook {
            gates::readings(env, prediction.gate)
        } else {
            Vec::new()
        },
        variables: vars,
        a0_gpu,
        library,
        named_in_tools_lib,
        would_load: prediction.would_load,
        gate: prediction.gate.map(|g| g.variable()),
        explanation: prediction.explanation,
        set: prediction.set,
    }
}

/// The rocjitsu translator next to ROCr (`rocr` is ROCr's real path), vetted
/// as the tool vets it; `None` when there is no such file.
fn rocjitsu_next_to(rocr: &str) -> Option<Result<String, String>> {
    let path = Path::new(rocr).with_file_name(cli_api::ROCJITSU_SONAME);
    if !loader::is_loadable(&path) {
        return None;
    }
    let path = path.display().to_string();
    Some(cli_api::probe_rocjitsu(&path).map(|d| format!("{d} (next to ROCr)")))
}

/// The COMGR the tool links: its `DT_NEEDED`, else this build's, else the default names.
fn comgr(tool: Option<&Dynamic>, tool_library: Option<&Located>, app: &Search<'_>) -> Comgr {
    let from_tool = tool.and_then(|d| {
        d.needed
            .iter()
            .find(|n| n.starts_with("libamd_comgr"))
            .cloned()
    });
    let tool_path = tool_library.map(|l| PathBuf::from(&l.path));
    let search = Search {
        caller: tool_path.as_deref(),
        caller_dynamic: tool,
        ..app.clone()
    };
    let (soname, from) = match (from_tool, BUILD_COMGR_SONAME.filter(|s| !s.is_empty())) {
        (Some(s), _) => (Some(s), "tool"),
        (None, Some(s)) => (Some(s.to_owned()), "build"),
        (None, None) => (
            COMGR_SONAMES
                .iter()
                .find(|n| loader::search(n, &search).is_some())
                .map(|n| n.to_string()),
            "default",
        ),
    };
    let library = soname.as_deref().and_then(|s| loader::search(s, &search));
    Comgr {
        version: library
            .as_ref()
            .and_then(|l| loader::version_suffix(&l.real_path)),
        soname,
        soname_from: from,
        library,
    }
}

/// The verdict, most decisive first.
fn verdict(r: &Report) -> Vec<String> {
    let mut v = Vec::new();
    if r.rocr.library.is_none() {
        v.push(format!(
            "no {ROCR_SONAME} is found: HIP and HSA applications cannot start"
        ));
    }
    if !r.gpus.kfd {
        v.push(format!(
            "no KFD topology ({}): the amdgpu kernel driver is not loaded; hsa_init fails before loading any tool",
            r.gpus.topology
        ));
    } else if !r.gpus.dev_kfd {
        v.push("/dev/kfd is missing: hsa_init fails before loading any tool".to_owned());
    }
    let t = &r.tools_lib;
    if t.never_returns {
        v.push(
            "HSA_TOOLS_LIB ends in a lone '\\': ROCr's parser never returns, hsa_init hangs"
                .to_owned(),
        );
    } else if t.value.is_none() {
        let how = match &r.tool.library {
            None => format!(
                "HSA_TOOLS_LIB=/path/to/{HOTSWAP_TOOL_LIBRARY_NAME} (the loader does not find it by name)"
            ),
            Some(l) if l.found_by == loader::FoundBy::Path => format!("HSA_TOOLS_LIB={}", l.path),
            Some(_) => format!("HSA_TOOLS_LIB={HOTSWAP_TOOL_LIBRARY_NAME}"),
        };
        v.push(format!(
            "HSA_TOOLS_LIB is unset: ROCr loads no tool; to load this one, {how}"
        ));
    } else if !t.names_hotswap {
        v.push(
            "HSA_TOOLS_LIB does not name libhsa-hotswap.so: ROCr does not load this tool"
                .to_owned(),
        );
    } else if !t.entries.iter().any(|e| e.is_hotswap && e.found.is_some()) {
        v.push("HSA_TOOLS_LIB names libhsa-hotswap.so but the loader does not find it: dlopen fails (ROCr: \"Tool lib ... failed to load\")".to_owned());
    }
    if r.rocprofiler_register.tools_lib != "loaded" && t.names_hotswap {
        v.push(r.rocprofiler_register.explanation.clone());
    }
    if t.names_hotswap {
        v.push(t.secure.explanation.clone());
    }
    if r.tool.disabled {
        v.push(
            "HSA_HOTSWAP_DISABLE is true (without HSA_HOTSWAP_TOOL_ENABLE): OnLoad patches nothing"
                .to_owned(),
        );
    }
    if r.rocr_hook.would_load {
        v.push(format!(
            "{}: this tool rewrites nothing (never two hotswap tools); to use this tool instead, set {}",
            r.rocr_hook.explanation,
            r.rocr_hook.set.as_deref().unwrap_or("nothing")
        ));
    }
    if r.gpus.rewrite_candidates == 0 {
        v.push(
            "no GPU is a rewrite candidate (a gfx1250 of ASIC revision 0, A0): the tool leaves ROCr's table at its first \
             hook call and the application runs as without it"
                .to_owned(),
        );
    }
    match &r.rewriters.selected {
        Some(s) => v.push(format!("the tool would rewrite with: {s}")),
        None => v.push(
            "no rewriter backend is usable: on an A0 GPU the tool would load every original code object (and warn once)"
                .to_owned(),
        ),
    }
    if r.tool.would_rewrite {
        v.insert(
            0,
            format!(
                "B0 code objects are rewritten for the {} A0 GPU(s)",
                r.gpus.rewrite_candidates
            ),
        );
    }
    v
}

fn located(l: &Option<Located>) -> String {
    match l {
        None => "not found".to_owned(),
        Some(l) if l.path == l.real_path => format!("{} ({})", l.path, l.found_by.describe()),
        Some(l) => format!("{} -> {} ({})", l.path, l.real_path, l.found_by.describe()),
    }
}

fn shown_vars(vars: &Variables) -> String {
    vars.iter()
        .map(|(n, v)| match v {
            Some(v) => format!("{n}={v:?}"),
            None => format!("{n} unset"),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

fn yes(b: bool) -> &'static str {
    if b {
        "yes"
    } else {
        "no"
    }
}

/// The human report.
fn print_human(r: &Report) -> std::io::Result<()> {
    use std::io::Write;
    let stdout = std::io::stdout();
    let mut o = std::io::BufWriter::new(stdout.lock());
    writeln!(
        o,
        "hotswap doctor: what happens if an application starts now"
    )?;

    writeln!(o, "\nGPUs (KFD topology {})", r.gpus.topology)?;
    if !r.gpus.kfd {
        writeln!(o, "  no KFD topology: no AMD GPU driver (amdgpu) is loaded")?;
    }
    for n in &r.gpus.nodes {
        match n.kind {
            "cpu" => writeln!(o, "  node {}: CPU", n.node)?,
            _ => writeln!(
                o,
                "  node {}: {} (gfx_target_version {}), ASIC revision {}{}{}; {}",
                n.node,
                n.gfx.as_deref().unwrap_or("unknown GPU"),
                n.gfx_target_version,
                n.asic_revision,
                n.stepping.map_or(String::new(), |s| format!(" ({s})")),
                match (&n.rocr_reports, &n.gfx) {
                    (Some(rep), Some(g)) if rep != g => format!(", ROCr reports {rep}"),
                    _ => String::new(),
                },
                if n.rewrite_candidate {
                    "rewrite candidate"
                } else {
                    "not a rewrite candidate"
                }
            )?,
        }
    }
    for u in &r.gpus.unreadable {
        writeln!(o, "  unreadable: {u}")?;
    }
    writeln!(o, "  {}", shown_vars(&r.gpus.variables))?;

    writeln!(o, "\nROCr")?;
    writeln!(o, "  {ROCR_SONAME}: {}", located(&r.rocr.library))?;
    if r.rocr.library.is_some() {
        writeln!(
            o,
            "  rocprofiler-register: {}; v1-tool gate: {}; own hotswap hook: {}; strict A0 reporting: {}",
            if r.rocr.links_rocprofiler_register { "linked" } else { "not linked" },
            yes(r.rocr.v1_tools_gate),
            yes(r.rocr.knows_hotswap_hook),
            yes(r.rocr.reads_gfx12_strict)
        )?;
    }

    writeln!(o, "\nHSA_TOOLS_LIB (ROCr's parser)")?;
    match &r.tools_lib.value {
        None => writeln!(o, "  unset")?,
        Some(v) => writeln!(o, "  value {v:?}")?,
    }
    if r.tools_lib.never_returns {
        writeln!(
            o,
            "  ROCr's parser never returns on this value (trailing lone '\\')"
        )?;
    }
    for e in &r.tools_lib.entries {
        writeln!(
            o,
            "  entry {:?}{}: {}",
            e.name,
            if e.is_hotswap {
                " (this tool)"
            } else if e.is_rocr_hook {
                " (ROCr's hotswap hook)"
            } else {
                ""
            },
            located(&e.found)
        )?;
    }

    writeln!(o, "  {}", r.tools_lib.secure.explanation)?;

    writeln!(o, "\nrocprofiler-register (gate on HSA_TOOLS_LIB tools)")?;
    writeln!(o, "  {}", r.rocprofiler_register.explanation)?;
    if let Some(set) = &r.rocprofiler_register.set {
        writeln!(o, "  to load HSA_TOOLS_LIB tools either way: {set}")?;
    }
    writeln!(o, "  {}", shown_vars(&r.rocprofiler_register.variables))?;

    writeln!(o, "\nROCr's own hotswap hook ({ROCR_HOOK_LIBRARY})")?;
    writeln!(o, "  {}", r.rocr_hook.explanation)?;
    for g in &r.rocr_hook.readings {
        writeln!(
            o,
            "  {} gate: {}",
            g.variable,
            if g.opens {
                "lets it in"
            } else {
                "keeps it off"
            }
        )?;
    }
    if let Some(set) = &r.rocr_hook.set {
        writeln!(o, "  to use this tool instead: {set}")?;
    }
    writeln!(o, "  library: {}", located(&r.rocr_hook.library))?;
    writeln!(o, "  {}", shown_vars(&r.rocr_hook.variables))?;

    writeln!(o, "\nThis tool ({HOTSWAP_TOOL_LIBRARY_NAME})")?;
    writeln!(o, "  library: {}", located(&r.tool.library))?;
    if let Some(p) = &r.tool.installed_with_cli {
        writeln!(o, "  installed with this command: {p}")?;
    }
    writeln!(o, "  {}", shown_vars(&r.tool.variables))?;
    writeln!(
        o,
        "  ROCr would load it: {}; enabled: {}; would rewrite: {}",
        yes(r.tool.would_load),
        yes(!r.tool.disabled),
        yes(r.tool.would_rewrite)
    )?;

    writeln!(o, "\nCOMGR")?;
    writeln!(
        o,
        "  {} (SONAME from {}): {}",
        r.comgr.soname.as_deref().unwrap_or("no COMGR"),
        r.comgr.soname_from,
        located(&r.comgr.library)
    )?;

    writeln!(o, "\nRewriter backends (in the tool's order)")?;
    for c in &r.rewriters.candidates {
        writeln!(
            o,
            "  {}: {}: {}",
            c.name,
            if c.usable { "usable" } else { "not usable" },
            c.detail
        )?;
    }
    writeln!(
        o,
        "  the tool would use: {}",
        r.rewriters.selected.as_deref().unwrap_or("none")
    )?;

    writeln!(o, "\nRewrite cache")?;
    crate::cache::print_section(&mut o, &r.rewrite_cache)?;

    writeln!(o, "\nVerdict")?;
    for line in &r.verdict {
        writeln!(o, "  - {line}")?;
    }
    o.flush()
}
