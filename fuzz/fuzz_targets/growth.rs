//! The native rewriter's code-growing rewrite on mutated real objects: it
//! never panics, and whenever it answers "complete" the output passes this
//! target's own minimal ELF checks (not the crate's reader) and a re-analysis
//! finds nothing reachable left to fix.
//!
//! Input: one byte of options (bit 1: the `s_clause` policy `ReplaceWithNop`),
//! then the object. Seeds (`seeds.py`): the small gfx1250 objects of the
//! jax-rocm10-pjrt wheel the growth tests extract (those with DS two-address
//! sites among them) and the analyzer's corpus, after each option byte.
//!
//! Checks of a complete output:
//! - ELF64 little-endian, its program and section header tables inside the
//!   file; every PT_LOAD inside the file, page-aligned (vaddr = offset modulo
//!   its alignment, alignment a power of two of at least 4096), PT_LOADs in
//!   ascending, non-overlapping order; every allocated section inside one
//!   PT_LOAD at the matching file offset; executable sections only in PF_X,
//!   non-writable segments;
//! - every kernel descriptor (`NAME.kd`, 64-byte object) has an entry inside
//!   an executable section, 256-byte aligned;
//! - re-analysis: no site needs a change (other than a clause the policy
//!   keeps) in code a kernel descriptor enters: every function the analysis
//!   reports with such a site has no kernel descriptor entering it, and is a
//!   function of the input (an old copy left behind, not moved code).
//! - the rewrite is deterministic: the same input gives the same bytes.
#![no_main]

use hotswap_code_object::gfx1250::{self, A0Class};
use hotswap_code_object::rewrite::{self, ClausePolicy, Options};
use libfuzzer_sys::fuzz_target;

const PT_LOAD: u32 = 1;
const PF_X: u32 = 1;
const PF_W: u32 = 2;
const SHF_ALLOC: u64 = 2;
const SHF_EXECINSTR: u64 = 4;
const SHT_NOBITS: u32 = 8;
const SHT_SYMTAB: u32 = 2;

fn u16_at(b: &[u8], at: usize) -> Option<u64> {
    Some(u16::from_le_bytes(b.get(at..at + 2)?.try_into().ok()?).into())
}
fn u32_at(b: &[u8], at: usize) -> Option<u64> {
    Some(u32::from_le_bytes(b.get(at..at + 4)?.try_into().ok()?).into())
}
fn u64_at(b: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_le_bytes(b.get(at..at + 8)?.try_into().ok()?))
}

struct Seg {
    flags: u64,
    offset: u64,
    vaddr: u64,
    filesz: u64,
    memsz: u64,
    align: u64,
}

struct Sec {
    kind: u64,
    flags: u64,
    addr: u64,
    offset: u64,
    size: u64,
    link: u64,
}

/// This target's own reading of the ELF structure; panics on a violation.
fn check_structure(b: &[u8]) -> (Vec<Seg>, Vec<Sec>) {
    assert!(b.len() >= 64 && &b[..4] == b"\x7fELF" && b[4] == 2 && b[5] == 1, "not ELF64 LE");
    let n = b.len() as u64;
    let (phoff, shoff) = (u64_at(b, 32).unwrap(), u64_at(b, 40).unwrap());
    let (phentsize, phnum) = (u16_at(b, 54).unwrap(), u16_at(b, 56).unwrap());
    let (shentsize, shnum) = (u16_at(b, 58).unwrap(), u16_at(b, 60).unwrap());
    assert!(phentsize == 56 && shentsize == 64, "header entry sizes");
    assert!(phoff.checked_add(phnum * 56).is_some_and(|e| e <= n), "program headers inside the file");
    assert!(shoff.checked_add(shnum * 64).is_some_and(|e| e <= n), "section headers inside the file");
    let mut loads = Vec::new();
    for i in 0..phnum {
        let at = (phoff + i * 56) as usize;
        if u32_at(b, at).unwrap() as u32 != PT_LOAD {
            continue;
        }
        let s = Seg {
            flags: u32_at(b, at + 4).unwrap(),
            offset: u64_at(b, at + 8).unwrap(),
            vaddr: u64_at(b, at + 16).unwrap(),
            filesz: u64_at(b, at + 32).unwrap(),
            memsz: u64_at(b, at + 40).unwrap(),
            align: u64_at(b, at + 48).unwrap(),
        };
        assert!(s.offset.checked_add(s.filesz).is_some_and(|e| e <= n), "PT_LOAD {i} inside the file");
        assert!(s.filesz <= s.memsz, "PT_LOAD {i}: filesz <= memsz");
        assert!(s.align >= 4096 && s.align.is_power_of_two(), "PT_LOAD {i}: page alignment");
        assert_eq!(s.vaddr % s.align, s.offset % s.align, "PT_LOAD {i}: vaddr = offset mod align");
        if let Some(prev) = loads.last() {
            let prev: &Seg = prev;
            assert!(prev.vaddr + prev.memsz <= s.vaddr, "PT_LOAD {i}: ascending, not overlapping");
        }
        loads.push(s);
    }
    assert!(!loads.is_empty(), "a PT_LOAD");
    let mut secs = Vec::new();
    for i in 0..shnum {
        let at = (shoff + i * 64) as usize;
        let s = Sec {
            kind: u32_at(b, at + 4).unwrap(),
            flags: u64_at(b, at + 8).unwrap(),
            addr: u64_at(b, at + 16).unwrap(),
            offset: u64_at(b, at + 24).unwrap(),
            size: u64_at(b, at + 32).unwrap(),
            link: u32_at(b, at + 40).unwrap(),
        };
        if s.kind as u32 != SHT_NOBITS {
            assert!(s.offset.checked_add(s.size).is_some_and(|e| e <= n), "section {i} inside the file");
        }
        if s.flags & SHF_ALLOC != 0 && s.size != 0 {
            let seg = loads
                .iter()
                .find(|p| p.vaddr <= s.addr && s.addr + s.size <= p.vaddr + p.memsz)
                .unwrap_or_else(|| panic!("allocated section {i} outside every PT_LOAD"));
            if s.kind as u32 != SHT_NOBITS {
                assert!(s.addr + s.size <= seg.vaddr + seg.filesz, "section {i} in its segment's file image");
                assert_eq!(s.offset, seg.offset + s.addr - seg.vaddr, "section {i}: offset matches address");
            }
            if s.flags & SHF_EXECINSTR != 0 {
                assert!(seg.flags & PF_X != 0 && seg.flags & PF_W == 0, "code {i} in an R+X segment");
            }
        }
        secs.push(s);
    }
    (loads, secs)
}

/// (descriptor vaddr, entry vaddr) of every `NAME.kd` symbol.
fn kernel_entries(b: &[u8], loads: &[Seg], secs: &[Sec]) -> Vec<(String, u64)> {
    let mut out = Vec::new();
    for s in secs.iter().filter(|s| s.kind as u32 == SHT_SYMTAB) {
        let Some(strtab) = secs.get(s.link as usize) else { continue };
        for i in 0..s.size / 24 {
            let at = (s.offset + i * 24) as usize;
            let (Some(name), Some(info), Some(value), Some(size)) =
                (u32_at(b, at), b.get(at + 4), u64_at(b, at + 8), u64_at(b, at + 16))
            else {
                continue;
            };
            if info & 15 != 1 || size != 64 || name >= strtab.size {
                continue;
            }
            let start = (strtab.offset + name) as usize;
            let end = (strtab.offset + strtab.size) as usize;
            let Some(bytes) = b.get(start..end) else { continue };
            let text = &bytes[..bytes.iter().position(|&c| c == 0).unwrap_or(bytes.len())];
            let Some(kernel) = text.strip_suffix(b".kd") else { continue };
            let Some(seg) = loads.iter().find(|p| p.vaddr <= value && value + 64 <= p.vaddr + p.filesz) else {
                panic!("kernel descriptor at {value:#x} outside every PT_LOAD image");
            };
            let off = (seg.offset + value - seg.vaddr) as usize;
            let entry = value.wrapping_add(u64_at(b, off + 16).unwrap());
            out.push((String::from_utf8_lossy(kernel).into_owned(), entry));
        }
    }
    out
}

fuzz_target!(init: hotswap_fuzz::init(), |data: &[u8]| {
    let Some((&flags, object)) = data.split_first() else {
        return;
    };
    let options = Options {
        allow_partial: false,
        clauses: if flags & 2 == 2 { ClausePolicy::ReplaceWithNop } else { ClausePolicy::Keep },
    };
    let Ok(rewritten) = rewrite::rewrite_b0_to_a0(object, &options) else {
        return;
    };
    if !rewritten.report.is_complete() {
        return;
    }
    let out = &rewritten.bytes;
    let again = rewrite::rewrite_b0_to_a0(object, &options).expect("the same input rewrites again");
    assert_eq!(&again.bytes, out, "deterministic");
    let (loads, secs) = check_structure(out);
    let entries = kernel_entries(out, &loads, &secs);
    let code: Vec<&Sec> = secs.iter().filter(|s| s.flags & SHF_EXECINSTR != 0 && s.flags & SHF_ALLOC != 0).collect();
    for (kernel, entry) in &entries {
        assert!(
            code.iter().any(|s| s.addr <= *entry && *entry < s.addr + s.size),
            "kernel {kernel}: entry {entry:#x} outside code"
        );
        assert_eq!(entry % 256, 0, "kernel {kernel}: entry {entry:#x} not 256-byte aligned");
    }
    let analysis = gfx1250::analyze(out).expect("a complete output is a gfx1250 object");
    let input = gfx1250::analyze(object).expect("the input analysed");
    for f in &analysis.functions {
        let left = f.sites.iter().any(|s| {
            s.needs_change && !(s.class == A0Class::SClause && options.clauses == ClausePolicy::Keep)
        });
        if !left {
            continue;
        }
        assert!(
            !entries.iter().any(|(_, e)| *e >= f.vaddr && *e < f.vaddr + f.size.max(1)),
            "{}: a kernel enters code with sites left to fix",
            f.name
        );
        assert!(
            input.functions.iter().any(|g| g.vaddr == f.vaddr && g.size == f.size),
            "{}: sites left to fix in code the rewrite made",
            f.name
        );
    }
});
