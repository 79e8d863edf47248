//! The crate's one Rust surface: what `hotswap` (`rust/hotswap-cli`) uses to
//! tell what the tool would do in a process starting now, without loading
//! ROCr. Every other module is private; the library's other surfaces are the C
//! API (`include/hotswap/hotswap.h`) and ROCr's tool ABI (`OnLoad`,
//! `OnUnload`).
//!
//! Each item is the tool's own code, not a copy, so that `hotswap doctor` and
//! `hotswap cache` cannot drift from what the tool does:
//!
//! - the configuration: [`Config`] (the process's snapshot of the tool's
//!   environment variables: the C API, the rewriter, the cache) and
//!   [`LoadConfig`] (what `OnLoad` reads), the variables' names, and
//!   [`is_true`] (the tool's reading of a boolean);
//! - `HSA_TOOLS_LIB` as ROCr parses it: [`parse_tool_names`], [`ToolNames`],
//!   [`names_hotswap`], [`is_hotswap_library`], and this tool's file name
//!   [`HOTSWAP_TOOL_LIBRARY_NAME`];
//! - ROCr's own hotswap hook: its file name [`ROCR_HOOK_LIBRARY`] and the two
//!   gates it may use ([`HookGate`], [`HSA_HOTSWAP_ENABLE`]);
//! - the gfx1250-A0 gate: [`has_candidate`] for an [`AgentTarget`];
//! - the rewriter backends: [`rewriter_candidates`] (each one found and
//!   probed as the tool does), [`backend_summary`], and the rocjitsu
//!   translator at a given path ([`probe_rocjitsu`], [`ROCJITSU_SONAME`]);
//! - the persistent rewrite cache: [`CacheSettings`] (where it is and its
//!   bounds), [`CacheStore`] (list, totals, clear), [`process_is_secure`];
//!   pretranslation through the tool's own cache code and key
//!   ([`Pretranslator`], with the installed library's identity adopted by
//!   [`adopt_tool_identity`]);
//! - a code object's ISA name: [`isa_name`].
//!
//! Adding an item here is a decision about the crate's surface: prefer a
//! function that answers what the CLI asks over exposing a module.

use crate::dl::Library;
use crate::rewriter::{registry, rocjitsu, Backend};

pub use crate::coexist::{HookGate, HSA_HOTSWAP_ENABLE, ROCR_HOOK_LIBRARY};
pub use crate::config::{
    is_true, Config, LoadConfig, AMD_COMGR_HOTSWAP_ENTRY_TRAMPOLINES, HSA_HOTSWAP_CACHE,
    HSA_HOTSWAP_CACHE_DIR, HSA_HOTSWAP_CACHE_LOCK_TIMEOUT, HSA_HOTSWAP_CACHE_MAX,
    HSA_HOTSWAP_CACHE_STORE, HSA_HOTSWAP_DISABLE, HSA_HOTSWAP_LOG, HSA_HOTSWAP_LOG_LEVEL,
    HSA_HOTSWAP_NATIVE_ALLOW_PARTIAL, HSA_HOTSWAP_REWRITER, HSA_HOTSWAP_TOOL_ENABLE,
    HSA_HOTSWAP_VERBOSE,
};
pub use crate::policy::{has_candidate, AgentTarget};
pub use crate::pretranslate::{Answer as WarmAnswer, Pretranslator, Warmed};
pub use crate::rewrite_cache::entry::Kind as CacheEntryKind;
pub use crate::rewrite_cache::key::adopt_tool_identity;
pub use crate::rewrite_cache::{
    process_is_secure, store_dir as cache_store_dir, Listed as CacheEntry,
    Settings as CacheSettings, Store as CacheStore, Totals as CacheTotals,
};
pub use crate::rewriter::rocjitsu::SONAME as ROCJITSU_SONAME;
pub use crate::rewriter::{BackendKind, Candidate};
pub use crate::tools_lib::{is_hotswap_library, names_hotswap, parse_tool_names, ToolNames};
pub use crate::version::HOTSWAP_TOOL_LIBRARY_NAME;

/// Every rewriter backend the tool would consider with `config`, in its order
/// (the backend registry's, or the one `HSA_HOTSWAP_REWRITER` names), each one
/// found, loaded and probed exactly as the tool does; the tool uses the first
/// usable one.
pub fn rewriter_candidates(config: &Config) -> Vec<Candidate> {
    crate::rewriter::candidates(config)
}

/// What the backend `kind` is, in one line (the backend registry's summary).
pub fn backend_summary(kind: BackendKind) -> &'static str {
    registry::entry(kind).summary
}

/// Loads the rocjitsu translator at `path` and vets and probes it exactly as
/// the tool does: its description when usable, else why not.
pub fn probe_rocjitsu(path: &str) -> Result<String, String> {
    Library::open(path)
        .and_then(rocjitsu::Rocjitsu::from_library)
        .map(|backend| backend.describe().to_owned())
}

/// The ISA name of a code object as the tool and COMGR name it (the table,
/// then the linked COMGR for a processor the table lacks).
pub fn isa_name(
    object: &crate::code_object::CodeObject<'_>,
) -> Result<String, crate::code_object::IsaError> {
    crate::code_object::isa_name(object)
}
