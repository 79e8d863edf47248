//! `ds_load_addtid_b32` / `ds_store_addtid_b32` (DS opcodes 0xB1 / 0xB0): the
//! lane address computed in the ALU, then a plain `ds_load_b32` /
//! `ds_store_b32` with a VGPR address and the original offset.
//!
//! B0's address: `M0[19:0] + lane * 4 + offset` (B0 reads 20 bits of M0, A0
//! 16; COMGR's trampoline patch, reference `gfx1250-a0.md` §1.4 "Trampoline").
//! The lane id is the lane's index in the wave, whatever EXEC holds. The
//! emitted sequence, on a VGPR `t`:
//!
//! ```text
//! v_bfe_u32          vt, m0, 2, 18      ; M0[19:2]
//! v_mbcnt_lo_u32_b32 vt, -1, vt         ; + lanes below this one in 0..31
//! v_mbcnt_hi_u32_b32 vt, -1, vt         ; + lanes below this one in 32..63
//! v_lshlrev_b32_e32  vt, 2, vt          ; 4 * (M0[19:2] + lane)
//! v_bfi_b32          vt, 3, m0, vt      ; | M0[1:0]  = M0[19:0] + 4 * lane
//! ds_load_b32 vdst, vt offset:OFF       ; or ds_store_b32 vt, vdata offset:OFF
//! ```
//!
//! M0 is masked to 20 bits *before* the lane term is added (COMGR masks the
//! sum, which differs from "B0 reads 20 bits of M0" when `M0[19:0] + 4 * lane`
//! carries out of bit 19). The sum never exceeds 21 bits, so the DS unit's
//! `vaddr + offset` is the same integer B0 forms; whether B0 then wraps that
//! sum to 20 bits when it carries (`M0[19:0] + 4 * lane + offset >= 1 MiB`)
//! is not documented. There both forms address beyond any gfx1250 LDS (at
//! most 320 KiB) before a wrap, and the replacement addresses at or above
//! 1 MiB (out of range); `tests/a0classes` reports that domain separately.
//!
//! No SCC, VCC, EXEC or SGPR is written. The VALU instructions write `vt` in
//! the active lanes only, as the DS instruction reads it.
//!
//! Registers: the load computes the address in its own destination (the DS
//! unit reads the address before it writes the result), so it needs nothing.
//! The store needs **one scratch VGPR** (`scratch`), which the caller must take
//! dead at the site (its value in active lanes is overwritten; it is not
//! restored), not the data VGPR, below v256.
//!
//! Also required of the caller: no memory load may be outstanding into `vt`
//! at the site (the destination for the load, the scratch for the store).
//! The original never wrote `vt` before its DS access, so the code before it
//! need not have waited for an earlier load into that register (two DS loads
//! into one VGPR return in order); a VALU write to it while such a load is in
//! flight could be overwritten by the load's return. Where that cannot be
//! proved, the caller puts `s_wait_loadcnt 0` / `s_wait_dscnt 0` before the
//! sequence.
//!
//! Refused: a VGPR-MSB mode other than 0 (the DS fields would name banked
//! registers; not modelled), set bits in the fields the instruction does not
//! use (w0\[17:16\], the unused VGPR fields), a missing or unusable scratch.

use super::{Expansion, Reason, Rounding};

/// DS encoding, w0\[31:26\].
const DS: u32 = 0x36;
const OP_LOAD_ADDTID: u32 = 0xB1;
const OP_STORE_ADDTID: u32 = 0xB0;
const OP_LOAD_B32: u32 = 0x36;
const OP_STORE_B32: u32 = 0x0D;
/// `m0` as a VALU source.
const SRC_M0: u32 = 125;

/// Which of the two instructions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// `ds_load_addtid_b32 vdst offset:OFF`.
    Load,
    /// `ds_store_addtid_b32 vdata offset:OFF`.
    Store,
}

/// The fields of one addtid instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Addtid {
    /// Load or store.
    pub kind: Kind,
    /// The VGPR loaded (load) or stored (store), as the 8-bit field.
    pub vgpr: u8,
    /// The 16-bit byte offset.
    pub offset: u16,
}

/// The addtid instruction in `bytes` (exactly 8 bytes), or why not.
pub fn parse(bytes: &[u8]) -> Result<Addtid, Reason> {
    const NOT: Reason = Reason::NotHandled("ds_load_addtid_b32 or ds_store_addtid_b32");
    let b: &[u8; 8] = bytes.try_into().map_err(|_| NOT)?;
    let w0 = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
    let w1 = u32::from_le_bytes([b[4], b[5], b[6], b[7]]);
    if w0 >> 26 != DS {
        return Err(NOT);
    }
    let (kind, vgpr, used) = match (w0 >> 18) & 0xFF {
        OP_LOAD_ADDTID => (Kind::Load, (w1 >> 24) as u8, 0xFF00_0000u32),
        OP_STORE_ADDTID => (Kind::Store, ((w1 >> 8) & 0xFF) as u8, 0x0000_FF00u32),
        _ => return Err(NOT),
    };
    // w0[17:16] (GDS and a reserved bit on older targets) and the VGPR fields
    // the instruction does not use must be clear.
    let unknown = u64::from(w0 & 0x0003_0000) | (u64::from(w1 & !used) << 32);
    if unknown != 0 {
        return Err(Reason::UnknownBits(unknown));
    }
    Ok(Addtid {
        kind,
        vgpr,
        offset: (w0 & 0xFFFF) as u16,
    })
}

/// Whether `bytes` is an addtid instruction this module expands.
pub fn is_addtid(bytes: &[u8]) -> bool {
    parse(bytes).is_ok()
}

/// The replacement of the addtid instruction `bytes` under VGPR-MSB mode
/// `mode`; `scratch` is the dead VGPR (below v256) the store needs (ignored
/// for the load).
pub fn expand(bytes: &[u8], mode: u8, scratch: Option<u16>) -> Result<Expansion, Reason> {
    let insn = parse(bytes)?;
    if mode != 0 {
        return Err(Reason::Unsupported(
            "ds_*_addtid_b32 under a VGPR-MSB mode other than 0",
        ));
    }
    let t = match insn.kind {
        Kind::Load => u32::from(insn.vgpr),
        Kind::Store => {
            let s = scratch.ok_or(Reason::Scratch("ds_store_addtid_b32 needs a scratch VGPR"))?;
            if s >= 256 {
                return Err(Reason::Scratch("the scratch VGPR must be below v256"));
            }
            if s == u16::from(insn.vgpr) {
                return Err(Reason::Scratch("the scratch VGPR is the stored VGPR"));
            }
            u32::from(s)
        }
    };
    let vt = 256 + t;
    let mut out = Vec::with_capacity(44);
    let mut put = |w: u32| out.extend_from_slice(&w.to_le_bytes());
    // v_bfe_u32 vt, m0, 2, 18 (VOP3 0x210; inline constants 2 = 130, 18 = 146)
    put(0xD610_0000 | t);
    put(SRC_M0 | (130 << 9) | (146 << 18));
    // v_mbcnt_lo_u32_b32 vt, -1, vt (VOP3 0x31F; -1 = 193)
    put(0xD71F_0000 | t);
    put(193 | (vt << 9));
    // v_mbcnt_hi_u32_b32 vt, -1, vt (VOP3 0x320)
    put(0xD720_0000 | t);
    put(193 | (vt << 9));
    // v_lshlrev_b32_e32 vt, 2, vt (VOP2 0x18)
    put((0x18 << 25) | (t << 17) | (t << 9) | 130);
    // v_bfi_b32 vt, 3, m0, vt (VOP3 0x212; 3 = 131)
    put(0xD612_0000 | t);
    put(131 | (SRC_M0 << 9) | (vt << 18));
    let offset = u32::from(insn.offset);
    match insn.kind {
        Kind::Load => {
            put((DS << 26) | (OP_LOAD_B32 << 18) | offset);
            put(t | (u32::from(insn.vgpr) << 24));
        }
        Kind::Store => {
            put((DS << 26) | (OP_STORE_B32 << 18) | offset);
            put(t | (u32::from(insn.vgpr) << 8));
        }
    }
    Ok(Expansion {
        bytes: out,
        swapped: false,
        rounding: Rounding::Same,
    })
}

/// The fix's name in the report.
pub const FIX: &str = "ds-addtid-alu-address";

/// `s_wait_loadcnt 0`.
const S_WAIT_LOADCNT_0: [u8; 4] = [0x00, 0x00, 0xc0, 0xbf];
/// `s_wait_dscnt 0`.
const S_WAIT_DSCNT_0: [u8; 4] = [0x00, 0x00, 0xc6, 0xbf];

/// The seam's emitter: [`expand`], the store's address VGPR from the site's
/// provider. The load computes its address in its destination, which the
/// original never wrote before its access: a load may be outstanding into it
/// that the code before never waited for, so the load's sequence starts with
/// `s_wait_loadcnt 0` and `s_wait_dscnt 0` (the provider's registers have no
/// load outstanding: liveness keeps a load's destination live to its wait).
pub fn emit(site: &mut super::Site<'_>) -> Result<super::Emitted, super::Refusal> {
    let insn = parse(site.original)?;
    let (scratch, waits) = match insn.kind {
        Kind::Load => (None, true),
        Kind::Store => {
            let mut request = super::Request::new(super::RegClass::Vgpr, 1, 1);
            request.below = 256;
            (Some(site.scratch.take(request)?), false)
        }
    };
    let e = expand(site.original, site.vgpr_msb, scratch)?;
    let mut bytes = Vec::with_capacity(e.bytes.len() + 8);
    if waits {
        bytes.extend_from_slice(&S_WAIT_LOADCNT_0);
        bytes.extend_from_slice(&S_WAIT_DSCNT_0);
    }
    bytes.extend_from_slice(&e.bytes);
    Ok(super::Emitted {
        bytes,
        fix: FIX,
        note: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    // Encodings from llvm-mc-22 -mcpu=gfx1250 -show-encoding.
    const LOAD: [u8; 8] = [0x80, 0x00, 0xc4, 0xda, 0x00, 0x00, 0x00, 0x05];
    const STORE: [u8; 8] = [0x40, 0x00, 0xc0, 0xda, 0x00, 0x08, 0x00, 0x00];

    #[test]
    fn store_sequence_matches_llvm_mc() {
        let e = expand(&STORE, 0, Some(7)).unwrap();
        let want: Vec<u8> = [
            &[0x07, 0x00, 0x10, 0xd6, 0x7d, 0x04, 0x49, 0x02][..], // v_bfe_u32 v7, m0, 2, 18
            &[0x07, 0x00, 0x1f, 0xd7, 0xc1, 0x0e, 0x02, 0x00],     // v_mbcnt_lo_u32_b32 v7, -1, v7
            &[0x07, 0x00, 0x20, 0xd7, 0xc1, 0x0e, 0x02, 0x00],     // v_mbcnt_hi_u32_b32 v7, -1, v7
            &[0x82, 0x0e, 0x0e, 0x30],                             // v_lshlrev_b32_e32 v7, 2, v7
            &[0x07, 0x00, 0x12, 0xd6, 0x83, 0xfa, 0x1c, 0x04],     // v_bfi_b32 v7, 3, m0, v7
            &[0x40, 0x00, 0x34, 0xd8, 0x07, 0x08, 0x00, 0x00],     // ds_store_b32 v7, v8 offset:64
        ]
        .concat();
        assert_eq!(e.bytes, want);
    }

    #[test]
    fn load_uses_its_destination() {
        let e = expand(&LOAD, 0, None).unwrap();
        assert_eq!(e.bytes.len(), 44);
        // ds_load_b32 v5, v5 offset:128
        assert_eq!(
            e.bytes[36..],
            [0x80, 0x00, 0xd8, 0xd8, 0x05, 0x00, 0x00, 0x05]
        );
    }

    #[test]
    fn refusals() {
        assert!(matches!(expand(&STORE, 0, None), Err(Reason::Scratch(_))));
        assert!(matches!(
            expand(&STORE, 0, Some(8)),
            Err(Reason::Scratch(_))
        ));
        assert!(matches!(
            expand(&STORE, 0, Some(256)),
            Err(Reason::Scratch(_))
        ));
        assert!(matches!(
            expand(&LOAD, 0x40, None),
            Err(Reason::Unsupported(_))
        ));
        let mut gds = LOAD;
        gds[2] |= 0x02;
        assert!(matches!(
            expand(&gds, 0, None),
            Err(Reason::UnknownBits(0x20000))
        ));
        let mut addr = LOAD;
        addr[4] = 1;
        assert!(matches!(
            expand(&addr, 0, None),
            Err(Reason::UnknownBits(_))
        ));
        // ds_load_b32 v5, v7 offset:128
        let plain = [0x80, 0x00, 0xd8, 0xd8, 0x07, 0x00, 0x00, 0x05];
        assert!(matches!(
            expand(&plain, 0, None),
            Err(Reason::NotHandled(_))
        ));
    }
}
