//! `hotswap_status_t`: the result of every fallible `hotswap_*` C function.
//!
//! Values are fixed once published: new statuses are appended, retired ones stay
//! reserved. C code may hand back any integer, so conversions from C go through
//! [`hotswap_status_t::from_raw`].

/// The result of a fallible hotswap C API call. `HOTSWAP_STATUS_SUCCESS` is 0.
#[repr(u32)]
#[allow(non_camel_case_types)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum hotswap_status_t {
    /// The call did what it documents.
    HOTSWAP_STATUS_SUCCESS = 0,
    /// A required pointer was NULL, a size was zero, or a string was not usable.
    HOTSWAP_STATUS_INVALID_ARGUMENT = 1,
    /// The caller's buffer is too small; the required size was stored and
    /// nothing was written to the buffer.
    HOTSWAP_STATUS_BUFFER_TOO_SMALL = 2,
    /// The bytes are not a well-formed ELF64 little-endian object (too short,
    /// bad magic, sizes or offsets that point past the end).
    HOTSWAP_STATUS_INVALID_CODE_OBJECT = 3,
    /// A well-formed ELF that is not an AMDGPU HSA code object (`e_machine` is not
    /// `EM_AMDGPU`, or the OS ABI is not `ELFOSABI_AMDGPU_HSA`).
    HOTSWAP_STATUS_NOT_AMDGPU_CODE_OBJECT = 4,
    /// An AMDGPU HSA code object of a version this library does not identify
    /// (only code object v4, v5 and v6 have an ISA name in their header).
    HOTSWAP_STATUS_UNSUPPORTED_CODE_OBJECT_VERSION = 5,
    /// The processor (`EF_AMDGPU_MACH`) is unknown here and to the linked COMGR.
    HOTSWAP_STATUS_UNKNOWN_PROCESSOR = 6,
    /// No usable rewriter: COMGR lacks the hotswap ABI, is the deprecated stub
    /// that always fails, or is the incompatible raw-buffer prototype, and no
    /// other rewriter was found.
    HOTSWAP_STATUS_REWRITER_UNAVAILABLE = 7,
    /// The rewriter returned an error, or an output that is empty or not an
    /// AMDGPU code object.
    HOTSWAP_STATUS_REWRITE_FAILED = 8,
    /// The rewriter succeeded but its output is byte-for-byte the input; the
    /// original stays in use (`*out == elf`).
    HOTSWAP_STATUS_UNCHANGED = 9,
    /// Memory for the result could not be allocated.
    HOTSWAP_STATUS_OUT_OF_MEMORY = 10,
    /// An internal error (a bug) was caught at the API boundary.
    HOTSWAP_STATUS_INTERNAL_ERROR = 11,
    /// The rewriter in use does not rewrite this ISA pair (e.g. a B0-to-A0
    /// translator asked for a same-ISA rewrite); the original stays in use.
    HOTSWAP_STATUS_REWRITE_UNSUPPORTED = 12,
    /// The rewriter refused the code object for what it contains (a site it
    /// cannot fix without growing the code, or an object it cannot translate);
    /// asking again gives the same answer. The reason is logged.
    HOTSWAP_STATUS_REWRITE_REFUSED = 13,
}

/// Every status, in value order.
const ALL_STATUSES: [hotswap_status_t; 14] = [
    hotswap_status_t::HOTSWAP_STATUS_SUCCESS,
    hotswap_status_t::HOTSWAP_STATUS_INVALID_ARGUMENT,
    hotswap_status_t::HOTSWAP_STATUS_BUFFER_TOO_SMALL,
    hotswap_status_t::HOTSWAP_STATUS_INVALID_CODE_OBJECT,
    hotswap_status_t::HOTSWAP_STATUS_NOT_AMDGPU_CODE_OBJECT,
    hotswap_status_t::HOTSWAP_STATUS_UNSUPPORTED_CODE_OBJECT_VERSION,
    hotswap_status_t::HOTSWAP_STATUS_UNKNOWN_PROCESSOR,
    hotswap_status_t::HOTSWAP_STATUS_REWRITER_UNAVAILABLE,
    hotswap_status_t::HOTSWAP_STATUS_REWRITE_FAILED,
    hotswap_status_t::HOTSWAP_STATUS_UNCHANGED,
    hotswap_status_t::HOTSWAP_STATUS_OUT_OF_MEMORY,
    hotswap_status_t::HOTSWAP_STATUS_INTERNAL_ERROR,
    hotswap_status_t::HOTSWAP_STATUS_REWRITE_UNSUPPORTED,
    hotswap_status_t::HOTSWAP_STATUS_REWRITE_REFUSED,
];

impl hotswap_status_t {
    /// The status with value `raw`, if there is one.
    pub fn from_raw(raw: u32) -> Option<Self> {
        ALL_STATUSES.get(usize::try_from(raw).ok()?).copied()
    }

    /// A short, static, NUL-terminated English description.
    pub fn description(self) -> &'static std::ffi::CStr {
        match self {
            Self::HOTSWAP_STATUS_SUCCESS => c"success",
            Self::HOTSWAP_STATUS_INVALID_ARGUMENT => c"invalid argument",
            Self::HOTSWAP_STATUS_BUFFER_TOO_SMALL => c"buffer too small",
            Self::HOTSWAP_STATUS_INVALID_CODE_OBJECT => {
                c"not a well-formed ELF64 little-endian code object"
            }
            Self::HOTSWAP_STATUS_NOT_AMDGPU_CODE_OBJECT => c"not an AMDGPU HSA code object",
            Self::HOTSWAP_STATUS_UNSUPPORTED_CODE_OBJECT_VERSION => {
                c"unsupported code object version"
            }
            Self::HOTSWAP_STATUS_UNKNOWN_PROCESSOR => c"unknown AMDGPU processor",
            Self::HOTSWAP_STATUS_REWRITER_UNAVAILABLE => c"no usable code object rewriter",
            Self::HOTSWAP_STATUS_REWRITE_FAILED => c"code object rewrite failed",
            Self::HOTSWAP_STATUS_UNCHANGED => c"rewrite left the code object unchanged",
            Self::HOTSWAP_STATUS_OUT_OF_MEMORY => c"out of memory",
            Self::HOTSWAP_STATUS_INTERNAL_ERROR => c"internal error",
            Self::HOTSWAP_STATUS_REWRITE_UNSUPPORTED => {
                c"the rewriter does not rewrite this ISA pair"
            }
            Self::HOTSWAP_STATUS_REWRITE_REFUSED => c"the rewriter refused the code object",
        }
    }
}

/// The description of an unknown status value.
pub const UNKNOWN_STATUS_DESCRIPTION: &std::ffi::CStr = c"unknown hotswap status";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_dense_and_round_trip() {
        for (i, s) in ALL_STATUSES.iter().enumerate() {
            assert_eq!(*s as u32 as usize, i);
            assert_eq!(hotswap_status_t::from_raw(i as u32), Some(*s));
        }
        assert_eq!(hotswap_status_t::from_raw(ALL_STATUSES.len() as u32), None);
        assert_eq!(hotswap_status_t::from_raw(u32::MAX), None);
    }

    #[test]
    fn descriptions_are_distinct() {
        let mut seen = std::collections::HashSet::new();
        for s in ALL_STATUSES {
            assert!(seen.insert(s.description()), "{s:?}");
        }
    }
}
