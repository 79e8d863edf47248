//! Environment variables, read with one truthiness rule everywhere.
//!
//! Unset, empty, `0`, `off`, `false`, `no`, `n` and `f` (any case, surrounding
//! whitespace ignored) are false; anything else is true.

/// `HSA_TOOLS_LIB`: ROCr's list of tool libraries.
pub const HSA_TOOLS_LIB: &str = "HSA_TOOLS_LIB";
/// `HSA_HOTSWAP_DISABLE`: true turns the tool into a no-op.
pub const HSA_HOTSWAP_DISABLE: &str = "HSA_HOTSWAP_DISABLE";

/// The project's truthiness rule applied to an optional value.
pub fn is_true(value: Option<&str>) -> bool {
    let Some(value) = value else { return false };
    let value = value.trim();
    !(value.is_empty()
        || ["0", "off", "false", "no", "n", "f"]
            .iter()
            .any(|falsy| value.eq_ignore_ascii_case(falsy)))
}

/// Reads `name` from the environment; a value that is not UTF-8 is read lossily
/// (it is then "true" unless it spells one of the false words).
pub fn var(name: &str) -> Option<String> {
    std::env::var_os(name).map(|v| v.to_string_lossy().into_owned())
}

/// `is_true` of the variable `name`.
pub fn flag(name: &str) -> bool {
    is_true(var(name).as_deref())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn false_words() {
        for v in ["", " ", "0", "off", "OFF", "False", "no", "N", "f", " no "] {
            assert!(!is_true(Some(v)), "{v:?} must be false");
        }
        assert!(!is_true(None));
    }

    #[test]
    fn everything_else_is_true() {
        for v in ["1", "yes", "on", "true", "2", "00", "disable", "nope"] {
            assert!(is_true(Some(v)), "{v:?} must be true");
        }
    }
}
