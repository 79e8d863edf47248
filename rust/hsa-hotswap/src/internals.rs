//! The internals the fuzz targets (`fuzz/`) drive directly, and the test
//! support the `testing` feature promises (fault injection, injected cache
//! errors), under the paths of their private modules: the `testing` feature
//! only, never in the shipped library, and no surface for anything else (the
//! `hotswap` command uses [`crate::cli_api`]). The fake ROCr runtime is
//! [`crate::testing`].

/// The panic boundary of every `extern "C"` function.
pub mod boundary {
    pub use crate::boundary::ffi_boundary;
}

/// The C API, called from Rust as C would call it.
pub mod capi {
    pub use crate::capi::{
        hotswap_code_object_isa_name, hotswap_enabled, hotswap_is_supported_pair,
        hotswap_isa_is_gfx, hotswap_retarget_code_object, hotswap_status_string,
        hotswap_tools_lib_names_hotswap, hotswap_version,
    };
}

/// ISA identification (the code-object crate plus COMGR's answer).
pub mod code_object {
    pub use crate::code_object::{isa, isa_error_status, isa_name, processor, CodeObject};
}

/// Fault injection at the tool's decision points.
pub mod fault {
    pub use crate::fault::{arm, disarm_all, fired, POINTS};
}

/// The environment snapshots: the process's and `OnLoad`'s.
pub mod config {
    pub use crate::config::{Config, LoadConfig};
}

/// ROCr's API-table types.
pub mod hsa {
    /// HSA handle types.
    pub mod api {
        pub use crate::hsa::api::{hsa_code_object_reader_t, hsa_executable_t};
    }
    /// The API-table layout.
    pub mod table {
        pub use crate::hsa::table::{ApiTableVersion, CoreApiTable};
    }
}

/// The gfx1250-A0 gate and upstream's decision table.
pub mod policy {
    pub use crate::policy::{
        decide, gate_allows, has_candidate, is_gfx12_5, source_may_be_rewritten, AgentTarget,
        A0_FEATURE, B0_FEATURE,
    };
}

/// The persistent rewrite cache's entry format, and injected errors.
pub mod rewrite_cache {
    pub use crate::rewrite_cache::testing;

    /// One entry's encoding.
    pub mod entry {
        pub use crate::rewrite_cache::entry::{encode, parse, Header88, Invalid, Kind, HEADER_LEN};
    }

    /// The export/import archive.
    pub mod archive {
        pub use crate::rewrite_cache::archive::{parse, Member, Refused, Writer};
    }
}

/// The rewriter interface, and the override that puts a fuzzed backend in
/// place of the process's.
pub mod rewriter {
    pub use crate::rewriter::{
        testing_override, Backend, BackendKind, Profile, Request, RetargetError, RewriteFlags,
        Rewritten,
    };
}

/// The C result type.
pub mod status {
    pub use crate::status::{hotswap_status_t, UNKNOWN_STATUS_DESCRIPTION};
}

/// ROCr's tool ABI.
pub mod tool {
    pub use crate::tool::{OnLoad, OnUnload};
}

/// The `HSA_TOOLS_LIB` parser.
pub mod tools_lib {
    pub use crate::tools_lib::{names_hotswap, parse_tool_names, ToolNames};
}
