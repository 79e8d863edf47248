//! `libhsa-hotswap.so`: the HSA tools library that lets a gfx1250 A0 GPU load code
//! objects built for B0 by rewriting them through a COMGR-ABI rewriter while ROCr
//! loads them.
//!
//! The crate's Rust surface is [`cli_api`], what the `hotswap` command uses;
//! every other module is private (CONTRIBUTING.md, "The Rust surface").
//! The C API and ROCr's tool ABI are `#[no_mangle]` functions, exported from
//! the library whatever their module's visibility. With the `testing` feature
//! (fuzz targets and tests only, never shipped) `internals` also reaches the
//! parsers, the C API and the fake ROCr runtime.
//!
//! Layout (one concern per module):
//! - `cli_api`: what `hotswap doctor` and `hotswap cache` read (configuration,
//!   `HSA_TOOLS_LIB`, the gate, the backends, the rewrite cache).
//! - `capi`: the `hotswap_*` C API declared in `include/hotswap/hotswap.h`
//!   (the only `extern "C"` items besides the tool ABI). Thin shells only.
//! - `boundary`: the panic boundary every `extern "C"` function runs inside,
//!   and the one family of checked conversions of their pointer arguments.
//! - `status`: `hotswap_status_t`, the C result of the API.
//! - `version`: version numbers and the tool's file name.
//! - `config`: every environment variable, read once per `OnLoad` (and once
//!   per process for the C API).
//! - `tools_lib`: the `HSA_TOOLS_LIB` parser (ROCr's syntax).
//! - `code_object`: the `hotswap-code-object` crate (ELF, ISA identification,
//!   ISA names, metadata; no FFI) plus COMGR's answer for an unknown processor.
//! - `dl`: `dlopen`/`dlsym`, and what is loaded in the process.
//! - `fault`: test-only fault injection at the decision points (empty in a
//!   normal build).
//! - `comgr`: COMGR's data-object ABI (the ISA fallback, the COMGR-ABI backend).
//! - `rewriter`: the rewriter backends behind one interface, chosen once per
//!   process.
//! - `retarget`: the one entry of a rewrite (checks, backend, cache).
//! - `rewrite_cache`: the persistent rewrite cache shared by every process
//!   of the user (entry format, key, directory checks, locking, eviction).
//! - `coexist`: recognising ROCr's own hotswap hook (never two tools).
//! - `tool`: ROCr's tool ABI, `OnLoad`/`OnUnload` (thin shells).
//! - `hsa`: the API-table layout, the patched slots' owner, and typed calls
//!   through saved table functions.
//! - `session`: one `OnLoad`'s state and the decisions the hooks execute
//!   (safe Rust: no raw pointer reaches it).
//! - `hooks`: the functions written into ROCr's table, each one's C signature
//!   (written once), and the list of slots.
//! - `agents`: per-agent ISA name, ASIC revision and device type.
//! - `policy`: the gfx1250-A0 gate and upstream's decision table.
//! - `readers`: the bytes behind each code-object reader.
//! - `retained`: what the tool keeps while ROCr may read it (per reader and
//!   per executable); the rewrite cache.
//! - `stats`: process-wide counters (a leaf module).
//! - `testing` (tests and the `testing` feature only): a fake ROCr runtime
//!   and rewriter backend that drive the tool through a real table.
//! - `logging`: the `log` backend (stderr or syslog, `hotswap:` prefix).
//!
//! `unsafe` is denied here and allowed only in the modules that touch C.
#![deny(unsafe_code)]
// `internals` re-exports items whose documentation links to private ones.
#![cfg_attr(feature = "testing", allow(rustdoc::private_intra_doc_links))]

mod agents;
mod boundary;
mod capi;
pub mod cli_api;
mod code_object;
mod coexist;
mod comgr;
mod config;
mod digest;
mod dl;
mod fault;
mod handle_map;
mod hooks;
mod hsa;
#[cfg(feature = "testing")]
pub mod internals;
mod logging;
mod policy;
mod pretranslate;
mod readers;
mod retained;
mod retarget;
mod rewrite_cache;
mod rewriter;
mod session;
mod stats;
mod status;
#[cfg(any(test, feature = "testing"))]
pub mod testing;
mod tool;
mod tools_lib;
mod version;
