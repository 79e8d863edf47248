//! A vector instruction reading `src_flat_scratch_base_lo` (selector 230) or
//! `_hi` (231) in a 64-bit source position: on B0 either delivers the whole
//! 64-bit flat scratch base there; A0 accepts neither in a vector instruction
//! but accepts selector 230 in a 64-bit scalar source (the facts of the
//! `flat_scratch_base_64` class in `gfx1250::classes`, from AMD's rocjitsu
//! translator and LLVM's operand encodings). So the base is read by the one
//! form A0 accepts into an SGPR pair, and the vector instruction reads the
//! pair instead:
//!
//! ```text
//! s_mov_b64 s[p:p+1], src_flat_scratch_base_lo
//! <the instruction, each 64-bit source naming 230/231 replaced by s[p:p+1]>
//! ```
//!
//! Same value on both steppings: `s_mov_b64` of selector 230 is the scalar
//! form the same-size fix already produces for `_hi` (it is what A0 runs
//! today for every scalar read), and an SGPR pair in a 64-bit vector source
//! delivers its 64 bits. The VGPR fields are untouched, so the VGPR-MSB mode
//! does not matter. The constant bus sees one 64-bit scalar source where it
//! saw one before.
//!
//! Registers: **one aligned SGPR pair** `s[p:p+1]` (`p` even, at most 104),
//! which the caller must take dead at the site (it is left holding the base;
//! it is not restored), which the instruction does not otherwise read, and
//! into which no scalar load is outstanding (else `s_wait_kmcnt 0` first).
//! No SCC (`s_mov_b64` does not write it), VCC or EXEC is written.
//!
//! Refused: a source position that names 230/231 but is not 64 bits wide (a
//! 32-bit read of the selector: what B0 delivers there is not stated by the
//! sources), an SGPR pair source elsewhere in the same instruction equal to
//! the scratch, an unusable pair, an opcode the operand table does not know.

use crate::gfx1250::walker::{self, Family};

use super::{Expansion, Reason, Rounding};

const LO: u32 = 230;
const HI: u32 = 231;

/// The source fields of `bytes` (position, 9-bit value, whether 64 bits wide)
/// for a vector family, with the bit offset of each field in the first 8
/// bytes (as a u64).
fn fields(bytes: &[u8]) -> Result<Vec<(u32, u32, bool)>, Reason> {
    const NOT: Reason = Reason::NotHandled("a vector instruction");
    let d = walker::decode(bytes).map_err(|_| NOT)?;
    if bytes.len() < d.len as usize {
        return Err(NOT);
    }
    let w = |i: usize| {
        bytes
            .get(4 * i..4 * i + 4)
            .map_or(0, |b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    };
    let (w0, w1) = (w(0), w(1));
    let unknown = Reason::Unsupported("an opcode the operand table does not know");
    Ok(match d.family {
        Family::Vop1 | Family::Vop2 | Family::Vopc => {
            let (used, wide) = walker::vop_short_sources(d.family, d.op).ok_or(unknown)?;
            if used & 1 == 0 {
                vec![]
            } else {
                vec![(0, w0 & 0x1FF, wide & 1 != 0)]
            }
        }
        Family::Vop3 | Family::Vop3p => {
            let (used, wide) = if d.family == Family::Vop3 {
                walker::vop3_sources(d.op)
            } else {
                walker::vop3p_sources(d.op)
            };
            (0..3u32)
                .filter(|i| used & (1 << i) != 0)
                .map(|i| (32 + 9 * i, (w1 >> (9 * i)) & 0x1FF, wide & (1 << i) != 0))
                .collect()
        }
        _ => return Err(NOT),
    })
}

/// Whether `bytes` is a vector instruction reading the flat scratch base in a
/// 64-bit source.
pub fn reads_base(bytes: &[u8]) -> bool {
    fields(bytes).is_ok_and(|f| f.iter().any(|&(_, v, wide)| wide && (v == LO || v == HI)))
}

/// The replacement of the vector instruction `bytes`, reading the base into
/// the dead SGPR pair `s[pair:pair+1]` first.
pub fn from_sgpr_pair(bytes: &[u8], pair: u8) -> Result<Expansion, Reason> {
    let f = fields(bytes)?;
    if !f.iter().any(|&(_, v, wide)| wide && (v == LO || v == HI)) {
        return Err(Reason::NotHandled(
            "a vector instruction reading src_flat_scratch_base_* in a 64-bit source",
        ));
    }
    if f.iter().any(|&(_, v, wide)| !wide && (v == LO || v == HI)) {
        return Err(Reason::Unsupported(
            "a 32-bit source naming src_flat_scratch_base_*",
        ));
    }
    if pair % 2 != 0 || pair > 104 {
        return Err(Reason::Scratch(
            "the scratch SGPR pair must be aligned and below s106",
        ));
    }
    let p = u32::from(pair);
    if f.iter().any(|&(_, v, _)| v == p || v == p + 1) {
        return Err(Reason::Scratch(
            "the instruction reads the scratch SGPR pair",
        ));
    }
    let mut head = [0u8; 8];
    let n = bytes.len().min(8);
    head[..n].copy_from_slice(&bytes[..n]);
    let mut q = u64::from_le_bytes(head);
    for &(at, v, _) in &f {
        if v == LO || v == HI {
            q = (q & !(0x1FFu64 << at)) | (u64::from(p) << at);
        }
    }
    let mut out = Vec::with_capacity(4 + bytes.len());
    // s_mov_b64 s[p:p+1], src_flat_scratch_base_lo (SOP1 0x01)
    out.extend_from_slice(&(0xBE80_0100 | (p << 16) | LO).to_le_bytes());
    out.extend_from_slice(&q.to_le_bytes()[..n]);
    out.extend_from_slice(&bytes[n..]);
    Ok(Expansion {
        bytes: out,
        swapped: false,
        rounding: Rounding::Same,
    })
}

/// The fix's name in the report.
pub const FIX: &str = "flat-scratch-base-sgpr-pair";

/// The seam's emitter: [`from_sgpr_pair`] with an aligned SGPR pair (at most
/// s\[104:105\]) from the site's provider.
pub fn emit(site: &mut super::Site<'_>) -> Result<super::Emitted, super::Refusal> {
    let mut request = super::Request::new(super::RegClass::Sgpr, 2, 2);
    request.below = 106;
    let pair = super::below_256(site.scratch.take(request)?)?;
    Ok(super::Emitted {
        bytes: from_sgpr_pair(site.original, pair)?.bytes,
        fix: FIX,
        note: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vop2_and_vop3_match_llvm_mc() {
        // v_add_nc_u64_e32 v[0:1], src_flat_scratch_base_lo, v[2:3]
        let e = from_sgpr_pair(&[0xe6, 0x04, 0x00, 0x50], 10).unwrap();
        // s_mov_b64 s[10:11], src_flat_scratch_base_lo ; v_add_nc_u64_e32 v[0:1], s[10:11], v[2:3]
        assert_eq!(e.bytes, [0xe6, 0x01, 0x8a, 0xbe, 0x0a, 0x04, 0x00, 0x50]);
        // v_add_nc_u64_e64 v[0:1], v[2:3], src_flat_scratch_base_hi
        let vop3 = [0x00, 0x00, 0x28, 0xd5, 0x02, 0xcf, 0x01, 0x00];
        let e = from_sgpr_pair(&vop3, 10).unwrap();
        assert_eq!(
            e.bytes,
            [0xe6, 0x01, 0x8a, 0xbe, 0x00, 0x00, 0x28, 0xd5, 0x02, 0x15, 0x00, 0x00]
        );
        assert!(reads_base(&vop3));
    }

    #[test]
    fn refusals() {
        let v = [0xe6, 0x04, 0x00, 0x50];
        assert!(matches!(from_sgpr_pair(&v, 11), Err(Reason::Scratch(_))));
        assert!(matches!(from_sgpr_pair(&v, 106), Err(Reason::Scratch(_))));
        // v_add_nc_u64_e64 v[0:1], s[10:11], src_flat_scratch_base_lo: reads the pair.
        let both = [0x00, 0x00, 0x28, 0xd5, 0x0a, 0xcc, 0x01, 0x00];
        assert!(matches!(from_sgpr_pair(&both, 10), Err(Reason::Scratch(_))));
        assert!(from_sgpr_pair(&both, 12).is_ok());
        // v_add_nc_u64_e32 v[0:1], s[2:3], v[2:3]: no base.
        assert!(matches!(
            from_sgpr_pair(&[0x02, 0x04, 0x00, 0x50], 10),
            Err(Reason::NotHandled(_))
        ));
        // s_mov_b64 s[0:1], src_flat_scratch_base_lo: scalar, not this emitter's.
        assert!(matches!(
            from_sgpr_pair(&[0xe6, 0x01, 0x80, 0xbe], 10),
            Err(Reason::NotHandled(_))
        ));
    }
}
