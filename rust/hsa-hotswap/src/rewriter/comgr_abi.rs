//! The COMGR-ABI backend: `amd_comgr_hotswap_rewrite` with COMGR's data-object
//! ABI ("Gen 2"), as COMGR exported it until its rewriter was removed, and as
//! rocjitsu's COMGR shim and the test rewriters still export it.
//!
//! A library is refused (the reason becomes the log line) when it
//! - lacks the data-object functions or `amd_comgr_hotswap_rewrite`;
//! - exports `amd_comgr_hotswap_needs_transpile`: the raw-buffer prototype
//!   ("Gen 1"), whose `amd_comgr_hotswap_rewrite` has the same name and version
//!   node but another signature (calling it would corrupt memory);
//! - answers one probe rewrite of a small valid gfx1250 code object (B0 → A0 via
//!   the pseudo-feature) with `INVALID_ARGUMENT`: COMGR's deprecated stub, which
//!   fails every call.
//!
//! The ISA names go to the library unchanged (with COMGR's
//! `:gfx1250-b0-specific±` pseudo-features).
#![allow(unsafe_code)] // calls COMGR-ABI functions through dlsym pointers

use std::ffi::{c_char, CStr, CString};

use super::{Backend, BackendKind, Request, RetargetError, Rewritten};
use crate::comgr::{self, DataApi, DataHandle, Status};
use crate::dl::Library;
use hotswap_code_object::CodeObject;

/// `amd_comgr_hotswap_rewrite` (node `amd_comgr_3.2`).
type RewriteFn =
    unsafe extern "C" fn(DataHandle, *const c_char, *const c_char, *mut DataHandle) -> Status;

/// `amd_comgr_hotswap_rewrite_options_t`.
#[repr(C)]
#[derive(Debug)]
struct RewriteOptions {
    size: usize,
    flags: u64,
}

/// `amd_comgr_hotswap_rewrite_with_options` (node `amd_comgr_3.4`).
type RewriteWithOptionsFn = unsafe extern "C" fn(
    DataHandle,
    *const c_char,
    *const c_char,
    *const RewriteOptions,
    *mut DataHandle,
) -> Status;

/// The probe's ISA names: gfx1250 B0 to gfx1250 A0, the one pair every hotswap
/// rewriter supports.
const PROBE_SOURCE_ISA: &CStr = c"amdgcn-amd-amdhsa--gfx1250:gfx1250-b0-specific+";
const PROBE_TARGET_ISA: &CStr = c"amdgcn-amd-amdhsa--gfx1250:gfx1250-b0-specific-";

/// The symbol a COMGR-ABI rewriter exports.
pub const REWRITE_SYMBOL: &CStr = c"amd_comgr_hotswap_rewrite";

/// A usable COMGR-ABI rewriter.
#[derive(Debug)]
pub struct ComgrAbi {
    describe: String,
    data: DataApi,
    rewrite: RewriteFn,
    rewrite_with_options: Option<RewriteWithOptionsFn>,
}

/// True when `library` exports the COMGR-ABI rewrite entry point.
pub fn exports_rewrite(library: &Library) -> bool {
    library.address(REWRITE_SYMBOL).is_some()
}

impl ComgrAbi {
    /// Vets `library` as a COMGR-ABI rewriter (see the module documentation);
    /// `Err` is the reason it is unusable.
    pub fn from_library(library: &Library) -> Result<ComgrAbi, String> {
        let name = &library.name;
        if library
            .address(c"amd_comgr_hotswap_needs_transpile")
            .is_some()
        {
            return Err(format!(
                "{name} exports amd_comgr_hotswap_needs_transpile: it is the raw-buffer hotswap \
                 prototype, whose amd_comgr_hotswap_rewrite has an incompatible signature; not calling it"
            ));
        }
        // SAFETY: RewriteFn is the Gen-2 declaration of amd_comgr_hotswap_rewrite; the
        // Gen-1 library with the same name was refused above.
        let rewrite: RewriteFn = unsafe { library.function(REWRITE_SYMBOL) }.ok_or_else(|| {
            format!("{name} has no amd_comgr_hotswap_rewrite (no hotswap rewriter in this COMGR)")
        })?;
        let data =
            DataApi::resolve(library).map_err(|missing| format!("{name} lacks {missing}"))?;
        // SAFETY: the Gen-2 declaration of amd_comgr_hotswap_rewrite_with_options.
        let rewrite_with_options: Option<RewriteWithOptionsFn> =
            unsafe { library.function(c"amd_comgr_hotswap_rewrite_with_options") };
        let backend = ComgrAbi {
            describe: format!("COMGR-ABI rewriter {name}"),
            data,
            rewrite,
            rewrite_with_options,
        };
        backend.probe()?;
        Ok(backend)
    }

    /// One rewrite of the embedded gfx1250 object. Only `INVALID_ARGUMENT` (the
    /// deprecated stub's only answer) disqualifies: a valid object and the one
    /// pair every hotswap rewriter supports leave it no other reason.
    fn probe(&self) -> Result<(), String> {
        let input = self
            .data
            .executable(hotswap_code_object::GFX1250_PROBE)
            .map_err(|s| {
                format!(
                    "{}: cannot create a data object ({})",
                    self.describe,
                    comgr::status_name(s)
                )
            })?;
        let mut output = DataHandle { handle: 0 };
        // SAFETY: live input handle, NUL-terminated ISA names, valid output pointer.
        let status = unsafe {
            (self.rewrite)(
                input.handle(),
                PROBE_SOURCE_ISA.as_ptr(),
                PROBE_TARGET_ISA.as_ptr(),
                &mut output,
            )
        };
        if status == comgr::STATUS_SUCCESS {
            drop(self.data.adopt(output));
        }
        if status == comgr::STATUS_INVALID_ARGUMENT {
            return Err(format!(
                "{} rejects a valid gfx1250 B0->A0 rewrite with INVALID_ARGUMENT: it is COMGR's \
                 deprecated hotswap stub, which always fails",
                self.describe
            ));
        }
        log::info!(
            "{} (probe: {}; _with_options {})",
            self.describe,
            comgr::status_name(status),
            if self.rewrite_with_options.is_some() {
                "present"
            } else {
                "absent"
            }
        );
        Ok(())
    }

    /// One rewrite call; the output data object on SUCCESS.
    fn call(
        &self,
        input: DataHandle,
        source: &CString,
        target: &CString,
        flags: u64,
    ) -> Result<comgr::Data<'_>, Status> {
        let mut output = DataHandle { handle: 0 };
        let status = if flags == 0 {
            // SAFETY: live input handle, NUL-terminated names, valid output pointer.
            unsafe { (self.rewrite)(input, source.as_ptr(), target.as_ptr(), &mut output) }
        } else {
            let Some(with_options) = self.rewrite_with_options else {
                log::warn!(
                    "{} has no amd_comgr_hotswap_rewrite_with_options; flags {flags:#x} need it",
                    self.describe
                );
                return Err(comgr::STATUS_ERROR);
            };
            let options = RewriteOptions {
                size: std::mem::size_of::<RewriteOptions>(),
                flags,
            };
            // SAFETY: as above, plus a valid options struct that outlives the call.
            unsafe {
                with_options(
                    input,
                    source.as_ptr(),
                    target.as_ptr(),
                    &options,
                    &mut output,
                )
            }
        };
        if status == comgr::STATUS_SUCCESS {
            Ok(self.data.adopt(output))
        } else {
            Err(status)
        }
    }
}

/// COMGR's status as the tool's error.
fn error_of(status: Status) -> RetargetError {
    if status == comgr::STATUS_OUT_OF_RESOURCES {
        RetargetError::OutOfMemory
    } else {
        RetargetError::Failed
    }
}

impl Backend for ComgrAbi {
    fn kind(&self) -> BackendKind {
        BackendKind::ComgrAbi
    }

    fn describe(&self) -> &str {
        &self.describe
    }

    fn cache_identity(&self) -> Option<String> {
        crate::rewriter::identity::library_identity("COMGR-ABI", self.rewrite as usize)
    }

    fn rewrite(
        &self,
        object: &CodeObject<'_>,
        request: &Request<'_>,
    ) -> Result<Rewritten, RetargetError> {
        let code_object = object.bytes();
        let (Ok(source), Ok(target)) = (
            CString::new(request.source_isa),
            CString::new(request.target_isa),
        ) else {
            return Err(RetargetError::InvalidArgument);
        };
        let input = self.data.executable(code_object).map_err(|status| {
            log::warn!(
                "{}: cannot create the input data object ({})",
                self.describe,
                comgr::status_name(status)
            );
            error_of(status)
        })?;
        let output = self
            .call(input.handle(), &source, &target, request.flags.bits())
            .map_err(|status| {
                log::warn!(
                    "rewrite {} -> {} failed: {} ({status})",
                    request.source_isa,
                    request.target_isa,
                    comgr::status_name(status)
                );
                error_of(status)
            })?;
        drop(input);
        let size = output.size().map_err(error_of)?;
        Rewritten::from_fill(size, |buffer| output.copy_into(buffer) == Ok(size))
    }
}

#[cfg(test)]
mod tests {
    //! [`crate::retarget::retarget_with_flags`] against a real COMGR-ABI
    //! library: ctest runs this as `code_object.rust.with_options`
    //! (`--ignored`) with `HSA_HOTSWAP_REWRITER` naming the `change` test
    //! rewriter; without it the test fails. A plain `cargo test` skips it
    //! (ignored), as it has no rewriter to load.

    use crate::dl::Library;
    use crate::retarget::retarget_with_flags;
    use crate::rewriter::{Retargeted, RewriteFlags};

    static PROBE: &[u8] = hotswap_code_object::GFX1250_PROBE;
    const SOURCE: &str = "amdgcn-amd-amdhsa--gfx1250:gfx1250-b0-specific+";
    const TARGET: &str = "amdgcn-amd-amdhsa--gfx1250:gfx1250-b0-specific-";

    /// `test_rewriter_last_flags()` of the already-loaded test rewriter.
    fn last_flags(path: &str) -> u64 {
        let lib = Library::open_loaded(path).expect("the rewriter is loaded");
        // SAFETY: test_rewriter_last_flags is `uint64_t (void)`.
        let f = unsafe { lib.function::<extern "C" fn() -> u64>(c"test_rewriter_last_flags") };
        f.expect("the test rewriter exports test_rewriter_last_flags")()
    }

    #[test]
    #[ignore = "needs the test rewriter: ctest runs it as code_object.rust.with_options"]
    fn flags_go_through_rewrite_with_options() {
        let path = std::env::var("HSA_HOTSWAP_REWRITER")
            .ok()
            .filter(|p| !p.is_empty())
            .expect("HSA_HOTSWAP_REWRITER names the `change` test rewriter");
        let rewritten = |flags| match retarget_with_flags(PROBE, SOURCE, TARGET, flags) {
            Ok(Retargeted::Changed(r)) => r.bytes().to_vec(),
            other => panic!("{flags:?}: {other:?}"),
        };

        let plain = rewritten(RewriteFlags::default());
        assert_eq!(last_flags(&path), u64::MAX, "no flags: the plain rewrite");
        assert_eq!(&plain[9..16], b"HOTSWAP");

        let strict = RewriteFlags {
            strict_mode: true,
            ..RewriteFlags::default()
        };
        assert_eq!(rewritten(strict), plain);
        assert_eq!(last_flags(&path), 0x2);

        let both = RewriteFlags {
            entry_trampolines: true,
            strict_mode: true,
        };
        rewritten(both);
        assert_eq!(last_flags(&path), 0x3);
    }
}
