//! `hotswap inspect --json` says exactly what the container reader and the
//! gfx1250 walker say, object by object and function by function.
//!
//! Inputs: the crate's real clang-22 probe object, plus every file in
//! `HOTSWAP_CLI_TEST_OBJECTS` when set (ctest `cli.inspect_walker` sets it to
//! the bundles, host binaries and objects tests/cli builds with clang-22).

use std::path::{Path, PathBuf};
use std::process::Command;

use hotswap_code_object::container;
use hotswap_code_object::gfx1250::{self, A0Class};
use serde_json::Value;

fn inputs() -> Vec<PathBuf> {
    let mut files =
        vec![Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../hotswap-code-object/data/gfx1250-probe.co")];
    if let Some(dir) = std::env::var_os("HOTSWAP_CLI_TEST_OBJECTS").filter(|d| !d.is_empty()) {
        let mut more: Vec<PathBuf> = std::fs::read_dir(&dir)
            .expect("HOTSWAP_CLI_TEST_OBJECTS is a directory")
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.is_file())
            .collect();
        more.sort();
        assert!(
            more.len() >= 8,
            "expected the cli test objects in {dir:?}, found {more:?}"
        );
        files.extend(more);
    }
    files
}

#[test]
fn inspect_reports_what_the_walker_finds() {
    let mut functions_checked = 0;
    for file in inputs() {
        let out = Command::new(env!("CARGO_BIN_EXE_hotswap"))
            .args(["inspect", "--json"])
            .arg(&file)
            .output()
            .expect("run hotswap");
        let report: Value = serde_json::from_slice(&out.stdout).expect("JSON");
        let bytes = std::fs::read(&file).unwrap();
        let contents = container::find(&bytes);
        assert_eq!(
            out.status.code(),
            Some(if contents.errors.is_empty() { 0 } else { 1 }),
            "{file:?}"
        );
        let objects = report["code_objects"].as_array().unwrap();
        assert_eq!(objects.len(), contents.objects.len(), "{file:?}");
        for (json, found) in objects.iter().zip(&contents.objects) {
            assert_eq!(json["size"], found.bytes.len(), "{file:?}");
            assert_eq!(json["bundle_id"].as_str(), found.bundle_id.as_deref());
            let Ok(analysis) = gfx1250::analyze(&found.bytes) else {
                assert!(json.get("functions").is_none(), "{file:?}: not analysed");
                continue;
            };
            assert_eq!(json["isa"], analysis.isa);
            assert_eq!(json["complete"], analysis.is_complete());
            let functions = json["functions"].as_array().unwrap();
            assert_eq!(functions.len(), analysis.functions.len(), "{file:?}");
            for (jf, f) in functions.iter().zip(&analysis.functions) {
                assert_eq!(jf["name"], f.name);
                assert_eq!(jf["offset"], f.vaddr);
                assert_eq!(jf["size"], f.size);
                assert_eq!(jf["instructions"], f.instructions, "{}", f.name);
                for class in A0Class::ALL {
                    assert_eq!(
                        jf["a0"][class.as_str()],
                        f.count(class),
                        "{} {class}",
                        f.name
                    );
                }
                let sites = jf["sites"].as_array().unwrap();
                assert_eq!(sites.len(), f.sites.len());
                for (js, s) in sites.iter().zip(&f.sites) {
                    assert_eq!(js["offset"], s.vaddr);
                    assert_eq!(js["class"], s.class.as_str());
                    assert_eq!(js["mnemonic"], s.mnemonic);
                    assert_eq!(js["fix"], s.fix.as_str());
                }
                functions_checked += 1;
            }
        }
    }
    assert!(
        functions_checked >= 2,
        "{functions_checked} functions checked"
    );
}
