//! The rocjitsu backend: AMD's maintained B0→A0 translator,
//! `librocjitsu_gfx1250_b0_to_a0.so.0` (`rj_gfx1250_b0_to_a0_translate`, freed
//! with `rj_gfx1250_b0_to_a0_free`).
//!
//! Not implemented yet: a library exporting the translator is recognised and
//! refused with a reason.

use super::{Backend, BackendKind, Request, RetargetError, Rewritten};
use crate::dl::Library;

/// The translator's entry point.
const TRANSLATE_SYMBOL: &std::ffi::CStr = c"rj_gfx1250_b0_to_a0_translate";

/// True when `library` exports the translator's entry point.
pub fn exports_translate(library: &Library) -> bool {
    library.address(TRANSLATE_SYMBOL).is_some()
}

/// A usable rocjitsu translator.
#[derive(Debug)]
pub struct Rocjitsu {
    describe: String,
}

impl Rocjitsu {
    /// Vets `library` as the rocjitsu translator.
    pub fn from_library(library: Library) -> Result<Rocjitsu, String> {
        Err(format!(
            "{}: the rocjitsu translator is not supported yet",
            library.name
        ))
    }
}

/// The translator found the way ROCr finds its hook: next to ROCr, then by
/// library name.
pub fn find() -> Result<Rocjitsu, String> {
    Err("no rocjitsu translator (librocjitsu_gfx1250_b0_to_a0.so.0) found".to_owned())
}

impl Backend for Rocjitsu {
    fn kind(&self) -> BackendKind {
        BackendKind::Rocjitsu
    }

    fn describe(&self) -> &str {
        &self.describe
    }

    fn rewrite(
        &self,
        _code_object: &[u8],
        _request: &Request<'_>,
    ) -> Result<Rewritten, RetargetError> {
        Err(RetargetError::Unsupported)
    }
}
