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
//! - [`config`]: every environment variable, read once per `OnLoad` (and once
//!   per process for the C API).
//! - [`tools_lib`]: the `HSA_TOOLS_LIB` parser (ROCr's syntax).
//! - [`code_object`]: the `hotswap-code-object` crate (ELF, ISA identification,
//!   ISA names, metadata; no FFI) plus COMGR's answer for an unknown processor.
//! - [`dl`]: `dlopen`/`dlsym`, and what is loaded in the process.
//! - [`fault`]: test-only fault injection at the decision points (empty in a
//!   normal build).
//! - [`comgr`]: COMGR's data-object ABI (the ISA fallback, the COMGR-ABI backend).
//! - [`rewriter`]: the rewriter backends behind one interface, chosen once per
//!   process.
//! - [`rewrite_cache`]: the persistent rewrite cache shared by every process
//!   of the user (entry format, key, directory checks, locking, eviction).
//! - [`coexist`]: recognising ROCr's own hotswap hook (never two tools).
//! - [`tool`]: ROCr's tool ABI, `OnLoad`/`OnUnload` (thin shells).
//! - [`hsa`]: the API-table layout, the patched slots' owner, and typed calls
//!   through saved table functions.
//! - [`session`]: one `OnLoad`'s state and the decisions the hooks execute
//!   (safe Rust: no raw pointer reaches it).
//! - [`hooks`]: the functions written into ROCr's table, each one's C signature
//!   (written once), and the list of slots.
//! - [`agents`]: per-agent ISA name, ASIC revision and device type.
//! - [`policy`]: the gfx1250-A0 gate and upstream's decision table.
//! - [`readers`]: the bytes behind each code-object reader.
//! - [`retained`]: what the tool keeps while ROCr may read it (per reader and
//!   per executable); the rewrite cache.
//! - [`stats`]: process-wide counters (a leaf module).
//! - `testing` (tests and the `testing` feature only): a fake ROCr runtime
//!   and rewriter backend that drive the tool through a real table.
//! - [`logging`]: the `log` backend (stderr or syslog, `hotswap:` prefix).
//!
//! `unsafe` is denied here and allowed only in the modules that touch C.
#![deny(unsafe_code)]

pub mod agents;
pub mod boundary;
pub mod capi;
pub mod code_object;
pub mod coexist;
pub mod comgr;
pub mod config;
pub mod dl;
pub mod fault;
mod handle_map;
pub mod hooks;
pub mod hsa;
pub mod logging;
pub mod policy;
pub mod readers;
pub mod retained;
pub mod retarget;
pub mod rewrite_cache;
pub mod rewriter;
pub mod session;
pub mod stats;
pub mod status;
#[cfg(any(test, feature = "testing"))]
pub mod testing;
pub mod tool;
pub mod tools_lib;
pub mod version;
