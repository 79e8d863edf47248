//! `tensor_load_to_lds` with a workgroup (multicast) mask: the at-site form.
//! On A0 a non-zero mask makes the load a cluster multicast, which hangs.
//!
//! The mask is bits \[15:0\] of the first SGPR of the instruction's second
//! descriptor operand (`s[4:11]` in `tensor_load_to_lds s[0:3], s[4:11]`;
//! reference `gfx1250-a0.md` §1.4, COMGR's A0 policy). VIMAGE encoding (12
//! bytes): w0\[31:26\] = 0x34, w0\[22\] = 1 (0 is the legacy ROCm
//! encoding, which LLVM 22 does not decode), opcode w0\[21:14\] = 0xC4; w2 bytes 0..3 are
//! the first SGPR of the four descriptor groups (124 = `null`: absent).
//!
//! The replacement, with `b` the mask's SGPR:
//!
//! ```text
//! s_mov_b32         s<scratch>, s<b>   ; only when b is live after the site
//! s_pack_hh_b32_b16 s<b>, 0, s<b>      ; b[15:0] = 0, b[31:16] kept
//! tensor_load_to_lds ...               ; the original, unchanged
//! s_wait_tensorcnt  0                  ; only when b is live after the site
//! s_mov_b32         s<b>, s<scratch>   ; only when b is live after the site
//! ```
//!
//! None of these writes SCC (`s_pack_hh_b32_b16`, `s_mov_b32` and the wait
//! do not), so SCC needs no proof. The restore waits for every outstanding
//! tensor operation: nothing available says when the tensor instruction reads
//! its descriptor SGPRs. LLVM 22 overwrites a descriptor SGPR right after a
//! `tensor_load_to_lds` with no wait (what a read at issue allows), but that
//! is the compiler's B0 model, not a statement about A0; gfx1250 has
//! `s_wait_xcnt` because memory instructions may read their sources late
//! (and the liveness analysis assumes so). Once `s_wait_tensorcnt 0` has
//! passed, the operation has completed and read everything it reads, so the
//! restored mask cannot reach it. The cost: the wave waits there for every
//! tensor operation it has in flight, which serializes a pipelined sequence
//! of tensor loads.
//!
//! Registers: when `b` is live after the site the caller supplies **one
//! scratch SGPR**, dead at the site (it is left holding `b`'s value), not one
//! of the instruction's descriptor SGPRs. When `b` is dead after the site no
//! scratch is needed (`b` is left with its mask cleared). No scalar load may
//! be outstanding into the scratch at the site (else `s_wait_kmcnt 0` first);
//! `b` itself has none, as the tensor instruction reads it.
//!
//! The caller must know that the tensor instruction may move: the reference
//! calls it PC-sensitive on A0 without saying how, which is why COMGR prefers
//! the definition-site form ([`clear_at_definition`], with its proof in
//! `liveness::reaching`; the rewrite uses it when proved:
//! `rewrite::mask_definition`) or the slot of an `s_delay_alu` right before
//! it ([`clear_in_place_of_delay`], same size, mask
//! SGPR dead after).
//!
//! Refused: a second operand that is not an SGPR (`null` or above s105) or
//! whose field is not a multiple of 4 (LLVM decodes 5 as `s[4:11]`: which
//! SGPR holds the mask is then not certain), the legacy encoding
//! (w0 = 0xD031…), a missing scratch when `b` is live, a scratch that is one
//! of the descriptor SGPRs.

use super::{Expansion, Reason, Rounding};

const VIMAGE: u32 = 0x34;
const OP_TENSOR_LOAD_TO_LDS: u32 = 0xC4;
/// `null` as a VIMAGE SGPR field.
const NULL: u8 = 124;
/// The last SGPR (s105).
const LAST_SGPR: u8 = 105;

/// The descriptor groups' first SGPRs and lengths (128, 256, 128, 128 bits).
const GROUP_LEN: [u8; 4] = [4, 8, 4, 4];

/// The SGPR holding the workgroup mask of the `tensor_load_to_lds` in
/// `bytes` (12 bytes), or why not.
pub fn mask_sgpr(bytes: &[u8]) -> Result<u8, Reason> {
    const NOT: Reason = Reason::NotHandled("tensor_load_to_lds");
    let b: &[u8; 12] = bytes.try_into().map_err(|_| NOT)?;
    let w0 = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
    if w0 >> 14 != (VIMAGE << 12) | 0x100 | OP_TENSOR_LOAD_TO_LDS {
        return Err(NOT);
    }
    let base = b[9];
    if base == NULL || base > LAST_SGPR {
        return Err(Reason::Unsupported(
            "a tensor_load_to_lds whose second descriptor operand is not an SGPR",
        ));
    }
    if base % 4 != 0 {
        return Err(Reason::Unsupported(
            "a tensor_load_to_lds whose second descriptor field is not a multiple of 4",
        ));
    }
    Ok(base)
}

/// Whether `s` is one of the SGPRs the tensor instruction `b` reads (a
/// field that is not a multiple of 4 read both as written and aligned down,
/// as LLVM decodes it).
fn reads(b: &[u8], s: u8) -> bool {
    (0..4).any(|g| {
        let first = b[8 + g];
        first != NULL && (first & !3..first.saturating_add(GROUP_LEN[g])).contains(&s)
    })
}

/// `s_pack_hh_b32_b16 s<b>, 0, s<b>`: the clear of the mask SGPR `b`.
pub fn clear_bytes(b: u8) -> [u8; 4] {
    let b = u32::from(b);
    (0x9A00_0000 | (b << 16) | (b << 8) | 128).to_le_bytes()
}

/// `s_wait_tensorcnt 0` (SOPP 0x4B).
pub const WAIT_TENSORCNT_0: [u8; 4] = [0x00, 0x00, 0xcb, 0xbf];

/// The at-site replacement of the `tensor_load_to_lds` in `bytes`.
/// `live_after`: whether the mask SGPR's value is read after the site (then
/// `scratch`, a dead SGPR, is required).
pub fn clear_at_site(
    bytes: &[u8],
    live_after: bool,
    scratch: Option<u8>,
) -> Result<Expansion, Reason> {
    let b = u32::from(mask_sgpr(bytes)?);
    let mut out = Vec::with_capacity(24);
    let save = if live_after {
        let s = scratch.ok_or(Reason::Scratch(
            "the mask SGPR is live after the site: a scratch SGPR is needed",
        ))?;
        if s > LAST_SGPR || reads(bytes, s) {
            return Err(Reason::Scratch(
                "the scratch SGPR is not an SGPR the tensor instruction leaves alone",
            ));
        }
        // s_mov_b32 s<s>, s<b> (SOP1 0x00)
        out.extend_from_slice(&(0xBE80_0000 | (u32::from(s) << 16) | b).to_le_bytes());
        Some(u32::from(s))
    } else {
        None
    };
    // s_pack_hh_b32_b16 s<b>, 0, s<b> (SOP2 0x34; 0 = 128)
    out.extend_from_slice(&clear_bytes(b as u8));
    out.extend_from_slice(bytes);
    if let Some(s) = save {
        // The operation has read its descriptor once it has completed.
        out.extend_from_slice(&WAIT_TENSORCNT_0);
        // s_mov_b32 s<b>, s<s>
        out.extend_from_slice(&(0xBE80_0000 | (b << 16) | s).to_le_bytes());
    }
    Ok(Expansion {
        bytes: out,
        swapped: false,
        rounding: Rounding::Same,
    })
}

/// The same-size form: the 4-byte `s_delay_alu` right before the tensor
/// instruction (`delay`) replaced by `s_pack_hh_b32_b16 sB, 0, sB`, so the
/// tensor instruction does not move (the reference's COMGR note: tensor loads
/// are PC-sensitive on A0, and later COMGR versions used this slot).
/// `s_delay_alu` is a scheduling hint with no effect on results, and entering
/// at its address (a branch target) runs the clear and then the load, as
/// falling through does. Returns the 4 bytes for the delay's address.
///
/// Requires the mask SGPR to be dead after the tensor instruction (there is
/// no room to restore it); no scratch, no SCC write.
pub fn clear_in_place_of_delay(delay: &[u8], tensor: &[u8]) -> Result<[u8; 4], Reason> {
    let d: &[u8; 4] = delay
        .try_into()
        .map_err(|_| Reason::NotHandled("s_delay_alu"))?;
    // s_delay_alu: SOPP (w0[31:23] = 0x17F), opcode 0x07.
    if u32::from_le_bytes(*d) >> 16 != 0xBF87 {
        return Err(Reason::NotHandled("s_delay_alu"));
    }
    Ok(clear_bytes(mask_sgpr(tensor)?))
}

/// The definition-site form: the bytes that replace `def`, the instruction
/// that alone writes the mask SGPR `mask` before the tensor load (a
/// reaching-definition proof, `liveness::ObjectLiveness::only_definition`,
/// with the load the only reader of its value), so that the value it writes
/// has bits \[15:0\] zero and bits \[31:16\] as before. Same size: nothing
/// moves. `scc_live_after`: whether SCC may be read after `def`.
///
/// - `s_mov_b32 sB, lit` (SOP1 0x00, 32-bit literal): the literal's low 16
///   bits zeroed;
/// - `s_movk_i32 sB, simm16` (SOPK 0x00) with bit 15 clear (the value is the
///   immediate, high half zero): the immediate zeroed; with bit 15 set the
///   high half is 0xFFFF, which no 16-bit immediate gives with a zero low
///   half: refused;
/// - `s_and_b32 sB, sB, lit` (either order; SOP2 0x16): the literal's low 16
///   bits zeroed, so that sB\[31:16\] is still sB & lit; it writes SCC
///   (result non-zero), which the change may flip: refused when SCC may be
///   read after it.
///
/// Anything else (an inline constant, another opcode, a destination that is
/// not `mask`) is refused.
pub fn clear_at_definition(def: &[u8], mask: u8, scc_live_after: bool) -> Result<Vec<u8>, Reason> {
    const NOT: Reason =
        Reason::NotHandled("a definition other than s_mov_b32/s_movk_i32/s_and_b32");
    let w0 = def
        .get(..4)
        .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .ok_or(NOT)?;
    let sdst = ((w0 >> 16) & 0x7F) as u8;
    if sdst != mask {
        return Err(NOT);
    }
    let mut out = def.to_vec();
    let literal_low_zero = |out: &mut Vec<u8>| {
        out[4] = 0;
        out[5] = 0;
    };
    if w0 >> 23 == 0x17D && (w0 >> 8) & 0xFF == 0x00 && w0 & 0xFF == 255 && def.len() == 8 {
        // s_mov_b32 sB, lit
        literal_low_zero(&mut out);
    } else if w0 >> 28 == 0xB && (w0 >> 23) & 0x1F == 0x00 && def.len() == 4 {
        // s_movk_i32 sB, simm16
        if w0 & 0x8000 != 0 {
            return Err(Reason::Unsupported(
                "s_movk_i32 of a negative immediate (high half 0xFFFF) as the mask's definition",
            ));
        }
        out[0] = 0;
        out[1] = 0;
    } else if w0 >> 30 == 0b10 && (w0 >> 23) & 0x7F == 0x16 && def.len() == 8 {
        // s_and_b32 sB, sB, lit / s_and_b32 sB, lit, sB
        let (s0, s1) = (w0 & 0xFF, (w0 >> 8) & 0xFF);
        let b = u32::from(mask);
        if !((s0 == b && s1 == 255) || (s0 == 255 && s1 == b)) {
            return Err(NOT);
        }
        if scc_live_after {
            return Err(Reason::Unsupported(
                "s_and_b32 as the mask's definition with SCC read after it (the change may flip SCC)",
            ));
        }
        literal_low_zero(&mut out);
    } else {
        return Err(NOT);
    }
    Ok(out)
}

/// The fix's name in the report for the definition-site form.
pub const FIX_DEFINITION: &str = "tensor-mask-clear-at-definition";

/// The fix's name in the report (the mask SGPR dead after the site).
pub const FIX: &str = "tensor-mask-clear";

/// The fix's name in the report when the mask SGPR is saved in a scratch
/// SGPR and restored after `s_wait_tensorcnt 0`.
pub const FIX_SAVED: &str = "tensor-mask-clear-saved";

/// The seam's emitter: [`clear_at_site`] without a save when the provider
/// proves the mask SGPR dead after the site (the liveness analysis keeps it
/// live up to the next memory wait, as the load may read it late), else
/// with one SGPR from the provider, dead at the site, below s106: saved
/// there, cleared, the load, `s_wait_tensorcnt 0`, restored. No dead SGPR:
/// refused with the provider's reason.
pub fn emit(site: &mut super::Site<'_>) -> Result<super::Emitted, super::Refusal> {
    let b = mask_sgpr(site.original)?;
    if !site.scratch.live_after(super::Reg::S(b)) {
        return Ok(super::Emitted {
            bytes: clear_at_site(site.original, false, None)?.bytes,
            fix: FIX,
            note: None,
        });
    }
    let mut request = super::Request::new(super::RegClass::Sgpr, 1, 1);
    request.below = u16::from(LAST_SGPR) + 1;
    let s = site.scratch.take(request).map_err(|r| {
        super::Refusal::new(format!(
            "the mask SGPR s{b} is live after the site and must be saved: {r}"
        ))
    })?;
    let s = super::below_256(s)?;
    Ok(super::Emitted {
        bytes: clear_at_site(site.original, true, Some(s))?.bytes,
        fix: FIX_SAVED,
        note: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    // tensor_load_to_lds s[0:3], s[4:11] (llvm-mc-22)
    const T: [u8; 12] = [
        0x01, 0x00, 0x71, 0xd0, 0x00, 0x00, 0x00, 0x7c, 0x00, 0x04, 0x7c, 0x7c,
    ];

    #[test]
    fn live_mask_is_saved_and_restored() {
        let e = clear_at_site(&T, true, Some(20)).unwrap();
        let want = [
            &[0x04, 0x00, 0x94, 0xbe][..], // s_mov_b32 s20, s4
            &[0x80, 0x04, 0x04, 0x9a],     // s_pack_hh_b32_b16 s4, 0, s4
            &T,
            &[0x00, 0x00, 0xcb, 0xbf], // s_wait_tensorcnt 0
            &[0x14, 0x00, 0x84, 0xbe], // s_mov_b32 s4, s20
        ]
        .concat();
        assert_eq!(e.bytes, want);
        assert_eq!(clear_at_site(&T, false, None).unwrap().bytes, want[4..20]);
    }

    /// A provider that answers liveness with `live` and grants `grant`.
    struct Fake {
        live: bool,
        grant: Option<u16>,
        asked: Vec<super::super::Request>,
    }

    impl super::super::Scratch for Fake {
        fn take(&mut self, request: super::super::Request) -> Result<u16, super::super::Refusal> {
            self.asked.push(request);
            self.grant
                .ok_or_else(|| super::super::Refusal::new("no sgpr scratch: none dead"))
        }
        fn live_after(&mut self, reg: super::super::Reg) -> bool {
            assert_eq!(reg, super::super::Reg::S(4));
            self.live
        }
    }

    fn run(fake: &mut Fake) -> Result<super::super::Emitted, super::super::Refusal> {
        let info = crate::rewrite::SiteInfo {
            function: std::sync::Arc::from("k"),
            function_vaddr: 0x1000,
            vaddr: 0x1004,
            file_offset: 4,
            len: 12,
            class: crate::gfx1250::A0Class::TensorLds,
            mnemonic: "tensor_load_to_lds",
        };
        emit(&mut super::super::Site {
            info: &info,
            original: &T,
            fields: super::super::Fields::decode(&T),
            vgpr_msb: 0,
            following: &[],
            scratch: fake,
        })
    }

    #[test]
    fn the_adapter_saves_a_live_mask_in_a_dead_sgpr_or_refuses() {
        // Dead after the site: no scratch asked, the plain clear.
        let mut dead = Fake {
            live: false,
            grant: None,
            asked: vec![],
        };
        let e = run(&mut dead).unwrap();
        assert_eq!((e.fix, e.bytes.len()), (FIX, 16));
        assert!(dead.asked.is_empty());
        // Live: one SGPR below s106, saved, restored after s_wait_tensorcnt 0.
        let mut live = Fake {
            live: true,
            grant: Some(20),
            asked: vec![],
        };
        let e = run(&mut live).unwrap();
        assert_eq!(e.fix, FIX_SAVED);
        assert_eq!(e.bytes, clear_at_site(&T, true, Some(20)).unwrap().bytes);
        assert_eq!(e.bytes[20..24], WAIT_TENSORCNT_0);
        let r = &live.asked[0];
        assert_eq!(
            (r.class, r.count, r.below),
            (super::super::RegClass::Sgpr, 1, 106)
        );
        // Live and no dead SGPR: refused with the provider's reason.
        let mut none = Fake {
            live: true,
            grant: None,
            asked: vec![],
        };
        let why = run(&mut none).unwrap_err().reason;
        assert!(
            why.contains("s4 is live") && why.contains("none dead"),
            "{why}"
        );
        // A grant the tensor instruction reads (s6) is refused by the emitter.
        let mut bad = Fake {
            live: true,
            grant: Some(6),
            asked: vec![],
        };
        assert!(run(&mut bad).is_err());
    }

    #[test]
    fn a_mask_field_that_is_not_a_multiple_of_4_is_refused() {
        // llvm-objdump-22 prints field 5 as s[4:11]: which SGPR is the mask?
        let mut t = T;
        t[9] = 5;
        assert!(matches!(mask_sgpr(&t), Err(Reason::Unsupported(_))));
    }

    #[test]
    fn definitions_get_a_zero_low_half_in_place() {
        // Bytes from llvm-mc-22 -mcpu=gfx1250.
        let mov = [0xff, 0x00, 0x84, 0xbe, 0x78, 0x56, 0x34, 0x12]; // s_mov_b32 s4, 0x12345678
        assert_eq!(
            clear_at_definition(&mov, 4, true).unwrap(),
            [0xff, 0x00, 0x84, 0xbe, 0x00, 0x00, 0x34, 0x12] // s_mov_b32 s4, 0x12340000
        );
        let movk = [0x34, 0x12, 0x04, 0xb0]; // s_movk_i32 s4, 0x1234
        assert_eq!(
            clear_at_definition(&movk, 4, true).unwrap(),
            [0, 0, 0x04, 0xb0]
        );
        let neg = [0x34, 0x92, 0x04, 0xb0]; // s_movk_i32 s4, 0x9234
        assert!(matches!(
            clear_at_definition(&neg, 4, false),
            Err(Reason::Unsupported(_))
        ));
        for and in [
            [0x04, 0xff, 0x04, 0x8b, 0xff, 0xff, 0xcd, 0xab], // s_and_b32 s4, s4, 0xabcdffff
            [0xff, 0x04, 0x04, 0x8b, 0xff, 0xff, 0xcd, 0xab], // s_and_b32 s4, 0xabcdffff, s4
        ] {
            let mut want = and;
            want[4] = 0;
            want[5] = 0;
            assert_eq!(clear_at_definition(&and, 4, false).unwrap(), want);
            assert!(matches!(
                clear_at_definition(&and, 4, true),
                Err(Reason::Unsupported(_))
            ));
        }
        // Another destination, an inline constant, s_and_b32 of another SGPR.
        assert!(clear_at_definition(&mov, 5, false).is_err());
        assert!(clear_at_definition(&[0xc0, 0x00, 0x84, 0xbe], 4, false).is_err());
        let other = [0x05, 0xff, 0x04, 0x8b, 0xff, 0xff, 0xcd, 0xab]; // s_and_b32 s4, s5, lit
        assert!(clear_at_definition(&other, 4, false).is_err());
    }

    #[test]
    fn in_place_of_a_delay() {
        // s_delay_alu instid0(VALU_DEP_1) before tensor_load_to_lds s[0:3], s[4:11]
        let delay = [0x01, 0x00, 0x87, 0xbf];
        assert_eq!(
            clear_in_place_of_delay(&delay, &T).unwrap(),
            [0x80, 0x04, 0x04, 0x9a]
        );
        // s_nop 0 is not a delay.
        assert!(matches!(
            clear_in_place_of_delay(&[0, 0, 0x80, 0xbf], &T),
            Err(Reason::NotHandled(_))
        ));
    }

    #[test]
    fn refusals() {
        assert!(matches!(
            clear_at_site(&T, true, None),
            Err(Reason::Scratch(_))
        ));
        // s6 and s1 are descriptor SGPRs.
        assert!(matches!(
            clear_at_site(&T, true, Some(6)),
            Err(Reason::Scratch(_))
        ));
        assert!(matches!(
            clear_at_site(&T, true, Some(1)),
            Err(Reason::Scratch(_))
        ));
        let mut null = T;
        null[9] = 0x7c;
        assert!(matches!(
            clear_at_site(&null, false, None),
            Err(Reason::Unsupported(_))
        ));
        // legacy encoding
        let mut legacy = T;
        legacy[2] = 0x31;
        legacy[0] = 0;
        assert!(matches!(
            clear_at_site(&legacy, false, None),
            Err(Reason::NotHandled(_))
        ));
    }
}
