//! ROCr's tool ABI: `OnLoad` and `OnUnload`, looked up by ROCr in the library named
//! by `HSA_TOOLS_LIB` (they are not part of the public header).
//!
//! Foundation stage: the entry points exist, check their arguments and patch
//! nothing, so the tool loads as a no-op. The hooks arrive with the tool issue.
#![allow(unsafe_code)]

use std::ffi::{c_char, c_void};

use crate::boundary::ffi_boundary;

/// Called by ROCr from `hsa_init` with its API table. Returns false (the tool is
/// then unloaded and the table is left as it was) when `table` is NULL.
///
/// # Safety
/// Called by ROCr with a valid `HsaApiTable*` or NULL.
#[no_mangle]
#[allow(non_snake_case)]
pub unsafe extern "C" fn OnLoad(
    table: *mut c_void,
    _runtime_version: u64,
    _failed_tool_count: u64,
    _failed_tool_names: *const *const c_char,
) -> bool {
    ffi_boundary("OnLoad", false, || !table.is_null())
}

/// Called by ROCr from `hsa_shut_down`, after which ROCr resets its table.
#[no_mangle]
#[allow(non_snake_case)]
pub extern "C" fn OnUnload() {
    ffi_boundary("OnUnload", (), || {})
}
