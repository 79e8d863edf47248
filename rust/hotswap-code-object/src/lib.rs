//! AMDGPU code objects, with no FFI and no `unsafe`: what the tool, its C API and
//! the `hotswap` command line read out of code objects, testable and reusable
//! without a runtime.
//!
//! Modules, one concern each:
//! - [`elf`]: bounded ELF64 reading (header, header tables, notes);
//! - [`mach`]: the `EF_AMDGPU_MACH` table;
//! - [`isa`]: ISA identification from the 64-byte header, with COMGR's algorithm;
//! - [`isa_name`]: the one parser of ISA names (processor, features) and the ISA
//!   pairs CLR may forward to the tool;
//! - [`metadata`]: the AMDGPU metadata note (msgpack);
//! - [`object`]: [`CodeObject`], one object parsed once (header at once, the
//!   rest on first use) and shared by identification, analysis and rewriting;
//! - [`container`]: every code object in a file: bare, offload bundles,
//!   compressed bundles (`CCOB`), host binaries with a `.hip_fatbin` section;
//! - [`gfx1250`]: the gfx1250 instruction walker and the A0 classifier;
//! - [`liveness`]: per-function register liveness and the scratch-register
//!   scavenger (dead registers, above the allocation, save and restore);
//! - [`rewrite`]: the native B0→A0 rewriter (same-size fixes, fail closed).
//!
//! Every read is bounded by the input: malformed input gives an error value,
//! never a panic.
#![forbid(unsafe_code)]

pub mod container;
pub mod elf;
pub mod gfx1250;
pub mod isa;
pub mod isa_name;
pub mod liveness;
pub mod mach;
pub mod metadata;
pub mod object;
pub mod rewrite;

pub use isa::{IsaError, EM_AMDGPU, HSA_ISA_PREFIX};
pub use object::CodeObject;

/// A real gfx1250 code object (code object v5, one kernel `hotswap_kernel`),
/// built by clang-22 from `data/gfx1250-probe.cl` (see `data/README.md`). The
/// tool hands it once to a rewriter to tell a working one from COMGR's stub.
pub static GFX1250_PROBE: &[u8] = include_bytes!("../data/gfx1250-probe.co");
