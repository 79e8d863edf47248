//! Code growth on small synthetic objects (the real jax-rocm10-pjrt objects
//! are checked by the growth proof and `growth_bench`).
use super::*;
use crate::rewrite::{moved_functions, placement, RewriteError};

/// `ds_load_2addr_b32 v[0:1], v2 offset0:1 offset1:2`.
const DS2: [u8; 8] = [0x01, 0x02, 0xdc, 0xd8, 0x02, 0x00, 0x00, 0x00];
/// Its split (llvm-mc-22): `ds_load_b32 v0, v2 offset:4`, `ds_load_b32 v1, v2
/// offset:8`, `s_wait_dscnt 0x0`.
const SPLIT: [u8; 20] = [
    0x04, 0x00, 0xd8, 0xd8, 0x02, 0x00, 0x00, 0x00, 0x08, 0x00, 0xd8, 0xd8, 0x02, 0x00, 0x00, 0x01,
    0x00, 0x00, 0xc6, 0xbf,
];
/// `s_get_pc_i64 s[0:1]`.
const GET_PC: [u8; 4] = [0x00, 0x47, 0x80, 0xbe];

fn image(out: &[u8], vaddr: u64, len: usize) -> &[u8] {
    let header = crate::elf::Header::parse(out).unwrap();
    let map = crate::elf::AddressMap::new(&header, out);
    map.bytes(out, vaddr, len as u64).unwrap()
}

#[test]
fn a_ds2_site_is_split_in_a_moved_copy_and_the_original_stays() {
    let obj = Obj::functions(&[("k", around(&DS2)), ("other", around(&S_NOP))]);
    let input = obj.build();
    let r = rewrite_b0_to_a0(&input, &default()).unwrap();
    assert!(r.report.is_complete());
    assert_eq!(r.report.grown.len(), 1);
    assert_eq!(
        r.report.moved.len(),
        1,
        "only the function with the site moves"
    );
    let m = &r.report.moved[0];
    assert_eq!(
        (
            &*m.name,
            m.original_vaddr,
            m.original_size,
            m.symbol.as_str()
        ),
        ("k", obj.vaddr(0), 16, "k.a0")
    );
    assert_eq!(m.new_size, 16 + 12);
    assert_eq!(m.new_vaddr % 4096, 0, "the region starts a page");
    let g = &r.report.grown[0];
    assert_eq!(
        (g.site.vaddr, g.new_vaddr, g.new_len),
        (obj.vaddr(0) + 4, m.new_vaddr + 4, 20)
    );
    assert_eq!(g.fix, "ds2-split");
    // The copy: s_nop, the split, the return.
    let copy = image(&r.bytes, m.new_vaddr, 28);
    assert_eq!(&copy[..4], S_NOP);
    assert_eq!(&copy[4..24], SPLIT);
    assert_eq!(&copy[24..], S_SET_PC);
    // Every original byte is in place but the header's table offsets/counts
    // and the old entry, now a gateway: `s_branch` to the image.
    let entry = obj.vaddr(0) as usize;
    for (s, e) in diff_ranges(&input, &r.bytes[..input.len()]) {
        assert!(
            (s >= 32 && e <= 62) || (s >= entry && e <= entry + 4),
            "changed {s:#x}..{e:#x}"
        );
    }
    assert_eq!(
        branch_to(&r.bytes, entry) as u64,
        m.new_vaddr,
        "the old entry branches to the image"
    );
    assert_eq!(&r.bytes[entry + 2..entry + 4], [0xa0, 0xbf]);
    assert_eq!(r.report.gateways.len(), 1);
    let gw = &r.report.gateways[0];
    assert_eq!(
        (&*gw.function, gw.old_entry, gw.new_entry, gw.kind, gw.len),
        (
            "k",
            m.original_vaddr,
            m.new_vaddr,
            placement::GatewayKind::Branch,
            4
        )
    );
    // The marker, the symbol, and the re-analysis: nothing left but the
    // unentered original.
    let map = moved_functions(&r.bytes).unwrap();
    assert_eq!(map.len(), 1);
    assert_eq!(
        (map[0].original_vaddr, map[0].new_vaddr, map[0].new_size),
        (m.original_vaddr, m.new_vaddr, m.new_size)
    );
    let analysis = crate::gfx1250::analyze(&r.bytes).unwrap();
    assert!(analysis.is_complete());
    let copy_fn = analysis
        .functions
        .iter()
        .find(|f| f.name == "k.a0")
        .unwrap();
    assert_eq!((copy_fn.vaddr, copy_fn.size), (m.new_vaddr, m.new_size));
    assert!(copy_fn.sites.is_empty());
    assert!(moved_functions(&input).is_none());
}

#[test]
fn growth_is_deterministic_and_idempotent() {
    let input = Obj::functions(&[("k", around(&DS2))]).build();
    let once = rewrite_b0_to_a0(&input, &default()).unwrap();
    assert_eq!(rewrite_b0_to_a0(&input, &default()).unwrap(), once);
    let twice = rewrite_b0_to_a0(&once.bytes, &default()).unwrap();
    assert_eq!(
        twice.bytes, once.bytes,
        "a rewritten object is not grown again"
    );
    assert_eq!(twice.report.unreachable.len(), 1);
    assert!(twice.report.grown.is_empty() && twice.report.moved.is_empty());
    assert_eq!(twice.report.previously_moved.len(), 1);
}

#[test]
fn branches_in_moved_code_reach_the_image_of_their_target() {
    // s_cbranch_scc0 +2 (over the DS2 to the s_branch); s_branch -4 (back to
    // the s_cbranch at +4).
    let code = [
        S_NOP.to_vec(),
        vec![0x02, 0x00, 0xa1, 0xbf],
        DS2.to_vec(),
        vec![0xfc, 0xff, 0xa0, 0xbf],
        S_SET_PC.to_vec(),
    ]
    .concat();
    let r = rewrite_b0_to_a0(&Obj::functions(&[("k", code)]).build(), &default()).unwrap();
    let m = &r.report.moved[0];
    let copy = image(&r.bytes, m.new_vaddr, m.new_size as usize);
    // Over the 20-byte split (and the s_branch): to the s_branch at +28.
    assert_eq!(&copy[4..8], [0x05, 0x00, 0xa1, 0xbf]);
    // s_branch at +28 back to +4: (4 - 32) / 4.
    assert_eq!(&copy[28..32], [0xf9, 0xff, 0xa0, 0xbf]);
}

/// The target of the 4-byte branch at `at` of `code` (image offsets).
fn branch_to(code: &[u8], at: usize) -> i64 {
    at as i64 + 4 + 4 * i64::from(i16::from_le_bytes([code[at], code[at + 1]]))
}

#[test]
fn a_branch_the_splits_put_out_of_reach_goes_through_an_island() {
    // 0: s_nop (the loop head); 4000 DS2; s_branch +0 (to the next
    // instruction: nothing falls through past it); 4000 DS2;
    // s_cbranch_scc1 back to 0 (64 KiB back: in reach); the return. The
    // splits make each half 80 KiB, the back branch 160 KiB.
    let half: Vec<u8> = DS2.iter().copied().cycle().take(8 * 4000).collect();
    let back = (-(4 + 32000 + 4 + 32000 + 4) / 4) as i16;
    let code = [
        S_NOP.to_vec(),
        half.clone(),
        vec![0x00, 0x00, 0xa0, 0xbf],
        half,
        [back.to_le_bytes().to_vec(), vec![0xa2, 0xbf]].concat(),
        S_SET_PC.to_vec(),
    ]
    .concat();
    let obj = Obj::functions(&[("k", code)]);
    let input = obj.build();
    let r = rewrite_b0_to_a0(&input, &default()).unwrap();
    assert!(r.report.is_complete());
    let m = &r.report.moved[0];
    assert_eq!(m.new_size, 4 + 80000 + 4 + 4 + 80000 + 4 + 4, "one island");
    assert_eq!(r.report.islands.len(), 1);
    let isl = &r.report.islands[0];
    let copy = image(&r.bytes, m.new_vaddr, m.new_size as usize);
    let at = (isl.vaddr - m.new_vaddr) as usize;
    assert_eq!(at, 4 + 80000 + 4, "right after the s_branch");
    assert_eq!(isl.before_original_vaddr, obj.vaddr(0) + 4 + 32000 + 4);
    assert_eq!(isl.target, m.new_vaddr);
    // The island: s_branch to the image of the loop head.
    assert_eq!(copy[at + 2..at + 4], [0xa0, 0xbf]);
    assert_eq!(branch_to(copy, at), 0);
    // The s_branch before it now skips it; the back branch goes through it.
    assert_eq!(branch_to(copy, at - 4), at as i64 + 4);
    let cb = at + 4 + 80000;
    assert_eq!(copy[cb + 2..cb + 4], [0xa2, 0xbf], "still s_cbranch_scc1");
    assert_eq!(branch_to(copy, cb), at as i64);
    // Deterministic, and the output is not grown again.
    assert_eq!(rewrite_b0_to_a0(&input, &default()).unwrap().bytes, r.bytes);
    let again = rewrite_b0_to_a0(&r.bytes, &default()).unwrap();
    assert_eq!(again.bytes, r.bytes);
}

/// `s_sethalt 0`: a same-size site (fixed as `s_nop 0`).
const SETHALT: [u8; 4] = [0x00, 0x00, 0x82, 0xbf];

#[test]
fn the_report_says_where_each_fixed_site_of_moved_code_is_executed() {
    // As above, with an s_sethalt after the island point and one before the
    // return: their copies move by the splits before them and the island.
    let half: Vec<u8> = DS2.iter().copied().cycle().take(8 * 4000).collect();
    let back = (-(4 + 32000 + 4 + 4 + 32000 + 4) / 4) as i16;
    let code = [
        S_NOP.to_vec(),
        half.clone(),
        vec![0x00, 0x00, 0xa0, 0xbf],
        SETHALT.to_vec(),
        half,
        [back.to_le_bytes().to_vec(), vec![0xa2, 0xbf]].concat(),
        SETHALT.to_vec(),
        S_SET_PC.to_vec(),
    ]
    .concat();
    let obj = Obj::functions(&[("k", code)]);
    let r = rewrite_b0_to_a0(&obj.build(), &default()).unwrap();
    assert!(r.report.is_complete());
    assert_eq!(r.report.islands.len(), 1);
    let m = &r.report.moved[0];
    let changes = r.report.changes();
    assert_eq!(changes.len(), 8000 + 2);
    let fixed: Vec<_> = changes.iter().filter(|c| c.fix == "same-size").collect();
    assert_eq!(fixed.len(), 2);
    let k = obj.vaddr(0);
    let island = r.report.islands[0].vaddr;
    // Independently of the layout: the first follows the island, the second
    // the last split; both are the fix (s_nop 0) in the copy.
    assert_eq!(fixed[0].site.vaddr, k + 4 + 32000 + 4);
    assert_eq!(fixed[0].new_vaddr, island + 4);
    assert_eq!(fixed[1].new_vaddr, m.new_vaddr + m.new_size - 8);
    for c in &fixed {
        assert_eq!(image(&r.bytes, c.new_vaddr, 4), S_NOP, "{:#x}", c.new_vaddr);
        assert_eq!(r.report.executed_vaddr(c.site.vaddr), c.new_vaddr);
    }
    // The changes are in input order, the splits at their own addresses.
    assert!(changes
        .windows(2)
        .all(|w| w[0].site.vaddr < w[1].site.vaddr));
    let grown: Vec<_> = changes.iter().filter(|c| c.fix == "ds2-split").collect();
    assert_eq!(grown.len(), 8000);
    assert!(grown
        .iter()
        .all(|c| image(&r.bytes, c.new_vaddr, 20) == SPLIT));
    // A site outside moved code is executed where it is.
    assert_eq!(r.report.executed_vaddr(0x10), 0x10);
}

#[test]
fn a_far_branch_with_no_place_for_an_island_is_refused_naming_it() {
    // As above without the s_branch: nothing in reach of both ends stops
    // falling through.
    let half: Vec<u8> = DS2.iter().copied().cycle().take(8 * 4000).collect();
    let back = (-(4 + 64000 + 4) / 4) as i16;
    let code = [
        S_NOP.to_vec(),
        half.clone(),
        half,
        [back.to_le_bytes().to_vec(), vec![0xa2, 0xbf]].concat(),
        S_SET_PC.to_vec(),
    ]
    .concat();
    let obj = Obj::functions(&[("k", code)]);
    let e = rewrite_b0_to_a0(&obj.build(), &default()).unwrap_err();
    let at = obj.vaddr(0) + 4 + 64000;
    assert!(
        matches!(&e, RewriteError::Growth(m) if m.contains(&format!("{at:#x}")) && m.contains("no place for a branch island")),
        "{e}"
    );
}

#[test]
fn pc_relative_computations_keep_their_target() {
    // s_get_pc_i64 s[0:1]; s_add_nc_u64 s[0:1], s[0:1], lit64(0x100) → pc + 0x100.
    let mut add = vec![0x00, 0xfe, 0x80, 0xa9];
    add.extend(0x100u64.to_le_bytes());
    let code = [
        S_NOP.to_vec(),
        GET_PC.to_vec(),
        add,
        DS2.to_vec(),
        S_SET_PC.to_vec(),
    ]
    .concat();
    let obj = Obj::functions(&[("k", code)]);
    let r = rewrite_b0_to_a0(&obj.build(), &default()).unwrap();
    let m = &r.report.moved[0];
    let copy = image(&r.bytes, m.new_vaddr, m.new_size as usize);
    let lit = u64::from_le_bytes(copy[12..20].try_into().unwrap());
    let original_target = obj.vaddr(0) + 8 + 0x100;
    assert_eq!(
        (m.new_vaddr + 8).wrapping_add(lit),
        original_target,
        "data keeps its address"
    );
    // The pair form, s_add_co_u32 / s_add_co_ci_u32, into the function itself:
    // a long branch to the return maps to the return's image.
    let target_off = 4 + 4 + 8 + 8 + 4 + 8; // the s_set_pc_i64 s[30:31] at the end
    let pc_off = 8u32;
    let lo = (target_off - pc_off).to_le_bytes();
    let code = [
        S_NOP.to_vec(),
        GET_PC.to_vec(),
        [&[0x00, 0xff, 0x00, 0x80][..], &lo].concat(), // s_add_co_u32 s0, s0, lit
        [&[0x01, 0xff, 0x01, 0x82][..], &[0, 0, 0, 0]].concat(), // s_add_co_ci_u32 s1, s1, lit(0)
        vec![0x00, 0x48, 0x80, 0xbe],                  // s_set_pc_i64 s[0:1]
        DS2.to_vec(),
        S_SET_PC.to_vec(),
    ]
    .concat();
    assert_eq!(code.len() as u32, target_off + 4);
    let r = rewrite_b0_to_a0(&Obj::functions(&[("k", code)]).build(), &default()).unwrap();
    let m = &r.report.moved[0];
    let copy = image(&r.bytes, m.new_vaddr, m.new_size as usize);
    let lo = u32::from_le_bytes(copy[12..16].try_into().unwrap());
    assert_eq!(
        lo,
        target_off + 12 - pc_off,
        "the return moved 12 bytes further"
    );
    assert_eq!(&copy[20..24], [0, 0, 0, 0]);
}

fn growth_refusal(code: Vec<u8>) -> String {
    match rewrite_b0_to_a0(&Obj::functions(&[("k", code)]).build(), &default()) {
        Err(e @ RewriteError::Growth(_)) => {
            assert_eq!(e.kind(), "growth_refused");
            e.to_string()
        }
        other => panic!("expected a growth refusal, got {other:?}"),
    }
}

#[test]
fn what_the_rewriter_does_not_understand_refuses() {
    // A PC read that is not a recognised address computation.
    let m = growth_refusal(
        [
            GET_PC.to_vec(),
            S_NOP.to_vec(),
            DS2.to_vec(),
            S_SET_PC.to_vec(),
        ]
        .concat(),
    );
    assert!(m.contains("s_get_pc_i64 at vaddr 0x1000"), "{m}");
    // s_add_pc_i64 in moved code.
    let m = growth_refusal(
        [
            vec![0xff, 0x4b, 0x80, 0xbe, 0, 1, 0, 0],
            DS2.to_vec(),
            S_SET_PC.to_vec(),
        ]
        .concat(),
    );
    assert!(m.contains("s_add_pc_i64"), "{m}");
    // An indirect jump through a register the rewriter cannot bound.
    let m = growth_refusal([DS2.to_vec(), vec![0x04, 0x48, 0x80, 0xbe]].concat());
    assert!(m.contains("s_set_pc_i64 whose target"), "{m}");
    // ds_load_2addr_stride64_b64 offset1:255: 255 * 512 > 0xffff.
    let m = growth_refusal(around(&[0x00, 0xff, 0xe0, 0xd9, 0x04, 0x00, 0x00, 0x00]));
    assert!(m.contains("exceeds the 16-bit DS offset"), "{m}");
    assert!(m.contains("ds_load_2addr_stride64_b64"), "{m}");
    // A cyclic exchange.
    let m = growth_refusal(around(&[0x01, 0x02, 0xb8, 0xd8, 0x02, 0x04, 0x03, 0x03]));
    assert!(m.contains("both orders"), "{m}");
    // An unknown VGPR-MSB mode: set on one path only.
    let code = [
        vec![0x01, 0x00, 0xa1, 0xbf], // s_cbranch_scc0 +1
        vec![0x01, 0x00, 0x86, 0xbf], // s_set_vgpr_msb 1
        DS2.to_vec(),
        S_SET_PC.to_vec(),
    ]
    .concat();
    let m = growth_refusal(code);
    assert!(m.contains("VGPR-MSB mode at the site is unknown"), "{m}");
}

#[test]
fn a_known_vgpr_mode_is_used_and_restored() {
    // s_set_vgpr_msb 0x10 (src2 = data1 in bank 1), then ds_store_2addr_b32 v2, v3, v260.
    let store = [0x01, 0x02, 0x38, 0xd8, 0x02, 0x03, 0x04, 0x00];
    let code = [
        vec![0x10, 0x00, 0x86, 0xbf],
        store.to_vec(),
        S_SET_PC.to_vec(),
    ]
    .concat();
    let r = rewrite_b0_to_a0(&Obj::functions(&[("k", code)]).build(), &default()).unwrap();
    let g = &r.report.grown[0];
    assert_eq!(g.new_len, 28);
    let copy = image(&r.bytes, g.new_vaddr, 28);
    assert_eq!(&copy[8..12], [0x14, 0x10, 0x86, 0xbf]);
    assert_eq!(&copy[20..24], [0x10, 0x14, 0x86, 0xbf]);
}

#[test]
fn a_clause_over_a_split_site_becomes_a_nop_in_the_copy() {
    let clause = [0x01, 0x00, 0x85, 0xbf]; // s_clause 0x1
    let load = [0x04, 0x00, 0xd8, 0xd8, 0x02, 0x00, 0x00, 0x05]; // ds_load_b32 v5, v2 offset:4
    let code = [
        S_NOP.to_vec(),
        clause.to_vec(),
        load.to_vec(),
        DS2.to_vec(),
        S_SET_PC.to_vec(),
    ]
    .concat();
    let input = Obj::functions(&[("k", code)]).build();
    let r = rewrite_b0_to_a0(&input, &default()).unwrap();
    let m = &r.report.moved[0];
    assert_eq!(image(&r.bytes, m.new_vaddr + 4, 4), S_NOP);
    assert_eq!(r.report.clauses_removed, 1);
    // The original clause is kept (the default policy; the gateway covers
    // only the entry's s_nop).
    assert_eq!(image(&r.bytes, m.original_vaddr + 4, 4), clause);
}

#[test]
fn the_layout_names_its_new_parts() {
    let r = rewrite_b0_to_a0(&Obj::functions(&[("k", around(&DS2))]).build(), &default()).unwrap();
    let header = crate::elf::Header::parse(&r.bytes).unwrap();
    let text = header
        .section_by_name(&r.bytes, placement::TEXT_SECTION.as_bytes())
        .unwrap();
    assert_eq!(
        text.flags,
        crate::elf::SHF_ALLOC | crate::elf::SHF_EXECINSTR
    );
    assert_eq!(text.addr, r.report.moved[0].new_vaddr);
    let load = header
        .segments(&r.bytes)
        .into_iter()
        .rfind(|s| s.p_type == crate::elf::PT_LOAD)
        .unwrap();
    assert_eq!(
        (load.vaddr, load.offset % 4096, load.flags),
        (text.addr, 0, 5)
    );
    assert_eq!(load.filesz, text.size);
    assert!(header
        .section_by_name(&r.bytes, placement::MARKER_SECTION.as_bytes())
        .is_some());
}

/// A growing object whose last PT_LOAD gets the memory size `memsz(its vaddr,
/// its file size)`, and the growth refusal's message for it.
fn growth_refusal_with_last_load_memsz(memsz: impl Fn(u64, u64) -> u64) -> String {
    let mut input = Obj::functions(&[("k", around(&DS2))]).build();
    let header = crate::elf::Header::parse(&input).unwrap();
    let ph = header.segments(&input);
    let last = ph
        .iter()
        .enumerate()
        .rfind(|(_, s)| s.p_type == crate::elf::PT_LOAD)
        .map(|(i, _)| i)
        .unwrap();
    let phoff = u64::from_le_bytes(input[32..40].try_into().unwrap()) as usize;
    let phentsize = u16::from_le_bytes(input[54..56].try_into().unwrap()) as usize;
    let field = phoff + last * phentsize + 40; // p_memsz
    let value = memsz(ph[last].vaddr, ph[last].filesz);
    input[field..field + 8].copy_from_slice(&value.to_le_bytes());
    match rewrite_b0_to_a0(&input, &default()) {
        Err(e @ RewriteError::Growth(_)) => e.to_string(),
        other => panic!(
            "expected a growth refusal, got {:?}",
            other.map(|r| r.report.moved)
        ),
    }
}

#[test]
fn a_segment_ending_near_the_end_of_the_address_space_refuses_instead_of_wrapping() {
    // Found by fuzzing: a PT_LOAD whose end is within a page of u64::MAX made
    // the new segment's page-aligned address overflow.
    let e = growth_refusal_with_last_load_memsz(|vaddr, _| u64::MAX - vaddr - 16);
    assert!(e.contains("address space"), "{e}");
}

#[test]
fn a_segment_with_more_file_than_memory_bytes_refuses() {
    // Found by fuzzing: a PT_LOAD with p_filesz > p_memsz maps file bytes past
    // its memory end, where the new segment was put: the grown output's
    // moved copy read as the old bytes there, and rewriting it again failed.
    let e = growth_refusal_with_last_load_memsz(|_, filesz| {
        assert!(filesz > 0);
        filesz - 1
    });
    assert!(e.contains("malformed program header"), "{e}");
}

/// Writes `value` into field `at` (bytes) of section header `index`.
fn set_section_field(object: &mut [u8], index: usize, at: usize, value: &[u8]) {
    let shoff = u64::from_le_bytes(object[40..48].try_into().unwrap()) as usize;
    let start = shoff + index * 64 + at;
    object[start..start + value.len()].copy_from_slice(value);
}

/// The `Obj` sections without a note: 1 `.text`, 2 `.symtab`, 3 `.strtab`,
/// 4 `.shstrtab`.
const SYMTAB: usize = 2;
const STRTAB: usize = 3;
const SHSTRTAB: usize = 4;

/// Either a growth refusal (its message) or, for an object the rewriter
/// grows, the checks of a fixed point: the output carries the marker, a
/// second rewrite changes nothing and grows nothing.
fn refused_or_fixed_point(input: &[u8]) -> Option<String> {
    match rewrite_b0_to_a0(input, &default()) {
        Err(e @ RewriteError::Growth(_)) => Some(e.to_string()),
        Err(e) => panic!("expected growth or its refusal, got {e:?}"),
        Ok(once) => {
            assert!(!once.report.grown.is_empty());
            assert!(
                moved_functions(&once.bytes).is_some(),
                "the marker is found"
            );
            let twice = rewrite_b0_to_a0(&once.bytes, &default()).expect("rewrites again");
            assert!(twice.report.grown.is_empty(), "grown a second time");
            assert_eq!(twice.bytes, once.bytes);
            None
        }
    }
}

#[test]
fn section_names_read_from_the_symbol_table_refuse_rather_than_hide_the_marker() {
    // Found by fuzzing (rewrite): e_shstrndx named the .symtab; the output's
    // header for that section became the new .symtab's, the marker's name was
    // no longer found and the output grew again.
    let mut input = Obj::functions(&[("k", around(&DS2))]).build();
    input[62..64].copy_from_slice(&(SYMTAB as u16).to_le_bytes());
    let why = refused_or_fixed_point(&input).expect("refused");
    assert!(why.contains("share a section"), "{why}");
}

#[test]
fn a_string_table_shared_or_aliased_by_the_symbol_table_refuses() {
    // sh_link of .symtab: the section names' table, then itself.
    for link in [SHSTRTAB, SYMTAB] {
        let mut input = Obj::functions(&[("k", around(&DS2))]).build();
        set_section_field(&mut input, SYMTAB, 40, &(link as u32).to_le_bytes());
        let why = refused_or_fixed_point(&input).expect("refused");
        assert!(why.contains("share a section"), "link {link}: {why}");
    }
}

#[test]
fn an_allocated_symbol_table_or_string_table_refuses() {
    for (index, what) in [
        (SYMTAB, "allocated"),
        (STRTAB, "string table"),
        (SHSTRTAB, "shstrtab"),
    ] {
        let mut input = Obj::functions(&[("k", around(&DS2))]).build();
        set_section_field(&mut input, index, 8, &crate::elf::SHF_ALLOC.to_le_bytes());
        let why = refused_or_fixed_point(&input).expect("refused");
        assert!(why.contains(what), "section {index}: {why}");
    }
}

#[test]
fn a_section_name_past_the_section_names_refuses() {
    // The offset where the copied names put the marker's name: in the input
    // the section (.text) has no name; in the output it would be the first
    // section named like the marker, which hid the real one, and the output
    // grew again (refused there as a clash).
    let mut input = Obj::functions(&[("k", around(&DS2))]).build();
    let names = b"\0.note\0.text\0.symtab\0.strtab\0.shstrtab\0".len();
    let marker = names + placement::TEXT_SECTION.len() + 1;
    set_section_field(&mut input, 1, 0, &(marker as u32).to_le_bytes());
    let why = refused_or_fixed_point(&input).expect("refused");
    assert!(
        why.contains("section 1's name") && why.contains("past the end of the section names"),
        "{why}"
    );
}

#[test]
fn a_symbol_name_past_its_strings_refuses() {
    // Symbol 1 (k) named at the end of .strtab: nothing in the input, the
    // image's symbol `k.a0` in the copy.
    let mut input = Obj::functions(&[("k", around(&DS2))]).build();
    let strings = b"\0k\0".len() as u32;
    let shoff = u64::from_le_bytes(input[40..48].try_into().unwrap()) as usize;
    let symtab_at = u64::from_le_bytes(
        input[shoff + SYMTAB * 64 + 24..shoff + SYMTAB * 64 + 32]
            .try_into()
            .unwrap(),
    ) as usize;
    input[symtab_at + 24..symtab_at + 28].copy_from_slice(&strings.to_le_bytes());
    let why = refused_or_fixed_point(&input).expect("refused");
    assert!(why.contains("symbol 1 of .symtab"), "{why}");
}

#[test]
fn the_fuzz_finding_whose_section_became_the_marker_is_refused() {
    // A mutant of tests/native's refused.wmma_f4.co (default options; found
    // by `native_rewrite mutate`): its AMDGPU note section's name offset,
    // past the end of .shstrtab, named `.note.hotswap.moved` in the grown
    // output; a second rewrite read that section as the marker, found none,
    // took the image's WMMA sites for unfixed ones and refused the clash.
    let data = include_bytes!(
        "../../data/fuzz-findings/rewrite-section-name-past-the-names-becomes-the-marker.bin"
    );
    let (&flags, object) = data.split_first().unwrap();
    assert_eq!(flags, 0);
    match rewrite_b0_to_a0(object, &default()) {
        Err(e @ RewriteError::Growth(_)) => {
            let e = e.to_string();
            assert!(e.contains("past the end of the section names"), "{e}");
        }
        Err(e) => panic!("expected a growth refusal, got {e}"),
        Ok(once) => {
            let again = rewrite_b0_to_a0(&once.bytes, &default());
            panic!(
                "grown; rewriting the output again: {:?}",
                again.map(|r| r.bytes == once.bytes)
            );
        }
    }
}

#[test]
fn an_object_with_a_corrupt_marker_is_refused_rather_than_grown_twice() {
    // A grown object whose marker cannot be read (here: another version):
    // its original copy's sites look reachable again, and a second growth
    // would add a second marker that the first hides.
    let once =
        rewrite_b0_to_a0(&Obj::functions(&[("k", around(&DS2))]).build(), &default()).unwrap();
    let mut bytes = once.bytes.clone();
    let header = crate::elf::Header::parse(&bytes).unwrap();
    let marker = header
        .section_by_name(&bytes, placement::MARKER_SECTION.as_bytes())
        .unwrap();
    let version = marker.offset as usize + 12 + 8; // after the note header and owner
    assert_eq!(bytes[version], 1);
    bytes[version] = 2;
    assert!(moved_functions(&bytes).is_none());
    let why = refused_or_fixed_point(&bytes).expect("refused");
    assert!(why.contains("already has a section"), "{why}");
}

#[test]
fn unterminated_string_tables_keep_their_last_name() {
    // The last name of .strtab and of .shstrtab runs to the table's end: the
    // names appended after it must not extend it.
    let mut input = Obj::functions(&[("k", around(&DS2))]).build();
    for index in [STRTAB, SHSTRTAB] {
        let header = crate::elf::Header::parse(&input).unwrap();
        let size = header.sections(&input)[index].size - 1;
        set_section_field(&mut input, index, 32, &size.to_le_bytes());
    }
    let header = crate::elf::Header::parse(&input).unwrap();
    let names: Vec<Vec<u8>> = header
        .sections(&input)
        .iter()
        .map(|s| s.name.to_vec())
        .collect();
    assert_eq!(names[SHSTRTAB], b".shstrtab");
    assert!(refused_or_fixed_point(&input).is_none());
    let out = rewrite_b0_to_a0(&input, &default()).unwrap().bytes;
    let header = crate::elf::Header::parse(&out).unwrap();
    let out_names: Vec<Vec<u8>> = header
        .sections(&out)
        .iter()
        .map(|s| s.name.to_vec())
        .collect();
    assert_eq!(out_names[..names.len()], names[..]);
    let functions: Vec<String> = crate::gfx1250::analyze(&out)
        .unwrap()
        .functions
        .iter()
        .map(|f| f.name.clone())
        .collect();
    assert_eq!(functions, ["k", "k.a0"]);
}

// --- headers that would change meaning once growth appends (rewrite/input_bounds.rs) ---

#[test]
fn the_fuzz_finding_whose_output_could_not_be_read_again_is_refused() {
    // fuzz/rewrite input (first byte: options, here allow_partial): section
    // headers of garbage; one, an executable section at file offset 0 (size
    // 0x2800) larger than the object, covered
    // nothing in the input but the appended bytes in the output, whose second
    // rewrite was refused as uncovered code at offset 0; a garbage allocated
    // section at 0x642e00687361682e put the moved code at 0xd85c00c9e7c2d000.
    let data = include_bytes!("../../data/fuzz-findings/rewrite-grown-output-refused.bin");
    let (&flags, object) = data.split_first().unwrap();
    let options = crate::rewrite::Options {
        allow_partial: flags & 1 == 1,
        ..default()
    };
    match rewrite_b0_to_a0(object, &options) {
        Err(e @ RewriteError::Growth(_)) => {
            let e = e.to_string();
            assert!(e.contains("runs past the end"), "{e}");
        }
        Err(e) => panic!("expected a growth refusal, got {e}"),
        Ok(once) => {
            let again = rewrite_b0_to_a0(&once.bytes, &options);
            panic!(
                "grown (moved {:?}); rewriting the output again: {:?}",
                once.report.moved,
                again.map(|r| r.bytes == once.bytes)
            );
        }
    }
}

#[test]
fn a_split_scaled_f4_wmma_with_a_stale_scale_src2_gives_a_fixed_point() {
    // fuzz/rewrite inputs (first byte: options, here allow_partial and
    // clauses replaced), mutants of the WMMA corpus's edge.co and the
    // analyzer's a0_sites.co found by `native_rewrite mutate`: a bit flip
    // in the LD_SCALE prefix of a `v_wmma_scale_f32_32x16x128_f4` made its
    // scale_src2 field other than 0x100, so the instruction is a site of
    // wmma_f4 (split along M, growth) and of wmma_scale (same size). The
    // M split copied the stale field into both halves, and rewriting the
    // grown output fixed those two `wmma_scale` sites in the image.
    for (data, vaddr) in [
        (
            &include_bytes!(
                "../../data/fuzz-findings/rewrite-split-scaled-f4-stale-scale-src2.edge.bin"
            )[..],
            0x167c,
        ),
        (
            &include_bytes!(
                "../../data/fuzz-findings/rewrite-split-scaled-f4-stale-scale-src2.a0_sites.bin"
            )[..],
            0x1778,
        ),
    ] {
        let (&flags, object) = data.split_first().unwrap();
        let options = crate::rewrite::Options {
            allow_partial: flags & 1 == 1,
            clauses: if flags & 2 == 2 {
                crate::rewrite::ClausePolicy::ReplaceWithNop
            } else {
                crate::rewrite::ClausePolicy::Keep
            },
        };
        let once = rewrite_b0_to_a0(object, &options).expect("rewritten, partly");
        let at = |class| move |s: &SiteInfo| s.vaddr == vaddr && s.class == class;
        assert!(once.report.fixed.iter().any(at(A0Class::WmmaScale)));
        let split = once
            .report
            .grown
            .iter()
            .find(|g| at(A0Class::WmmaF4)(&g.site))
            .expect("the site is split along M");
        // Both halves in their A0 form: each a block-32 scaled WMMA whose
        // scale_src2 is 0x100.
        let halves = image(&once.bytes, split.new_vaddr, split.new_len as usize);
        let sites = crate::gfx1250::sites_in(halves, split.new_vaddr);
        let scaled: Vec<_> = sites
            .iter()
            .filter(|s| s.class == A0Class::WmmaScale)
            .collect();
        assert_eq!(scaled.len(), 2, "{sites:?}");
        assert!(scaled.iter().all(|s| !s.needs_change), "{sites:?}");
        // A fixed point: nothing is fixed again, no byte changes.
        let again = rewrite_b0_to_a0(&once.bytes, &options).expect("rewrites again");
        assert!(again.report.fixed.is_empty(), "{:?}", again.report.fixed);
        assert!(again.report.grown.is_empty());
        assert_eq!(again.bytes, once.bytes);
    }
}

/// Writes `value` into field `at` (bytes) of program header `index`.
fn set_segment_field(object: &mut [u8], index: usize, at: usize, value: &[u8]) {
    let phoff = u64::from_le_bytes(object[32..40].try_into().unwrap()) as usize;
    let start = phoff + index * 56 + at;
    object[start..start + value.len()].copy_from_slice(value);
}

#[test]
fn a_section_running_past_the_end_of_the_file_refuses() {
    // The finding's shape: the null section header made an executable section
    // at offset 0 one page larger than the object. The grown output is larger
    // than that, so the section would cover its ELF header and the appended
    // code, and a second rewrite would see uncovered code.
    let mut input = Obj::functions(&[("k", around(&DS2))]).build();
    let size = input.len() as u64 + 0x1000;
    set_section_field(&mut input, 0, 4, &1u32.to_le_bytes()); // SHT_PROGBITS
    set_section_field(&mut input, 0, 8, &6u64.to_le_bytes()); // ALLOC | EXECINSTR
    set_section_field(&mut input, 0, 32, &size.to_le_bytes());
    let why = refused_or_fixed_point(&input).expect("refused");
    assert!(
        why.contains("section 0") && why.contains("runs past the end"),
        "{why}"
    );
}

#[test]
fn a_note_section_that_would_hold_the_marker_note_refuses() {
    // A note section from the object's end on: the appended marker note would
    // become one of its notes.
    let mut input = Obj::functions(&[("k", around(&DS2))]).build();
    let end = input.len() as u64;
    set_section_field(&mut input, 0, 4, &7u32.to_le_bytes()); // SHT_NOTE
    set_section_field(&mut input, 0, 24, &end.to_le_bytes());
    set_section_field(&mut input, 0, 32, &0x10000u64.to_le_bytes());
    let why = refused_or_fixed_point(&input).expect("refused");
    assert!(
        why.contains("section 0") && why.contains("runs past the end"),
        "{why}"
    );
}

#[test]
fn a_program_header_running_past_the_end_of_the_file_refuses() {
    // A second, read-only PT_LOAD (the note's header made one) whose file
    // bytes run from the text past the object's end: the input's loader
    // cannot read them, the output's would load the appended code and
    // tables into it.
    let mut input = Obj::functions(&[("k", around(&DS2))])
        .with_note(metadata(&[None]))
        .build();
    let size = input.len() as u64;
    set_segment_field(&mut input, 1, 0, &1u32.to_le_bytes()); // PT_LOAD
    set_segment_field(&mut input, 1, 8, &TEXT_OFFSET.to_le_bytes());
    set_segment_field(&mut input, 1, 16, &0x10_0000u64.to_le_bytes());
    set_segment_field(&mut input, 1, 32, &size.to_le_bytes());
    set_segment_field(&mut input, 1, 40, &size.to_le_bytes());
    let why = refused_or_fixed_point(&input).expect("refused");
    assert!(
        why.contains("program header 1") && why.contains("runs past the end"),
        "{why}"
    );
}

#[test]
fn an_allocated_section_past_the_gpu_address_space_refuses() {
    // Not in any segment, but the appended segment goes past every allocated
    // section: the finding's moved code landed at 0xd85c00c9e7c2d000.
    let mut input = Obj::functions(&[("k", around(&DS2))]).build();
    set_section_field(&mut input, 0, 4, &8u32.to_le_bytes()); // SHT_NOBITS
    set_section_field(&mut input, 0, 8, &2u64.to_le_bytes()); // ALLOC
    set_section_field(&mut input, 0, 16, &0x642e_0068_7361_682eu64.to_le_bytes());
    set_section_field(&mut input, 0, 32, &0x100u64.to_le_bytes());
    let why = refused_or_fixed_point(&input).expect("refused");
    assert!(
        why.contains("allocated section 0") && why.contains("57-bit GPU address space"),
        "{why}"
    );
}

#[test]
fn a_segment_past_the_gpu_address_space_refuses() {
    let e = growth_refusal_with_last_load_memsz(|vaddr, _| (1 << 57) - vaddr + 1);
    assert!(
        e.contains("loadable segment") && e.contains("57-bit GPU address space"),
        "{e}"
    );
}

#[test]
fn an_appended_segment_that_would_end_past_the_gpu_address_space_refuses() {
    // The input's last segment ends just inside the limit; the new one would
    // start at the limit.
    let e = growth_refusal_with_last_load_memsz(|vaddr, _| (1 << 57) - vaddr - 16);
    assert!(
        e.contains("moved code exceeds the GPU address space"),
        "{e}"
    );
}

#[test]
fn overlapping_copied_tables_still_fit_the_tails_allocation() {
    // Found by a long fuzz.growth run (fuzz/run.sh long): the section names
    // at file offset 0 (0xc80 bytes) and .symtab's strings at offset 0
    // (0xd19 bytes) overlap; the tail's room for the copied tables was capped
    // at the object's size, less than the copies, and the tail was
    // reallocated (the debug assertion at the end of `place` fired).
    let data =
        include_bytes!("../../data/fuzz-findings/growth-overlapping-tables-outgrow-the-tail.bin");
    let (&flags, object) = data.split_first().unwrap();
    let options = crate::rewrite::Options {
        clauses: if flags & 2 == 2 {
            crate::rewrite::ClausePolicy::ReplaceWithNop
        } else {
            crate::rewrite::ClausePolicy::Keep
        },
        ..default()
    };
    let once = rewrite_b0_to_a0(object, &options).expect("grown");
    assert_eq!(once.report.moved.len(), 1);
    let again = rewrite_b0_to_a0(&once.bytes, &options).expect("rewrites again");
    assert_eq!(again.bytes, once.bytes);
}
/// A filler function of `n` bytes of `s_nop 0` and a return.
fn filler(n: usize) -> Vec<u8> {
    let mut f = S_NOP.repeat(n / 4);
    f.extend(S_SET_PC);
    f
}

#[test]
fn an_old_entry_out_of_branch_reach_gets_a_far_jump_through_a_dead_pair() {
    // The moved function first, then 200 KiB of code: its image is past
    // s_branch reach of its old entry.
    // k writes s[0:1] before any read (s_mov_b64 s[0:1], 0), so no caller
    // can keep a value there: dead at entry.
    let code = [
        vec![0x80, 0x01, 0x80, 0xbe],
        DS2.to_vec(),
        S_NOP.repeat(2),
        S_SET_PC.to_vec(),
    ]
    .concat();
    // Without the two s_nop, k (16 bytes) cannot hold the 20-byte jump.
    let short = [&code[..12], &S_SET_PC[..]].concat();
    let e = rewrite_b0_to_a0(
        &Obj::functions(&[("k", short), ("big", filler(200 << 10))]).build(),
        &default(),
    )
    .unwrap_err();
    assert!(
        e.to_string()
            .contains("k: 16 bytes, too short for the 20-byte gateway"),
        "{e}"
    );
    let obj = Obj::functions(&[("k", code), ("big", filler(200 << 10))]);
    let input = obj.build();
    let r = rewrite_b0_to_a0(&input, &default()).unwrap();
    let m = &r.report.moved[0];
    let gw = &r.report.gateways[0];
    // s[0:1]: dead at entry and clobberable under both conventions.
    assert_eq!(gw.kind, placement::GatewayKind::FarJump { reg: 0 });
    assert_eq!(
        (gw.old_entry, gw.new_entry, gw.len),
        (obj.vaddr(0), m.new_vaddr, 20)
    );
    assert_eq!(gw.kind.registers(), "s[0:1]");
    let at = obj.vaddr(0) as usize;
    let code = &r.bytes[at..at + 20];
    assert_eq!(&code[..4], GET_PC);
    assert_eq!(&code[4..8], [0x00, 0xfe, 0x80, 0xa9]);
    let lit = u64::from_le_bytes(code[8..16].try_into().unwrap());
    assert_eq!((at as u64 + 4).wrapping_add(lit), m.new_vaddr);
    assert_eq!(&code[16..], [0x00, 0x48, 0x80, 0xbe]);
    // The old copy still decodes: the gateway covered whole instructions.
    assert!(crate::gfx1250::analyze(&r.bytes).unwrap().is_complete());
}

#[test]
fn a_far_gateway_with_no_dead_clobberable_pair_is_refused_naming_the_function() {
    // s_add_co_u32 s0, s0, s2; s_add_co_u32 s1, s1, s3 and
    // s_add_co_u32 vcc_lo, vcc_lo, vcc_hi at entry: s[0:3] and VCC are live
    // there, every other pair is callee-saved or the return address.
    let reads = [
        [0x00, 0x02, 0x00, 0x80],
        [0x01, 0x03, 0x01, 0x80],
        [0x6a, 0x6b, 0x6a, 0x80],
    ]
    .concat();
    let code = [reads, DS2.to_vec(), S_SET_PC.to_vec()].concat();
    let input = Obj::functions(&[("k", code), ("big", filler(200 << 10))]).build();
    let e = rewrite_b0_to_a0(&input, &default()).unwrap_err();
    let text = e.to_string();
    assert!(
        text.contains("k: its image is out of s_branch reach") && text.contains("no SGPR pair"),
        "{text}"
    );
}
