//! ROCr's tool ABI: `OnLoad` and `OnUnload`, looked up by ROCr in the library named
//! by `HSA_TOOLS_LIB` (they are not part of the public header). Thin shells over
//! [`crate::session`].
//!
//! - `OnLoad` checks `table`, `table->core_`, that `core_->version.major_id` is
//!   one the tool is written against (1 or 2,
//!   [`crate::hsa::table::CORE_MAJORS`]), that `core_->version.minor_id`
//!   covers every slot the tool reads or writes and that those slots are
//!   non-null; only then does it write its hooks ([`crate::hooks::patches`]). On any failed check it
//!   returns false with the table byte-for-byte unchanged. Switched off
//!   (`HSA_HOTSWAP_DISABLE`), or with ROCr's own hotswap hook active, it returns
//!   true and patches nothing ([`crate::session::on_load`]).
//! - `OnUnload` restores each slot that still holds our hook and frees nothing.
#![allow(unsafe_code)]

use std::ffi::c_char;

use crate::boundary::ffi_boundary;
use crate::config::LoadConfig;
use crate::hsa::table::{CoreTable, HsaApiTable};
use crate::{hooks, logging, session};

/// Called by ROCr from `hsa_init` with its API table. Returns false (ROCr then
/// unloads the tool; the table is untouched) when the table cannot be patched.
///
/// # Safety
/// Called by ROCr with a valid `HsaApiTable*` or NULL.
#[no_mangle]
#[allow(non_snake_case)]
pub unsafe extern "C" fn OnLoad(
    table: *mut HsaApiTable,
    runtime_version: u64,
    _failed_tool_count: u64,
    _failed_tool_names: *const *const c_char,
) -> bool {
    ffi_boundary("OnLoad", false, || {
        let config = LoadConfig::from_env();
        logging::init(config.log_vars());
        let patches = hooks::patches();
        // SAFETY: ROCr passes its live table (sizes in minor_id) or NULL.
        let table = unsafe { CoreTable::from_root(table, &session::needed_slots(&patches)) };
        session::on_load(
            table,
            &patches,
            hooks::own_readers,
            &config,
            runtime_version,
        )
    })
}

/// Called by ROCr from `hsa_shut_down` (before it resets its table).
#[no_mangle]
#[allow(non_snake_case)]
pub extern "C" fn OnUnload() {
    ffi_boundary("OnUnload", (), session::unload)
}
