//! `HSA_TOOLS_LIB` as ROCr reads it, and whether it names this tool.
//!
//! ROCr (`Runtime::LoadTools`, `parse_tool_names`) splits the value on unquoted
//! spaces; a `"` starts or ends a quoted name that may contain spaces (a closing
//! quote ends the name); a `\` makes the next character literal. Each name goes to
//! `dlopen` as-is, so it may be a bare file name or a path.

use crate::version::HOTSWAP_TOOL_LIBRARY_NAME;

/// The tool names in an `HSA_TOOLS_LIB` value, in order; empty names are dropped.
pub fn parse_tool_names(value: &str) -> Vec<String> {
    let mut names = Vec::new();
    let mut current = String::new();
    let mut quoted = false;
    let mut chars = value.chars();
    let mut finish = |current: &mut String| {
        if !current.is_empty() {
            names.push(std::mem::take(current));
        }
    };
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                if let Some(escaped) = chars.next() {
                    current.push(escaped);
                }
            }
            '"' => {
                if quoted {
                    finish(&mut current);
                }
                quoted = !quoted;
            }
            ' ' if !quoted => finish(&mut current),
            c => current.push(c),
        }
    }
    finish(&mut current);
    names
}

/// True when `name` (a path or a bare file name) is this tool: its file name, the
/// part after the last `/`, is exactly `libhsa-hotswap.so`.
pub fn is_hotswap_library(name: &str) -> bool {
    name.rsplit('/').next() == Some(HOTSWAP_TOOL_LIBRARY_NAME)
}

/// True when an `HSA_TOOLS_LIB` value names this tool among its entries.
pub fn names_hotswap(value: &str) -> bool {
    parse_tool_names(value)
        .iter()
        .any(|name| is_hotswap_library(name))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_on_spaces_and_drops_empty_entries() {
        assert_eq!(parse_tool_names("  a.so   b.so "), ["a.so", "b.so"]);
        assert!(parse_tool_names("").is_empty());
        assert!(parse_tool_names("   ").is_empty());
        assert!(parse_tool_names("\"\"").is_empty());
    }

    #[test]
    fn quotes_group_and_backslash_escapes() {
        assert_eq!(
            parse_tool_names(r#""/opt/my tools/libhsa-hotswap.so" x.so"#),
            ["/opt/my tools/libhsa-hotswap.so", "x.so"]
        );
        assert_eq!(
            parse_tool_names(r"/opt/my\ tools/a.so"),
            ["/opt/my tools/a.so"]
        );
        assert_eq!(parse_tool_names(r#"a\"b"#), [r#"a"b"#]);
        assert_eq!(parse_tool_names(r#""a"b"#), ["a", "b"]);
    }

    #[test]
    fn matches_only_the_exact_file_name() {
        assert!(names_hotswap("libhsa-hotswap.so"));
        assert!(names_hotswap("/opt/rocm/lib/libhsa-hotswap.so"));
        assert!(names_hotswap("librocprofiler64.so libhsa-hotswap.so"));
        assert!(names_hotswap(r#""/a b/libhsa-hotswap.so""#));
        assert!(names_hotswap(r"/a\ b/libhsa-hotswap.so"));
        assert!(!names_hotswap("libhsa-hotswap.so.bak"));
        assert!(!names_hotswap("mylibhsa-hotswap.so"));
        assert!(!names_hotswap("libhsa-hotswap.so/other.so"));
        assert!(!names_hotswap("libhsa-hotswap"));
        assert!(!names_hotswap(""));
        // A quoted name with a space is one entry, not two.
        assert!(!names_hotswap(r#""x libhsa-hotswap.so""#));
    }
}
