//! `HSA_TOOLS_LIB` exactly as ROCr reads it, and whether ROCr will load this tool.
//!
//! CLR asks [`names_hotswap`] whether ROCr will load the tool, so the answer must
//! be ROCr's for every value. ROCr's `Runtime::LoadTools` (`core/runtime/runtime.cpp`
//! in ROCm/ROCR-Runtime, `projects/rocr-runtime/runtime/hsa-runtime/…` in
//! ROCm/rocm-systems; read at rocm-systems `1b1610fc` and ROCR-Runtime `c7785a6d`,
//! unchanged there since 2016) reads the variable's bytes unchanged and, when they
//! are not empty, splits them with its `parse_tool_names`:
//!
//! - Outside quotes, a space ends the current name and adds it to the list, even
//!   when it is empty: `a  b` gives `a`, ``, `b`.
//! - A `"` outside quotes starts a quoted part; the text between the previous
//!   special character and that quote is dropped (`x"a"` gives `a`), while what
//!   earlier escapes had already added to the name is kept (`a\bc"d"` gives `abd`).
//! - Inside quotes a space is an ordinary character, and a `"` ends the name and
//!   adds it to the list, even when it is empty (`""` gives one empty name).
//! - A `\`, inside or outside quotes, adds the text before it and the one byte after
//!   it, whatever that byte is, to the name.
//! - At the end, the remaining text joins the name, which is added if not empty. An
//!   unterminated quote therefore makes one name of everything after it, and the
//!   text right before it is lost (`libhsa-hotswap.so"` gives no name at all).
//! - A `\` with nothing after it (the value ends in an odd run of backslashes) is
//!   never consumed: ROCr's loop finds it again forever and `hsa_init` never returns.
//!
//! ROCr then passes each name, untrimmed and in order, to `dlopen(name, RTLD_LAZY)`;
//! duplicates are loaded once (it compares the handles). Whether a name is this
//! tool is decided by the file-name rule: its file name, after the last `/`, is
//! exactly `libhsa-hotswap.so`.
//!
//! The trailing backslash: ROCr never returns, so it never reaches `dlopen` and
//! loads no tool at all, this one included. [`parse_tool_names`] returns
//! [`ToolNames::NeverReturns`] with the names ROCr had completed (for diagnostics),
//! and [`names_hotswap`] answers false: the tool will not be loaded.
//!
//! This parser makes one pass over the bytes (ROCr re-scans a shrinking string);
//! `tests/tools_lib_rocr_model.rs` holds it against a separate model of ROCr's
//! loop on generated values.

use crate::version::HOTSWAP_TOOL_LIBRARY_NAME;

/// What ROCr's parser makes of an `HSA_TOOLS_LIB` value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ToolNames {
    /// ROCr returns these names, in order (empty names included) and hands each
    /// one to `dlopen`.
    Returned(Vec<Vec<u8>>),
    /// ROCr never returns: the value ends in an unpaired `\`. `completed` holds the
    /// names it had finished when it started looping; none of them is loaded.
    NeverReturns {
        /// The names ROCr had completed before the trailing `\`.
        completed: Vec<Vec<u8>>,
    },
}

/// Parses `value` (the bytes of `HSA_TOOLS_LIB`) exactly as ROCr's
/// `parse_tool_names` does; see the module documentation for the rules.
pub fn parse_tool_names(value: &[u8]) -> ToolNames {
    let mut names = Vec::new();
    let mut name = Vec::new();
    let mut quoted = false;
    // Start of the plain text not yet added to `name` (or dropped).
    let mut plain = 0;
    let mut at = 0;
    while at < value.len() {
        match value[at] {
            b' ' if !quoted => {
                name.extend_from_slice(&value[plain..at]);
                names.push(std::mem::take(&mut name));
                plain = at + 1;
            }
            b'"' if quoted => {
                name.extend_from_slice(&value[plain..at]);
                names.push(std::mem::take(&mut name));
                quoted = false;
                plain = at + 1;
            }
            b'"' => {
                // ROCr drops the plain text right before an opening quote.
                quoted = true;
                plain = at + 1;
            }
            b'\\' => {
                let Some(&escaped) = value.get(at + 1) else {
                    return ToolNames::NeverReturns { completed: names };
                };
                name.extend_from_slice(&value[plain..at]);
                name.push(escaped);
                at += 1;
                plain = at + 1;
            }
            _ => {} // plain text, and a quoted space
        }
        at += 1;
    }
    name.extend_from_slice(&value[plain..]);
    if !name.is_empty() {
        names.push(name);
    }
    ToolNames::Returned(names)
}

/// True when `name` (a path or a bare file name, as given to `dlopen`) is this
/// tool: its file name, the part after the last `/`, is exactly
/// `libhsa-hotswap.so`.
pub fn is_hotswap_library(name: &[u8]) -> bool {
    name.rsplit(|&b| b == b'/').next() == Some(HOTSWAP_TOOL_LIBRARY_NAME.as_bytes())
}

/// True when ROCr, given `value` as `HSA_TOOLS_LIB`, will `dlopen` an entry that
/// names this tool. False when ROCr's parser never returns (trailing `\`): ROCr
/// then loads no tool at all.
pub fn names_hotswap(value: &[u8]) -> bool {
    match parse_tool_names(value) {
        ToolNames::Returned(names) => names.iter().any(|name| is_hotswap_library(name)),
        ToolNames::NeverReturns { .. } => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn returned(names: &[&str]) -> ToolNames {
        ToolNames::Returned(names.iter().map(|n| n.as_bytes().to_vec()).collect())
    }

    #[test]
    fn spaces_separate_and_keep_empty_entries() {
        assert_eq!(parse_tool_names(b"a.so b.so"), returned(&["a.so", "b.so"]));
        assert_eq!(
            parse_tool_names(b"  a.so  b.so "),
            returned(&["", "", "a.so", "", "b.so"])
        );
        assert_eq!(parse_tool_names(b""), returned(&[]));
        assert_eq!(parse_tool_names(b"\t"), returned(&["\t"]));
    }

    #[test]
    fn quotes_group_drop_the_text_before_and_end_the_name() {
        assert_eq!(
            parse_tool_names(br#""/opt/my tools/a.so" x.so"#),
            returned(&["/opt/my tools/a.so", "", "x.so"])
        );
        assert_eq!(parse_tool_names(br#"x"a b""#), returned(&["a b"]));
        assert_eq!(parse_tool_names(br#""a"b"#), returned(&["a", "b"]));
        assert_eq!(parse_tool_names(br#""""#), returned(&[""]));
        assert_eq!(parse_tool_names(br#"a.so""#), returned(&[]));
        assert_eq!(parse_tool_names(br#""a b"#), returned(&["a b"]));
        // Escapes already in the name survive the dropped text.
        assert_eq!(parse_tool_names(br#"a\bc"d""#), returned(&["abd"]));
    }

    #[test]
    fn backslash_takes_the_next_byte_whatever_it_is() {
        assert_eq!(
            parse_tool_names(br"/my\ tools/a.so"),
            returned(&["/my tools/a.so"])
        );
        assert_eq!(parse_tool_names(br#"a\"b"#), returned(&[r#"a"b"#]));
        assert_eq!(parse_tool_names(br#""a\"b""#), returned(&[r#"a"b"#]));
        assert_eq!(parse_tool_names(br"a\\"), returned(&[r"a\"]));
        assert_eq!(
            parse_tool_names(b"\\\xff"),
            ToolNames::Returned(vec![vec![0xff]])
        );
    }

    #[test]
    fn trailing_backslash_never_returns_in_rocr() {
        assert_eq!(
            parse_tool_names(br"a.so b\"),
            ToolNames::NeverReturns {
                completed: vec![b"a.so".to_vec()]
            }
        );
        assert_eq!(
            parse_tool_names(br"\\\"),
            ToolNames::NeverReturns { completed: vec![] }
        );
        assert!(!names_hotswap(br"libhsa-hotswap.so \"));
        assert!(names_hotswap(br"libhsa-hotswap.so \\"));
    }

    #[test]
    fn matches_only_the_exact_file_name() {
        assert!(names_hotswap(b"libhsa-hotswap.so"));
        assert!(names_hotswap(b"/opt/rocm/lib/libhsa-hotswap.so"));
        assert!(names_hotswap(b"librocprofiler64.so libhsa-hotswap.so"));
        assert!(names_hotswap(br#""/a b/libhsa-hotswap.so""#));
        assert!(names_hotswap(br"/a\ b/libhsa-hotswap.so"));
        assert!(names_hotswap(br#"x"libhsa-hotswap.so""#));
        assert!(!names_hotswap(br#"libhsa-hotswap.so""#));
        assert!(!names_hotswap(b"libhsa-hotswap.so.bak"));
        assert!(!names_hotswap(b"mylibhsa-hotswap.so"));
        assert!(!names_hotswap(b"libhsa-hotswap.so/other.so"));
        assert!(!names_hotswap(b"/x/libhsa-hotswap.so/"));
        assert!(!names_hotswap(b"libhsa-hotswap"));
        assert!(!names_hotswap(b""));
        assert!(!names_hotswap(br#""x libhsa-hotswap.so""#));
    }
}
