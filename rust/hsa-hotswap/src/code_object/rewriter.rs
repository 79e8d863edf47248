//! The COMGR-ABI rewriter client (`amd_comgr_hotswap_rewrite`, data-object ABI).
//!
//! Stage: interface only; the implementation arrives with the code-object issue.
#![allow(unsafe_code)] // owns malloc'd buffers and (later) calls COMGR through dlsym

use crate::status::hotswap_status_t;

/// A rewritten code object: bytes that differ from the input, allocated with
/// `malloc` so the C API can hand them to a caller who releases them with `free()`.
#[derive(Debug)]
pub struct Rewritten {
    ptr: std::ptr::NonNull<u8>,
    len: usize,
}

// SAFETY: `Rewritten` uniquely owns its heap buffer, like `Box<[u8]>`.
unsafe impl Send for Rewritten {}
// SAFETY: shared access only reads the buffer.
unsafe impl Sync for Rewritten {}

impl Rewritten {
    /// The bytes.
    pub fn bytes(&self) -> &[u8] {
        let _ = (self.ptr, self.len);
        unimplemented!("arrives with the code-object issue")
    }

    /// Gives up ownership: the caller must `free()` the returned pointer.
    pub fn into_raw(self) -> (*mut u8, usize) {
        unimplemented!("arrives with the code-object issue")
    }
}

/// Why a rewrite did not produce new bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RetargetError {
    /// No usable rewriter in this process (reason logged once).
    Unavailable,
    /// Empty input, or an ISA name that is not a C string.
    InvalidArgument,
    /// The rewriter failed, or returned empty or non-AMDGPU output.
    Failed,
    /// Allocation failed.
    OutOfMemory,
}

impl RetargetError {
    /// The C status for this error.
    pub fn status(&self) -> hotswap_status_t {
        match self {
            Self::Unavailable => hotswap_status_t::HOTSWAP_STATUS_REWRITER_UNAVAILABLE,
            Self::InvalidArgument => hotswap_status_t::HOTSWAP_STATUS_INVALID_ARGUMENT,
            Self::Failed => hotswap_status_t::HOTSWAP_STATUS_REWRITE_FAILED,
            Self::OutOfMemory => hotswap_status_t::HOTSWAP_STATUS_OUT_OF_MEMORY,
        }
    }
}

/// The result of a successful rewriter call.
#[derive(Debug)]
pub enum Retargeted {
    /// New bytes, different from the input.
    Changed(Rewritten),
    /// The rewriter returned the input byte for byte.
    Unchanged,
}

/// True when a usable rewriter is present in this process. Resolved lazily,
/// once, thread-safe; later calls cost one atomic load.
pub fn is_available() -> bool {
    false
}

/// Rewrites `code_object` from `source_isa` to `target_isa` (ISA names, possibly
/// with the `:gfx1250-b0-specific±` pseudo-feature).
pub fn retarget(
    code_object: &[u8],
    source_isa: &str,
    target_isa: &str,
) -> Result<Retargeted, RetargetError> {
    let _ = (code_object, source_isa, target_isa);
    Err(RetargetError::Unavailable)
}
