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
//! - [`env`]: the one truthiness rule for environment variables.
//! - [`tools_lib`]: the `HSA_TOOLS_LIB` parser (ROCr's syntax).
//! - [`gfx`]: processor names inside ISA names, and the CLR forwarding allowlist.
//! - [`tool`]: ROCr's tool ABI, `OnLoad`/`OnUnload`.
//!
//! `unsafe` is denied here and allowed only in the modules that touch C.
#![deny(unsafe_code)]

pub mod boundary;
pub mod capi;
pub mod code_object;
pub mod env;
pub mod gfx;
pub mod status;
pub mod tool;
pub mod tools_lib;
pub mod version;
