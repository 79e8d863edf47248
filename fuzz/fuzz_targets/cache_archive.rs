//! The export/import archive of the rewrite cache
//! (`hsa-hotswap::rewrite_cache::archive`: `parse`, `Writer`) on arbitrary bytes.
//!
//! Input: a mode byte, then the rest. Even mode: the rest is an archive; an
//! accepted one is canonical (writing its members again gives back its bytes
//! exactly). Odd mode (every clang-22 object seed, whose first byte is 0x7f):
//! the rest is split in two outputs, each stored as an entry ("rewritten" when
//! it is an AMDGPU ELF, else a refusal with the bytes as its reason) under a
//! key taken from the input, and written as an archive: it is accepted with
//! exactly those members, and one flipped bit anywhere in it, or a cut at any
//! length, is refused.
#![no_main]

use hsa_hotswap::internals::rewrite_cache::archive::{parse, Writer};
use hsa_hotswap::internals::rewrite_cache::entry::{encode, Kind};
use libfuzzer_sys::fuzz_target;

fn write(members: &[(String, Vec<u8>)]) -> Vec<u8> {
    let mut w = Writer::new(Vec::new(), members.len() as u32).expect("in memory");
    for (name, entry) in members {
        w.add(name, entry).expect("in memory");
    }
    w.finish().expect("declared count")
}

fn entry(key: [u8; 32], bytes: &[u8]) -> (String, Vec<u8>) {
    let elf = hotswap_code_object::elf::Header::parse(bytes)
        .is_ok_and(|h| h.machine == hotswap_code_object::EM_AMDGPU);
    let mut e = if elf {
        encode(Kind::Rewritten, &key, bytes.len() as u64, "", bytes)
    } else {
        encode(
            Kind::Refused,
            &key,
            bytes.len() as u64,
            &String::from_utf8_lossy(bytes),
            &[],
        )
    };
    if elf {
        e.extend_from_slice(bytes);
    }
    let name = key.iter().map(|b| format!("{b:02x}")).collect::<String>() + ".entry";
    (name, e)
}

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    if mode % 2 == 0 {
        if let Ok(members) = parse(rest) {
            let again: Vec<(String, Vec<u8>)> = members
                .iter()
                .map(|m| (m.name.to_owned(), m.entry.to_vec()))
                .collect();
            assert_eq!(write(&again), rest, "an accepted archive is canonical");
        }
        return;
    }
    let half = rest.len() / 2;
    let mut key_a = [0u8; 32];
    for (k, b) in key_a
        .iter_mut()
        .zip(rest.iter().chain(std::iter::repeat(&0)))
    {
        *k = *b;
    }
    let mut key_b = key_a;
    key_b[31] ^= 0xff;
    let members = vec![entry(key_a, &rest[..half]), entry(key_b, &rest[half..])];
    let archive = write(&members);
    let parsed = parse(&archive).expect("an archive written is accepted");
    assert_eq!(parsed.len(), 2);
    for (p, (name, e)) in parsed.iter().zip(&members) {
        assert_eq!((p.name, p.entry), (name.as_str(), &e[..]));
    }
    // Bounded work per input: a sample of flips and cuts.
    let step = (archive.len() / 64).max(1);
    for at in (0..archive.len()).step_by(step) {
        let mut bad = archive.clone();
        bad[at] ^= 1 << (at % 8);
        assert!(parse(&bad).is_err(), "flip at {at}");
        assert!(parse(&archive[..at]).is_err(), "cut at {at}");
    }
});
