//! `hotswap doctor` on faked inputs: a KFD topology under a scratch root, an
//! empty loader cache, an environment given as a map, and fake libraries (an
//! x86-64 ELF header followed by the strings the doctor looks for), through
//! [`diagnose_with`]; the JSON keys scripts rely on; findings (the verdict)
//! from reports changed field by field.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::gates::register_gate;
use super::{diagnose_with, verdict, Inputs, Report};

/// A scratch directory, removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Self {
        let dir =
            std::env::temp_dir().join(format!("hotswap-doctor-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Self(dir)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

const CPU: (u64, u32, u64) = (0, 0, 0);

/// A fake machine under `root`: `nodes` as (gfx_target_version, ASIC revision,
/// SIMD count; 0 SIMDs is a CPU node), and `/dev/kfd` when `dev_kfd`.
fn machine(root: &Path, nodes: &[(u64, u32, u64)], dev_kfd: bool) {
    let topology = root.join("sys/class/kfd/kfd/topology/nodes");
    std::fs::create_dir_all(&topology).unwrap();
    for (i, &(version, revision, simds)) in nodes.iter().enumerate() {
        let dir = topology.join(i.to_string());
        std::fs::create_dir_all(&dir).unwrap();
        let cpu_cores = if simds == 0 { 16 } else { 0 };
        // Unrelated capability bits (doorbell type, watch points) around the revision field.
        let capability = if simds == 0 {
            0
        } else {
            0x2800_2400 | u64::from(revision) << 22
        };
        std::fs::write(
            dir.join("properties"),
            format!(
                "cpu_cores_count {cpu_cores}\nsimd_count {simds}\ngfx_target_version {version}\n\
                 capability {capability}\nvendor_id 4098\n"
            ),
        )
        .unwrap();
    }
    if dev_kfd {
        std::fs::create_dir_all(root.join("dev")).unwrap();
        std::fs::write(root.join("dev/kfd"), "").unwrap();
    }
}

/// A file the doctor's loader takes for an x86-64 shared library, holding `strings`.
fn fake_library(path: &Path, strings: &[&str]) {
    let mut bytes = vec![0u8; 64];
    bytes[..6].copy_from_slice(b"\x7fELF\x02\x01");
    bytes[16] = 3; // ET_DYN
    bytes[18] = 62; // EM_X86_64
    for s in strings {
        bytes.extend_from_slice(s.as_bytes());
        bytes.push(0);
    }
    std::fs::write(path, bytes).unwrap();
}

fn diagnose_in(root: &Path, env: &[(&str, &str)]) -> Report {
    let env: BTreeMap<String, String> = env
        .iter()
        .map(|&(k, v)| (k.to_owned(), v.to_owned()))
        .collect();
    let inputs = Inputs {
        root: root.to_owned(),
        ld_so_cache: Vec::new(),
    };
    diagnose_with(&|name| env.get(name).cloned(), &inputs)
}

fn has(report: &Report, text: &str) -> bool {
    report.verdict.iter().any(|v| v.contains(text))
}

const A0: (u64, u32, u64) = (120500, 0, 256);
const B0: (u64, u32, u64) = (120500, 1, 256);
const GFX942: (u64, u32, u64) = (90402, 0, 304);

#[test]
fn json_keeps_the_keys_scripts_read() {
    let s = Scratch::new("keys");
    machine(&s.0, &[CPU, A0], true);
    let report = diagnose_in(&s.0, &[("HSA_TOOLS_LIB", "libfoo.so")]);
    let json = serde_json::to_value(&report).unwrap();
    let keys = |v: &Value, path: &str, expected: &[&str]| {
        let object = v
            .as_object()
            .unwrap_or_else(|| panic!("{path} is an object: {v}"));
        for k in expected {
            assert!(object.contains_key(*k), "{path}.{k} missing: {v}");
        }
    };
    keys(
        &json,
        "",
        &[
            "gpus",
            "rocr",
            "tools_lib",
            "rocprofiler_register",
            "rocr_hook",
            "tool",
            "comgr",
            "rewriters",
            "verdict",
        ],
    );
    keys(
        &json["gpus"],
        "gpus",
        &[
            "topology",
            "kfd",
            "dev_kfd",
            "variables",
            "nodes",
            "unreadable",
            "rewrite_candidates",
        ],
    );
    for node in json["gpus"]["nodes"].as_array().unwrap() {
        keys(
            node,
            "gpus.nodes[]",
            &[
                "node",
                "kind",
                "gfx",
                "gfx_target_version",
                "asic_revision",
                "stepping",
                "rocr_reports",
                "rewrite_candidate",
                "name",
            ],
        );
    }
    keys(
        &json["rocr"],
        "rocr",
        &[
            "library",
            "version",
            "needed",
            "runpath",
            "links_rocprofiler_register",
            "v1_tools_gate",
            "names_this_tool",
            "knows_hotswap_hook",
            "reads_hotswap_disable",
            "reads_hotswap_enable",
            "reads_gfx12_strict",
        ],
    );
    keys(
        &json["tools_lib"],
        "tools_lib",
        &["value", "never_returns", "names_hotswap", "entries"],
    );
    for entry in json["tools_lib"]["entries"].as_array().unwrap() {
        keys(
            entry,
            "tools_lib.entries[]",
            &["name", "is_hotswap", "is_rocr_hook", "found"],
        );
    }
    keys(
        &json["rocprofiler_register"],
        "rocprofiler_register",
        &["in_play", "variables", "tools_lib", "explanation"],
    );
    keys(
        &json["rocr_hook"],
        "rocr_hook",
        &[
            "known_to_rocr",
            "variables",
            "enabled_by_variables",
            "a0_gpu",
            "library",
            "named_in_tools_lib",
            "would_load",
            "explanation",
        ],
    );
    keys(
        &json["tool"],
        "tool",
        &[
            "library",
            "installed_with_cli",
            "variables",
            "disabled",
            "entry_trampolines",
            "would_load",
            "would_rewrite",
        ],
    );
    keys(
        &json["comgr"],
        "comgr",
        &["soname", "soname_from", "library", "version"],
    );
    keys(&json["rewriters"], "rewriters", &["candidates", "selected"]);
    let candidates = json["rewriters"]["candidates"].as_array().unwrap();
    assert!(!candidates.is_empty());
    for c in candidates {
        keys(c, "rewriters.candidates[]", &["name", "usable", "detail"]);
    }
    assert!(json["verdict"]
        .as_array()
        .unwrap()
        .iter()
        .all(Value::is_string));
    // Unset variables are null, set ones their value.
    assert_eq!(
        json["tool"]["variables"]["HSA_HOTSWAP_DISABLE"],
        Value::Null
    );
    assert_eq!(json["tools_lib"]["value"], "libfoo.so");
}

#[test]
fn only_a0_gfx1250_nodes_are_candidates() {
    let s = Scratch::new("nodes");
    machine(&s.0, &[CPU, A0, B0, GFX942], true);
    let r = diagnose_in(&s.0, &[]);
    let nodes: Vec<_> = r
        .gpus
        .nodes
        .iter()
        .map(|n| {
            (
                n.node,
                n.kind,
                n.gfx.as_deref(),
                n.asic_revision,
                n.stepping,
                n.rewrite_candidate,
            )
        })
        .collect();
    assert_eq!(
        nodes,
        [
            (0, "cpu", None, 0, None, false),
            (1, "gpu", Some("gfx1250"), 0, Some("A0"), true),
            (2, "gpu", Some("gfx1250"), 1, Some("B0 or later"), false),
            (3, "gpu", Some("gfx942"), 0, None, false),
        ]
    );
    assert_eq!(r.gpus.rewrite_candidates, 1);
    assert!(r.gpus.kfd && r.gpus.dev_kfd);
    assert!(!has(&r, "no GPU is a rewrite candidate"), "{:?}", r.verdict);

    let r = diagnose_in(&s.0, &[("AMD_COMGR_HOTSWAP_ENTRY_TRAMPOLINES", "1")]);
    assert_eq!(
        r.gpus.rewrite_candidates, 2,
        "entry trampolines: the B0 too"
    );
    assert!(r.tool.entry_trampolines);

    let r = diagnose_in(&s.0, &[("HSA_OVERRIDE_GFX_VERSION", "9.4.2")]);
    assert_eq!(
        r.gpus.rewrite_candidates, 0,
        "the override applies to every GPU"
    );
    assert!(has(&r, "no GPU is a rewrite candidate"), "{:?}", r.verdict);
}

#[test]
fn a_missing_driver_is_the_first_finding_after_rocr() {
    let s = Scratch::new("nokfd");
    let r = diagnose_in(&s.0, &[]);
    assert!(!r.gpus.kfd && r.gpus.nodes.is_empty());
    assert!(has(&r, "no KFD topology"), "{:?}", r.verdict);
    assert!(!r.tool.would_load);

    machine(&s.0, &[CPU, A0], false);
    let r = diagnose_in(&s.0, &[]);
    assert!(r.gpus.kfd && !r.gpus.dev_kfd);
    assert!(has(&r, "/dev/kfd is missing"), "{:?}", r.verdict);
    assert!(!has(&r, "no KFD topology"));
}

#[test]
fn hsa_tools_lib_findings() {
    let s = Scratch::new("toolslib");
    machine(&s.0, &[CPU, A0], true);
    let r = diagnose_in(&s.0, &[]);
    assert!(r.tools_lib.value.is_none() && r.tools_lib.entries.is_empty());
    assert!(
        has(&r, "HSA_TOOLS_LIB is unset: ROCr loads no tool"),
        "{:?}",
        r.verdict
    );

    let r = diagnose_in(&s.0, &[("HSA_TOOLS_LIB", "libhsa-hotswap.so \\")]);
    assert!(r.tools_lib.never_returns && !r.tools_lib.names_hotswap);
    assert!(has(&r, "never returns, hsa_init hangs"), "{:?}", r.verdict);

    let r = diagnose_in(&s.0, &[("HSA_TOOLS_LIB", "libfoo.so")]);
    assert!(
        has(&r, "does not name libhsa-hotswap.so"),
        "{:?}",
        r.verdict
    );

    let r = diagnose_in(&s.0, &[("HSA_TOOLS_LIB", "/nonexistent/libhsa-hotswap.so")]);
    assert!(r.tools_lib.names_hotswap && r.tools_lib.entries[0].found.is_none());
    assert!(has(&r, "the loader does not find it"), "{:?}", r.verdict);
    assert!(!r.tool.would_load && !r.tool.would_rewrite);

    // A tool library the loader finds through LD_LIBRARY_PATH.
    let lib_dir = s.0.join("lib");
    std::fs::create_dir_all(&lib_dir).unwrap();
    fake_library(&lib_dir.join("libhsa-hotswap.so"), &[]);
    let r = diagnose_in(
        &s.0,
        &[
            ("HSA_TOOLS_LIB", "x\"libhsa-hotswap.so\""),
            ("LD_LIBRARY_PATH", lib_dir.to_str().unwrap()),
        ],
    );
    let entry = &r.tools_lib.entries[0];
    assert_eq!(
        entry.name, "libhsa-hotswap.so",
        "the text before a quote is dropped"
    );
    assert!(entry.is_hotswap && entry.found.is_some());
    assert!(!has(&r, "the loader does not find it"), "{:?}", r.verdict);
}

#[test]
fn disable_and_tool_enable() {
    let s = Scratch::new("disable");
    machine(&s.0, &[CPU, A0], true);
    let r = diagnose_in(&s.0, &[("HSA_HOTSWAP_DISABLE", "1")]);
    assert!(r.tool.disabled && !r.tool.would_rewrite);
    assert!(has(&r, "HSA_HOTSWAP_DISABLE is true"), "{:?}", r.verdict);
    assert_eq!(
        r.tool.variables["HSA_HOTSWAP_DISABLE"].as_deref(),
        Some("1")
    );

    let r = diagnose_in(
        &s.0,
        &[
            ("HSA_HOTSWAP_DISABLE", "1"),
            ("HSA_HOTSWAP_TOOL_ENABLE", "1"),
        ],
    );
    assert!(!r.tool.disabled);
    assert!(!has(&r, "HSA_HOTSWAP_DISABLE is true"), "{:?}", r.verdict);
}

#[test]
fn rocr_hook_from_a_fake_rocr() {
    let s = Scratch::new("hook");
    machine(&s.0, &[CPU, A0], true);
    let lib_dir = s.0.join("rocm/lib");
    std::fs::create_dir_all(&lib_dir).unwrap();
    fake_library(
        &lib_dir.join("libhsa-runtime64.so.1"),
        &[
            "libhsa_hotswap_rocjitsu.so",
            "HSA_HOTSWAP_DISABLE",
            "HSA_TOOLS_ROCPROFILER_V1_TOOLS",
        ],
    );
    let path = lib_dir.to_str().unwrap();
    // ROCr knows its hook but the hook library is absent: it would fail hsa_init.
    let r = diagnose_in(&s.0, &[("LD_LIBRARY_PATH", path)]);
    assert!(r.rocr.library.is_some(), "the fake ROCr is found");
    assert!(r.rocr.knows_hotswap_hook && r.rocr.reads_hotswap_disable && r.rocr.v1_tools_gate);
    assert!(!r.rocr.reads_hotswap_enable && !r.rocr.names_this_tool);
    assert!(r.rocr_hook.a0_gpu && r.rocr_hook.enabled_by_variables);
    assert!(r.rocr_hook.library.is_none() && !r.rocr_hook.would_load);
    assert!(
        r.rocr_hook
            .explanation
            .contains("is not found: hsa_init fails"),
        "{}",
        r.rocr_hook.explanation
    );

    // With the hook next to ROCr, ROCr loads it and this tool rewrites nothing.
    fake_library(&lib_dir.join("libhsa_hotswap_rocjitsu.so"), &[]);
    let r = diagnose_in(&s.0, &[("LD_LIBRARY_PATH", path)]);
    assert!(r.rocr_hook.would_load, "{}", r.rocr_hook.explanation);
    assert!(has(&r, "never two hotswap tools"), "{:?}", r.verdict);
    assert!(!r.tool.would_rewrite);

    // HSA_HOTSWAP_DISABLE switches ROCr's hook off (and this tool, without TOOL_ENABLE).
    let r = diagnose_in(
        &s.0,
        &[("LD_LIBRARY_PATH", path), ("HSA_HOTSWAP_DISABLE", "1")],
    );
    assert!(!r.rocr_hook.enabled_by_variables && !r.rocr_hook.would_load);
    assert!(!has(&r, "never two hotswap tools"), "{:?}", r.verdict);

    // A B0 machine: the hook stays unloaded.
    let b0 = Scratch::new("hook-b0");
    machine(&b0.0, &[CPU, B0], true);
    let r = diagnose_in(&b0.0, &[("LD_LIBRARY_PATH", path)]);
    assert!(!r.rocr_hook.a0_gpu && !r.rocr_hook.would_load);
}

#[test]
fn rocprofiler_register_gate() {
    let s = Scratch::new("register");
    machine(&s.0, &[CPU, A0], true);
    let mut rocr = diagnose_in(&s.0, &[]).rocr;
    rocr.links_rocprofiler_register = false;
    let gate = |rocr: &super::Rocr, env: &[(&str, &str)]| {
        let env: BTreeMap<&str, &str> = env.iter().copied().collect();
        register_gate(&|n| env.get(n).map(|v| (*v).to_owned()), rocr)
    };
    let g = gate(&rocr, &[("ROCP_TOOL_LIBRARIES", "librocprofv3.so")]);
    assert_eq!((g.in_play, g.tools_lib), (false, "loaded"));

    rocr.links_rocprofiler_register = true;
    assert_eq!(gate(&rocr, &[]).tools_lib, "skipped-if-sdk-tool");
    let g = gate(&rocr, &[("ROCP_TOOL_LIBRARIES", "librocprofv3.so")]);
    assert_eq!((g.in_play, g.tools_lib), (true, "skipped"));
    let g = gate(&rocr, &[("ROCPROFILER_REGISTER_FORCE_LOAD", "1")]);
    assert_eq!(g.tools_lib, "skipped");
    let g = gate(
        &rocr,
        &[
            ("ROCP_TOOL_LIBRARIES", "librocprofv3.so"),
            ("HSA_TOOLS_ROCPROFILER_V1_TOOLS", "1"),
        ],
    );
    assert_eq!(g.tools_lib, "loaded");
    let g = gate(
        &rocr,
        &[
            ("ROCP_TOOL_LIBRARIES", "librocprofv3.so"),
            ("HSA_TOOLS_DISABLE_REGISTER", "true"),
        ],
    );
    assert_eq!((g.in_play, g.tools_lib), (false, "loaded"));
}

#[test]
fn verdict_follows_the_report() {
    let s = Scratch::new("verdict");
    machine(&s.0, &[CPU, A0], true);
    let mut r = diagnose_in(&s.0, &[("HSA_TOOLS_LIB", "libhsa-hotswap.so")]);
    r.tool.would_rewrite = true;
    let v = verdict(&r);
    assert!(
        v[0].starts_with("B0 code objects are rewritten for the 1 A0 GPU"),
        "{v:?}"
    );

    r.tool.would_rewrite = false;
    r.rewriters.selected = None;
    let v = verdict(&r);
    assert!(
        v.iter()
            .any(|l| l.starts_with("no rewriter backend is usable")),
        "{v:?}"
    );
    assert!(!v[0].starts_with("B0 code objects"), "{v:?}");

    r.rewriters.selected = Some("native rewriter".into());
    r.rocprofiler_register.tools_lib = "skipped";
    r.rocprofiler_register.explanation = "gate explanation".into();
    let v = verdict(&r);
    assert!(v.iter().any(|l| l == "gate explanation"), "{v:?}");
    assert!(
        v.iter()
            .any(|l| l == "the tool would rewrite with: native rewriter"),
        "{v:?}"
    );
}
