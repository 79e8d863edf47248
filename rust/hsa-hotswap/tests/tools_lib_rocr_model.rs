//! `HSA_TOOLS_LIB` parsing held against a reference model of ROCr's own parser.
//!
//! The model below is a separate, step-by-step transcription of what ROCr's
//! `parse_tool_names` (`core/runtime/runtime.cpp`, unchanged from the 2016
//! import in ROCm/ROCR-Runtime up to ROCm/rocm-systems' `projects/rocr-runtime`)
//! does to the value: it keeps the unparsed rest of the string, repeatedly finds
//! the first space, quote or backslash in it and acts on that character, erasing
//! what it consumed. It is written the way ROCr works (re-scanning a shrinking
//! string), not the way the product works (one pass with an index), so that the
//! two share no code. ROCr never returns for some inputs; the model stops after a
//! step budget that a terminating run can never exceed and reports that instead.
//!
//! The tests compare the product's parser and its `names_hotswap` answer with the
//! model on a fixed table (the disagreements found by fuzzing the first
//! implementation), on every string of up to six tokens from a small alphabet,
//! and on many random longer strings biased to the characters that matter.

use hsa_hotswap::cli_api::{names_hotswap, parse_tool_names, ToolNames};

/// ROCr's result for a value: `Ok(names)` when `parse_tool_names` returns, and
/// `Err(names)` when it never returns (`names`: those it had completed).
type RocrResult = Result<Vec<Vec<u8>>, Vec<Vec<u8>>>;

/// The reference model of ROCr's `parse_tool_names`.
fn rocr_parse_tool_names(value: &[u8]) -> RocrResult {
    let mut rest = value.to_vec(); // the part of the value not yet consumed
    let mut name = Vec::new(); // the name being built
    let mut names = Vec::new();
    let mut quoted = false;
    // Every pass that does not loop forever erases at least one byte of `rest`,
    // so a run that returns makes at most `value.len()` passes.
    let mut passes = 0usize;
    while !rest.is_empty() {
        passes += 1;
        if passes > value.len() {
            return Err(names);
        }
        let Some(at) = rest.iter().position(|b| matches!(b, b' ' | b'"' | b'\\')) else {
            // No special character left: the rest joins the name; the loop ends.
            name.extend_from_slice(&rest);
            break;
        };
        match rest[at] {
            b' ' if !quoted => {
                // An unquoted space ends the name (even an empty one).
                name.extend_from_slice(&rest[..at]);
                rest.drain(..=at);
                names.push(std::mem::take(&mut name));
            }
            b' ' => {
                // A quoted space is part of the name.
                name.extend_from_slice(&rest[..=at]);
                rest.drain(..=at);
            }
            b'"' if quoted => {
                // A closing quote ends the name (even an empty one).
                quoted = false;
                name.extend_from_slice(&rest[..at]);
                rest.drain(..=at);
                names.push(std::mem::take(&mut name));
            }
            b'"' => {
                // An opening quote: the text between the last special character
                // and the quote is erased without joining the name.
                quoted = true;
                rest.drain(..=at);
            }
            b'\\' => {
                // The text before it and the next byte join the name; a
                // backslash with nothing after it is left where it is, so the
                // next pass finds it again, forever.
                if rest.len() > at + 1 {
                    name.extend_from_slice(&rest[..at]);
                    name.push(rest[at + 1]);
                    rest.drain(..at + 2);
                }
            }
            _ => unreachable!("position() found one of the three"),
        }
    }
    if !name.is_empty() {
        names.push(name);
    }
    Ok(names)
}

/// What ROCr then does with the names: `dlopen` each one as given. The tool is
/// loaded under the file-name rule when an entry's file name (after the last
/// `/`) is `libhsa-hotswap.so`; never when the parser does not return.
fn rocr_loads_hotswap(value: &[u8]) -> bool {
    rocr_parse_tool_names(value).is_ok_and(|names| {
        names
            .iter()
            .any(|n| n.rsplit(|&b| b == b'/').next() == Some(b"libhsa-hotswap.so".as_slice()))
    })
}

/// The product, in the model's terms.
fn product(value: &[u8]) -> RocrResult {
    match parse_tool_names(value) {
        ToolNames::Returned(names) => Ok(names),
        ToolNames::NeverReturns { completed } => Err(completed),
    }
}

fn show(value: &[u8]) -> String {
    value.escape_ascii().to_string()
}

/// Compares the product with the model on one value; the failure message names it.
fn check(value: &[u8]) {
    let (ours, rocr) = (product(value), rocr_parse_tool_names(value));
    let shown = |r: &RocrResult| match r {
        Ok(n) => format!(
            "returns {:?}",
            n.iter().map(|n| show(n)).collect::<Vec<_>>()
        ),
        Err(n) => format!(
            "never returns after {:?}",
            n.iter().map(|n| show(n)).collect::<Vec<_>>()
        ),
    };
    assert!(
        ours == rocr,
        "HSA_TOOLS_LIB=\"{}\": ROCr {}; ours {}",
        show(value),
        shown(&rocr),
        shown(&ours)
    );
    assert_eq!(
        names_hotswap(value),
        rocr_loads_hotswap(value),
        "HSA_TOOLS_LIB=\"{}\": does ROCr load the tool?",
        show(value)
    );
}

#[test]
fn model_answers_the_known_cases() {
    // The model itself, on cases worked out by hand from ROCr's steps.
    let ok = |names: &[&str]| -> RocrResult {
        Ok(names.iter().map(|n| n.as_bytes().to_vec()).collect())
    };
    assert_eq!(rocr_parse_tool_names(b"a b"), ok(&["a", "b"]));
    assert_eq!(rocr_parse_tool_names(b"a  b "), ok(&["a", "", "b"]));
    assert_eq!(rocr_parse_tool_names(b"x\"a b\"c"), ok(&["a b", "c"]));
    assert_eq!(rocr_parse_tool_names(b"a\\bc\"d\""), ok(&["abd"]));
    assert_eq!(rocr_parse_tool_names(b"a\\"), Err(vec![]));
    assert_eq!(rocr_parse_tool_names(b"a b\\"), Err(vec![b"a".to_vec()]));
    assert_eq!(rocr_parse_tool_names(b"a\\\\"), ok(&["a\\"]));
}

/// The disagreements fuzzing found in the first implementation, and the other
/// corners of ROCr's parser, each with ROCr's answer.
#[test]
fn known_disagreements_follow_rocr() {
    let table: &[(&[u8], bool)] = &[
        // Text right before an opening quote is dropped: loads.
        (b"x\"libhsa-hotswap.so\"", true),
        (b"/opt/rocm/lib/\"libhsa-hotswap.so\"", true),
        // An opening quote with no closing one: the text before it is dropped
        // and what follows is one name.
        (b"libhsa-hotswap.so\"", false),
        (b"\"libhsa-hotswap.so", true),
        (b"\"/opt/my tools/libhsa-hotswap.so", true),
        // A trailing unpaired backslash: ROCr never returns, so never loads.
        (b"libhsa-hotswap.so\\", false),
        (b"libhsa-hotswap.so \\", false),
        (b"libhsa-hotswap.so x\\\\\\", false),
        // An escaped backslash at the end is a character of the name.
        (b"libhsa-hotswap.so\\\\", false),
        (b"libhsa-hotswap.so \\\\", true),
        // Empty entries are entries (dlopen("") is the main program).
        (b"a  libhsa-hotswap.so", true),
        (b"\"\"", false),
        // A closing quote ends the name; what follows starts the next one.
        (b"\"a\"libhsa-hotswap.so", true),
        (b"\"x libhsa-hotswap.so\"", false),
        // A backslash escapes any byte, inside or outside quotes.
        (b"lib\\hsa-hotswap.so", true),
        (b"\\\"libhsa-hotswap.so\\\"", false),
        (b"\"/a\\\"b/libhsa-hotswap.so\"", true),
        (b"/opt/my\\ tools/libhsa-hotswap.so", true),
        // Only the space separates: a tab is part of the name.
        (b"x\tlibhsa-hotswap.so", false),
        // Bytes, not characters: a non-UTF-8 byte is kept as it is.
        (b"\xff/libhsa-hotswap.so", true),
        (b"\\\xff libhsa-hotswap.so", true),
    ];
    for &(value, loads) in table {
        assert_eq!(rocr_loads_hotswap(value), loads, "model: {}", show(value));
        check(value);
    }
}

/// The alphabet of the generated inputs: the three special characters, the path
/// separator, the tool's name and fragments of it, a tab and a non-UTF-8 byte.
const TOKENS: &[&[u8]] = &[
    b" ",
    b"\"",
    b"\\",
    b"/",
    b"libhsa-hotswap.so",
    b"x",
    b"\t",
    b"\xff",
];

#[test]
fn every_short_combination_matches_rocr() {
    // Every sequence of up to six tokens: 8^0 + ... + 8^6 = 299,593 values.
    let mut value = Vec::new();
    let mut digits = Vec::new();
    for len in 0..=6u32 {
        for mut n in 0..TOKENS.len().pow(len) {
            digits.clear();
            for _ in 0..len {
                digits.push(n % TOKENS.len());
                n /= TOKENS.len();
            }
            value.clear();
            for &d in &digits {
                value.extend_from_slice(TOKENS[d]);
            }
            check(&value);
        }
    }
}

/// SplitMix64: a small, seeded, reproducible generator.
struct SplitMix64(u64);

impl SplitMix64 {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

#[test]
fn random_long_values_match_rocr() {
    // Weighted pieces: the special characters most often, whole and partial tool
    // names, paths, and a few other bytes.
    const PIECES: &[(&[u8], usize)] = &[
        (b" ", 8),
        (b"\"", 8),
        (b"\\", 8),
        (b"/", 4),
        (b"libhsa-hotswap.so", 4),
        (b"libhsa-", 2),
        (b"hotswap.so", 2),
        (b"/opt/rocm/lib/", 2),
        (b".so", 1),
        (b"x", 2),
        (b"\t", 1),
        (b"\xc3\xa9", 1),
        (b"\xff", 1),
    ];
    let total: usize = PIECES.iter().map(|p| p.1).sum();
    let mut rng = SplitMix64(0x0005_eed0_f202);
    let mut value = Vec::new();
    for _ in 0..100_000 {
        value.clear();
        for _ in 0..rng.below(24) {
            let mut pick = rng.below(total);
            let piece = PIECES
                .iter()
                .find(|p| {
                    let hit = pick < p.1;
                    pick = pick.saturating_sub(p.1);
                    hit
                })
                .expect("pick < total");
            value.extend_from_slice(piece.0);
        }
        check(&value);
    }
}

#[test]
fn long_values_return_quickly() {
    // One pass with an index: a megabyte of separators, quotes or escapes, and
    // a trailing backslash after all of them, each return at once.
    for unit in [&b" "[..], b"\"", b"\\\\", b"\"a b\" "] {
        let mut value = unit.repeat((1 << 20) / unit.len());
        let _ = parse_tool_names(&value);
        value.push(b'\\');
        assert!(!names_hotswap(&value));
    }
}
