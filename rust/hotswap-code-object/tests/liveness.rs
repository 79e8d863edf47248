//! Liveness and the scavenger on hand-written gfx1250 code (tests/liveness/
//! cases.s: every expected answer is stated there) and on clang-22 builds
//! (calls.hip: kernels calling functions; wide.hip: 606 VGPRs, v256+ through
//! s_set_vgpr_msb). Objects rebuilt by tests/liveness/make.sh.

use hotswap_code_object::elf;
use hotswap_code_object::liveness::{
    self, counts, Convention, ObjectLiveness, Reg, RegClass, Request, Scratch, Status,
};
use hotswap_code_object::CodeObject;

static CASES: &[u8] = include_bytes!("liveness/cases.co");
static CALLS: &[u8] = include_bytes!("liveness/calls.co");
static WIDE: &[u8] = include_bytes!("liveness/wide.co");
static BROKEN: &[u8] = include_bytes!("liveness/broken.co");
static INDIRECT: &[u8] = include_bytes!("liveness/indirect.co");
static PRESSURE: &[u8] = include_bytes!("liveness/pressure.co");

/// The address of symbol `name` (the cases' `*_site` labels).
fn symbol(object: &[u8], name: &str) -> u64 {
    let o = CodeObject::parse(object).unwrap();
    o.symbols(elf::SHT_SYMTAB)
        .iter()
        .find(|s| s.name == name.as_bytes())
        .unwrap_or_else(|| panic!("no symbol {name}"))
        .value
}

fn at(l: &ObjectLiveness<'_>, object: &[u8], site: &str) -> (usize, u64, liveness::LiveAt) {
    let v = symbol(object, site);
    let f = l.function_at(v).unwrap();
    (f, v, l.live_at(f, v).unwrap())
}

#[test]
fn straight_line_reads_writes_and_scc() {
    let l = liveness::analyze(CASES, Convention::Unknown).unwrap();
    let (f, v, a) = at(&l, CASES, "k_line_site");
    assert!(a.before.contains(Reg::V(0)) && a.before.contains(Reg::V(1)));
    assert!(
        a.before.contains(Reg::Scc),
        "read by s_cbranch_scc1 after the site"
    );
    assert!(
        !a.before.contains(Reg::V(2)),
        "written by the site before any read"
    );
    assert!(
        !a.before.contains(Reg::S(4)),
        "killed by s_mov_b32 s4 after the site"
    );
    assert!(!a.before.contains(Reg::V(3)));
    // Scratch: the first dead aligned VGPR pair is v4 (v0-v2 busy, v3 alone).
    match l.scratch(f, v, Request::new(RegClass::Vgpr, 2, 2)).unwrap() {
        Scratch::Dead { first, count, .. } => assert_eq!((first, count), (4, 2)),
        other => panic!("{other:?}"),
    }
    // SGPRs: s0-s1 (the store's address) are live; s2 read by the s_cmp before the site is dead.
    match l.scratch(f, v, Request::new(RegClass::Sgpr, 1, 1)).unwrap() {
        Scratch::Dead { first, .. } => assert_eq!(first, 2),
        other => panic!("{other:?}"),
    }
}

#[test]
fn vgpr_kills_are_forgotten_across_an_exec_change() {
    let l = liveness::analyze(CASES, Convention::Unknown).unwrap();
    let (_, _, a) = at(&l, CASES, "k_exec_site");
    assert!(
        a.before.contains(Reg::V(5)),
        "v5's write covers only the new EXEC's lanes"
    );
    assert!(
        !a.before.contains(Reg::V(6)),
        "v6 is written before the EXEC change"
    );
    assert!(
        a.before.contains(Reg::S(106)),
        "vcc_lo is read by s_and_saveexec"
    );
}

#[test]
fn vgprs_above_255_follow_the_msb_mode() {
    let l = liveness::analyze(CASES, Convention::Unknown).unwrap();
    let (f, v, a) = at(&l, CASES, "k_msb_site");
    assert!(
        a.before.contains(Reg::V(257)),
        "v1 in src0 bank 1 is read after the site"
    );
    assert!(!a.before.contains(Reg::V(1)) && !a.before.contains(Reg::V(769)));
    // A request below v256 (an operand slot without banking) skips v257 anyway.
    let mut req = Request::new(RegClass::Vgpr, 4, 4);
    req.below = 256;
    let s = l.scratch(f, v, req).unwrap();
    assert!(s
        .registers()
        .iter()
        .all(|r| matches!(r, Reg::V(n) if *n < 256)));
}

#[test]
fn registers_of_a_load_in_flight_stay_live_to_the_wait() {
    let l = liveness::analyze(CASES, Convention::Unknown).unwrap();
    let (_, _, a) = at(&l, CASES, "k_flight_site");
    assert!(a.before.contains(Reg::V(8)), "the load may still write v8");
    assert!(
        a.before.contains(Reg::V(0)),
        "the load may still read its address"
    );
}

#[test]
fn a_tensor_load_reads_its_descriptor_groups_and_no_other_sgpr() {
    let l = liveness::analyze(CASES, Convention::Unknown).unwrap();
    let (f, v, a) = at(&l, CASES, "k_tensor_site");
    for s in 0..12 {
        assert!(a.before.contains(Reg::S(s)), "s{s}: a descriptor SGPR");
    }
    for s in 12..106 {
        assert!(
            !a.before.contains(Reg::S(s)),
            "s{s}: not read by the tensor load"
        );
    }
    // The first dead SGPR is s12 (s0-s11 are the descriptor); before the
    // tensor instructions were decoded, every scalar register was live here.
    match l.scratch(f, v, Request::new(RegClass::Sgpr, 1, 1)).unwrap() {
        Scratch::Dead { first, .. } => assert_eq!(first, 12),
        other => panic!("{other:?}"),
    }
    // After the load the descriptor stays live up to the wait (read late).
    let (_, _, late) = at(&l, CASES, "k_tensor_late");
    assert!(late.before.contains(Reg::S(4)) && late.before.contains(Reg::S(0)));
    assert!(!late.before.contains(Reg::S(12)));
}

#[test]
fn loops_reach_a_fixed_point() {
    let l = liveness::analyze(CASES, Convention::Unknown).unwrap();
    let (_, _, a) = at(&l, CASES, "k_loop_site");
    assert!(a.before.contains(Reg::V(10)) && a.before.contains(Reg::S(5)));
    assert!(
        !a.before.contains(Reg::V(9)),
        "v9 is written before its next read"
    );
    let head = symbol(CASES, "k_loop_site") - 8;
    let f = l.function_at(head).unwrap();
    assert!(l.live_at(f, head).unwrap().before.contains(Reg::V(9)));
}

#[test]
fn callee_saved_registers_are_never_scratch_in_a_callee() {
    // Under the C convention s10 (written after the site) is scratch; under
    // amdgpu_gfx s4-s31 are callee-saved (rocm-systems #9261) and so is s10.
    let c = liveness::analyze(CASES, Convention::C).unwrap();
    let (f, v, _) = at(&c, CASES, "f_callee_site");
    assert!(!c.functions[f].is_kernel);
    match c.scratch(f, v, Request::new(RegClass::Sgpr, 1, 1)).unwrap() {
        Scratch::Dead { first, .. } => assert_eq!(first, 10),
        other => panic!("{other:?}"),
    }
    let gfx = liveness::analyze(CASES, Convention::Gfx).unwrap();
    let s = gfx.scratch(f, v, Request::new(RegClass::Sgpr, 1, 1));
    let saved = |s: &Scratch| s.registers().contains(&Reg::S(10));
    match s {
        Ok(Scratch::Dead { .. }) => panic!("a callee-saved register handed out dead: {s:?}"),
        Ok(Scratch::SaveRestore { ref saves, .. }) => {
            assert!(saves.iter().all(|x| x.reg != Reg::S(10)) || saved(s.as_ref().unwrap()));
            for r in s.as_ref().unwrap().registers() {
                if let Reg::S(n) = r {
                    if (4..32).contains(&n) {
                        assert!(saves.iter().any(|x| x.reg == r), "{r} not saved");
                    }
                }
            }
        }
        Ok(other) => {
            assert!(
                other
                    .registers()
                    .iter()
                    .all(|r| !matches!(r, Reg::S(4..=31))),
                "{other:?}"
            )
        }
        Err(e) => assert_eq!((e.class, e.site), (RegClass::Sgpr, v)),
    }
    // The call: k_call reaches f_callee; v3 is live across the call.
    let k = c.kernels.iter().find(|k| k.name == "k_call").unwrap();
    assert_eq!(k.reaches.len(), 2);
    assert!(!k.reaches_indirect);
    let call = symbol(CASES, "k_call") + 0x18;
    let kf = c.function_at(call).unwrap();
    assert!(c.live_at(kf, call).unwrap().before.contains(Reg::V(3)));
}

#[test]
fn above_the_allocation_raises_every_reaching_kernel_and_patches() {
    let l = liveness::analyze(CASES, Convention::C).unwrap();
    let (f, v, _) = at(&l, CASES, "f_callee_site");
    // 40 VGPRs aligned to 8 cannot be dead in the callee (IPRA and the
    // convention keep the untouched ones live): above what k_call and
    // f_callee touch (v0-v11 → first 16), k_call allocates 32 → raise to 56.
    let s = l
        .scratch(f, v, Request::new(RegClass::Vgpr, 40, 8))
        .unwrap();
    let Scratch::AboveAllocation {
        first,
        count,
        raises,
        ..
    } = &s
    else {
        panic!("{s:?}")
    };
    assert_eq!((*first, *count), (16, 40));
    assert_eq!(raises.len(), 1);
    let r = &raises[0];
    assert_eq!(
        (r.name.as_str(), r.old_count, r.new_count),
        ("k_call", 32, 56)
    );
    assert_eq!(r.granulated, Some((1, 3)));
    assert_eq!(r.occupancy, Some((16, 16)));
    let mut out = CASES.to_vec();
    counts::apply(&l, &mut out, raises).unwrap();
    let again = liveness::analyze(&out, Convention::C).unwrap();
    let k = again.kernels.iter().find(|k| k.name == "k_call").unwrap();
    assert_eq!(k.allocated_vgprs, Some(64));
    assert_eq!(
        counts::metadata_counts(&out, "k_call"),
        Some((Some(56), Some(40)))
    );
    assert_eq!(
        counts::metadata_counts(&out, "k_line"),
        Some((Some(16), Some(8)))
    );
    // Only the descriptor word and the note changed.
    let changed = CASES.iter().zip(&out).filter(|(a, b)| a != b).count();
    assert!((1..=3).contains(&changed), "{changed} bytes changed");
}

#[test]
fn live_sgprs_are_saved_into_vgpr_lanes_when_nothing_is_free() {
    let l = liveness::analyze(CASES, Convention::Unknown).unwrap();
    let (f, v, a) = at(&l, CASES, "k_full_site");
    assert!((0..106).all(|n| a.before.contains(Reg::S(n))));
    let s = l.scratch(f, v, Request::new(RegClass::Sgpr, 4, 4)).unwrap();
    let Scratch::SaveRestore {
        first,
        count,
        saves,
        holder,
    } = &s
    else {
        panic!("{s:?}")
    };
    assert_eq!(
        (*first, *count),
        (0, 4),
        "s[0:3] are not operands of the site"
    );
    let Scratch::Dead {
        class: RegClass::Vgpr,
        first: vgpr,
        ..
    } = **holder
    else {
        panic!("{holder:?}")
    };
    assert!(
        !a.used_after.contains(Reg::V(vgpr)),
        "the holder is dead in every lane"
    );
    let saved: Vec<(Reg, u8)> = saves.iter().map(|x| (x.reg, x.lane)).collect();
    assert_eq!(
        saved,
        [
            (Reg::S(0), 0),
            (Reg::S(1), 1),
            (Reg::S(2), 2),
            (Reg::S(3), 3)
        ]
    );
    assert!(saves.iter().all(|x| x.vgpr == vgpr));
}

#[test]
fn clang_kernels_reaching_a_callee_are_all_raised() {
    // leaf() is reached by calls_mid (through mid) and calls_leaf: a VGPR block
    // above both kernels' allocations raises both, in the descriptor and the note.
    let l = liveness::analyze(CALLS, Convention::Unknown).unwrap();
    let f = l
        .functions
        .iter()
        .position(|f| f.name.contains("leaf"))
        .unwrap();
    let v = l.functions[f].vaddr;
    let s = l
        .scratch(f, v, Request::new(RegClass::Vgpr, 64, 16))
        .unwrap();
    let Scratch::AboveAllocation { first, raises, .. } = &s else {
        panic!("{s:?}")
    };
    let mut names: Vec<&str> = raises.iter().map(|r| r.name.as_str()).collect();
    names.sort();
    assert_eq!(names, ["calls_leaf", "calls_mid"]);
    let end = first + 64;
    assert!(raises
        .iter()
        .all(|r| r.new_count == end && r.old_count < end));
    let mut out = CALLS.to_vec();
    counts::apply(&l, &mut out, raises).unwrap();
    let again = liveness::analyze(&out, Convention::Unknown).unwrap();
    for r in raises {
        let k = again.kernels.iter().find(|k| k.name == r.name).unwrap();
        assert_eq!(k.allocated_vgprs, Some(end.div_ceil(16) * 16));
        let (vgprs, _) = counts::metadata_counts(&out, &r.name).unwrap();
        assert_eq!(vgprs, Some(u64::from(end)));
    }
    let none = again
        .kernels
        .iter()
        .find(|k| k.name == "calls_none")
        .unwrap();
    let before = l.kernels.iter().find(|k| k.name == "calls_none").unwrap();
    assert_eq!(none.allocated_vgprs, before.allocated_vgprs);
}

#[test]
fn an_indirect_call_reaches_callable_functions_not_other_kernels() {
    // k_ind calls through a loaded pointer: f_cb and f_other (callable) may
    // run under it; k_big (v300) is a kernel, whose entry no call can target.
    let l = liveness::analyze(INDIRECT, Convention::Unknown).unwrap();
    let k = |name: &str| l.kernels.iter().find(|k| k.name == name).unwrap();
    assert!(k("k_ind").reaches_indirect && !k("k_ind").reaches_anything);
    assert!(!k("k_big").reaches_indirect);
    let (f, v, _) = at(&l, INDIRECT, "f_cb_site");
    // Tier 1 has no run of 8 in the callable f_cb (return values,
    // preserved and never-written registers); tier 2 starts above what
    // k_ind, f_cb and f_other touch (v47), not above k_big's v300.
    let s = l.scratch(f, v, Request::new(RegClass::Vgpr, 8, 1)).unwrap();
    let Scratch::AboveAllocation { first, raises, .. } = &s else {
        panic!("{s:?}")
    };
    assert_eq!(*first, 48);
    let raised: Vec<(&str, u16, u16)> = raises
        .iter()
        .map(|r| (r.name.as_str(), r.old_count, r.new_count))
        .collect();
    assert_eq!(raised, [("k_ind", 32, 56)]);
    // Below v40 nothing: the refusal names the kernel, how it reaches the
    // site and the function that sets the bound.
    let mut low = Request::new(RegClass::Vgpr, 8, 1);
    low.below = 40;
    let e = l.scratch(f, v, low).unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "f_cb at {v:#x}: no vgpr scratch: no 1 aligned dead run of 8; code reachable from \
             kernel k_ind (through a call whose target is not known) touches registers up to \
             48 (in f_other), no room below 40; VGPRs are never saved and restored"
        )
    );
}

/// tests/wmma/corpus/pressure.s: below v256 only v100:v101 are free at the
/// block-16 scaled WMMA of a kernel allocating 320 VGPRs, v260 is live across
/// it. The split takes its scale pair there and its masked A copy in bank 1,
/// around v260: the object is complete, with no count raised.
#[test]
fn a_block16_split_takes_its_scales_below_v256_and_its_a_copy_in_any_bank() {
    use hotswap_code_object::rewrite::{self, emit::Taken, Options};
    let r = rewrite::rewrite_b0_to_a0(PRESSURE, &Options::default()).unwrap();
    assert!(r.report.remaining.is_empty() && r.report.growth_refused.is_empty());
    assert!(r.report.raised.is_empty(), "{:?}", r.report.raised);
    let [g] = &r.report.grown[..] else {
        panic!("{:?}", r.report.grown)
    };
    assert_eq!(g.fix, "wmma-scale16-k-split");
    let taken = |t: &Taken| (t.class, t.first, t.count, t.tier);
    assert_eq!(
        g.scratch.iter().map(taken).collect::<Vec<_>>(),
        [
            (RegClass::Vgpr, 100, 2, "dead"),
            (RegClass::Vgpr, 261, 16, "dead")
        ]
    );
    // The liveness of the input agrees: both runs are dead at the site.
    let l = liveness::analyze(PRESSURE, Convention::Unknown).unwrap();
    let at = l
        .live_at(l.function_at(g.site.vaddr).unwrap(), g.site.vaddr)
        .unwrap();
    for v in (100..102).chain(261..277) {
        assert!(
            !at.before.contains(Reg::V(v)) && !at.after.contains(Reg::V(v)),
            "v{v}"
        );
    }
    assert!(at.after.contains(Reg::V(260)));
}

/// A second request at a site never gets a register of the first grant.
#[test]
fn a_request_avoiding_earlier_grants_gets_other_registers() {
    let l = liveness::analyze(CASES, Convention::C).unwrap();
    let (f, v, _) = at(&l, CASES, "k_line_site");
    let req = Request::new(RegClass::Vgpr, 2, 1);
    let first = l.scratch(f, v, req).unwrap().registers();
    let mut avoid = liveness::RegSet::EMPTY;
    for r in &first {
        avoid.insert(*r);
    }
    let second = l.scratch_avoiding(f, v, req, &avoid).unwrap().registers();
    assert!(
        second.iter().all(|r| !first.contains(r)),
        "{first:?} {second:?}"
    );
    assert_eq!(
        l.scratch_avoiding(f, v, req, &liveness::RegSet::EMPTY)
            .unwrap()
            .registers(),
        first
    );
}

#[test]
fn occupancy_matches_clang() {
    // clang-22 -mcpu=gfx1250 "; Occupancy:" for NumVgprs 49, 65, 97, 129, 193, 256.
    for (v, waves) in [
        (49, 16),
        (65, 12),
        (97, 9),
        (129, 7),
        (193, 4),
        (256, 4),
        (1024, 1),
    ] {
        assert_eq!(liveness::scratch::occupancy(v), waves, "{v}");
    }
}

#[test]
fn unanalysable_functions_offer_nothing() {
    let l = liveness::analyze(BROKEN, Convention::Unknown).unwrap();
    let g = l.functions.iter().position(|f| f.name == "k_fall").unwrap();
    assert!(
        matches!(l.functions[g].status, Status::NotAnalysable(ref why) if why.contains("falls through"))
    );
    let f = l.functions.iter().position(|f| f.name == "k_out").unwrap();
    assert!(
        matches!(l.functions[f].status, Status::NotAnalysable(ref why) if why.contains("branch"))
    );
    // An unanalysable function may call anything: its kernel reaches everything.
    assert!(l.kernels.iter().all(|k| k.reaches_indirect));
    let e = l
        .scratch(f, l.functions[f].vaddr, Request::new(RegClass::Vgpr, 1, 1))
        .unwrap_err();
    assert!(
        e.to_string().contains("k_out") && e.to_string().contains("vgpr"),
        "{e}"
    );
}

#[test]
fn clang_calls_resolve_to_their_callees() {
    let l = liveness::analyze(CALLS, Convention::Unknown).unwrap();
    assert_eq!(l.analysable(), l.functions.len());
    let name = |i: usize| l.functions[i].name.as_str();
    for k in &l.kernels {
        let reached: Vec<&str> = k.reaches.iter().map(|&i| name(i)).collect();
        assert!(!k.reaches_indirect, "{}", k.name);
        match k.name.as_str() {
            "calls_mid" => assert_eq!(reached.len(), 3, "{reached:?}"),
            "calls_leaf" => assert_eq!(reached.len(), 2, "{reached:?}"),
            _ => assert_eq!(reached, ["calls_none"]),
        }
    }
    // In every callable function, no site hands out a callee-saved register dead.
    let csr = liveness::abi::callee_saved(Convention::Unknown);
    for (i, f) in l.functions.iter().enumerate().filter(|(_, f)| !f.is_kernel) {
        let mut v = f.vaddr;
        while let Some(a) = l.live_at(i, v) {
            for class in [RegClass::Sgpr, RegClass::Vgpr] {
                if let Ok(Scratch::Dead { .. }) = l.scratch(i, v, Request::new(class, 1, 1)) {
                    let s = l.scratch(i, v, Request::new(class, 1, 1)).unwrap();
                    assert!(s.registers().iter().all(|r| !csr.contains(*r)), "{s:?}");
                }
            }
            let len = (1..=20u64).find(|&n| l.live_at(i, v + n).is_some());
            let _ = a;
            match len {
                Some(n) => v += n,
                None => break,
            }
        }
    }
}

#[test]
fn a_kernel_with_606_vgprs_is_analysed_in_every_bank() {
    let l = liveness::analyze(WIDE, Convention::Unknown).unwrap();
    assert_eq!(l.analysable(), 1);
    let f = &l.functions[0];
    assert_eq!(f.unknown_instructions, 0);
    assert!(f.touched.vgpr_bound() > 512, "{}", f.touched.vgpr_bound());
    assert_eq!(l.kernels[0].allocated_vgprs, Some(608));
    // Above the allocation: 606 used → first 608 (aligned 8), raise to 616.
    let site = f.vaddr + 8;
    if let Ok(Scratch::AboveAllocation { first, raises, .. }) =
        l.scratch(0, site, Request::new(RegClass::Vgpr, 1024 - 600, 8))
    {
        panic!("1024 - 600 registers cannot fit above {first}: {raises:?}");
    }
}

#[test]
fn mutated_objects_never_panic() {
    // Every byte of the code, one at a time, XORed with a pseudo-random value;
    // then every instruction of every analysable function queried.
    let mut state = 0x2545_f491_4f6c_dd1du64;
    for object in [CASES, CALLS, WIDE] {
        let o = CodeObject::parse(object).unwrap();
        let text = o.section_by_name(b".text").unwrap();
        let (start, len) = (text.offset as usize, text.size as usize);
        for round in 0..80 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let mut m = object.to_vec();
            for k in 0..1 + round % 4 {
                let at = start + (state as usize >> (8 * k)) % len;
                m[at] ^= (state >> 56) as u8 | 1;
            }
            let Ok(l) = liveness::analyze(&m, Convention::Unknown) else {
                continue;
            };
            for (fi, f) in l.functions.iter().enumerate() {
                for (v, _) in f.instructions().take(12) {
                    let _ = l.scratch(fi, v, Request::new(RegClass::Vgpr, 3, 4));
                    let _ = l.scratch(fi, v, Request::new(RegClass::Sgpr, 40, 2));
                }
            }
        }
    }
}

static TDEF: &[u8] = include_bytes!("liveness/tdef.co");

/// The reaching-definition proof of the tensor-mask fix's definition-site
/// form (tests/liveness/tdef.s): s4's only definition at each `*_site` load,
/// read by nothing but a tensor load whose mask is s4, then the in-place
/// change of that definition, or why not.
fn definition_form(site: &str) -> Result<(u64, Vec<u8>, Vec<u64>), String> {
    use hotswap_code_object::rewrite::emit::tensor_mask;
    let l = liveness::analyze(TDEF, Convention::Unknown).unwrap();
    let (f, v, _) = at(&l, TDEF, site);
    let allowed = |_: u64, b: &[u8]| tensor_mask::mask_sgpr(b) == Ok(4);
    let d = l.only_definition(f, v, 4, &allowed)?;
    let def = &TDEF[d.offset..d.offset + usize::from(d.len)];
    let scc = l.live_at(f, d.vaddr).unwrap().after.contains(Reg::Scc);
    let bytes = tensor_mask::clear_at_definition(def, 4, scc).map_err(|e| e.to_string())?;
    Ok((d.vaddr, bytes, d.readers))
}

#[test]
fn a_tensor_mask_definition_is_changed_in_place_only_when_it_alone_reaches_the_load() {
    // s_mov_b32 s4, 0x12345678 -> 0x12340000, at the function's start.
    let (at, bytes, readers) = definition_form("t_mov_site").unwrap();
    assert_eq!(at, symbol(TDEF, "t_mov"));
    assert_eq!(bytes, [0xff, 0x00, 0x84, 0xbe, 0x00, 0x00, 0x34, 0x12]);
    assert_eq!(readers, [symbol(TDEF, "t_mov_site")]);
    // s_and_b32 s4, s4, 0xabcdffff -> 0xabcd0000 (SCC overwritten unread).
    let (_, bytes, _) = definition_form("t_and_site").unwrap();
    assert_eq!(bytes, [0x04, 0xff, 0x04, 0x8b, 0x00, 0x00, 0xcd, 0xab]);
    // s_movk_i32 s4, 0x1234 -> 0, read by the load on every trip of a loop.
    let (_, bytes, _) = definition_form("t_loop_site").unwrap();
    assert_eq!(bytes, [0x00, 0x00, 0x04, 0xb0]);
    for (site, why) in [
        ("t_and_scc_site", "SCC"),
        ("t_other_site", "also read at"),
        ("t_two_site", "2 writes of s4"),
        ("t_entry_site", "function's entry"),
        ("t_load_site", "written in part"),
    ] {
        let e = definition_form(site).unwrap_err();
        assert!(e.contains(why), "{site}: {e}");
    }
}

/// The rewrite takes the definition-site form where the proof holds: the
/// definition's literal changed in place, the load's bytes and address
/// kept, its function not moved; every other tensor site of tdef.s keeps an
/// at-site form (its function moves). The output needs nothing more: the same
/// proof finds each changed definition already clear, so rewriting it again
/// changes nothing.
#[test]
fn the_rewrite_clears_a_proved_mask_definition_in_place_and_moves_nothing_for_it() {
    use hotswap_code_object::rewrite::{self, mask_definition, Options};
    let options = Options {
        allow_partial: true,
        ..Options::default()
    };
    let r = rewrite::rewrite_b0_to_a0(TDEF, &options).unwrap();
    let by_site: Vec<(u64, u64)> = r
        .report
        .at_definition
        .iter()
        .map(|d| (d.site.vaddr, d.definition_vaddr))
        .collect();
    let sites = ["t_mov_site", "t_and_site", "t_loop_site"];
    let mut want: Vec<(u64, u64)> = sites
        .iter()
        .map(|s| (symbol(TDEF, s), definition_form(s).unwrap().0))
        .collect();
    want.sort_unstable();
    assert_eq!(by_site, want);
    for (site, def) in &want {
        // The load is where it was, unchanged, and not moved.
        assert_eq!(r.report.executed_vaddr(*site), *site);
        assert!(!r.report.grown.iter().any(|g| g.site.vaddr == *site));
        assert!(!r
            .report
            .moved
            .iter()
            .any(|m| *site >= m.original_vaddr && *site - m.original_vaddr < m.original_size));
        let d = &r.report.at_definition[want.iter().position(|w| w.1 == *def).unwrap()];
        let (o, n) = (
            d.definition_file_offset as usize,
            usize::from(d.definition_len),
        );
        let s = d.site.file_offset as usize;
        assert_eq!(r.bytes[s..s + 12], TDEF[s..s + 12]);
        // The definition's low 16 bits are zero, the rest as before.
        assert_ne!(r.bytes[o..o + n], TDEF[o..o + n]);
        let l = liveness::analyze(&r.bytes, Convention::Unknown).unwrap();
        assert!(mask_definition::cleared_at_definition(
            &l,
            &r.bytes,
            *site,
            d.site.file_offset,
            d.site.len
        ));
        // The change is the one the proof's emitter gives.
        let c = r.report.changes();
        let c = c.iter().find(|c| c.site.vaddr == *site).unwrap();
        assert_eq!(
            (c.fix, c.definition_vaddr, c.new_vaddr),
            ("tensor-mask-clear-at-definition", Some(*def), *site)
        );
    }
    // Proved, but its function moves for a DS two-address split: left to
    // the at-site form (which, in a callable function with no dead SGPR to
    // save the live mask in, refuses it: it remains).
    assert!(definition_form("t_moved_site").is_ok());
    let v = symbol(TDEF, "t_moved_site");
    assert!(r.report.grown.iter().any(|g| g.site.vaddr != v));
    assert!(!r.report.at_definition.iter().any(|d| d.site.vaddr == v));
    let refused = r.report.growth_refused.iter().find(|g| g.site.vaddr == v);
    assert!(refused.unwrap().reason.contains("mask SGPR s4 is live"));
    // The unproved sites take an at-site form or remain; none is in place.
    for s in [
        "t_and_scc_site",
        "t_other_site",
        "t_two_site",
        "t_entry_site",
        "t_load_site",
    ] {
        let v = symbol(TDEF, s);
        assert!(
            r.report.grown.iter().any(|g| g.site.vaddr == v)
                || r.report.remaining.iter().any(|x| x.vaddr == v),
            "{s}"
        );
    }
    // Rewriting the output again: the three definitions are found clear
    // (nothing fixed, nothing remaining there) and the bytes stay.
    let again = rewrite::rewrite_b0_to_a0(&r.bytes, &options).unwrap();
    assert!(again.report.at_definition.is_empty());
    for (site, _) in &want {
        assert!(!again.report.remaining.iter().any(|x| x.vaddr == *site));
    }
    assert_eq!(again.bytes, r.bytes);
}

/// `function_at` (two binary searches over functions in address order) finds
/// what a scan for the first function holding the address finds, at every
/// function's first byte, last byte and one past, and at every instruction;
/// and the analysis of some functions (`analyze_walked` with roots) gives
/// them the facts the whole-object analysis gives.
#[test]
fn function_lookup_and_partial_analysis_agree_with_the_whole() {
    for object in [CASES, CALLS, WIDE] {
        let l = liveness::analyze(object, Convention::Unknown).unwrap();
        let scan = |v: u64| {
            l.functions
                .iter()
                .position(|f| v >= f.vaddr && v - f.vaddr < f.size)
        };
        let mut probes: Vec<u64> = Vec::new();
        for f in &l.functions {
            probes.extend([
                f.vaddr,
                f.vaddr + f.size.saturating_sub(1),
                f.vaddr + f.size,
            ]);
            probes.extend(f.vaddr.checked_sub(1));
            probes.extend(f.instructions().map(|(v, _)| v));
        }
        assert!(probes.len() > 10);
        for v in probes {
            assert_eq!(l.function_at(v), scan(v), "at {v:#x}");
        }
        let parsed = CodeObject::parse(object).unwrap();
        let walked = hotswap_code_object::gfx1250::analyze_object(&parsed).unwrap();
        let roots: Vec<u64> = l.functions.iter().step_by(3).map(|f| f.vaddr).collect();
        let some = liveness::analyze_walked(&parsed, &walked, Convention::Unknown, Some(&roots));
        assert!(!some.functions.is_empty());
        for f in &some.functions {
            let whole = &l.functions[l.function_at(f.vaddr).unwrap()];
            assert_eq!((f.vaddr, f.size), (whole.vaddr, whole.size));
            assert_eq!(f.status, whole.status, "{}", f.name);
            assert_eq!(f.entry_live, whole.entry_live, "{}", f.name);
        }
    }
}
