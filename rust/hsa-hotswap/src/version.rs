//! Version numbers and the tool's file name, as C sees them.
//!
//! The numbers are checked against `Cargo.toml` (unit test) and against the CMake
//! project version and the generated header (ctest).

/// The file name of the tool library, as ROCr's `HSA_TOOLS_LIB` and CLR's gate
/// must name it.
pub const HOTSWAP_TOOL_LIBRARY_NAME: &str = "libhsa-hotswap.so";

// The version numbers are the C API's (cbindgen writes them into hotswap.h);
// Rust reads them only in the test below.

/// Major version of this library (semantic versioning of the C API).
#[allow(dead_code)]
pub const HOTSWAP_VERSION_MAJOR: u32 = 0;
/// Minor version.
#[allow(dead_code)]
pub const HOTSWAP_VERSION_MINOR: u32 = 1;
/// Patch version.
#[allow(dead_code)]
pub const HOTSWAP_VERSION_PATCH: u32 = 0;

/// `MAJOR.MINOR.PATCH`, NUL-terminated, for `hotswap_version()`.
pub const VERSION_CSTR: &std::ffi::CStr = c"0.1.0";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_cargo_toml() {
        let parse = |s: &str| s.parse::<u32>().unwrap();
        assert_eq!(
            HOTSWAP_VERSION_MAJOR,
            parse(env!("CARGO_PKG_VERSION_MAJOR"))
        );
        assert_eq!(
            HOTSWAP_VERSION_MINOR,
            parse(env!("CARGO_PKG_VERSION_MINOR"))
        );
        assert_eq!(
            HOTSWAP_VERSION_PATCH,
            parse(env!("CARGO_PKG_VERSION_PATCH"))
        );
        assert_eq!(VERSION_CSTR.to_str().unwrap(), env!("CARGO_PKG_VERSION"));
    }
}
