//! The rocjitsu translator's C ABI as this tool declares it: the library's
//! names, `rj_status_t`, the info and diagnostic structs, the function types of
//! each API shape ([`Entry`]), and the FNV-1a-64 source id. Declarations only;
//! the calls are in [`super::call`], the shape detection in [`super::load`].

use std::ffi::{c_char, c_int, c_void, CStr};

/// The translator library's SONAME (the name ROCr's hook is linked against).
pub const SONAME: &str = "librocjitsu_gfx1250_b0_to_a0.so.0";

/// The translator's entry point (shape (a) or (c); (b)'s four-argument wrapper).
pub(super) const TRANSLATE_SYMBOL: &CStr = c"rj_gfx1250_b0_to_a0_translate";
/// Shape (b)'s entry point.
pub(super) const TRANSLATE_WITH_INFO_SYMBOL: &CStr = c"rj_gfx1250_b0_to_a0_translate_with_info";
/// The translator's release function (`free()`), every shape.
pub(super) const FREE_SYMBOL: &CStr = c"rj_gfx1250_b0_to_a0_free";

/// The file name a loaded ROCr has (`libhsa-runtime64.so`, `.so.1`, `.so.1.x.y`).
/// `rj_status_t`: a C enum, passed as `int`.
pub(super) type Status = c_int;
pub(super) const STATUS_SUCCESS: Status = 0;
pub(super) const STATUS_ERROR: Status = 1;
pub(super) const STATUS_INVALID_ARGUMENT: Status = 2;
pub(super) const STATUS_OUT_OF_RESOURCES: Status = 3;
pub(super) const STATUS_INVALID_CODE_OBJECT: Status = 4;
pub(super) const STATUS_INVALID_FILE: Status = 5;

/// The name of an `rj_status_t` value, for log lines.
pub(super) fn status_name(status: Status) -> &'static str {
    match status {
        STATUS_SUCCESS => "SUCCESS",
        STATUS_ERROR => "ERROR",
        STATUS_INVALID_ARGUMENT => "INVALID_ARGUMENT",
        STATUS_OUT_OF_RESOURCES => "OUT_OF_RESOURCES",
        STATUS_INVALID_CODE_OBJECT => "INVALID_CODE_OBJECT",
        STATUS_INVALID_FILE => "INVALID_FILE",
        _ => "an unknown status",
    }
}

/// `rj_gfx1250_b0_to_a0_translation_info_t` (shapes (b) and (c)): no size or
/// version member.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct TranslationInfo {
    /// FNV-1a-64 of the whole input.
    pub(super) source_code_object_id: u64,
    pub(super) changed_instruction_count: usize,
}
const _: () = assert!(std::mem::size_of::<TranslationInfo>() == 16);

/// What `info` holds before a call: a value no translator leaves (shape (c)
/// clears the struct before anything else, and no count reaches `usize::MAX`).
pub(super) const SENTINEL: TranslationInfo = TranslationInfo {
    source_code_object_id: 0x686f_7473_7761_7021, // "hotswap!"
    changed_instruction_count: usize::MAX,
};

/// `rj_gfx1250_b0_to_a0_diagnostic_t` (shape (c)); the strings are valid only
/// during the callback.
#[repr(C)]
#[derive(Debug)]
pub(super) struct Diagnostic {
    pub(super) severity: *const c_char,
    pub(super) kind: *const c_char,
    pub(super) has_guest_offset: c_int,
    pub(super) guest_offset: u64,
    pub(super) mnemonic: *const c_char,
    pub(super) message: *const c_char,
    pub(super) required_work: c_int,
}

/// `rj_gfx1250_b0_to_a0_diagnostic_callback_t`.
pub(super) type DiagnosticCallback = unsafe extern "C" fn(*const Diagnostic, *mut c_void);

/// Shape (a), and (b)'s wrapper.
pub(super) type TranslateFn =
    unsafe extern "C" fn(*const c_void, usize, *mut *mut u8, *mut usize) -> Status;
/// Shape (b).
pub(super) type TranslateWithInfoFn = unsafe extern "C" fn(
    *const c_void,
    usize,
    *mut *mut u8,
    *mut usize,
    *mut TranslationInfo,
) -> Status;
/// Shape (c).
pub(super) type TranslateWithCallbackFn = unsafe extern "C" fn(
    *const c_void,
    usize,
    *mut *mut u8,
    *mut usize,
    *mut TranslationInfo,
    Option<DiagnosticCallback>,
    *mut c_void,
) -> Status;
/// `rj_gfx1250_b0_to_a0_free`.
pub(super) type FreeFn = unsafe extern "C" fn(*mut c_void);

/// The entry point of a library whose shape is known, with its declaration.
#[derive(Clone, Copy, Debug)]
pub(super) enum Entry {
    /// (a): the four-argument `rj_gfx1250_b0_to_a0_translate`.
    Plain(TranslateFn),
    /// (b): `rj_gfx1250_b0_to_a0_translate_with_info`.
    WithInfo(TranslateWithInfoFn),
    /// (c): the seven-argument `rj_gfx1250_b0_to_a0_translate`.
    WithCallback(TranslateWithCallbackFn),
}

impl Entry {
    /// The shape, for log lines.
    pub(super) fn shape(self) -> &'static str {
        match self {
            Self::Plain(_) => "(a): 4-argument rj_gfx1250_b0_to_a0_translate",
            Self::WithInfo(_) => "(b): rj_gfx1250_b0_to_a0_translate_with_info",
            Self::WithCallback(_) => {
                "(c): 7-argument rj_gfx1250_b0_to_a0_translate with diagnostics"
            }
        }
    }
}

/// FNV-1a-64, the translator's source id.
pub(super) fn fnv1a64(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, &b| {
        (hash ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use hotswap_code_object::GFX1250_PROBE;

    #[test]
    pub(super) fn the_sentinel_is_not_what_shape_c_leaves_after_the_probe() {
        assert_ne!(SENTINEL.source_code_object_id, 0);
        assert_ne!(SENTINEL.source_code_object_id, fnv1a64(GFX1250_PROBE));
        assert_eq!(fnv1a64(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a64(b"a"), 0xaf63_dc4c_8601_ec8c); // the published FNV-1a-64 vector
    }

    #[test]
    pub(super) fn status_names() {
        assert_eq!(status_name(0), "SUCCESS");
        assert_eq!(status_name(4), "INVALID_CODE_OBJECT");
        assert_eq!(status_name(5), "INVALID_FILE");
        assert_eq!(status_name(-1), "an unknown status");
        assert_eq!(status_name(6), "an unknown status");
    }
}
