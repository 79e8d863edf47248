//! Every way into moved code, on clang-22 objects (tests/growth/make.sh):
//! functions called through function-pointer tables whose entries are
//! dynamic relocations (`R_AMDGPU_RELATIVE64`, `R_AMDGPU_ABS64`) move; each
//! relocation into one is re-aimed at its image, each old entry is a gateway
//! to it, and nothing else refers to the old copies.
use hotswap_code_object::elf::SHT_DYNSYM;
use hotswap_code_object::rewrite::{self, GatewayKind, Options};
use hotswap_code_object::CodeObject;

const TABLE: &[u8] = include_bytes!("growth/table.co");
const ABS: &[u8] = include_bytes!("growth/abs.co");
const STUB: &[u8] = include_bytes!("growth/stub.co");
const NONLEAF: &[u8] = include_bytes!("growth/nonleaf.co");

fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().unwrap())
}

/// (offset, type, symbol index, addend) of each `.rela.dyn` entry, read here
/// from the section header table.
fn rela(b: &[u8]) -> Vec<(u64, u32, u32, u64)> {
    let shoff = u64_at(b, 0x28) as usize;
    let shnum = u16::from_le_bytes([b[0x3c], b[0x3d]]) as usize;
    let mut out = Vec::new();
    for i in 0..shnum {
        let h = &b[shoff + i * 64..shoff + (i + 1) * 64];
        if u32::from_le_bytes(h[4..8].try_into().unwrap()) != 4 {
            continue;
        }
        let (off, size) = (u64_at(h, 24) as usize, u64_at(h, 32) as usize);
        for r in b[off..off + size].chunks_exact(24) {
            let info = u64_at(r, 8);
            out.push((
                u64_at(r, 0),
                info as u32,
                (info >> 32) as u32,
                u64_at(r, 16),
            ));
        }
    }
    out
}

/// Checks one object: returns the number of relocations re-aimed.
fn check(input: &[u8]) -> usize {
    let r = rewrite::rewrite_b0_to_a0(input, &Options::default()).unwrap();
    assert!(r.report.is_complete());
    let moved = &r.report.moved;
    assert!(!moved.is_empty());
    let out = CodeObject::parse(&r.bytes).unwrap();
    // Each old entry is a gateway to its image.
    assert_eq!(r.report.gateways.len(), moved.len());
    for m in moved {
        let code = out
            .address_map()
            .bytes(&r.bytes, m.original_vaddr, m.original_size.min(20))
            .unwrap();
        let (kind, to) = rewrite::read_gateway(m.original_vaddr, code).unwrap();
        assert_eq!(to, m.new_vaddr, "{}", m.name);
        let g = r
            .report
            .gateways
            .iter()
            .find(|g| g.old_entry == m.original_vaddr)
            .unwrap();
        assert_eq!((g.kind, g.new_entry), (kind, m.new_vaddr));
    }
    // Each relocation whose input target (S + A) lies in a moved function
    // now computes the image of that target (the symbols keep their
    // values); every other one is unchanged.
    let dynsym = CodeObject::parse(input)
        .unwrap()
        .symbols(SHT_DYNSYM)
        .to_vec();
    let (before, after) = (rela(input), rela(&r.bytes));
    assert_eq!(before.len(), after.len());
    let mut reaimed = 0;
    for (b, a) in before.iter().zip(&after) {
        assert_eq!((b.0, b.1, b.2), (a.0, a.1, a.2));
        let sym = dynsym[b.2 as usize].value;
        let (old, new) = (sym.wrapping_add(b.3), sym.wrapping_add(a.3));
        match moved
            .iter()
            .find(|m| old >= m.original_vaddr && old < m.original_vaddr + m.original_size)
        {
            Some(m) => {
                assert!(b.1 == 13 || b.1 == 3, "type {}", b.1);
                assert_eq!(new, m.new_vaddr + (old - m.original_vaddr));
                reaimed += 1;
            }
            None => assert_eq!(a.3, b.3),
        }
    }
    assert_eq!(r.report.relocations.len(), reaimed);
    for x in &r.report.relocations {
        let m = moved.iter().find(|m| *m.name == *x.function).unwrap();
        assert_eq!(
            x.new_target,
            m.new_vaddr + (x.old_target - m.original_vaddr)
        );
    }
    reaimed
}

#[test]
fn pointer_table_relocations_are_reaimed_at_the_images() {
    // add_pair and sub_pair move; triple (no site) stays.
    assert_eq!(check(TABLE), 2);
}

#[test]
fn absolute_relocations_of_an_exported_function_are_reaimed() {
    // f0 (RELATIVE64) and g0 (ABS64: the table entry and the GOT slot).
    assert_eq!(check(ABS), 3);
    let r = rewrite::rewrite_b0_to_a0(ABS, &Options::default()).unwrap();
    let kinds: Vec<&str> = r.report.relocations.iter().map(|x| x.kind).collect();
    assert_eq!(
        kinds,
        ["R_AMDGPU_RELATIVE64", "R_AMDGPU_ABS64", "R_AMDGPU_ABS64"]
    );
}

#[test]
fn stub_kernels_falling_through_enter_the_moved_code_through_gateways() {
    // stub falls into work (in reach: s_branch), far into work2 (200 KiB of
    // code between it and the new segment: a far jump through s[0:1], which
    // work2 writes before reading and no convention preserves).
    assert_eq!(check(STUB), 0);
    let r = rewrite::rewrite_b0_to_a0(STUB, &Options::default()).unwrap();
    let kinds: Vec<(&str, GatewayKind)> = r
        .report
        .gateways
        .iter()
        .map(|g| (&*g.function, g.kind))
        .collect();
    assert_eq!(
        kinds,
        [
            ("work2", GatewayKind::FarJump { reg: 0 }),
            ("work", GatewayKind::Branch)
        ]
    );
    // Each stub's last instruction is followed by the gateway.
    let out = CodeObject::parse(&r.bytes).unwrap();
    for g in &r.report.gateways {
        let before = out
            .address_map()
            .bytes(&r.bytes, g.old_entry - 4, 4)
            .unwrap();
        assert_eq!(
            before,
            [0x80, 0x02, 0x04, 0x7e],
            "v_mov_b32 v2, 0 falls into {}",
            g.function
        );
    }
}

#[test]
fn a_non_leaf_callee_with_its_return_address_in_vgpr_lanes_moves() {
    // Its two nested calls reuse one computed pair (the second s_swap_pc_i64
    // does not follow the computation) and its return address travels
    // through v_writelane/v_readlane and a scratch spill of that VGPR.
    assert_eq!(check(NONLEAF), 0);
    let r = rewrite::rewrite_b0_to_a0(NONLEAF, &Options::default()).unwrap();
    assert_eq!(r.report.moved.len(), 1);
    assert_eq!(&*r.report.moved[0].name, "_ZL7nonleafi");
}
