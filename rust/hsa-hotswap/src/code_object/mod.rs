//! Code objects: which ISA one was built for, and rewriting one for another ISA.
//!
//! Interface used by the tool (`crate::tool`) and the C API (`crate::capi`):
//! - [`isa_name`]: the ISA name COMGR's `amd_comgr_get_data_isa_name` would give.
//! - [`rewriter::retarget`]: the COMGR-ABI rewriter client.
//!
//! - [`metadata::read`]: the AMDGPU metadata note (target, kernels).
//!
//! Modules, one concern each: [`elf`] (bounded ELF64 reading), [`mach`] (the
//! `EF_AMDGPU_MACH` table), [`isa`] (COMGR's naming algorithm), [`metadata`] (the
//! msgpack note), [`comgr`] (loading COMGR-ABI libraries, data objects),
//! [`rewriter`] (the rewriter client).

pub mod comgr;
pub mod elf;
pub mod isa;
pub mod mach;
pub mod metadata;
pub mod rewriter;

use crate::status::hotswap_status_t;

/// Why a code object's ISA could not be identified. Each maps to one
/// `hotswap_status_t` (see [`IsaError::status`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum IsaError {
    /// Not a well-formed ELF64 little-endian object.
    InvalidCodeObject(&'static str),
    /// A well-formed ELF that is not an AMDGPU HSA code object.
    NotAmdgpu(&'static str),
    /// An AMDGPU code object version without an ISA name in its header.
    UnsupportedVersion(u8),
    /// An `EF_AMDGPU_MACH` value neither this library nor the linked COMGR knows.
    UnknownProcessor(u32),
}

impl IsaError {
    /// The C status for this error.
    pub fn status(&self) -> hotswap_status_t {
        match self {
            Self::InvalidCodeObject(_) => hotswap_status_t::HOTSWAP_STATUS_INVALID_CODE_OBJECT,
            Self::NotAmdgpu(_) => hotswap_status_t::HOTSWAP_STATUS_NOT_AMDGPU_CODE_OBJECT,
            Self::UnsupportedVersion(_) => {
                hotswap_status_t::HOTSWAP_STATUS_UNSUPPORTED_CODE_OBJECT_VERSION
            }
            Self::UnknownProcessor(_) => hotswap_status_t::HOTSWAP_STATUS_UNKNOWN_PROCESSOR,
        }
    }
}

/// The ISA name of a code object, e.g. `amdgcn-amd-amdhsa--gfx1250` or
/// `amdgcn-amd-amdhsa--gfx942:sramecc+:xnack-`, exactly as COMGR names it.
/// Reads the ELF header only (constant time in the object's size).
/// A processor missing from the table is asked of the linked COMGR.
pub fn isa_name(code_object: &[u8]) -> Result<String, IsaError> {
    isa::isa_name(code_object)
}

/// The processor a code object was built for (`gfx1250`, `gfx12-5-generic`),
/// from the ELF header, without allocating for any processor in the table: the
/// question the tool asks of every new reader. A processor missing from the
/// table is named by the linked COMGR, as in [`isa_name`].
pub fn processor(code_object: &[u8]) -> Result<std::borrow::Cow<'static, str>, IsaError> {
    isa::processor(code_object)
}
