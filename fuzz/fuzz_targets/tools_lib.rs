//! `HSA_TOOLS_LIB` values (`hsa-hotswap::tools_lib`: `parse_tool_names`,
//! `names_hotswap`; the C API `hotswap_tools_lib_names_hotswap`) on arbitrary
//! bytes, UTF-8 or not.
//!
//! Input: the value. Seeds: `seeds/tools_lib.txt`. Checked: `names_hotswap`
//! is "some parsed entry's file name (after the last `/`) is exactly
//! `libhsa-hotswap.so`"; the C function answers what the Rust one answers for
//! the same bytes (read up to the first NUL; not UTF-8: lossily); NULL is
//! false; names written back with every character escaped (`\`, ROCr's
//! escape) and separated by spaces parse to the same names; a name without
//! `"` or `\` in quotes is one entry, spaces and all.
#![no_main]

use std::ffi::CString;

use hsa_hotswap::capi::hotswap_tools_lib_names_hotswap;
use hsa_hotswap::tools_lib::{names_hotswap, parse_tool_names};
use libfuzzer_sys::fuzz_target;

const TOOL: &str = "libhsa-hotswap.so";

fn check(value: &str) {
    let names = parse_tool_names(value);
    let total: usize = names.iter().map(String::len).sum();
    assert!(total <= value.len(), "{names:?} from {value:?}");
    assert_eq!(
        names_hotswap(value),
        names.iter().any(|n| n.rsplit('/').next() == Some(TOOL)),
        "{value:?} -> {names:?}"
    );
    // Round trip: every character escaped, one space between names.
    let non_empty: Vec<&String> = names.iter().filter(|n| !n.is_empty()).collect();
    let escaped: Vec<String> = non_empty
        .iter()
        .map(|n| n.chars().flat_map(|c| ['\\', c]).collect())
        .collect();
    let again = parse_tool_names(&escaped.join(" "));
    let again: Vec<&String> = again.iter().filter(|n| !n.is_empty()).collect();
    assert_eq!(again, non_empty, "{value:?}");
    // Quotes group: a name without `"` or `\`, spaces included, in quotes is
    // one entry.
    for name in non_empty.iter().filter(|n| !n.contains(['"', '\\'])) {
        let quoted = parse_tool_names(&format!("\"{name}\""));
        assert_eq!(quoted, [name.as_str()], "{value:?}");
    }
}

fuzz_target!(init: hotswap_fuzz::init(), |data: &[u8]| {
    if let Ok(value) = std::str::from_utf8(data) {
        check(value);
    }
    // The C function reads up to the first NUL.
    let c_value = data.split(|&b| b == 0).next().unwrap_or_default();
    let lossy = String::from_utf8_lossy(c_value);
    check(&lossy);
    let c_value = CString::new(c_value).expect("no NUL before the first NUL");
    // SAFETY: a NUL-terminated string that outlives the call.
    let answer = unsafe { hotswap_tools_lib_names_hotswap(c_value.as_ptr()) };
    assert_eq!(answer, names_hotswap(&lossy), "{c_value:?}");
    // SAFETY: NULL is allowed.
    assert!(!unsafe { hotswap_tools_lib_names_hotswap(std::ptr::null()) });
});
