//! Finding and vetting the translator: where to look (next to ROCr, then by
//! name), the required symbols, and the one probe translation that tells the
//! API shapes apart.
#![allow(unsafe_code)] // reads dlsym pointers with the declaration of each shape

#[cfg(not(all(target_arch = "x86_64", target_os = "linux")))]
compile_error!(
    "the rocjitsu shape probe calls a function of unknown arity with extra arguments, which is \
     sound on the x86-64 System V calling convention only (see rewriter/rocjitsu/mod.rs)"
);

use hotswap_code_object::GFX1250_PROBE;

use super::abi::*;
use super::call::call;
use super::Rocjitsu;
use crate::dl::{self, Library};

const ROCR_FILE_PREFIX: &str = "libhsa-runtime64.so";

/// True when `library` exports the translator's entry point.
pub fn exports_translate(library: &Library) -> bool {
    library.address(TRANSLATE_SYMBOL).is_some()
}

impl Rocjitsu {
    /// Vets `library` as the rocjitsu translator and learns its API shape with one
    /// probe translation (see the module documentation); `Err` is the reason it is
    /// unusable.
    pub fn from_library(library: Library) -> Result<Rocjitsu, String> {
        let name = &library.name;
        if !exports_translate(&library) {
            return Err(format!(
                "{name} does not export rj_gfx1250_b0_to_a0_translate"
            ));
        }
        // SAFETY: `void rj_gfx1250_b0_to_a0_free(void *)` in every shape.
        let free: FreeFn = unsafe { library.function(FREE_SYMBOL) }.ok_or_else(|| {
            format!(
                "{name} exports rj_gfx1250_b0_to_a0_translate but not rj_gfx1250_b0_to_a0_free, \
                 so its output could not be released; not using it"
            )
        })?;
        // SAFETY: the plain symbol is the seven-argument shape (c) in the current
        // export map, or a four-argument function in older ones ((a), or (b)'s
        // wrapper); calling it with (c)'s seven arguments is sound for every one
        // of them on x86-64 System V (module documentation); nothing else is
        // assumed about it here.
        let seven: TranslateWithCallbackFn = unsafe { library.function(TRANSLATE_SYMBOL) }
            .ok_or_else(|| format!("{name}: rj_gfx1250_b0_to_a0_translate vanished"))?;
        let mut probe = call(Entry::WithCallback(seven), free, GFX1250_PROBE);
        let entry = if probe.info != Some(SENTINEL) {
            // Shape (c) answered, whether or not the map also still exports
            // `_with_info`: the current entry point, with diagnostics.
            Entry::WithCallback(seven)
        } else {
            // A four-argument plain symbol: it left `info` untouched, which shape
            // (c) never does. Its probe has no translation info.
            probe.info = None;
            // SAFETY: `_with_info` has one declaration, (b)'s five arguments, in
            // every export map that names it.
            let with_info: Option<TranslateWithInfoFn> =
                unsafe { library.function(TRANSLATE_WITH_INFO_SYMBOL) };
            match with_info {
                Some(translate) => Entry::WithInfo(translate),
                None => {
                    // SAFETY: the probe showed a four-argument function and no
                    // `_with_info` is exported: shape (a)'s declaration.
                    let four: TranslateFn = unsafe { library.function(TRANSLATE_SYMBOL) }
                        .ok_or_else(|| format!("{name}: rj_gfx1250_b0_to_a0_translate vanished"))?;
                    Entry::Plain(four)
                }
            }
        };
        let describe = format!("rocjitsu translator {name}, API shape {}", entry.shape());
        let id_note = match probe.info {
            Some(info) if info != SENTINEL => {
                if info.source_code_object_id == fnv1a64(GFX1250_PROBE) {
                    ", source id as documented"
                } else {
                    ", source id is not the FNV-1a-64 of the input"
                }
            }
            _ => "",
        };
        log::info!(
            "{describe} (probe translation: {} ({}), {} diagnostic(s){id_note})",
            status_name(probe.status),
            probe.status,
            probe.diagnostics.count
        );
        probe.log_summary();
        drop(probe); // releases the probe's output with the library's free
        Ok(Rocjitsu {
            describe,
            entry,
            free,
        })
    }
}

/// Where to look for the translator, in order, the way ROCr looks for its hook:
/// the directory of every loaded `libhsa-runtime64.so*` (from `loaded`, the
/// paths of the loaded objects), then the bare SONAME (the dynamic loader's
/// search path).
fn candidates(loaded: &[String]) -> Vec<String> {
    let mut candidates: Vec<String> = Vec::new();
    for path in loaded {
        if !dl::file_name(path).starts_with(ROCR_FILE_PREFIX) {
            continue;
        }
        let Some(slash) = path.rfind('/') else {
            continue;
        };
        let candidate = format!("{}/{SONAME}", &path[..slash]);
        if !candidates.contains(&candidate) {
            candidates.push(candidate);
        }
    }
    candidates.push(SONAME.to_owned());
    candidates
}

/// The translator found the way ROCr finds its hook: next to the loaded ROCr,
/// then by library name. `Err` gives every candidate's reason.
pub fn find() -> Result<Rocjitsu, String> {
    let candidates = candidates(&dl::loaded_objects());
    let mut reasons = Vec::new();
    if candidates.len() == 1 {
        reasons.push(format!(
            "no {ROCR_FILE_PREFIX}* loaded in this process to look next to"
        ));
    }
    for candidate in candidates {
        match Library::open(&candidate) {
            Err(e) if e.contains(&candidate) => reasons.push(e),
            Err(e) => reasons.push(format!("{candidate}: {e}")),
            Ok(library) => match Rocjitsu::from_library(library) {
                Ok(backend) => return Ok(backend),
                Err(reason) => reasons.push(reason),
            },
        }
    }
    Err(format!("no rocjitsu translator: {}", reasons.join("; ")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn candidates_are_next_to_rocr_then_by_name() {
        let loaded = |paths: &[&str]| paths.iter().map(|p| p.to_string()).collect::<Vec<_>>();
        assert_eq!(candidates(&[]), vec![SONAME.to_owned()]);
        assert_eq!(
            candidates(&loaded(&[
                "",
                "/lib/x86_64-linux-gnu/libc.so.6",
                "/opt/rocm-7.2/lib/libhsa-runtime64.so.1",
                "/opt/rocm-7.2/lib/libhsa-runtime64.so.1.18.0",
                "/usr/lib/libhsa-runtime64.so",
                "libhsa-runtime64.so.1",
                "/opt/x/libhsa-runtime64-other.so",
            ])),
            vec![
                format!("/opt/rocm-7.2/lib/{SONAME}"),
                format!("/usr/lib/{SONAME}"),
                SONAME.to_owned()
            ]
        );
        assert_eq!(
            candidates(&loaded(&["/libhsa-runtime64.so.1"])),
            vec![format!("/{SONAME}"), SONAME.to_owned()]
        );
        // A file named like ROCr's directory is not ROCr.
        assert_eq!(
            candidates(&loaded(&["/opt/libhsa-runtime64.so.1/libfoo.so"])),
            vec![SONAME.to_owned()]
        );
    }
}
