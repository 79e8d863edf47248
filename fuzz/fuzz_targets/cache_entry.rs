//! Entries of the persistent rewrite cache (`hsa-hotswap::rewrite_cache::entry`:
//! `parse`, `Header88::parse_any`, `encode`) on arbitrary bytes.
//!
//! Input: a mode byte, then the rest. Even mode: the rest is an entry, parsed
//! for the key and input size its own header names (so that parsing gets past
//! the key check): an accepted entry is canonical (encoding what it says gives
//! back its bytes exactly), is refused for any other key or input size, and
//! agrees with the header-only parse. Odd mode (every clang-22 object seed,
//! whose first byte is 0x7f): the rest is an output, stored as "rewritten" when
//! it is an AMDGPU ELF and else as a refusal with the rest as its reason; the
//! entry round-trips, and one flipped bit anywhere in it, or a cut at any
//! length, is refused.
#![no_main]

use hsa_hotswap::internals::rewrite_cache::entry::{
    encode, parse, Header88, Invalid, Kind, HEADER_LEN,
};
use libfuzzer_sys::fuzz_target;

fn whole(kind: Kind, key: &[u8; 32], input_size: u64, reason: &str, output: &[u8]) -> Vec<u8> {
    let mut e = encode(kind, key, input_size, reason, output);
    e.extend_from_slice(output);
    e
}

fn claimed(entry: &[u8]) -> Option<([u8; 32], u64)> {
    let key: [u8; 32] = entry.get(16..48)?.try_into().ok()?;
    let size = u64::from_le_bytes(entry.get(48..56)?.try_into().ok()?);
    Some((key, size))
}

fn parse_as_is(entry: &[u8]) {
    let Some((key, input_size)) = claimed(entry) else {
        assert_eq!(parse(entry, &[0; 32], 0).unwrap_err(), Invalid::Size);
        return;
    };
    let Ok((kind, reason, output)) = parse(entry, &key, input_size) else {
        return;
    };
    assert_eq!(
        whole(kind, &key, input_size, &reason, output),
        entry,
        "not canonical"
    );
    let mut other = key;
    other[0] ^= 1;
    assert_eq!(
        parse(entry, &other, input_size).unwrap_err(),
        Invalid::Foreign
    );
    assert_eq!(
        parse(entry, &key, input_size ^ 1).unwrap_err(),
        Invalid::Foreign
    );
    let header = Header88::parse_any(entry, entry.len() as u64).expect("accepted above");
    assert_eq!(
        (header.kind, header.key, header.input_size),
        (kind, key, input_size)
    );
    assert_eq!(header.output_size, output.len() as u64);
}

fn build_and_damage(rest: &[u8]) {
    let key = [0xa5; 32];
    let input_size = rest.len() as u64 * 3 + 1;
    let elf = hotswap_code_object::elf::Header::parse(rest)
        .is_ok_and(|h| h.machine == hotswap_code_object::EM_AMDGPU);
    let reason = String::from_utf8_lossy(rest).into_owned();
    let (kind, reason, output) = if elf {
        (Kind::Rewritten, String::new(), rest)
    } else {
        (Kind::Refused, reason, &[][..])
    };
    let entry = whole(kind, &key, input_size, &reason, output);
    let (k, r, o) = parse(&entry, &key, input_size).expect("a fresh entry parses");
    assert_eq!(k, kind);
    assert!(
        reason.starts_with(&r),
        "the reason is kept (or cut at a char boundary)"
    );
    assert_eq!(o, output);
    // One flipped bit, at a position and bit the input chooses.
    let at = rest.len().wrapping_mul(7919) % entry.len();
    let mut bad = entry.clone();
    bad[at] ^= 1 << (rest.len() % 8);
    assert!(
        parse(&bad, &key, input_size).is_err(),
        "flip at {at} accepted"
    );
    // Every cut shorter than the entry, at a few lengths.
    for cut in [
        0,
        HEADER_LEN - 1,
        HEADER_LEN,
        entry.len() / 2,
        entry.len() - 1,
    ] {
        if cut < entry.len() {
            assert!(
                parse(&entry[..cut], &key, input_size).is_err(),
                "cut at {cut} accepted"
            );
        }
    }
}

fuzz_target!(init: hotswap_fuzz::init(), |data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    if mode & 1 == 0 {
        parse_as_is(rest);
    } else {
        build_and_damage(rest);
    }
});
