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
//!   keeps, a tensor load the rewriter fixed: its mask cleared right before
//!   it in a moved image, or at its only definition) in code a kernel
//!   descriptor enters: every function the analysis
//!   reports with such a site has no kernel descriptor entering it, and is a
//!   function of the input (an old copy left behind, not moved code).
//! - gateways: the old entry of every moved function the report lists jumps
//!   to its image (an `s_branch`, or `s_get_pc_i64`, `s_add_nc_u64` with a
//!   64-bit literal, `s_set_pc_i64` on one SGPR pair), decoded here;
//! - the rewrite is deterministic: the same input gives the same bytes.
#![no_main]

use hotswap_code_object::gfx1250::{self, A0Class};
use hotswap_code_object::rewrite::{self, ClausePolicy, Options};
use hotswap_code_object::CodeObject;
use libfuzzer_sys::fuzz_target;

const PT_LOAD: u64 = 1;
const PF_X: u64 = 1;
const PF_W: u64 = 2;
const SHF_ALLOC: u64 = 2;
const SHF_EXECINSTR: u64 = 4;
const SHT_NOBITS: u64 = 8;
const SHT_SYMTAB: u64 = 2;

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

/// `assert!` for the structure checks: the first violation, as an error.
macro_rules! ensure {
    ($cond:expr, $($msg:tt)+) => {
        if !$cond {
            return Err(format!($($msg)+));
        }
    };
}

/// This target's own reading of the ELF structure: the segments and
/// sections, or the first violation.
fn check_structure(b: &[u8]) -> Result<(Vec<Seg>, Vec<Sec>), String> {
    ensure!(
        b.len() >= 64 && &b[..4] == b"\x7fELF" && b[4] == 2 && b[5] == 1,
        "not ELF64 LE"
    );
    let n = b.len() as u64;
    let (phoff, shoff) = (
        u64_at(b, 32).ok_or("truncated header")?,
        u64_at(b, 40).ok_or("truncated header")?,
    );
    let (phentsize, phnum) = (
        u16_at(b, 54).ok_or("truncated header")?,
        u16_at(b, 56).ok_or("truncated header")?,
    );
    let (shentsize, shnum) = (
        u16_at(b, 58).ok_or("truncated header")?,
        u16_at(b, 60).ok_or("truncated header")?,
    );
    ensure!(phentsize == 56 && shentsize == 64, "header entry sizes");
    ensure!(
        phoff.checked_add(phnum * 56).is_some_and(|e| e <= n),
        "program headers inside the file"
    );
    ensure!(
        shoff.checked_add(shnum * 64).is_some_and(|e| e <= n),
        "section headers inside the file"
    );
    let mut loads = Vec::new();
    for i in 0..phnum {
        let at = (phoff + i * 56) as usize;
        if u32_at(b, at).ok_or("truncated header")? != PT_LOAD {
            continue;
        }
        let s = Seg {
            flags: u32_at(b, at + 4).ok_or("truncated header")?,
            offset: u64_at(b, at + 8).ok_or("truncated header")?,
            vaddr: u64_at(b, at + 16).ok_or("truncated header")?,
            filesz: u64_at(b, at + 32).ok_or("truncated header")?,
            memsz: u64_at(b, at + 40).ok_or("truncated header")?,
            align: u64_at(b, at + 48).ok_or("truncated header")?,
        };
        ensure!(
            s.offset.checked_add(s.filesz).is_some_and(|e| e <= n),
            "PT_LOAD {i} inside the file"
        );
        ensure!(s.filesz <= s.memsz, "PT_LOAD {i}: filesz <= memsz");
        ensure!(
            s.align >= 4096 && s.align.is_power_of_two(),
            "PT_LOAD {i}: page alignment"
        );
        ensure!(
            s.vaddr % s.align == s.offset % s.align,
            "PT_LOAD {i}: vaddr = offset mod align"
        );
        if let Some(prev) = loads.last() {
            let prev: &Seg = prev;
            ensure!(
                prev.vaddr.saturating_add(prev.memsz) <= s.vaddr,
                "PT_LOAD {i}: ascending, not overlapping"
            );
        }
        loads.push(s);
    }
    ensure!(!loads.is_empty(), "a PT_LOAD");
    let mut secs = Vec::new();
    for i in 0..shnum {
        let at = (shoff + i * 64) as usize;
        let s = Sec {
            kind: u32_at(b, at + 4).ok_or("truncated header")?,
            flags: u64_at(b, at + 8).ok_or("truncated header")?,
            addr: u64_at(b, at + 16).ok_or("truncated header")?,
            offset: u64_at(b, at + 24).ok_or("truncated header")?,
            size: u64_at(b, at + 32).ok_or("truncated header")?,
            link: u32_at(b, at + 40).ok_or("truncated header")?,
        };
        if s.kind != SHT_NOBITS {
            ensure!(
                s.offset.checked_add(s.size).is_some_and(|e| e <= n),
                "section {i} inside the file"
            );
        }
        if s.flags & SHF_ALLOC != 0 && s.size != 0 {
            let Some(seg) = loads.iter().find(|p| {
                p.vaddr <= s.addr
                    && s.addr
                        .checked_add(s.size)
                        .is_some_and(|e| e <= p.vaddr.saturating_add(p.memsz))
            }) else {
                return Err(format!("allocated section {i} outside every PT_LOAD"));
            };
            if s.kind != SHT_NOBITS {
                ensure!(
                    s.addr + s.size <= seg.vaddr.saturating_add(seg.filesz),
                    "section {i} in its segment's file image"
                );
                ensure!(
                    s.offset == seg.offset.wrapping_add(s.addr - seg.vaddr),
                    "section {i}: offset matches address"
                );
            }
            if s.flags & SHF_EXECINSTR != 0 {
                ensure!(
                    seg.flags & PF_X != 0 && seg.flags & PF_W == 0,
                    "code {i} in an R+X segment"
                );
            }
        }
        secs.push(s);
    }
    Ok((loads, secs))
}

/// (descriptor vaddr, entry vaddr) of every `NAME.kd` symbol.
fn kernel_entries(b: &[u8], loads: &[Seg], secs: &[Sec]) -> Vec<(String, u64)> {
    let mut out = Vec::new();
    for s in secs.iter().filter(|s| s.kind == SHT_SYMTAB) {
        let Some(strtab) = secs.get(s.link as usize) else {
            continue;
        };
        for i in 0..s.size / 24 {
            let at = (s.offset + i * 24) as usize;
            let (Some(name), Some(info), Some(value), Some(size)) = (
                u32_at(b, at),
                b.get(at + 4),
                u64_at(b, at + 8),
                u64_at(b, at + 16),
            ) else {
                continue;
            };
            if info & 15 != 1 || size != 64 || name >= strtab.size {
                continue;
            }
            let start = (strtab.offset + name) as usize;
            let end = (strtab.offset + strtab.size) as usize;
            let Some(bytes) = b.get(start..end) else {
                continue;
            };
            let text = &bytes[..bytes.iter().position(|&c| c == 0).unwrap_or(bytes.len())];
            let Some(kernel) = text.strip_suffix(b".kd") else {
                continue;
            };
            let Some(seg) = loads.iter().find(|p| {
                p.vaddr <= value && value.saturating_add(64) <= p.vaddr.saturating_add(p.filesz)
            }) else {
                continue; // not a descriptor the loader can read (in the input already)
            };
            let off = (seg.offset + value - seg.vaddr) as usize;
            let entry = value.wrapping_add(u64_at(b, off + 16).unwrap());
            out.push((String::from_utf8_lossy(kernel).into_owned(), entry));
        }
    }
    out
}

/// Where the jump at `vaddr` (`code`: the bytes from there) goes, if it is
/// a gateway: `s_branch` (SOPP 0xbfa0xxxx), or the 20-byte far jump.
fn gateway_target(vaddr: u64, code: &[u8]) -> Option<u64> {
    let w0 = u32_at(code, 0)?;
    if w0 >> 16 == 0xbfa0 {
        let words = i64::from(w0 as u16 as i16);
        return Some(vaddr.wrapping_add(4).wrapping_add((words * 4) as u64));
    }
    let reg = (w0 >> 16) & 0x7f;
    let get_pc = 0xbe80_4700 | (reg << 16); // s_get_pc_i64 s[reg:reg+1]
    let add = 0xa980_fe00 | (reg << 16) | reg; // s_add_nc_u64 ..., lit64
    let set_pc = 0xbe80_4800 | reg; // s_set_pc_i64 s[reg:reg+1]
    if w0 != get_pc || u32_at(code, 4)? != add || u32_at(code, 16)? != set_pc {
        return None;
    }
    Some(vaddr.wrapping_add(4).wrapping_add(u64_at(code, 8)?))
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
    // The rewrite must keep a sound structure sound (a malformed input the
    // analysis accepts is the loader's to reject; it must not crash us).
    let Ok((in_loads, in_secs)) = check_structure(object) else {
        return;
    };
    let (loads, secs) = check_structure(out).unwrap_or_else(|e| panic!("output structure: {e}"));
    // Every kernel the input enters soundly (inside code, 256-byte aligned)
    // the output enters soundly too.
    let sound = |entry: u64, secs: &[Sec]| {
        entry % 256 == 0
            && secs.iter().any(|s| {
                s.flags & SHF_EXECINSTR != 0
                    && s.flags & SHF_ALLOC != 0
                    && s.addr <= entry
                    && entry < s.addr.saturating_add(s.size)
            })
    };
    let in_entries = kernel_entries(object, &in_loads, &in_secs);
    let entries = kernel_entries(out, &loads, &secs);
    for (kernel, entry) in &in_entries {
        if !sound(*entry, &in_secs) {
            continue;
        }
        let now = entries.iter().find(|(k, _)| k == kernel).map(|(_, e)| *e);
        assert!(
            now.is_some_and(|e| sound(e, &secs)),
            "kernel {kernel}: entry {now:x?} not inside code, 256-byte aligned"
        );
    }
    for m in &rewritten.report.moved {
        let code = loads
            .iter()
            .find(|p| p.vaddr <= m.original_vaddr && m.original_vaddr < p.vaddr.saturating_add(p.filesz))
            .and_then(|p| {
                let at = (p.offset + m.original_vaddr - p.vaddr) as usize;
                let end = (p.offset + p.filesz) as usize;
                out.get(at..end.min(at + 20))
            })
            .unwrap_or_else(|| panic!("{}: old entry not in the file", m.name));
        assert_eq!(gateway_target(m.original_vaddr, code), Some(m.new_vaddr), "{}: gateway", m.name);
    }
    let analysis = gfx1250::analyze(out).expect("a complete output is a gfx1250 object");
    let input = gfx1250::analyze(object).expect("the input analysed");
    // A tensor load right after the clear of its mask SGPR in a moved
    // function's image is the rewriter's own fix (the load stays a site).
    let moved = rewrite::moved_functions(out).unwrap_or_default();
    // So is one whose mask's only reaching definition yields a zero mask
    // (the definition-site form, by the rewrite's own proof).
    let cleared = CodeObject::parse(out)
        .map(|o| rewrite::mask_definition::cleared_sites(&o, &analysis))
        .unwrap_or_default();
    for f in &analysis.functions {
        let left = f.sites.iter().any(|s| {
            s.needs_change
                && !(s.class == A0Class::SClause && options.clauses == ClausePolicy::Keep)
                && !(s.class == A0Class::TensorLds
                    && (rewrite::own_tensor_mask_fix(out, f, s, &moved)
                        || cleared.binary_search(&s.vaddr).is_ok()))
        });
        if !left {
            continue;
        }
        assert!(
            !entries.iter().any(|(_, e)| *e >= f.vaddr && *e < f.vaddr.saturating_add(f.size.max(1))),
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
