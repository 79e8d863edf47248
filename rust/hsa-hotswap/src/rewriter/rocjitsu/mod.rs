//! The rocjitsu backend: AMD's maintained B0→A0 translator,
//! `librocjitsu_gfx1250_b0_to_a0.so.0` (`rj_gfx1250_b0_to_a0_translate`, its
//! output released with `rj_gfx1250_b0_to_a0_free`).
//!
//! # Three API shapes under one symbol name, two export maps
//!
//! - (a) `rj_status_t rj_gfx1250_b0_to_a0_translate(const void *source, size_t
//!   source_size, uint8_t **translated, size_t *translated_size)`;
//! - (b) `rj_gfx1250_b0_to_a0_translate_with_info(…, info)`: (a)'s four
//!   arguments plus a required `rj_gfx1250_b0_to_a0_translation_info_t *`; the
//!   plain symbol is a four-argument wrapper around it;
//! - (c) `rj_gfx1250_b0_to_a0_translate(…, info, diagnostic_callback,
//!   user_data)`: seven arguments, `_with_info` gone from the header.
//!
//! The library's version script (`rocjitsu_gfx1250_b0_to_a0.map`) has differed
//! between versions: the current one exports `rj_gfx1250_b0_to_a0_translate`,
//! `rj_gfx1250_b0_to_a0_free` and C++ diagnostics symbols; an older one
//! (rocm-systems @04b2f12a) also exports `rj_gfx1250_b0_to_a0_translate_with_info`.
//! So `_with_info` being exported does not say the plain symbol has four
//! arguments: a seven-argument `_translate` is expected with or without it.
//!
//! The symbol `rj_gfx1250_b0_to_a0_free` (`free()`, NULL accepted) is the same in
//! every shape and is required: a library without it is refused, since its
//! output could not be released.
//!
//! # How the shape is told apart
//!
//! Once, in [`Rocjitsu::from_library`], whatever the export map: the plain
//! symbol is (c), or four-argument ((a), or (b)'s wrapper): same name, no symbol
//! version, different arity, which `dlsym` cannot see. One probe translation of
//! [`hotswap_code_object::GFX1250_PROBE`] calls it with the seven-argument shape
//! (c), with the `info` struct pre-filled with a sentinel. Shape (c) clears
//! `info` before it validates its arguments (and, the arguments being valid,
//! sets the FNV-1a-64 source id), so a changed `info` says (c) answered: it is
//! used, with its diagnostics, even where `_with_info` is still exported. An
//! untouched sentinel says a four-argument function did: then
//! `rj_gfx1250_b0_to_a0_translate_with_info`, if exported, is shape (b) and is
//! called with its own five-argument declaration (the only one it has ever had);
//! otherwise the plain symbol is (a). From then on each shape is called with its
//! own declaration.
//!
//! Calling a four-argument (a) with seven arguments is sound only because of
//! the x86-64 System V calling convention: the first six integer arguments
//! travel in registers that are caller-saved scratch registers for the callee
//! (`info` in `r8`, the callback in `r9`), the seventh on the stack in the
//! caller's own frame, which the caller pops; a callee declared with fewer
//! parameters never reads them, and its return value is in `eax` either way.
//! The crate supports only x86-64 Linux; the build fails elsewhere (below)
//! rather than probe on a convention where this does not hold.
//!
//! # What is translated
//!
//! Only [`Profile::B0ToA0`] requests with a gfx1250 source (`EF_AMDGPU_MACH`
//! 0x49), exactly what ROCr's own hook hands the translator (a fixed B0→A0
//! profile; the output stays gfx1250, no MACH retag). Anything else, and any
//! COMGR-ABI flag, is [`RetargetError::Unsupported`] without a call.
//!
//! # Outcomes
//!
//! | `rj_status_t` | result |
//! |---|---|
//! | `SUCCESS` (0) | the bytes, copied into a [`Rewritten`]; a NULL buffer or size 0 is `Failed` |
//! | `INVALID_CODE_OBJECT` (4) | `Refused`: a property of the input, the same verdict next time |
//! | `OUT_OF_RESOURCES` (3) | `OutOfMemory` |
//! | `ERROR` (1), `INVALID_ARGUMENT` (2), `INVALID_FILE` (5), any other | `Failed` |
//!
//! Every failure is logged as a warning naming the status. The translator's
//! buffer is released with its own `rj_gfx1250_b0_to_a0_free` once copied (or
//! rejected).
//!
//! # Diagnostics
//!
//! Shape (c) reports diagnostics through a synchronous callback; each one is
//! logged at debug level (severity, kind, guest offset, mnemonic, message,
//! required work), its strings copied during the callback with a bounded
//! length; NULL fields and unknown kinds are accepted. The error diagnostics of
//! a refusal become its reason. Every call also logs a debug summary: status,
//! source id and changed-instruction count (shapes (b) and (c)).

mod abi;
mod call;
mod load;

use hotswap_code_object::CodeObject;

pub use abi::SONAME;
pub use load::{exports_translate, find};

use super::{Backend, BackendKind, Profile, Request, RetargetError, RewriteFlags, Rewritten};
use abi::{Entry, FreeFn};

/// A usable rocjitsu translator.
#[derive(Debug)]
pub struct Rocjitsu {
    describe: String,
    entry: Entry,
    free: FreeFn,
}

impl Backend for Rocjitsu {
    fn kind(&self) -> BackendKind {
        BackendKind::Rocjitsu
    }

    fn describe(&self) -> &str {
        &self.describe
    }

    fn cache_identity(&self) -> Option<String> {
        crate::rewriter::identity::library_identity("rocjitsu", self.free as usize)
    }

    fn rewrite(
        &self,
        object: &CodeObject<'_>,
        request: &Request<'_>,
    ) -> Result<Rewritten, RetargetError> {
        let (source, target) = (request.source_isa, request.target_isa);
        if request.profile() != Some(Profile::B0ToA0) {
            log::debug!(
                "rocjitsu translator: translates gfx1250 B0 -> A0 only, not {source} -> {target}"
            );
            return Err(RetargetError::Unsupported);
        }
        if request.flags != RewriteFlags::default() {
            log::debug!(
                "rocjitsu translator: has no rewrite options (flags {:#x})",
                request.flags.bits()
            );
            return Err(RetargetError::Unsupported);
        }
        match object.processor() {
            Ok("gfx1250") => {}
            other => {
                log::debug!(
                    "rocjitsu translator: translates gfx1250 (EF_AMDGPU_MACH 0x49) code objects \
                     only; this one is {}",
                    match other {
                        Ok(processor) => processor.to_owned(),
                        Err(e) => e.to_string(),
                    }
                );
                return Err(RetargetError::Unsupported);
            }
        }
        let call = call::call(self.entry, self.free, object.bytes());
        call.log_summary();
        call.into_result()
    }
}
