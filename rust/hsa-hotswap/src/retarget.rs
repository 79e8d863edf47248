//! The one entry of a rewrite, for the tool's loads and the C API: argument
//! checks, the process's rewriter ([`crate::rewriter::backend`]), and the
//! persistent cache around it ([`crate::rewrite_cache::through`]). It sits
//! above both, so neither names the other's entry.

use crate::rewrite_cache;
use crate::rewriter::{self, Request, RetargetError, Retargeted, RewriteFlags};

/// Rewrites `code_object` from `source_isa` to `target_isa` (ISA names, possibly
/// with the `:gfx1250-b0-specific±` pseudo-feature).
pub fn retarget(
    code_object: &[u8],
    source_isa: &str,
    target_isa: &str,
) -> Result<Retargeted, RetargetError> {
    retarget_with_flags(code_object, source_isa, target_isa, RewriteFlags::default())
}

/// [`retarget`] with COMGR-ABI flags ([`RewriteFlags`]); no flag uses the
/// plain rewrite. Flags with a rewriter lacking `_with_options` fail.
pub fn retarget_with_flags(
    code_object: &[u8],
    source_isa: &str,
    target_isa: &str,
    flags: RewriteFlags,
) -> Result<Retargeted, RetargetError> {
    if code_object.is_empty() || source_isa.contains('\0') || target_isa.contains('\0') {
        return Err(RetargetError::InvalidArgument);
    }
    let backend = rewriter::backend().ok_or(RetargetError::Unavailable)?;
    let request = Request {
        source_isa,
        target_isa,
        flags,
    };
    rewrite_cache::through(backend, code_object, &request, || {
        rewriter::retarget_with(backend, code_object, &request)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn invalid_arguments_are_refused_before_any_rewriter_is_loaded() {
        assert_eq!(
            retarget(&[], "a", "b").unwrap_err(),
            RetargetError::InvalidArgument
        );
        assert_eq!(
            retarget(b"x", "a\0", "b").unwrap_err(),
            RetargetError::InvalidArgument
        );
    }
}
