//! The one list of rewriter backends: their order, how each is found and
//! probed without `HSA_HOTSWAP_REWRITER`, how each is recognised in a library
//! `HSA_HOTSWAP_REWRITER` names, and how each is described. [`super::select`],
//! [`super::candidates`] and `hotswap doctor` all read [`REGISTRY`]; adding a
//! backend is one entry here (and its module).

use super::{comgr_abi, native, rocjitsu, Backend, BackendKind};
use crate::config::Config;
use crate::dl::Library;

/// One backend of the registry.
#[derive(Debug)]
pub struct Registered {
    /// The backend's key (what [`Backend::kind`] returns for it).
    pub kind: BackendKind,
    /// Its name in log lines and `hotswap doctor`.
    pub name: &'static str,
    /// What it is, in one line.
    pub summary: &'static str,
    /// Finds and probes it as the tool does without `HSA_HOTSWAP_REWRITER`;
    /// `Err` says why it is not usable.
    pub find: fn(&Config) -> Result<Box<dyn Backend>, String>,
    /// For a library `HSA_HOTSWAP_REWRITER` names: whether it exports this
    /// backend's ABI, and the backend over it. `None`: not loaded from a path.
    pub by_path: Option<ByPath>,
}

/// How a backend is recognised in, and made from, a library named by path.
#[derive(Debug)]
pub struct ByPath {
    /// The library exports this ABI.
    pub exports: fn(&Library) -> bool,
    /// The symbols looked for, for the reason when no backend matches.
    pub symbol: &'static str,
    /// The backend over the library (vetted and probed).
    pub open: fn(Library) -> Result<Box<dyn Backend>, String>,
}

fn find_linked_comgr(_: &Config) -> Result<Box<dyn Backend>, String> {
    let library = crate::comgr::open_linked_comgr()
        .map_err(|e| format!("cannot load the linked COMGR: {e}"))?;
    Ok(Box::new(comgr_abi::ComgrAbi::from_library(&library)?))
}

fn comgr_from_library(library: Library) -> Result<Box<dyn Backend>, String> {
    Ok(Box::new(comgr_abi::ComgrAbi::from_library(&library)?))
}

fn find_rocjitsu(_: &Config) -> Result<Box<dyn Backend>, String> {
    Ok(Box::new(rocjitsu::find()?))
}

fn rocjitsu_from_library(library: Library) -> Result<Box<dyn Backend>, String> {
    Ok(Box::new(rocjitsu::Rocjitsu::from_library(library)?))
}

fn find_native(config: &Config) -> Result<Box<dyn Backend>, String> {
    Ok(Box::new(native::Native::from_config(config)))
}

/// Every backend, in the order the tool tries them without
/// `HSA_HOTSWAP_REWRITER` (the first usable one is used). A library named by
/// path is taken as the first backend, in this order, whose ABI it exports.
pub static REGISTRY: [Registered; 3] = [
    Registered {
        kind: BackendKind::ComgrAbi,
        name: "linked COMGR",
        summary: "amd_comgr_hotswap_rewrite, COMGR's data-object ABI (the linked COMGR, \
                  rocjitsu's COMGR shim)",
        find: find_linked_comgr,
        by_path: Some(ByPath {
            exports: comgr_abi::exports_rewrite,
            symbol: "amd_comgr_hotswap_rewrite (COMGR ABI)",
            open: comgr_from_library,
        }),
    },
    Registered {
        kind: BackendKind::Rocjitsu,
        name: "rocjitsu translator",
        summary: "rocjitsu's B0-to-A0 translator, librocjitsu_gfx1250_b0_to_a0.so.0, found \
                  next to ROCr then by name",
        find: find_rocjitsu,
        by_path: Some(ByPath {
            exports: rocjitsu::exports_translate,
            symbol: "rj_gfx1250_b0_to_a0_translate (rocjitsu translator)",
            open: rocjitsu_from_library,
        }),
    },
    Registered {
        kind: BackendKind::Native,
        name: "native rewriter",
        summary: "the built-in rewriter: same-size fixes, and DS two-address sites split by \
                  moving their functions into an appended code segment, as are the WMMA, addtid, \
                  tensor-load and flat-scratch-base sites; an object with an FP8 CLAMP \
                  conversion, or a site its emitter refuses, is refused",
        find: find_native,
        by_path: None,
    },
];

/// The registry entry of `kind`.
pub fn entry(kind: BackendKind) -> &'static Registered {
    REGISTRY
        .iter()
        .find(|r| r.kind == kind)
        .expect("every BackendKind is registered")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_is_registered_once() {
        for kind in [
            BackendKind::ComgrAbi,
            BackendKind::Rocjitsu,
            BackendKind::Native,
        ] {
            assert_eq!(REGISTRY.iter().filter(|r| r.kind == kind).count(), 1);
            assert_eq!(entry(kind).kind, kind);
        }
        let names: Vec<_> = REGISTRY.iter().map(|r| r.name).collect();
        assert_eq!(
            names,
            ["linked COMGR", "rocjitsu translator", "native rewriter"]
        );
    }

    /// Each summary `hotswap doctor` prints is a list of claims, each checked
    /// here against what the backend does (as the class table is checked
    /// against `data/a0-classes.json`): the summary must be exactly its
    /// claims, so a summary that says something unchecked fails, and so does
    /// a backend that stops doing what its summary says.
    #[test]
    fn summaries_say_what_each_backend_does() {
        for r in &REGISTRY {
            let claims = match r.kind {
                BackendKind::ComgrAbi => comgr_abi_claims(r),
                BackendKind::Rocjitsu => rocjitsu_claims(r),
                BackendKind::Native => native_claims(r),
            };
            let text: String = claims.iter().map(|(claim, _)| claim.as_str()).collect();
            assert_eq!(
                r.summary, text,
                "{}: the summary is its checked claims",
                r.name
            );
            for (claim, holds) in &claims {
                assert!(holds, "{}: {claim:?} does not hold", r.name);
            }
        }
    }

    fn comgr_abi_claims(r: &Registered) -> Vec<(String, bool)> {
        let symbol = comgr_abi::REWRITE_SYMBOL.to_str().unwrap();
        let by_path = r.by_path.as_ref();
        // Without HSA_HOTSWAP_REWRITER it is looked for in the linked COMGR
        // (Debian's has no rewriter: the reason names it).
        let linked = match (r.find)(&Config::default()) {
            Ok(backend) => backend.kind() == BackendKind::ComgrAbi,
            Err(why) => why.contains("linked COMGR") || why.contains(&format!("has no {symbol}")),
        };
        vec![
            (
                format!("{symbol}, COMGR's data-object ABI "),
                by_path.is_some_and(|p| p.symbol.starts_with(symbol)),
            ),
            ("(the linked COMGR".into(), linked),
            // Any library named by path that exports the symbol.
            (", rocjitsu's COMGR shim)".into(), by_path.is_some()),
        ]
    }

    fn rocjitsu_claims(r: &Registered) -> Vec<(String, bool)> {
        let soname = rocjitsu::SONAME;
        // Not installed here: the reason lists where it was looked for, in order.
        let (by_soname, next_to_rocr_first) = match (r.find)(&Config::default()) {
            Ok(_) => (true, true),
            Err(why) => {
                let by_name = why
                    .rfind(&format!("{soname}: "))
                    .or_else(|| why.rfind(soname));
                let next_to = why
                    .find("to look next to")
                    .or_else(|| why.find(&format!("/{soname}")));
                (
                    by_name.is_some(),
                    matches!((next_to, by_name), (Some(a), Some(b)) if a < b),
                )
            }
        };
        vec![
            (
                "rocjitsu's B0-to-A0 translator, ".into(),
                r.by_path
                    .as_ref()
                    .is_some_and(|p| p.symbol.starts_with("rj_gfx1250_b0_to_a0_translate")),
            ),
            (format!("{soname}, "), by_soname),
            ("found next to ROCr then by name".into(), next_to_rocr_first),
        ]
    }

    fn native_claims(r: &Registered) -> Vec<(String, bool)> {
        use super::super::native::test_objects::{
            probe_with, CLUSTER_LOAD, DS_LOAD_2ADDR, FP8_CLAMP, WMMA_K128,
        };
        use super::super::{retarget_with, Request, RetargetError, Retargeted, RewriteFlags};
        use hotswap_code_object::{rewrite, CodeObject};

        let backend = (r.find)(&Config::default()).unwrap();
        let rewrite = |input: &[u8]| {
            let object = CodeObject::parse(input).unwrap();
            let request = Request {
                source_isa: "amdgcn-amd-amdhsa--gfx1250",
                target_isa: "amdgcn-amd-amdhsa--gfx1250:gfx1250-b0-specific-",
                flags: RewriteFlags::default(),
            };
            retarget_with(backend.as_ref(), &object, &request)
        };
        let same_size = probe_with(&CLUSTER_LOAD);
        let ds2 = probe_with(&DS_LOAD_2ADDR);
        let wmma = probe_with(&WMMA_K128);
        let other_growth = probe_with(&FP8_CLAMP);
        vec![
            (
                "the built-in rewriter: ".into(),
                r.by_path.is_none() && backend.kind() == BackendKind::Native,
            ),
            (
                "same-size fixes".into(),
                matches!(rewrite(&same_size), Ok(Retargeted::Changed(out))
                    if out.bytes().len() == same_size.len()),
            ),
            (
                ", and DS two-address sites split by moving their functions into an appended \
                 code segment"
                    .into(),
                matches!(rewrite(&ds2), Ok(Retargeted::Changed(out))
                    if out.bytes().len() > ds2.len()
                        && rewrite::moved_functions(out.bytes()).is_some_and(|m| m.len() == 1)),
            ),
            (
                ", as are the WMMA, addtid, tensor-load and flat-scratch-base sites".into(),
                matches!(rewrite(&wmma), Ok(Retargeted::Changed(out))
                    if out.bytes().len() > wmma.len()),
            ),
            (
                "; an object with an FP8 CLAMP conversion, or a site its emitter refuses, is \
                 refused"
                    .into(),
                matches!(rewrite(&other_growth), Err(RetargetError::Refused(_))),
            ),
        ]
    }

    #[test]
    fn the_native_rewriter_is_always_found_last() {
        let last = REGISTRY.last().unwrap();
        assert_eq!(last.kind, BackendKind::Native);
        let backend = (last.find)(&Config::default()).unwrap();
        assert_eq!(backend.kind(), BackendKind::Native);
    }
}
