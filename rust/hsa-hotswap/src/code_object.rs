//! Code objects as the tool and its C API see them: the FFI-free reading lives
//! in the `hotswap-code-object` crate (re-exported here); this module adds what
//! needs C — asking the linked COMGR for a processor the table lacks — and the
//! mapping of errors to `hotswap_status_t`.
//!
//! - [`isa_name`]: the ISA name COMGR's `amd_comgr_get_data_isa_name` would give.
//! - [`processor`]: the processor alone, allocation-free for known processors:
//!   the one answer to "the processor of this object" for memory readers,
//!   file readers and loads alike.
//!
//! Both take a [`CodeObject`], the view parsed once per object and then
//! handed on to the policy and the rewriter.

use std::borrow::Cow;

use crate::boundary::{Out, OutBuffer};
use crate::comgr;

pub use hotswap_code_object::{isa, CodeObject, IsaError, HSA_ISA_PREFIX};

use crate::status::hotswap_status_t;

/// The C status for an identification error.
pub fn isa_error_status(error: &IsaError) -> hotswap_status_t {
    match error {
        IsaError::InvalidCodeObject(_) => hotswap_status_t::HOTSWAP_STATUS_INVALID_CODE_OBJECT,
        IsaError::NotAmdgpu(_) => hotswap_status_t::HOTSWAP_STATUS_NOT_AMDGPU_CODE_OBJECT,
        IsaError::UnsupportedVersion(_) => {
            hotswap_status_t::HOTSWAP_STATUS_UNSUPPORTED_CODE_OBJECT_VERSION
        }
        IsaError::UnknownProcessor(_) => hotswap_status_t::HOTSWAP_STATUS_UNKNOWN_PROCESSOR,
    }
}

/// The ISA name of a code object, e.g. `amdgcn-amd-amdhsa--gfx1250` or
/// `amdgcn-amd-amdhsa--gfx942:sramecc+:xnack-`, exactly as COMGR names it.
/// Native and constant time for every processor in the table; an unknown
/// `EF_AMDGPU_MACH` is asked of the linked COMGR (`amd_comgr_get_data_isa_name`),
/// whose answer is accepted only if it is an HSA ISA name.
pub fn isa_name(object: &CodeObject<'_>) -> Result<String, IsaError> {
    match object.isa_name() {
        Err(IsaError::UnknownProcessor(mach)) => match comgr::linked_isa_name(object.bytes()) {
            Ok(name) if name.starts_with(HSA_ISA_PREFIX) && name.len() > HSA_ISA_PREFIX.len() => {
                log::info!(
                    "EF_AMDGPU_MACH {mach:#x} is not in the table; the linked COMGR names it {name}"
                );
                Ok(name)
            }
            Ok(_) | Err(_) => Err(IsaError::UnknownProcessor(mach)),
        },
        other => other,
    }
}

/// `hotswap_code_object_isa_name` after its argument checks: identifies
/// `code_object`, then sets `*name_size` to the size the name needs (NUL
/// included) and, unless `name` is NULL (a size query), writes the name into
/// it when it fits (`HOTSWAP_STATUS_BUFFER_TOO_SMALL` otherwise, nothing
/// written). An object not identified writes nothing and gives its status.
pub fn write_isa_name(
    code_object: &[u8],
    name: Option<OutBuffer<'_>>,
    mut name_size: Out<'_, usize>,
) -> hotswap_status_t {
    let isa_name = match CodeObject::parse(code_object).and_then(|o| isa_name(&o)) {
        Ok(isa_name) => isa_name,
        Err(e) => {
            log::info!("hotswap_code_object_isa_name: {e:?}");
            return isa_error_status(&e);
        }
    };
    name_size.write(isa_name.len() + 1);
    let Some(mut name) = name else {
        return hotswap_status_t::HOTSWAP_STATUS_SUCCESS;
    };
    if name.write_c_string(isa_name.as_bytes()) {
        hotswap_status_t::HOTSWAP_STATUS_SUCCESS
    } else {
        hotswap_status_t::HOTSWAP_STATUS_BUFFER_TOO_SMALL
    }
}

/// The processor of a code object (`gfx1250`, `gfx12-5-generic`): native and
/// allocation-free for every processor in the table; an unknown
/// `EF_AMDGPU_MACH` goes through [`isa_name`] (the linked COMGR).
pub fn processor(object: &CodeObject<'_>) -> Result<Cow<'static, str>, IsaError> {
    match object.processor() {
        Ok(processor) => Ok(Cow::Borrowed(processor)),
        Err(IsaError::UnknownProcessor(_)) => {
            let name = isa_name(object)?;
            let processor = hotswap_code_object::isa_name::processor_of(&name);
            Ok(Cow::Owned(processor.to_owned()))
        }
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_mach_asks_comgr_and_never_guesses() {
        // 0x27 is reserved: not in the table, and no COMGR names it either.
        let mut h = vec![0u8; 64];
        h[..4].copy_from_slice(b"\x7fELF");
        h[4..7].copy_from_slice(&[2, 1, 1]);
        h[7] = isa::ELFOSABI_AMDGPU_HSA;
        h[8] = 2;
        h[18..20].copy_from_slice(&hotswap_code_object::EM_AMDGPU.to_le_bytes());
        h[48] = 0x27;
        let object = CodeObject::parse(&h).unwrap();
        assert_eq!(isa_name(&object), Err(IsaError::UnknownProcessor(0x27)));
        assert_eq!(processor(&object), Err(IsaError::UnknownProcessor(0x27)));
    }

    #[test]
    fn every_error_has_its_own_status() {
        let statuses = [
            isa_error_status(&IsaError::InvalidCodeObject("x")),
            isa_error_status(&IsaError::NotAmdgpu("x")),
            isa_error_status(&IsaError::UnsupportedVersion(1)),
            isa_error_status(&IsaError::UnknownProcessor(0x27)),
        ];
        for (i, a) in statuses.iter().enumerate() {
            assert!(statuses[i + 1..].iter().all(|b| a != b));
        }
    }
}
