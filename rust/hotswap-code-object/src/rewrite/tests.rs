//! The native rewriter on code objects built here: an ELF64 gfx1250 shared
//! object with one executable `PT_LOAD`, sized `STT_FUNC` symbols, and
//! optionally an AMDGPU metadata note. The instruction encodings are the ones
//! llvm-mc-22 gives (`-mcpu=gfx1250 -show-encoding`, reference gfx1250-a0.md §3.4).

use super::*;

// --- encodings (llvm-mc-22) -----------------------------------------------------

const S_NOP: [u8; 4] = [0x00, 0x00, 0x80, 0xbf];
const S_CODE_END: [u8; 4] = [0x00, 0x00, 0x9f, 0xbf];
const S_SET_PC: [u8; 4] = [0x1e, 0x48, 0x80, 0xbe];
const V_ADD_U32: [u8; 4] = [0x00, 0x03, 0x00, 0x4a];

/// (B0 bytes, A0 bytes) of every same-size class llvm-mc-22 encodes.
fn same_size_pairs() -> Vec<(A0Class, Vec<u8>, Vec<u8>)> {
    let flat = |w0: [u8; 4], w1: u8, w2: [u8; 2]| {
        let mut v = w0.to_vec();
        v.extend([w1, 0, 0, 0, w2[0], w2[1], 0, 0]);
        v
    };
    let cluster = A0Class::ClusterLoad;
    vec![
        // cluster_load_b32 v0, v[2:3], off -> global_load_b32
        (
            cluster,
            flat([0x7c, 0xc0, 0x19, 0xee], 0, [2, 0]),
            flat([0x7c, 0x00, 0x05, 0xee], 0, [2, 0]),
        ),
        // cluster_load_b64 v[0:1], v1, s[2:3] -> global_load_b64 (saddr form)
        (
            cluster,
            flat([0x02, 0x00, 0x1a, 0xee], 0, [1, 0]),
            flat([0x02, 0x40, 0x05, 0xee], 0, [1, 0]),
        ),
        // cluster_load_b128 v[0:3], v[2:3], off offset:64
        (
            cluster,
            flat([0x7c, 0x40, 0x1a, 0xee], 0, [2, 0x40]),
            flat([0x7c, 0xc0, 0x05, 0xee], 0, [2, 0x40]),
        ),
        // cluster_load_async_to_lds_b8/b32/b64 v1, v[2:3], off
        (
            cluster,
            flat([0x7c, 0x80, 0x1a, 0xee], 1, [2, 0]),
            flat([0x7c, 0xc0, 0x17, 0xee], 1, [2, 0]),
        ),
        (
            cluster,
            flat([0x7c, 0xc0, 0x1a, 0xee], 1, [2, 0]),
            flat([0x7c, 0x00, 0x18, 0xee], 1, [2, 0]),
        ),
        (
            cluster,
            flat([0x7c, 0x00, 0x1b, 0xee], 1, [2, 0]),
            flat([0x7c, 0x40, 0x18, 0xee], 1, [2, 0]),
        ),
        // cluster_load_async_to_lds_b128 v1, v2, s[4:5]
        (
            cluster,
            flat([0x04, 0x40, 0x1b, 0xee], 1, [2, 0]),
            flat([0x04, 0x80, 0x18, 0xee], 1, [2, 0]),
        ),
        // s_barrier_signal_isfirst -1 / m0 -> s_barrier_signal
        (
            A0Class::BarrierSignalIsfirst,
            vec![0xc1, 0x4f, 0x80, 0xbe],
            vec![0xc1, 0x4e, 0x80, 0xbe],
        ),
        (
            A0Class::BarrierSignalIsfirst,
            vec![0x7d, 0x4f, 0x80, 0xbe],
            vec![0x7d, 0x4e, 0x80, 0xbe],
        ),
        // s_sethalt 0 -> s_nop 0
        (
            A0Class::SSethalt,
            vec![0x00, 0x00, 0x82, 0xbf],
            S_NOP.to_vec(),
        ),
        // v_wmma_scale_f32_16x16x128_f8f6f4 with scale_src2 = 0 -> 0x100
        (
            A0Class::WmmaScale,
            [
                0x00, 0x00, 0x35, 0xcc, 0x02, 0x07, 0x02, 0x00, 0x00, 0x00, 0x33, 0xcc, 0x08, 0x31,
                0xa2, 0x04,
            ]
            .to_vec(),
            [
                0x00, 0x00, 0x35, 0xcc, 0x02, 0x07, 0x02, 0x04, 0x00, 0x00, 0x33, 0xcc, 0x08, 0x31,
                0xa2, 0x04,
            ]
            .to_vec(),
        ),
        // s_mov_b64 s[0:1], src_flat_scratch_base_hi -> _lo
        (
            A0Class::FlatScratchBase64,
            vec![0xe7, 0x01, 0x80, 0xbe],
            vec![0xe6, 0x01, 0x80, 0xbe],
        ),
    ]
}

const S_CLAUSE: [u8; 4] = [0x01, 0x00, 0x85, 0xbf];

/// (class, mnemonic, bytes) of one site per growth class.
fn growth_sites() -> Vec<(A0Class, &'static str, Vec<u8>)> {
    let mut iu8 = vec![0x00, 0x00, 0x72, 0xcc, 0x08, 0x21, 0x62, 0x1c];
    iu8.extend(V_ADD_U32); // a dependent VALU right after: A0 needs 8 v_nops
    vec![
        (
            A0Class::Ds2addr,
            "ds_load_2addr_b32",
            vec![0x01, 0x02, 0xdc, 0xd8, 0x02, 0, 0, 0],
        ),
        (
            A0Class::DsAddtid,
            "ds_load_addtid_b32",
            vec![0x80, 0x00, 0xc4, 0xda, 0, 0, 0, 0x05],
        ),
        (
            A0Class::TensorLds,
            "tensor_load_to_lds",
            vec![
                0x01, 0x00, 0x71, 0xd0, 0, 0, 0, 0x7c, 0x00, 0x04, 0x7c, 0x7c,
            ],
        ),
        (
            A0Class::WmmaK128,
            "v_wmma_f32_16x16x128_fp8_fp8",
            vec![0x00, 0x00, 0x80, 0xcc, 0x08, 0x31, 0xa2, 0x1c],
        ),
        (
            A0Class::WmmaF4,
            "v_wmma_f32_32x16x128_f4",
            vec![0x00, 0x40, 0x88, 0xcc, 0x10, 0x41, 0xa2, 0x1c],
        ),
        (
            A0Class::WmmaScale,
            "v_wmma_scale16_f32_16x16x128_f8f6f4",
            [
                0x00, 0x00, 0x3a, 0xcc, 0x02, 0x09, 0x02, 0x04, 0x00, 0x00, 0x33, 0xcc, 0x08, 0x31,
                0xa2, 0x04,
            ]
            .to_vec(),
        ),
        (
            A0Class::Fp8Clamp,
            "v_cvt_pk_fp8_f32",
            vec![0x01, 0x80, 0x69, 0xd7, 0x02, 0x07, 0x02, 0x00],
        ),
        (A0Class::WmmaIntSpacing, "v_wmma_i32_16x16x64_iu8", iu8),
        // v_add_nc_u64_e32 v[0:1], src_flat_scratch_base_lo, v[2:3]
        (
            A0Class::FlatScratchBase64,
            "vop2",
            vec![0xe6, 0x04, 0x00, 0x50],
        ),
    ]
}

// --- an ELF builder -----------------------------------------------------------------

const TEXT_OFFSET: u64 = 0x1000;
const NOTE_OFFSET: u64 = 0x200;
const GFX1250: u32 = 0x549;

/// A gfx1250 shared object: `text` at file offset = vaddr = 0x1000, function
/// symbols (name, offset in text, size), an optional metadata document.
#[derive(Clone, Debug)]
struct Obj {
    text: Vec<u8>,
    functions: Vec<(String, u64, u64)>,
    note: Option<Vec<u8>>,
    flags: u32,
}

impl Obj {
    /// Functions laid out 256-aligned, `s_code_end` padding between them.
    fn functions(functions: &[(&str, Vec<u8>)]) -> Obj {
        let mut text = Vec::new();
        let mut symbols = Vec::new();
        for (name, code) in functions {
            while text.len() % 256 != 0 {
                text.extend(S_CODE_END);
            }
            symbols.push((name.to_string(), text.len() as u64, code.len() as u64));
            text.extend(code);
        }
        for _ in 0..8 {
            text.extend(S_CODE_END);
        }
        Obj {
            text,
            functions: symbols,
            note: None,
            flags: GFX1250,
        }
    }

    fn with_note(mut self, doc: Vec<u8>) -> Obj {
        self.note = Some(doc);
        self
    }

    fn vaddr(&self, function: usize) -> u64 {
        TEXT_OFFSET + self.functions[function].1
    }

    fn build(&self) -> Vec<u8> {
        let mut o = vec![0u8; TEXT_OFFSET as usize];
        let put = |o: &mut Vec<u8>, at: usize, bytes: &[u8]| {
            if o.len() < at + bytes.len() {
                o.resize(at + bytes.len(), 0);
            }
            o[at..at + bytes.len()].copy_from_slice(bytes);
        };
        // Note.
        let mut note = Vec::new();
        if let Some(doc) = &self.note {
            note.extend(7u32.to_le_bytes());
            note.extend((doc.len() as u32).to_le_bytes());
            note.extend(32u32.to_le_bytes());
            note.extend(b"AMDGPU\0\0");
            note.extend(doc);
            while note.len() % 4 != 0 {
                note.push(0);
            }
            put(&mut o, NOTE_OFFSET as usize, &note);
        }
        put(&mut o, TEXT_OFFSET as usize, &self.text);
        // Symbols and strings.
        let mut strtab = vec![0u8];
        let mut symtab = vec![0u8; 24];
        let text_index: u16 = if self.note.is_some() { 2 } else { 1 };
        for (name, offset, size) in &self.functions {
            symtab.extend((strtab.len() as u32).to_le_bytes());
            strtab.extend(name.as_bytes());
            strtab.push(0);
            symtab.extend([0x12, 0]); // GLOBAL FUNC
            symtab.extend(text_index.to_le_bytes());
            symtab.extend((TEXT_OFFSET + offset).to_le_bytes());
            symtab.extend(size.to_le_bytes());
        }
        let shstrtab = b"\0.note\0.text\0.symtab\0.strtab\0.shstrtab\0".to_vec();
        let align8 = |o: &mut Vec<u8>| o.resize(o.len().div_ceil(8) * 8, 0);
        align8(&mut o);
        let symtab_at = o.len();
        o.extend(&symtab);
        let strtab_at = o.len();
        o.extend(&strtab);
        let shstrtab_at = o.len();
        o.extend(&shstrtab);
        align8(&mut o);
        // Section headers: null, [.note], .text, .symtab, .strtab, .shstrtab.
        let shoff = o.len();
        let shdr = |name: u32,
                    ty: u32,
                    flags: u64,
                    addr: u64,
                    off: usize,
                    size: usize,
                    link: u32,
                    entsize: u64| {
            let mut h = Vec::with_capacity(64);
            h.extend(name.to_le_bytes());
            h.extend(ty.to_le_bytes());
            h.extend(flags.to_le_bytes());
            h.extend(addr.to_le_bytes());
            h.extend((off as u64).to_le_bytes());
            h.extend((size as u64).to_le_bytes());
            h.extend(link.to_le_bytes());
            h.extend(1u32.to_le_bytes()); // info
            h.extend(4u64.to_le_bytes()); // align
            h.extend(entsize.to_le_bytes());
            h
        };
        let mut shdrs = vec![0u8; 64];
        if self.note.is_some() {
            shdrs.extend(shdr(
                1,
                7,
                2,
                NOTE_OFFSET,
                NOTE_OFFSET as usize,
                note.len(),
                0,
                0,
            ));
        }
        shdrs.extend(shdr(
            7,
            1,
            6,
            TEXT_OFFSET,
            TEXT_OFFSET as usize,
            self.text.len(),
            0,
            0,
        ));
        let strtab_index = u32::from(text_index) + 2;
        shdrs.extend(shdr(13, 2, 0, 0, symtab_at, symtab.len(), strtab_index, 24));
        shdrs.extend(shdr(21, 3, 0, 0, strtab_at, strtab.len(), 0, 0));
        shdrs.extend(shdr(29, 3, 0, 0, shstrtab_at, shstrtab.len(), 0, 0));
        let shnum = (shdrs.len() / 64) as u16;
        o.extend(&shdrs);
        // Program headers: PT_LOAD (R+X) of the text, [PT_NOTE].
        let phdr = |ty: u32, flags: u32, off: u64, size: u64| {
            let mut h = Vec::with_capacity(56);
            h.extend(ty.to_le_bytes());
            h.extend(flags.to_le_bytes());
            h.extend(off.to_le_bytes());
            h.extend(off.to_le_bytes()); // vaddr
            h.extend(off.to_le_bytes()); // paddr
            h.extend(size.to_le_bytes());
            h.extend(size.to_le_bytes());
            h.extend(4u64.to_le_bytes());
            h
        };
        let mut phdrs = phdr(1, 5, TEXT_OFFSET, self.text.len() as u64);
        if self.note.is_some() {
            phdrs.extend(phdr(4, 4, NOTE_OFFSET, note.len() as u64));
        }
        let phnum = (phdrs.len() / 56) as u16;
        put(&mut o, 64, &phdrs);
        // File header.
        let mut h = vec![0x7f, b'E', b'L', b'F', 2, 1, 1, 64, 3];
        h.resize(16, 0);
        h.extend(3u16.to_le_bytes()); // ET_DYN
        h.extend(224u16.to_le_bytes());
        h.extend(1u32.to_le_bytes());
        h.extend(0u64.to_le_bytes());
        h.extend(64u64.to_le_bytes());
        h.extend((shoff as u64).to_le_bytes());
        h.extend(self.flags.to_le_bytes());
        h.extend(64u16.to_le_bytes());
        h.extend(56u16.to_le_bytes());
        h.extend(phnum.to_le_bytes());
        h.extend(64u16.to_le_bytes());
        h.extend(shnum.to_le_bytes());
        h.extend((shnum - 1).to_le_bytes());
        put(&mut o, 0, &h);
        o
    }
}

fn fixstr(s: &str) -> Vec<u8> {
    let mut v = vec![0xa0 | s.len() as u8];
    v.extend(s.as_bytes());
    v
}

/// A metadata document as LLVM writes it, one kernel per revision value
/// (`None`: no `.gfx1250_revision` key).
fn metadata(revisions: &[Option<&str>]) -> Vec<u8> {
    let mut d = vec![0x83];
    d.extend(fixstr("amdhsa.version"));
    d.extend([0x92, 0x01, 0x02]);
    d.extend(fixstr("amdhsa.target"));
    d.extend(fixstr("amdgcn-amd-amdhsa--gfx1250"));
    d.extend(fixstr("amdhsa.kernels"));
    d.push(0x90 | revisions.len() as u8);
    for (i, r) in revisions.iter().enumerate() {
        d.push(if r.is_some() { 0x84 } else { 0x83 });
        d.extend(fixstr(".name"));
        d.extend(fixstr(&format!("k{i}")));
        d.extend(fixstr(".symbol"));
        d.extend(fixstr(&format!("k{i}.kd")));
        d.extend(fixstr(".vgpr_count"));
        d.extend([0xcd, 0x01, 0x00]);
        if let Some(r) = r {
            d.extend(fixstr(".gfx1250_revision"));
            d.extend(fixstr(r));
        }
    }
    d
}

/// A function: an `s_nop`, the site, the return.
fn around(site: &[u8]) -> Vec<u8> {
    let mut f = S_NOP.to_vec();
    f.extend(site);
    f.extend(S_SET_PC);
    f
}

fn default() -> Options {
    Options::default()
}

/// The byte ranges in which `a` and `b` differ.
fn diff_ranges(a: &[u8], b: &[u8]) -> Vec<(usize, usize)> {
    assert_eq!(a.len(), b.len());
    let mut out: Vec<(usize, usize)> = Vec::new();
    for i in (0..a.len()).filter(|&i| a[i] != b[i]) {
        match out.last_mut() {
            Some(last) if last.1 == i => last.1 = i + 1,
            _ => out.push((i, i + 1)),
        }
    }
    out
}

// --- the same-size fixes ----------------------------------------------------------

#[test]
fn every_same_size_class_gets_its_measured_a0_encoding() {
    let pairs = same_size_pairs();
    let functions: Vec<(String, Vec<u8>)> = pairs
        .iter()
        .enumerate()
        .map(|(i, (_, b0, _))| (format!("f{i}"), around(b0)))
        .collect();
    let named: Vec<(&str, Vec<u8>)> = functions
        .iter()
        .map(|(n, c)| (n.as_str(), c.clone()))
        .collect();
    let obj = Obj::functions(&named);
    let input = obj.build();
    let rewrite = rewrite_b0_to_a0(&input, &default()).unwrap();
    assert_eq!(rewrite.bytes.len(), input.len());
    for (i, (class, b0, a0)) in pairs.iter().enumerate() {
        let at = (obj.vaddr(i) + 4) as usize;
        assert_eq!(&input[at..at + b0.len()], b0.as_slice());
        assert_eq!(
            &rewrite.bytes[at..at + a0.len()],
            a0.as_slice(),
            "{class} #{i}"
        );
    }
    // Exactly the sites changed, nothing else.
    let expected: Vec<(usize, usize)> = diff_ranges(&input, &rewrite.bytes);
    assert!(expected
        .iter()
        .all(|&(s, e)| pairs.iter().enumerate().any(|(i, (_, b0, _))| {
            let at = (obj.vaddr(i) + 4) as usize;
            s >= at && e <= at + b0.len()
        })));
    let r = &rewrite.report;
    assert!(r.is_complete() && r.kept.is_empty());
    assert_eq!(r.fixed.len(), pairs.len());
    assert_eq!(r.fixed_count(A0Class::ClusterLoad), 7);
    assert_eq!(r.fixed_count(A0Class::BarrierSignalIsfirst), 2);
    assert_eq!(r.fixed_count(A0Class::SSethalt), 1);
    assert_eq!(r.fixed_count(A0Class::WmmaScale), 1);
    assert_eq!(r.fixed_count(A0Class::FlatScratchBase64), 1);
    assert_eq!(&*r.fixed[0].function, "f0");
    assert_eq!(r.fixed[0].mnemonic, "cluster_load_b32");
    assert_eq!(r.retag, Some(Retag::NoNote));
}

#[test]
fn rewriting_the_output_again_gives_the_same_bytes() {
    let mut code = Vec::new();
    for (_, b0, _) in same_size_pairs() {
        code.extend(b0);
    }
    code.extend(S_CLAUSE);
    code.extend(S_SET_PC);
    for clauses in [ClausePolicy::Keep, ClausePolicy::ReplaceWithNop] {
        let options = Options {
            clauses,
            ..default()
        };
        let input = Obj::functions(&[("k", code.clone())])
            .with_note(metadata(&[Some("B0")]))
            .build();
        let once = rewrite_b0_to_a0(&input, &options).unwrap();
        assert_ne!(once.bytes, input);
        let twice = rewrite_b0_to_a0(&once.bytes, &options).unwrap();
        assert_eq!(twice.bytes, once.bytes, "{clauses:?}");
        assert!(twice.report.fixed.is_empty());
        assert_eq!(twice.report.retag, Some(Retag::AlreadyA0(1)));
        assert_eq!(
            twice.report.kept.len(),
            usize::from(clauses == ClausePolicy::Keep)
        );
    }
}

#[test]
fn clauses_are_kept_by_default_and_replaced_on_request() {
    let obj = Obj::functions(&[("k", around(&S_CLAUSE))]);
    let input = obj.build();
    let at = (obj.vaddr(0) + 4) as usize;
    let kept = rewrite_b0_to_a0(&input, &default()).unwrap();
    assert_eq!(kept.bytes, input, "s_clause is left alone");
    assert_eq!(kept.report.kept.len(), 1);
    assert_eq!(kept.report.kept[0].class, A0Class::SClause);
    assert!(kept.report.fixed.is_empty());
    let options = Options {
        clauses: ClausePolicy::ReplaceWithNop,
        ..default()
    };
    let replaced = rewrite_b0_to_a0(&input, &options).unwrap();
    assert_eq!(&replaced.bytes[at..at + 4], &S_NOP);
    assert_eq!(
        diff_ranges(&input, &replaced.bytes),
        vec![(at, at + 1), (at + 2, at + 3)]
    );
    assert_eq!(replaced.report.fixed_count(A0Class::SClause), 1);
}

#[test]
fn a_scaled_wmma_already_in_a0_form_is_not_a_fix() {
    let (_, _, a0) = same_size_pairs()
        .into_iter()
        .find(|(c, _, _)| *c == A0Class::WmmaScale)
        .unwrap();
    let input = Obj::functions(&[("k", around(&a0))]).build();
    let r = rewrite_b0_to_a0(&input, &default()).unwrap();
    assert_eq!(r.bytes, input);
    assert!(r.report.fixed.is_empty() && r.report.kept.is_empty());
}

#[test]
fn plan_and_rewrite_agree() {
    let (_, b0, _) = same_size_pairs().remove(0);
    let input = Obj::functions(&[("k", around(&b0))]).build();
    let plan = plan_b0_to_a0(&input, &default()).unwrap();
    assert!(plan.changes_bytes());
    assert_eq!(plan.patches.len(), 1);
    assert_eq!(plan.patches[0].file_offset, TEXT_OFFSET + 4);
    let mut copy = input.clone();
    assert!(plan.apply(&mut copy));
    assert_eq!(copy, rewrite_b0_to_a0(&input, &default()).unwrap().bytes);
    assert!(!plan.apply(&mut copy[1..]), "a buffer of another size");
}

#[test]
fn a_growing_plan_written_out_equals_the_rewrite() {
    // `ds_load_2addr_b32 v[0:1], v2 offset0:1 offset1:2`: the function moves.
    let ds2 = [0x01, 0x02, 0xdc, 0xd8, 0x02, 0x00, 0x00, 0x00];
    let input = Obj::functions(&[("k", around(&ds2))]).build();
    let plan = plan_b0_to_a0(&input, &default()).unwrap();
    assert!(!plan.tail.is_empty() && plan.output_len() > input.len());
    let mut written = vec![0xAAu8; plan.output_len()];
    assert!(plan.write_into(&input, &mut written));
    let rewritten = rewrite_b0_to_a0(&input, &default()).unwrap().bytes;
    assert_eq!(rewritten, written);
    assert_ne!(rewritten[..input.len()], input[..], "the header is patched");
}

#[test]
fn prepend_puts_the_input_before_the_tail_in_the_tails_buffer() {
    let tail = vec![7u8, 8, 9];
    assert_eq!(prepend(&[1, 2], tail), [1, 2, 7, 8, 9]);
    assert_eq!(prepend(&[], vec![5]), [5]);
    assert_eq!(prepend(&[3, 4], Vec::new()), [3, 4]);
    let mut big = Vec::with_capacity(64);
    big.extend(0u8..40);
    let input: Vec<u8> = (100u8..200).collect();
    let out = prepend(&input, big);
    assert_eq!(&out[..100], &input[..]);
    assert!(out[100..].iter().copied().eq(0u8..40));
}

// --- refusals -------------------------------------------------------------------------

#[test]
fn every_growth_class_is_fixed_or_refused_with_a_pinned_message() {
    // Each class's site alone in a kernel-less function: what the rewriter
    // does with it (`Ok(fix)`: fixed by growth; `Err`: the message).
    let expected: [Result<&str, &str>; 8] = [
        Ok("ds-addtid-alu-address"),
        Err("code growth refused: tensor_lds (tensor_load_to_lds) in k_tensor_lds at offset 0x4 (vaddr 0x1004): "),
        Ok("wmma-k128-split"),
        Ok("wmma-f4-m-split"),
        Err("code growth refused: wmma_scale (v_wmma_scale16_f32_16x16x128_f8f6f4) in k_wmma_scale at offset 0x4 (vaddr 0x1004): "),
        Err("1 site(s) need code growth; the first: fp8_clamp (v_cvt_pk_fp8_f32) in k_fp8_clamp at offset 0x4 (vaddr 0x1004)"),
        Ok("wmma-int-nops"),
        Err("code growth refused: flat_scratch_base_64 (vop2) in k_flat_scratch_base_64 at offset 0x4 (vaddr 0x1004): "),
    ];
    // DS two-address sites are fixed by growth (see `placement_tests`).
    let sites: Vec<_> = growth_sites()
        .into_iter()
        .filter(|s| s.0 != A0Class::Ds2addr)
        .collect();
    assert_eq!(sites.len(), expected.len());
    for ((class, mnemonic, bytes), want) in sites.into_iter().zip(expected) {
        let name = format!("k_{class}");
        let input = Obj::functions(&[(name.as_str(), around(&bytes))]).build();
        match (rewrite_b0_to_a0(&input, &default()), want) {
            (Ok(r), Ok(fix)) => {
                assert_eq!(r.report.grown.len(), 1, "{class}");
                let g = &r.report.grown[0];
                assert_eq!(
                    (g.site.class, g.site.mnemonic, g.fix),
                    (class, mnemonic, fix)
                );
                assert!(r.report.is_complete(), "{class}");
            }
            (Err(e), Err(message)) if class == A0Class::Fp8Clamp => {
                assert_eq!(e.to_string(), message);
                let RewriteError::NeedsGrowth(remaining) = e else {
                    unreachable!()
                };
                assert_eq!(remaining.len(), 1);
                assert_eq!(
                    (remaining[0].class, remaining[0].mnemonic),
                    (class, mnemonic)
                );
                assert_eq!(remaining[0].file_offset, TEXT_OFFSET + 4);
            }
            (Err(e), Err(prefix)) => {
                // No scratch register where the liveness analysis must be
                // conservative (a kernel-less function returning through
                // s_set_pc): refused, naming the site and the class (and for
                // the tensor mask, that its SGPR is live and must be saved).
                let text = e.to_string();
                assert!(text.starts_with(prefix), "{text}");
                assert!(text.contains(" scratch"), "{text}");
                if class == A0Class::TensorLds {
                    assert!(
                        text.contains("s4 is live after the site and must be saved"),
                        "{text}"
                    );
                }
                assert_eq!(e.kind(), "growth_refused");
            }
            (got, want) => panic!("{class}: {got:?}, expected {want:?}"),
        }
    }
}

#[test]
fn the_refusal_lists_every_remaining_site_in_file_order() {
    let sites = growth_sites();
    let obj = Obj::functions(&[
        ("k_a", around(&sites[6].2)),
        (
            "k_b",
            around(&[sites[6].2.clone(), sites[6].2.clone()].concat()),
        ),
    ]);
    let e = rewrite_b0_to_a0(&obj.build(), &default()).unwrap_err();
    assert_eq!(
        e.to_string(),
        "3 site(s) need code growth; the first: fp8_clamp (v_cvt_pk_fp8_f32) in k_a at offset 0x4 (vaddr 0x1004)"
    );
    let RewriteError::NeedsGrowth(remaining) = e else {
        unreachable!()
    };
    let at: Vec<(&str, u64)> = remaining
        .iter()
        .map(|s| (&*s.function, s.offset_in_function()))
        .collect();
    assert_eq!(at, [("k_a", 4), ("k_b", 4), ("k_b", 12)]);
}

#[test]
fn allow_partial_returns_the_partly_fixed_object_and_what_remains() {
    let (_, b0, a0) = same_size_pairs().remove(0);
    let fp8 = growth_sites().remove(6).2; // v_cvt_pk_fp8_f32 with CLAMP: refused
    let obj = Obj::functions(&[(
        "k",
        [S_NOP.to_vec(), b0.clone(), fp8.clone(), S_SET_PC.to_vec()].concat(),
    )]);
    let input = obj.build();
    assert!(matches!(
        rewrite_b0_to_a0(&input, &default()),
        Err(RewriteError::NeedsGrowth(_))
    ));
    let options = Options {
        allow_partial: true,
        ..default()
    };
    let r = rewrite_b0_to_a0(&input, &options).unwrap();
    let at = (TEXT_OFFSET + 4) as usize;
    assert_eq!(&r.bytes[at..at + 12], a0.as_slice());
    assert_eq!(
        &r.bytes[at + 12..at + 20],
        fp8.as_slice(),
        "the growth site is untouched"
    );
    assert!(!r.report.is_complete());
    assert_eq!(r.report.remaining_count(A0Class::Fp8Clamp), 1);
    assert_eq!(r.report.fixed_count(A0Class::ClusterLoad), 1);
    // Idempotent too.
    assert_eq!(rewrite_b0_to_a0(&r.bytes, &options).unwrap().bytes, r.bytes);
}

#[test]
fn an_incomplete_analysis_is_refused() {
    // A VSAMPLE dword: not a gfx1250 encoding.
    let input = Obj::functions(&[("k", around(&[0x00, 0x00, 0x00, 0xe4]))]).build();
    let e = rewrite_b0_to_a0(&input, &default()).unwrap_err();
    assert_eq!(e.kind(), "incomplete");
    assert_eq!(
        e.to_string(),
        "incomplete analysis: an encoding the walker cannot size in k at vaddr 0x1004 (first dword 0xe4000000)"
    );
}

#[test]
fn other_processors_and_a0_objects_are_refused_with_their_own_errors() {
    let (_, b0, _) = same_size_pairs().remove(0);
    let mut obj = Obj::functions(&[("k", around(&b0))]);
    obj.flags = 0x0eb; // gfx1250-strict
    assert_eq!(
        rewrite_b0_to_a0(&obj.build(), &default()),
        Err(RewriteError::AlreadyA0)
    );
    obj.flags = 0x05a; // gfx1251
    assert_eq!(
        rewrite_b0_to_a0(&obj.build(), &default()),
        Err(RewriteError::NotGfx1250("gfx1251"))
    );
    obj.flags = 0x04c; // gfx942
    assert_eq!(
        rewrite_b0_to_a0(&obj.build(), &default())
            .unwrap_err()
            .to_string(),
        "a gfx942 code object: only gfx1250 is rewritten"
    );
    for bad in [&b"\x7fELF"[..], &[0u8; 64], &[]] {
        let e = rewrite_b0_to_a0(bad, &default()).unwrap_err();
        assert_eq!(e.kind(), "not_code_object");
    }
}

#[test]
fn code_outside_every_function_is_refused_unless_it_is_padding() {
    let (_, b0, _) = same_size_pairs().remove(0);
    let mut obj = Obj::functions(&[("k", around(&b0))]);
    // Padding after the function: accepted (s_code_end, s_nop 5, zeros).
    obj.text.extend([0x05, 0x00, 0x80, 0xbf, 0, 0, 0, 0]);
    assert!(rewrite_b0_to_a0(&obj.build(), &default()).is_ok());
    // A cluster load no symbol covers: it would not have been analysed.
    let at = obj.text.len() as u64;
    obj.text.extend(&b0);
    assert_eq!(
        rewrite_b0_to_a0(&obj.build(), &default()),
        Err(RewriteError::UncoveredCode {
            file_offset: TEXT_OFFSET + at
        })
    );
}

#[test]
fn functions_that_disagree_on_boundaries_are_refused_aliases_are_not() {
    let (_, b0, a0) = same_size_pairs().remove(0);
    let mut obj = Obj::functions(&[("k", around(&b0))]);
    // An alias of k: one fix, counted once.
    obj.functions.push(("k_alias".into(), 0, 20));
    let r = rewrite_b0_to_a0(&obj.build(), &default()).unwrap();
    assert_eq!(r.report.fixed.len(), 1);
    assert_eq!(&r.bytes[(TEXT_OFFSET + 4) as usize..][..12], a0.as_slice());
    // A symbol at k+4 starts at the cluster load: a boundary, accepted.
    obj.functions.push(("k_inner".into(), 4, 12));
    assert!(rewrite_b0_to_a0(&obj.build(), &default()).is_ok());
    // A symbol starting inside an instruction of k: the literal of an
    // s_setreg_imm32_b32, which decodes as an s_nop on its own.
    let setreg = [0x41, 0x06, 0x80, 0xb9, 0x00, 0x00, 0x80, 0xbf];
    let mut obj = Obj::functions(&[("k", [around(&setreg), b0.clone()].concat())]);
    obj.functions.push(("k_bad".into(), 8, 4));
    assert_eq!(
        rewrite_b0_to_a0(&obj.build(), &default()),
        Err(RewriteError::OverlappingFunctions {
            first: "k".into(),
            second: "k_bad".into()
        })
    );
    // A function whose last instruction runs past its symbol into the next one.
    let mut obj = Obj::functions(&[("k", around(&setreg))]);
    obj.functions[0].2 = 8; // s_nop + the first 4 bytes of the s_setreg
    obj.functions.push(("next".into(), 8, 8));
    assert_eq!(
        rewrite_b0_to_a0(&obj.build(), &default()),
        Err(RewriteError::OverlappingFunctions {
            first: "k".into(),
            second: "next".into()
        })
    );
}

// --- the metadata retag --------------------------------------------------------------

#[test]
fn b0_revisions_are_retagged_when_the_note_keeps_its_size() {
    let input = Obj::functions(&[("k", around(&S_NOP))])
        .with_note(metadata(&[Some("B0"), None, Some("B0")]))
        .build();
    let r = rewrite_b0_to_a0(&input, &default()).unwrap();
    assert_eq!(r.report.retag, Some(Retag::Retagged(2)));
    let m = metadata::read(&r.bytes).unwrap();
    let revisions: Vec<Option<&str>> = m.kernels.iter().map(|k| k.gfx1250_revision).collect();
    assert_eq!(revisions, [Some("A0"), None, Some("A0")]);
    // Only the two value bytes changed, inside the note's descriptor.
    let diffs = diff_ranges(&input, &r.bytes);
    assert_eq!(diffs.len(), 2);
    let note_desc = NOTE_OFFSET as usize + 20
        ..NOTE_OFFSET as usize + 20 + metadata(&[Some("B0"), None, Some("B0")]).len();
    for (s, e) in diffs {
        assert_eq!(e - s, 1);
        assert!(note_desc.contains(&s) && input[s] == b'B' && r.bytes[s] == b'A');
    }
}

#[test]
fn a_revision_that_would_change_the_note_size_keeps_the_note() {
    let input = Obj::functions(&[("k", around(&S_NOP))])
        .with_note(metadata(&[Some("B0"), Some("B0-prod")]))
        .build();
    let r = rewrite_b0_to_a0(&input, &default()).unwrap();
    assert_eq!(r.report.retag, Some(Retag::KeptSizeChanged(2)));
    assert_eq!(r.bytes, input, "the note is kept as it is");
}

#[test]
fn notes_without_revisions_or_already_a0_are_untouched() {
    for (revisions, retag) in [
        (vec![None], Retag::NoRevision),
        (vec![Some("A0"), Some("A0")], Retag::AlreadyA0(2)),
    ] {
        let input = Obj::functions(&[("k", around(&S_NOP))])
            .with_note(metadata(&revisions))
            .build();
        let r = rewrite_b0_to_a0(&input, &default()).unwrap();
        assert_eq!(r.report.retag, Some(retag));
        assert_eq!(r.bytes, input);
    }
}

#[test]
fn a_malformed_note_is_refused() {
    let mut doc = metadata(&[Some("B0")]);
    doc.truncate(doc.len() - 3);
    let input = Obj::functions(&[("k", around(&S_NOP))])
        .with_note(doc)
        .build();
    let e = rewrite_b0_to_a0(&input, &default()).unwrap_err();
    assert_eq!(e.kind(), "metadata");
}

#[test]
fn the_probe_object_needs_nothing() {
    let r = rewrite_b0_to_a0(crate::GFX1250_PROBE, &default()).unwrap();
    assert_eq!(r.bytes, crate::GFX1250_PROBE);
    assert!(r.report.fixed.is_empty() && r.report.is_complete());
    assert_eq!(r.report.retag, Some(Retag::NoRevision));
}

// --- mutations: never a panic, the layout kept on success ------------------------------

/// A deterministic generator (xorshift64*), so failures reproduce.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// Checks one (possibly malformed) input: no panic; on success the output has
/// the input's size, differs only inside executable sections and the metadata
/// note's descriptor, and rewriting it again changes nothing. `Ok(true)` when
/// the rewrite succeeded and changed bytes.
fn check_invariants(input: &[u8], options: &Options) -> Result<bool, String> {
    let Ok(r) = rewrite_b0_to_a0(input, options) else {
        return Ok(false);
    };
    if r.bytes.len() != input.len() {
        return Err("size changed".into());
    }
    let object = CodeObject::parse(input).map_err(|e| e.to_string())?;
    let mut allowed = code_ranges(&object);
    if let Ok(Some(desc)) = object.metadata_note() {
        let at = offset_within(input, desc).unwrap() as u64;
        allowed.push((at, at + desc.len() as u64));
    }
    for (s, e) in diff_ranges(input, &r.bytes) {
        if !allowed.iter().any(|&(a, b)| s as u64 >= a && e as u64 <= b) {
            return Err(format!(
                "bytes {s:#x}..{e:#x} changed outside code and note"
            ));
        }
    }
    let again = rewrite_b0_to_a0(&r.bytes, options).map_err(|e| format!("second rewrite: {e}"))?;
    if again.bytes != r.bytes {
        return Err("not idempotent".into());
    }
    Ok(r.bytes != input)
}

fn mutation_seeds() -> Vec<Vec<u8>> {
    let mut code = Vec::new();
    for (_, b0, _) in same_size_pairs() {
        code.extend(b0);
    }
    code.extend(S_CLAUSE);
    code.extend(S_SET_PC);
    vec![
        crate::GFX1250_PROBE.to_vec(),
        Obj::functions(&[("k", code.clone())])
            .with_note(metadata(&[Some("B0")]))
            .build(),
        Obj::functions(&[("k", code), ("g", around(&growth_sites()[6].2))]).build(),
    ]
}

#[test]
fn mutated_objects_never_panic_and_keep_their_layout() {
    let mut rng = Rng(0x5eed_1234_abcd_0001);
    let partial = Options {
        allow_partial: true,
        clauses: ClausePolicy::ReplaceWithNop,
    };
    let mut changed = 0;
    for seed in mutation_seeds() {
        check_invariants(&seed, &partial).unwrap();
        for round in 0..1500 {
            let mut m = seed.clone();
            match round % 4 {
                0 => m.truncate(rng.below(seed.len())),
                1 | 2 => {
                    for _ in 0..1 + rng.below(4) {
                        let at = rng.below(m.len());
                        m[at] ^= 1 << rng.below(8);
                    }
                }
                _ => {
                    // A random dword in the headers or the text.
                    let at = if rng.below(2) == 0 {
                        rng.below(0x100)
                    } else {
                        TEXT_OFFSET as usize + rng.below(0x100)
                    } & !3;
                    if at + 4 <= m.len() {
                        m[at..at + 4].copy_from_slice(&(rng.next() as u32).to_le_bytes());
                    }
                }
            }
            for options in [default(), partial] {
                match check_invariants(&m, &options) {
                    Ok(c) => changed += usize::from(c),
                    Err(e) => panic!("round {round}: {e}"),
                }
            }
        }
    }
    // The mutants that still rewrite are checked, not only those refused.
    assert!(changed > 1500, "{changed} mutants rewritten");
}

#[test]
fn mutated_bundles_never_panic() {
    // A clang offload bundle holding one object with sites: the container
    // reader finds the objects, each is rewritten.
    let object = &mutation_seeds()[1];
    let id = b"hipv4-amdgcn-amd-amdhsa--gfx1250";
    let mut bundle = b"__CLANG_OFFLOAD_BUNDLE__".to_vec();
    bundle.extend(1u64.to_le_bytes());
    let header_len = bundle.len() + 24 + id.len();
    let offset = header_len.div_ceil(4096) * 4096;
    bundle.extend((offset as u64).to_le_bytes());
    bundle.extend((object.len() as u64).to_le_bytes());
    bundle.extend((id.len() as u64).to_le_bytes());
    bundle.extend(id);
    bundle.resize(offset, 0);
    bundle.extend(object);
    let found = crate::container::find(&bundle);
    assert_eq!(found.objects.len(), 1, "{:?}", found.errors);
    let mut rng = Rng(0x0bad_cafe_0000_0002);
    let mut changed = 0;
    for round in 0..600 {
        let mut m = bundle.clone();
        if round % 3 == 0 {
            m.truncate(rng.below(bundle.len()));
        } else {
            let at = if round % 3 == 1 {
                rng.below(offset)
            } else {
                rng.below(m.len())
            };
            m[at] ^= 1 << rng.below(8);
        }
        for o in crate::container::find(&m).objects {
            match check_invariants(&o.bytes, &default()) {
                Ok(c) => changed += usize::from(c),
                Err(e) => panic!("round {round}: {e}"),
            }
        }
    }
    assert!(changed > 200, "{changed} mutants rewritten");
}

#[path = "placement_tests.rs"]
mod placement_tests;

#[test]
fn integer_wmma_spacing_counts_no_nop_past_an_addtid_site() {
    // `v_wmma_i32_16x16x64_iu8`, an addtid load, then eight `v_nop`s and a
    // VALU: the addtid's A0 fix is VALU code right after the WMMA, so the
    // nops behind it do not count and the WMMA gets all eight of its own.
    let iu8 = [0x00, 0x00, 0x72, 0xcc, 0x08, 0x21, 0x62, 0x1c];
    let addtid = [0x80, 0x00, 0xc4, 0xda, 0, 0, 0, 0x05];
    let mut body = iu8.to_vec();
    body.extend(addtid);
    body.extend(emit::V_NOP.repeat(8));
    body.extend(V_ADD_U32);
    let input = Obj::functions(&[("k", around(&body))]).build();
    let r = rewrite_b0_to_a0(&input, &default()).unwrap();
    let fixes: Vec<_> = r.report.grown.iter().map(|g| g.fix).collect();
    assert_eq!(fixes, ["wmma-int-nops", "ds-addtid-alu-address"]);
    assert_eq!(r.report.grown[0].new_len, 8 + 8 * 4);
    // Without the addtid site between them, the eight nops are enough: the
    // WMMA is no site.
    let mut body = iu8.to_vec();
    body.extend(emit::V_NOP.repeat(8));
    body.extend(V_ADD_U32);
    let input = Obj::functions(&[("k", around(&body)), ("d", around(&addtid))]).build();
    let r = rewrite_b0_to_a0(&input, &default()).unwrap();
    let fixes: Vec<_> = r.report.grown.iter().map(|g| g.fix).collect();
    assert_eq!(fixes, ["ds-addtid-alu-address"]);
}

#[test]
fn a_live_tensor_mask_is_saved_restored_after_the_wait_and_not_grown_again() {
    // The liveness cases' kernel k_tensor: `tensor_load_to_lds s[0:3],
    // s[4:11]`, then s_wait_tensorcnt 0 and s_endpgm; the load may read s4 up
    // to the wait, so s4 is live after the site; s12 (no operand) is dead.
    let input = include_bytes!("../../tests/liveness/cases.co");
    let tensor = growth_sites()
        .into_iter()
        .find(|s| s.0 == A0Class::TensorLds)
        .unwrap()
        .2;
    let once = rewrite_b0_to_a0(input, &default()).unwrap();
    assert!(once.report.is_complete());
    assert_eq!(once.report.grown.len(), 1);
    assert_eq!(once.report.grown[0].fix, emit::tensor_mask::FIX_SAVED);
    let want = [
        &[0x04, 0x00, 0x8c, 0xbe][..], // s_mov_b32 s12, s4
        &[0x80, 0x04, 0x04, 0x9a],     // s_pack_hh_b32_b16 s4, 0, s4
        &tensor,
        &[0x00, 0x00, 0xcb, 0xbf], // s_wait_tensorcnt 0
        &[0x0c, 0x00, 0x84, 0xbe], // s_mov_b32 s4, s12
    ]
    .concat();
    let at = once
        .bytes
        .windows(want.len())
        .position(|w| w == want.as_slice())
        .expect("the saved form is in the output");
    // The load in the image is recognised as the rewriter's own fix: the
    // output is a fixed point.
    let twice = rewrite_b0_to_a0(&once.bytes, &default()).unwrap();
    assert!(twice.report.grown.is_empty() && twice.report.remaining.is_empty());
    assert_eq!(twice.bytes, once.bytes);
    // With the clear one instruction earlier (the save after it), the load
    // is not the fix: it remains.
    let mut moved = once.bytes.clone();
    let (save, clear) = (want[..4].to_vec(), want[4..8].to_vec());
    moved[at..at + 4].copy_from_slice(&clear);
    moved[at + 4..at + 8].copy_from_slice(&save);
    let e = rewrite_b0_to_a0(&moved, &default()).unwrap_err();
    assert!(e.to_string().contains("tensor_lds"), "{e}");
}
