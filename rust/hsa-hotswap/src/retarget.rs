//! The one entry of a rewrite, for the tool's loads and the C API: argument
//! checks, the process's rewriter ([`crate::rewriter::backend`]), and the
//! persistent cache around it ([`crate::rewrite_cache::through`]). It sits
//! above both, so neither names the other's entry.

use hotswap_code_object::CodeObject;

use crate::digest::InputDigest;
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
    // No rewriter is told before a malformed object is.
    rewriter::backend().ok_or(RetargetError::Unavailable)?;
    let object = CodeObject::parse(code_object).map_err(|e| {
        log::warn!(
            "rewrite {source_isa} -> {target_isa}: not a code object ({e}); nothing rewritten"
        );
        RetargetError::Refused(format!("not a code object: {e}"))
    })?;
    retarget_object(&object, source_isa, target_isa, flags, None)
}

/// Whether a rewrite goes through a persistent cache layer in this process
/// ([`rewrite_cache::in_use_for`] the process's rewriter), which keys the
/// input by its SHA-256.
pub fn persistent_cache_in_use() -> bool {
    rewriter::backend().is_some_and(rewrite_cache::in_use_for)
}

/// [`retarget_with_flags`] of an object the caller has parsed (the tool's
/// loads: the view that identified it is the one the rewriter reads);
/// `digest` is its SHA-256 when a pass computed it already.
pub fn retarget_object(
    object: &CodeObject<'_>,
    source_isa: &str,
    target_isa: &str,
    flags: RewriteFlags,
    digest: Option<&InputDigest>,
) -> Result<Retargeted, RetargetError> {
    let backend = rewriter::backend().ok_or(RetargetError::Unavailable)?;
    let request = Request {
        source_isa,
        target_isa,
        flags,
    };
    rewrite_cache::through(backend, object.bytes(), digest, &request, || {
        rewriter::retarget_with(backend, object, &request)
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

    #[test]
    fn bytes_that_are_not_a_code_object_are_refused_before_the_backend() {
        let _exclusive = crate::testing::exclusive();
        let native: &'static dyn rewriter::Backend =
            Box::leak(Box::new(rewriter::native::Native::new(Default::default())));
        rewriter::testing_override::set(Some(native));
        let result = retarget(b"not an elf", "a", "b");
        rewriter::testing_override::clear();
        assert!(
            matches!(&result, Err(RetargetError::Refused(why)) if why.starts_with("not a code object")),
            "{result:?}"
        );
    }
}
