//! Unit tests of the command line: the clap definitions and each
//! subcommand's flags, the exit statuses `--help` lists, and the JSON keys of
//! `inspect --json` and `rewrite --json` that scripts rely on. The doctor's
//! findings are tested in `doctor/tests.rs`.

use std::path::{Path, PathBuf};

use clap::error::ErrorKind;
use clap::{CommandFactory, Parser};
use serde_json::Value;

use crate::{exit, inspect, parse_error_status, rewrite, Cli, Command, AFTER_HELP};

fn parse(args: &[&str]) -> Result<Command, clap::Error> {
    Cli::try_parse_from(std::iter::once("hotswap").chain(args.iter().copied())).map(|c| c.command)
}

fn parse_err(args: &[&str]) -> ErrorKind {
    parse(args).expect_err("must be refused").kind()
}

fn probe() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../hotswap-code-object/data/gfx1250-probe.co")
}

/// A scratch directory, removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Self {
        let dir = std::env::temp_dir().join(format!("hotswap-cli-{}-{name}", std::process::id()));
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

fn keys(v: &Value) -> Vec<&str> {
    let mut k: Vec<&str> = v
        .as_object()
        .unwrap_or_else(|| panic!("an object: {v}"))
        .keys()
        .map(String::as_str)
        .collect();
    k.sort_unstable();
    k
}

fn sorted<'a>(k: &[&'a str]) -> Vec<&'a str> {
    let mut k = k.to_vec();
    k.sort_unstable();
    k
}

// --- the clap definitions ----------------------------------------------------------

#[test]
fn clap_definitions_are_consistent() {
    Cli::command().debug_assert();
}

#[test]
fn inspect_flags() {
    match parse(&[
        "inspect",
        "a.co",
        "b.so",
        "--json",
        "--sites",
        "--extract",
        "out",
    ])
    .unwrap()
    {
        Command::Inspect {
            files,
            json,
            sites,
            extract,
        } => {
            assert_eq!(files, [PathBuf::from("a.co"), PathBuf::from("b.so")]);
            assert!(json && sites);
            assert_eq!(extract, Some(PathBuf::from("out")));
        }
        other => panic!("{other:?}"),
    }
    match parse(&["inspect", "a.co"]).unwrap() {
        Command::Inspect {
            json,
            sites,
            extract,
            ..
        } => assert!(!json && !sites && extract.is_none()),
        other => panic!("{other:?}"),
    }
    assert_eq!(parse_err(&["inspect"]), ErrorKind::MissingRequiredArgument);
    assert_eq!(
        parse_err(&["inspect", "--extract"]),
        ErrorKind::InvalidValue
    );
    assert_eq!(
        parse_err(&["inspect", "a.co", "--jsn"]),
        ErrorKind::UnknownArgument
    );
}

#[test]
fn rewrite_flags() {
    match parse(&["rewrite", "in.co", "-o", "out.co"]).unwrap() {
        Command::Rewrite {
            input,
            output,
            json,
            allow_partial,
            replace_clauses,
            cache,
            backend,
        } => {
            assert_eq!(
                (input, output),
                (PathBuf::from("in.co"), PathBuf::from("out.co"))
            );
            assert!(!json && !allow_partial && !replace_clauses && !cache && backend.is_none());
        }
        other => panic!("{other:?}"),
    }
    // --cache goes alone: the native options are the tool's, not the command's.
    match parse(&[
        "rewrite",
        "in.co",
        "-o",
        "o",
        "--cache",
        "--backend",
        "native",
    ])
    .unwrap()
    {
        Command::Rewrite { cache, backend, .. } => {
            assert!(cache && backend.as_deref() == Some("native"))
        }
        other => panic!("{other:?}"),
    }
    assert!(parse(&["rewrite", "in.co", "-o", "o", "--cache", "--allow-partial"]).is_err());
    assert!(parse(&["rewrite", "in.co", "-o", "o", "--backend", "native"]).is_err());
    match parse(&[
        "rewrite",
        "--output",
        "out.co",
        "in.co",
        "--json",
        "--allow-partial",
        "--replace-clauses",
    ])
    .unwrap()
    {
        Command::Rewrite {
            json,
            allow_partial,
            replace_clauses,
            ..
        } => assert!(json && allow_partial && replace_clauses),
        other => panic!("{other:?}"),
    }
    assert_eq!(
        parse_err(&["rewrite", "in.co"]),
        ErrorKind::MissingRequiredArgument
    );
    assert_eq!(
        parse_err(&["rewrite", "-o", "out.co"]),
        ErrorKind::MissingRequiredArgument
    );
    assert_eq!(
        parse_err(&["rewrite", "a", "b", "-o", "c"]),
        ErrorKind::UnknownArgument
    );
}

#[test]
fn doctor_and_man_page_flags() {
    assert!(matches!(
        parse(&["doctor"]).unwrap(),
        Command::Doctor { json: false }
    ));
    assert!(matches!(
        parse(&["doctor", "--json"]).unwrap(),
        Command::Doctor { json: true }
    ));
    assert_eq!(parse_err(&["doctor", "extra"]), ErrorKind::UnknownArgument);
    assert!(matches!(
        parse(&["man-page"]).unwrap(),
        Command::ManPage { output: None }
    ));
    match parse(&["man-page", "hotswap.1"]).unwrap() {
        Command::ManPage { output } => assert_eq!(output, Some(PathBuf::from("hotswap.1"))),
        other => panic!("{other:?}"),
    }
    // man-page is for the build, hidden from the help.
    let command = Cli::command();
    let visible: Vec<&str> = command
        .get_subcommands()
        .filter(|c| !c.is_hide_set())
        .map(|c| c.get_name())
        .collect();
    assert_eq!(visible, ["inspect", "rewrite", "doctor", "cache"]);
}

#[test]
fn usage_errors_exit_2_help_and_version_exit_0() {
    assert_eq!(
        parse_err(&[]),
        ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
    );
    for (args, status) in [
        (&["frobnicate"][..], exit::USAGE),
        (&["inspect"][..], exit::USAGE),
        (&["rewrite", "in.co"][..], exit::USAGE),
        (&["--help"][..], exit::OK),
        (&["inspect", "--help"][..], exit::OK),
        (&["--version"][..], exit::OK),
    ] {
        let e = parse(args).expect_err("not a command line");
        assert_eq!(parse_error_status(&e), status, "{args:?}: {e}");
    }
}

/// The statuses `--help` lists (and the README's "Command line" repeats) are
/// the constants the subcommands return.
#[test]
fn exit_statuses_match_the_help() {
    let listed: Vec<(u8, &str)> = AFTER_HELP
        .lines()
        .skip(1)
        .map(|l| {
            let l = l.trim_start();
            let (n, text) = l.split_once(' ').unwrap();
            (n.parse().unwrap(), text.trim())
        })
        .collect();
    let numbers: Vec<u8> = listed.iter().map(|&(n, _)| n).collect();
    assert_eq!(
        numbers,
        [
            exit::OK,
            exit::BAD_INPUT,
            exit::USAGE,
            exit::REFUSED,
            exit::PARTIAL
        ]
    );
    assert_eq!(numbers, [0, 1, 2, 3, 4]);
    assert!(listed[0].1.starts_with("success"));
    assert!(listed[2].1.starts_with("wrong usage"));
    assert!(listed[3].1.starts_with("rewrite refused"));
    assert!(listed[4].1.starts_with("rewrite --allow-partial"));
    let help = Cli::command().render_long_help().to_string();
    assert!(help.contains(AFTER_HELP.lines().nth(4).unwrap()), "{help}");
}

// --- inspect --json ------------------------------------------------------------------

#[test]
fn inspect_json_keys_and_status() {
    let missing = PathBuf::from("/nonexistent/hotswap-test.co");
    let report = inspect::inspect(&[probe(), missing.clone()], None);
    assert_eq!(
        inspect::status(&report),
        exit::BAD_INPUT,
        "an unreadable input"
    );
    let json = serde_json::to_value(&report).unwrap();
    assert_eq!(keys(&json), ["code_objects", "errors"]);
    let errors = json["errors"].as_array().unwrap();
    assert_eq!(errors.len(), 1);
    assert_eq!(keys(&errors[0]), ["error", "file"]);
    assert_eq!(errors[0]["file"], missing.display().to_string());

    let objects = json["code_objects"].as_array().unwrap();
    assert_eq!(objects.len(), 1);
    let o = &objects[0];
    assert_eq!(
        keys(o),
        sorted(&[
            "file",
            "bundle_id",
            "container",
            "in_host_elf",
            "isa",
            "code_object_version",
            "size",
            "kernels",
            "functions",
            "complete",
            "unknown"
        ]),
        "an analysed object has no note and, without --extract, no extracted"
    );
    assert_eq!(o["container"], "bare");
    assert_eq!(o["bundle_id"], Value::Null);
    assert_eq!(o["isa"], "amdgcn-amd-amdhsa--gfx1250");
    assert_eq!(o["complete"], true);
    let functions = o["functions"].as_array().unwrap();
    assert!(!functions.is_empty());
    for f in functions {
        assert_eq!(
            keys(f),
            sorted(&[
                "name",
                "kind",
                "offset",
                "size",
                "instructions",
                "a0",
                "sites"
            ])
        );
        assert!(["symbol", "kernel-entry"].contains(&f["kind"].as_str().unwrap()));
        // Every class, zero counts included, by its stable name.
        let classes: Vec<&str> = hotswap_code_object::gfx1250::A0Class::ALL
            .iter()
            .map(|c| c.as_str())
            .collect();
        assert_eq!(keys(&f["a0"]), sorted(&classes));
        for s in f["sites"].as_array().unwrap() {
            assert_eq!(
                keys(s),
                sorted(&[
                    "offset",
                    "length",
                    "class",
                    "mnemonic",
                    "fix",
                    "needs_change"
                ])
            );
        }
    }

    let report = inspect::inspect(&[probe()], None);
    assert_eq!(inspect::status(&report), exit::OK);
}

#[test]
fn inspect_json_of_an_object_not_analysed() {
    let s = Scratch::new("inspect-gfx942");
    let path = s.0.join("gfx942.co");
    std::fs::write(
        &path,
        retarget(&std::fs::read(probe()).unwrap(), MACH_GFX942),
    )
    .unwrap();
    let extract = s.0.join("extracted");
    let report = inspect::inspect(std::slice::from_ref(&path), Some(&extract));
    assert_eq!(inspect::status(&report), exit::OK);
    let json = serde_json::to_value(&report).unwrap();
    let o = &json["code_objects"][0];
    assert!(
        o.get("functions").is_none() && o.get("complete").is_none(),
        "{o}"
    );
    assert!(
        o["note"]
            .as_str()
            .unwrap()
            .contains("only gfx125x is analysed"),
        "{o}"
    );
    let extracted = o["extracted"].as_str().unwrap();
    assert!(
        extracted.ends_with("0000-gfx942.co-gfx942.co"),
        "{extracted}"
    );
    assert_eq!(
        std::fs::read(extracted).unwrap(),
        std::fs::read(&path).unwrap()
    );
}

// --- rewrite --json ------------------------------------------------------------------

/// `EF_AMDGPU_MACH` of gfx942.
const MACH_GFX942: u8 = 0x4c;

/// The object with another processor in its header.
fn retarget(object: &[u8], mach: u8) -> Vec<u8> {
    let mut o = object.to_vec();
    o[48] = mach; // e_flags, low byte: EF_AMDGPU_MACH
    o
}

/// An uncompressed clang offload bundle of `entries` (id, object).
fn bundle(entries: &[(&str, &[u8])]) -> Vec<u8> {
    let magic = hotswap_code_object::container::BUNDLE_MAGIC;
    let header: usize =
        magic.len() + 8 + entries.iter().map(|(id, _)| 24 + id.len()).sum::<usize>();
    let mut out = magic.to_vec();
    out.extend_from_slice(&(entries.len() as u64).to_le_bytes());
    let mut offset = header.next_multiple_of(4096);
    let mut offsets = Vec::new();
    for (id, object) in entries {
        out.extend_from_slice(&(offset as u64).to_le_bytes());
        out.extend_from_slice(&(object.len() as u64).to_le_bytes());
        out.extend_from_slice(&(id.len() as u64).to_le_bytes());
        out.extend_from_slice(id.as_bytes());
        offsets.push(offset);
        offset = (offset + object.len()).next_multiple_of(4096);
    }
    for ((_, object), at) in entries.iter().zip(offsets) {
        out.resize(at, 0);
        out.extend_from_slice(object);
    }
    out
}

const OUTCOME_KEYS: [&str; 7] = [
    "code_objects",
    "input",
    "message",
    "moved_functions",
    "output",
    "sites",
    "status",
];
const OBJECT_KEYS: [&str; 14] = [
    "bundle_id",
    "fixed",
    "gateways",
    "isa",
    "islands",
    "kept",
    "moved_functions",
    "refusal",
    "register_counts",
    "relocations",
    "remaining",
    "result",
    "retag",
    "sites",
];

#[test]
fn rewrite_json_complete() {
    let s = Scratch::new("rewrite-complete");
    let out = s.0.join("out.co");
    let (outcome, status) = rewrite::rewrite_file(&probe(), &out, rewrite::options(false, false));
    assert_eq!(status, exit::OK);
    let json = serde_json::to_value(&outcome).unwrap();
    assert_eq!(keys(&json), OUTCOME_KEYS);
    assert_eq!(json["status"], "complete");
    assert_eq!(json["output"], out.display().to_string());
    assert_eq!(json["message"], Value::Null);
    let o = &json["code_objects"][0];
    assert_eq!(keys(o), OBJECT_KEYS);
    assert!(
        ["rewritten", "unchanged"].contains(&o["result"].as_str().unwrap()),
        "{o}"
    );
    assert_eq!(o["refusal"], Value::Null);
    assert!(out.is_file());
}

#[test]
fn rewrite_json_refused_and_errors() {
    let s = Scratch::new("rewrite-refused");
    let probe_bytes = std::fs::read(probe()).unwrap();
    let gfx942 = s.0.join("gfx942.co");
    std::fs::write(&gfx942, retarget(&probe_bytes, MACH_GFX942)).unwrap();
    let out = s.0.join("out.co");

    // Not a gfx1250 object: refused, nothing written.
    let (outcome, status) = rewrite::rewrite_file(&gfx942, &out, rewrite::options(false, false));
    assert_eq!(status, exit::REFUSED);
    let json = serde_json::to_value(&outcome).unwrap();
    assert_eq!(keys(&json), OUTCOME_KEYS);
    assert_eq!(json["status"], "refused");
    assert_eq!(json["output"], Value::Null);
    assert!(json["message"].is_string());
    let o = &json["code_objects"][0];
    assert_eq!(keys(o), OBJECT_KEYS);
    assert_eq!(o["result"], "refused");
    assert_eq!(keys(&o["refusal"]), ["kind", "message", "sites"]);
    assert!(!out.exists());

    // A bundle without a gfx1250 entry: refused, the entry skipped.
    let b = s.0.join("gfx942.bundle");
    let gfx942_bytes = std::fs::read(&gfx942).unwrap();
    std::fs::write(
        &b,
        bundle(&[("hipv4-amdgcn-amd-amdhsa--gfx942", &gfx942_bytes)]),
    )
    .unwrap();
    let (outcome, status) = rewrite::rewrite_file(&b, &out, rewrite::options(false, false));
    assert_eq!(status, exit::REFUSED);
    let json = serde_json::to_value(&outcome).unwrap();
    assert_eq!(json["code_objects"][0]["result"], "skipped");
    assert_eq!(
        json["code_objects"][0]["bundle_id"],
        "hipv4-amdgcn-amd-amdhsa--gfx942"
    );

    // A bundle with a gfx1250 entry: that entry is rewritten, the other skipped.
    std::fs::write(
        &b,
        bundle(&[
            ("hipv4-amdgcn-amd-amdhsa--gfx1250", &probe_bytes),
            ("hipv4-amdgcn-amd-amdhsa--gfx942", &gfx942_bytes),
        ]),
    )
    .unwrap();
    let (outcome, status) = rewrite::rewrite_file(&b, &out, rewrite::options(false, false));
    assert_eq!(status, exit::OK, "{outcome:?}");
    let results: Vec<&str> = outcome.code_objects.iter().map(|o| o.result).collect();
    assert!(
        matches!(results[..], ["rewritten" | "unchanged", "skipped"]),
        "{results:?}"
    );
    assert_eq!(
        std::fs::metadata(&out).unwrap().len(),
        std::fs::metadata(&b).unwrap().len()
    );

    // Unreadable input, and the output being the input: errors (1), nothing written.
    let (outcome, status) = rewrite::rewrite_file(
        &s.0.join("missing.co"),
        &out,
        rewrite::options(false, false),
    );
    assert_eq!(status, exit::BAD_INPUT);
    let json = serde_json::to_value(&outcome).unwrap();
    assert_eq!(keys(&json), OUTCOME_KEYS);
    assert_eq!(json["status"], "error");
    assert_eq!(json["code_objects"], Value::Array(Vec::new()));
    let (outcome, status) = rewrite::rewrite_file(&gfx942, &gfx942, rewrite::options(false, false));
    assert_eq!(status, exit::BAD_INPUT);
    assert_eq!(outcome.status, "error");
    assert_eq!(
        std::fs::read(&gfx942).unwrap(),
        retarget(&probe_bytes, MACH_GFX942)
    );
}

/// A tensor load whose mask is cleared at its only definition: `rewrite
/// --json` gives the site's address and the definition's, and `inspect` of
/// the output counts it as needing nothing (the same proof), while the
/// input's load still needs a change.
#[test]
fn a_tensor_mask_cleared_at_its_definition_is_reported_and_not_pending() {
    let tdef =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../hotswap-code-object/tests/liveness/tdef.co");
    let s = Scratch::new("rewrite-tdef");
    let out = s.0.join("out.co");
    let (outcome, status) = rewrite::rewrite_file(&tdef, &out, rewrite::options(true, false));
    assert_eq!(status, exit::PARTIAL, "other tensor sites of tdef.s remain");
    let json = serde_json::to_value(&outcome).unwrap();
    let at_def: Vec<&Value> = json["code_objects"][0]["sites"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["fix"] == "tensor-mask-clear-at-definition")
        .collect();
    assert_eq!(at_def.len(), 3, "t_mov, t_and, t_loop");
    for c in &at_def {
        assert_eq!(c["new_vaddr"], c["original_vaddr"]);
        let (site, def) = (
            c["original_vaddr"].as_u64().unwrap(),
            c["definition_vaddr"].as_u64().unwrap(),
        );
        assert!(def < site, "{c}");
    }
    let pending = |path: &Path, site: u64| {
        let report = inspect::inspect(&[path.to_path_buf()], None);
        let json = serde_json::to_value(&report).unwrap();
        let o = &json["code_objects"][0];
        let needs = o["functions"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|f| f["sites"].as_array().unwrap())
            .find(|s| s["offset"].as_u64() == Some(site))
            .map(|s| s["needs_change"].clone());
        (needs, o.get("pending_sites").cloned())
    };
    let t_mov_site = at_def[0]["original_vaddr"].as_u64().unwrap();
    assert_eq!(pending(&tdef, t_mov_site), (Some(Value::Bool(true)), None));
    // The output: the three loads need nothing; the six left (their
    // functions moved, their at-site form refused) are pending.
    let (needs, count) = pending(&out, t_mov_site);
    assert_eq!(needs, Some(Value::Bool(false)));
    assert_eq!(count, Some(Value::from(6)));
}
