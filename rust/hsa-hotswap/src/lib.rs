//! `libhsa-hotswap.so`: the HSA tools library that lets a gfx1250 A0 GPU load code
//! objects built for B0 by rewriting them through a COMGR-ABI rewriter while ROCr
//! loads them.
//!
//! Layout (one concern per module):
//! - [`capi`]: the `hotswap_*` C API declared in `include/hotswap/hotswap.h`
//!   (the only `extern "C"` items besides the tool ABI). Thin shells only.
//! - [`boundary`]: the panic boundary every `extern "C"` function runs inside.
//! - [`status`]: `hotswap_status_t`, the C result of the API.
//! - [`version`]: version numbers and the tool's file name.
//! - [`mod@env`]: the one truthiness rule for environment variables.
//! - [`tools_lib`]: the `HSA_TOOLS_LIB` parser (ROCr's syntax).
//! - [`gfx`]: processor names inside ISA names, and the CLR forwarding allowlist.
//! - [`tool`]: ROCr's tool ABI, `OnLoad`/`OnUnload` (thin shells).
//! - [`hsa`]: the API-table layout and typed calls through saved table functions.
//! - [`session`]: one `OnLoad`'s state and the decisions the hooks execute.
//! - [`hooks`]: the four functions written into ROCr's table.
//! - [`agents`]: per-agent ISA name, ASIC revision and device type.
//! - [`policy`]: the gfx1250-A0 gate and upstream's decision table.
//! - [`readers`]: the bytes behind each code-object reader.
//! - [`retained`]: buffers kept for the life of the process; the rewrite cache.
//! - [`logging`]: the `log` backend (stderr or syslog, `hotswap:` prefix).
//!
//! `unsafe` is denied here and allowed only in the modules that touch C.
#![deny(unsafe_code)]

pub mod agents;
pub mod boundary;
pub mod capi;
pub mod code_object;
pub mod env;
pub mod gfx;
pub mod hooks;
pub mod hsa;
pub mod logging;
pub mod policy;
pub mod readers;
pub mod retained;
pub mod session;
pub mod status;
pub mod tool;
pub mod tools_lib;
pub mod version;
