//! The gfx1250 instruction walker and A0 classifier
//! (`hotswap-code-object::gfx1250`: `walker::decode`, `instructions`,
//! `analyze`, `same_size_fix`) on arbitrary bytes: as an instruction stream
//! and as a code object.
//!
//! Input: the bytes. Seeds: the analyzer's clang-22 / llvm-mc-22 gfx1250
//! corpus (every A0 class) and the build's gfx1250 objects. Checked: an
//! instruction's length is a whole number of dwords from 4 to 20 and depends
//! only on its own bytes (one byte fewer is `Truncated`, never a shorter
//! guess); the walk tiles the stream; every site of an analysis lies in its
//! function and in the object, decodes to its own length, and a same-size fix
//! keeps that length and changes the bytes exactly when the site needs a
//! change; after every same-size fix of a complete analysis is applied, the
//! object walks the same and only its growth sites still need a change.
//! The liveness analysis (`liveness::analyze`, `scratch`) of the same bytes
//! never panics, and every register it grants lies in the class and bounds
//! asked for.
#![no_main]

use hotswap_code_object::gfx1250::{self, walker, Fix};
use hotswap_code_object::isa;
use hotswap_code_object::liveness::{self, Convention, Reg, RegClass, Request};
use libfuzzer_sys::fuzz_target;

fn check_stream(code: &[u8]) {
    if let Ok(d) = walker::decode(code) {
        let len = usize::from(d.len);
        assert!(
            (4..=20).contains(&len) && len % 4 == 0 && len <= code.len(),
            "{d:?}"
        );
        assert_eq!(
            walker::decode(&code[..len]),
            Ok(d),
            "the length depends on the instruction's bytes only"
        );
        assert_eq!(
            walker::decode(&code[..len - 1]),
            Err(walker::DecodeError::Truncated),
            "{d:?}: one byte fewer must be truncated, not a shorter instruction"
        );
    }
    let vaddr = 0x1000;
    let mut at = 0usize;
    for item in gfx1250::instructions(code, vaddr) {
        match item {
            Ok(i) => {
                assert_eq!(i.vaddr, vaddr + at as u64);
                assert_eq!(i.bytes, &code[at..at + usize::from(i.decoded.len)]);
                at += i.bytes.len();
            }
            Err((where_, _)) => {
                assert_eq!(where_, vaddr + at as u64);
                at = code.len();
            }
        }
    }
    assert_eq!(at, code.len(), "the walk covers the stream");
}

fn check_analysis(object: &[u8]) {
    let Ok(analysis) = gfx1250::analyze(object) else {
        return;
    };
    assert!(gfx1250::is_gfx125(analysis.processor));
    assert_eq!(Ok(analysis.isa.clone()), isa::isa_name(object));
    assert!(analysis.instructions() <= object.len() as u64 / 4 * analysis.functions.len() as u64);
    let mut patched = object.to_vec();
    let mut growth = Vec::new();
    for f in &analysis.functions {
        assert!(
            f.sites.windows(2).all(|w| w[0].vaddr <= w[1].vaddr),
            "{}: sites in address order",
            f.name
        );
        for s in &f.sites {
            assert!(
                s.vaddr >= f.vaddr && s.vaddr - f.vaddr < f.size,
                "{}: site outside its function",
                f.name
            );
            let range = s.file_offset as usize..s.file_offset as usize + usize::from(s.len);
            let bytes = object
                .get(range.clone())
                .expect("a site lies inside the object");
            assert_eq!(walker::decode(bytes).map(|d| d.len), Ok(s.len), "{s:?}");
            let fixed = gfx1250::same_size_fix(s.class, bytes);
            match s.fix {
                Fix::SameSize => {
                    let fixed = fixed.expect("a same-size site has a fix");
                    assert_eq!(fixed.len(), bytes.len());
                    assert_eq!(fixed != bytes, s.needs_change, "{s:?}");
                    patched[range].copy_from_slice(&fixed);
                }
                Fix::Growth => growth.push((s.vaddr, s.class)),
            }
        }
    }
    if !analysis.is_complete() {
        return;
    }
    // Every same-size fix applied: the same walk, and only growth sites left.
    let again = gfx1250::analyze(&patched).expect("same-size fixes keep a gfx125x object");
    let shape = |a: &gfx1250::Analysis| {
        a.functions
            .iter()
            .map(|f| (f.vaddr, f.size, f.instructions))
            .collect::<Vec<_>>()
    };
    assert_eq!(
        shape(&again),
        shape(&analysis),
        "same-size fixes keep every instruction's length"
    );
    assert!(again.is_complete());
    for s in again.sites().filter(|s| s.needs_change) {
        assert!(
            growth.contains(&(s.vaddr, s.class)),
            "{s:?} needs a change after every same-size fix"
        );
    }
}

fn check_liveness(object: &[u8]) {
    let Ok(l) = liveness::analyze(object, Convention::Unknown) else {
        return;
    };
    for (fi, f) in l.functions.iter().enumerate() {
        for (vaddr, _) in f.instructions().take(16) {
            for (class, count, align) in [(RegClass::Vgpr, 3, 4), (RegClass::Sgpr, 2, 2)] {
                let mut req = Request::new(class, count, align);
                req.below = 256;
                if let Ok(s) = l.scratch(fi, vaddr, req) {
                    let regs = s.registers();
                    assert_eq!(regs.len(), usize::from(count));
                    for r in regs {
                        match (class, r) {
                            (RegClass::Vgpr, Reg::V(n)) => assert!(n < 256),
                            (RegClass::Sgpr, Reg::S(n)) => assert!(n < 106),
                            _ => panic!("{r:?} is not a {class:?}"),
                        }
                    }
                }
            }
        }
    }
}

fuzz_target!(init: hotswap_fuzz::init(), |data: &[u8]| {
    check_stream(data);
    check_analysis(data);
    check_liveness(data);
    for class in gfx1250::A0Class::ALL {
        if let Some(fixed) = gfx1250::same_size_fix(class, data) {
            assert_eq!(fixed.len(), data.len(), "{class:?}");
            assert_eq!(
                walker::decode(&fixed).map(|d| usize::from(d.len)),
                Ok(data.len()),
                "{class:?}: the fix is one instruction of the same length"
            );
        }
    }
});
