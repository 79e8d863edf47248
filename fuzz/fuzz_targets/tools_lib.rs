//! `HSA_TOOLS_LIB` values (`hsa-hotswap::tools_lib`: `parse_tool_names`,
//! `names_hotswap`; the C API `hotswap_tools_lib_names_hotswap`) on arbitrary
//! bytes, UTF-8 or not.
//!
//! Input: the value. Seeds: `seeds/tools_lib.txt`. Checked against ROCr's rules
//! as the module documents them: `names_hotswap` is "ROCr returns and some
//! entry's file name (after the last `/`) is exactly `libhsa-hotswap.so`";
//! ROCr never returns exactly when the value ends in an odd run of `\`; names
//! take only bytes of the value; without quotes or backslashes every space
//! ends a name (empty ones too) and a last empty name is dropped; names written
//! back with every byte escaped and one space between them parse to the same
//! names; `x"name"` is the one entry `name` (the text before a quote is
//! dropped, spaces inside are kept). The C function answers what the Rust one
//! answers for the bytes up to the first NUL; NULL is false.
#![no_main]

use std::ffi::CString;

use hsa_hotswap::internals::capi::hotswap_tools_lib_names_hotswap;
use hsa_hotswap::internals::tools_lib::{names_hotswap, parse_tool_names, ToolNames};
use libfuzzer_sys::fuzz_target;

const TOOL: &[u8] = b"libhsa-hotswap.so";

fn is_tool(name: &[u8]) -> bool {
    name.rsplit(|&b| b == b'/').next() == Some(TOOL)
}

fn special(b: &u8) -> bool {
    matches!(b, b' ' | b'"' | b'\\')
}

fn check(value: &[u8]) {
    let parsed = parse_tool_names(value);
    let trailing = value.iter().rev().take_while(|&&b| b == b'\\').count();
    let names = match &parsed {
        ToolNames::Returned(names) => {
            assert!(
                trailing % 2 == 0,
                "{value:?}: returned despite an unpaired trailing \\"
            );
            names
        }
        ToolNames::NeverReturns { completed } => {
            assert!(
                trailing % 2 == 1,
                "{value:?}: never returns without an unpaired trailing \\"
            );
            completed
        }
    };
    let total: usize = names.iter().map(Vec::len).sum();
    assert!(total <= value.len(), "{value:?} -> {parsed:?}");
    let expected = matches!(&parsed, ToolNames::Returned(n) if n.iter().any(|n| is_tool(n)));
    assert_eq!(names_hotswap(value), expected, "{value:?} -> {parsed:?}");

    // Plain text: every space ends a name, a last empty one is dropped.
    if !value.iter().any(|b| matches!(b, b'"' | b'\\')) {
        let mut plain: Vec<Vec<u8>> = value.split(|&b| b == b' ').map(<[u8]>::to_vec).collect();
        if plain.last().is_some_and(Vec::is_empty) {
            plain.pop();
        }
        assert_eq!(parsed, ToolNames::Returned(plain), "{value:?}");
    }
    // Round trip: every byte escaped, one space between names.
    let non_empty: Vec<Vec<u8>> = names.iter().filter(|n| !n.is_empty()).cloned().collect();
    let escaped: Vec<Vec<u8>> = non_empty
        .iter()
        .map(|n| n.iter().flat_map(|&b| [b'\\', b]).collect())
        .collect();
    assert_eq!(
        parse_tool_names(&escaped.join(&b' ')),
        ToolNames::Returned(non_empty.clone()),
        "{value:?}"
    );
    // A quote drops the plain text before it; inside quotes spaces are kept.
    for (i, name) in non_empty.iter().enumerate() {
        if name.iter().any(|b| matches!(b, b'"' | b'\\')) {
            continue;
        }
        let before = non_empty
            .get(i + 1)
            .filter(|n| !n.iter().any(special))
            .map_or(&b""[..], Vec::as_slice);
        let quoted = [before, b"\"", name, b"\""].concat();
        assert_eq!(
            parse_tool_names(&quoted),
            ToolNames::Returned(vec![name.clone()]),
            "{value:?}"
        );
    }
}

fuzz_target!(init: hotswap_fuzz::init(), |data: &[u8]| {
    check(data);
    // The C function reads up to the first NUL.
    let c_value = data.split(|&b| b == 0).next().unwrap_or_default();
    check(c_value);
    let c_string = CString::new(c_value).expect("cut at the first NUL");
    // SAFETY: a NUL-terminated string that outlives the call.
    let answer = unsafe { hotswap_tools_lib_names_hotswap(c_string.as_ptr()) };
    assert_eq!(answer, names_hotswap(c_value), "{c_string:?}");
    // SAFETY: NULL is allowed.
    assert!(!unsafe { hotswap_tools_lib_names_hotswap(std::ptr::null()) });
});
