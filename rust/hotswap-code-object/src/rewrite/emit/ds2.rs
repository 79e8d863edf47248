//! The DS two-address split, the first emitter behind the seam
//! ([`super::Emitter`]): one `ds_*_2addr*` instruction → two single-address
//! DS operations and `s_wait_dscnt 0`, as A0 needs them.
//!
//! A0's DS unit requires a two-address operation's address to be aligned to
//! the payload (B0's does not; a misaligned DS2 silently corrupts LDS), so
//! each of the 12 two-address mnemonics becomes two single-address operations
//! of the element size (`ds_load_b32/b64`, `ds_store_b32/b64`,
//! `ds_storexchg_rtn_b32/b64`) whose byte offsets are the 8-bit offsets
//! scaled by the element size (and by 64 for `_stride64`), followed by
//! `s_wait_dscnt 0` (a relaxed wait produced NaNs in COMGR's rewriter).
//!
//! The rules (from COMGR's trampoline patch):
//! - a load whose address VGPR is in the first destination half issues the
//!   second half first (the first would overwrite the address);
//! - an exchange issues in the order in which no operation overwrites a
//!   register the other still reads; when neither order works (a cyclic
//!   overlap), or the order would need to change while both operations hit
//!   the same address, the site is refused;
//! - a scaled offset over 0xFFFF (the single-address offset field) is refused;
//! - VGPRs above v255: an 8-bit register field is completed by the 2-bit MSB
//!   of its operand slot in the `s_set_vgpr_msb` mode in force. For DS the
//!   slots are addr → src0 (bits 1:0), data0 → src1 (3:2), data1 → src2 (5:4),
//!   vdst → dst (7:6) (LLVM's `getVGPRLoweringOperandTables`, the table its
//!   `AMDGPULowerVGPREncoding` pass and disassembler use). When an emitted
//!   operation needs other MSBs than the mode in force (e.g. `data1` moves to
//!   the `data0` slot, or a tuple half crosses into the next bank), it is
//!   bracketed by `s_set_vgpr_msb` (high byte: the previous mode, as LLVM
//!   writes it) and the original mode is restored before the wait. An unknown
//!   mode is refused by the caller ([`crate::rewrite::vgpr_mode`]).
//!
//! The split needs no register beyond the instruction's own: the kernel
//! descriptor and the metadata register counts stay valid.

use super::{Emitted, Refusal, Site};
use crate::gfx1250::fields::{Ds, Fields};

/// The fix's name in the report.
pub const FIX: &str = "ds2-split";
/// The fix's name when the two operations were issued in swapped order.
pub const FIX_SWAPPED: &str = "ds2-split-swapped";

/// The emitter of the `ds_2addr` class ([`super::Emitter`]): [`split_fields`]
/// under the site's VGPR-MSB mode. It needs no scratch register.
pub fn emit(site: &mut Site<'_>) -> Result<Emitted, Refusal> {
    let Fields::Ds(ds) = site.fields else {
        return Err(Refusal::new(SplitError::NotDs2.to_string()));
    };
    let (bytes, swapped) =
        split_fields(&ds, site.vgpr_msb).map_err(|e| Refusal::new(e.to_string()))?;
    Ok(Emitted {
        bytes,
        fix: if swapped { FIX_SWAPPED } else { FIX },
        note: None,
    })
}

/// `s_wait_dscnt 0`.
pub const S_WAIT_DSCNT_0: [u8; 4] = [0x00, 0x00, 0xc6, 0xbf];

/// The DS encoding (w0[31:26]).
const DS_ENCODING: u32 = 0x36;

/// What a two-address opcode does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Load,
    Store,
    Exchange,
}

/// One of the 12 two-address opcodes: (kind, element bytes, stride64,
/// single-address opcode).
fn classify(op: u32) -> Option<(Kind, u32, bool, u32)> {
    Some(match op {
        0x37 => (Kind::Load, 4, false, 0x36),
        0x38 => (Kind::Load, 4, true, 0x36),
        0x77 => (Kind::Load, 8, false, 0x76),
        0x78 => (Kind::Load, 8, true, 0x76),
        0x0e => (Kind::Store, 4, false, 0x0d),
        0x0f => (Kind::Store, 4, true, 0x0d),
        0x4e => (Kind::Store, 8, false, 0x4d),
        0x4f => (Kind::Store, 8, true, 0x4d),
        0x2e => (Kind::Exchange, 4, false, 0x2d),
        0x2f => (Kind::Exchange, 4, true, 0x2d),
        0x6e => (Kind::Exchange, 8, false, 0x6d),
        0x6f => (Kind::Exchange, 8, true, 0x6d),
        _ => return None,
    })
}

/// Whether 8 bytes are one of the 12 DS two-address instructions.
pub fn is_ds2(bytes: &[u8]) -> bool {
    Ds::decode(bytes).is_some_and(|ds| classify(u32::from(ds.op)).is_some())
}

/// Why a DS two-address site cannot be split.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SplitError {
    /// Not one of the 12 two-address instructions (or bits this split does
    /// not know are set: `w0[17:16]`).
    NotDs2,
    /// A scaled byte offset does not fit the 16-bit single-address offset.
    OffsetTooLarge(u32),
    /// An exchange whose destination overlaps the other operation's sources
    /// in both orders.
    CyclicExchange,
    /// An exchange that would need its halves reordered while both address
    /// one location (offset0 = offset1): swapped, each half would return the
    /// other's value, so no split computes what B0 does.
    ExchangeReorderOneAddress,
}

impl std::fmt::Display for SplitError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::NotDs2 => write!(f, "not a DS two-address instruction this split knows"),
            Self::OffsetTooLarge(o) => {
                write!(f, "scaled offset {o:#x} exceeds the 16-bit DS offset")
            }
            Self::CyclicExchange => write!(
                f,
                "exchange destination overlaps the other half's sources in both orders"
            ),
            Self::ExchangeReorderOneAddress => write!(
                f,
                "exchange needs its halves reordered on one address (offset0 = offset1)"
            ),
        }
    }
}

/// A half-open VGPR range `[start, start + n)` (full 10-bit numbers).
fn overlaps(a: u32, an: u32, b: u32, bn: u32) -> bool {
    a < b + bn && b < a + an
}

/// One emitted single-address operation: full VGPR numbers.
#[derive(Clone, Copy)]
struct Single {
    offset: u32,
    addr: u32,
    data: u32,
    vdst: u32,
}

/// The split of one DS two-address instruction `bytes` (8 bytes) under the
/// VGPR-MSB `mode` in force at the site: the replacement bytes (the two
/// operations, any `s_set_vgpr_msb` brackets, `s_wait_dscnt 0`), and whether
/// the order was swapped.
pub fn split(bytes: &[u8], mode: u8) -> Result<(Vec<u8>, bool), SplitError> {
    let ds = Ds::decode(bytes).ok_or(SplitError::NotDs2)?;
    split_fields(&ds, mode)
}

/// [`split`] of an instruction already decoded.
pub fn split_fields(ds: &Ds, mode: u8) -> Result<(Vec<u8>, bool), SplitError> {
    if ds.reserved != 0 {
        return Err(SplitError::NotDs2);
    }
    let (kind, elem, stride64, single_op) = classify(u32::from(ds.op)).ok_or(SplitError::NotDs2)?;
    let msb = |slot: u32| u32::from(mode >> (2 * slot)) & 3;
    let addr = u32::from(ds.addr) | msb(0) << 8;
    let data0 = u32::from(ds.data0) | msb(1) << 8;
    let data1 = u32::from(ds.data1) | msb(2) << 8;
    let vdst = u32::from(ds.vdst) | msb(3) << 8;
    let n = elem / 4; // dwords per element
    let scale = elem * if stride64 { 64 } else { 1 };
    let offsets = [u32::from(ds.offset0) * scale, u32::from(ds.offset1) * scale];
    if let Some(&o) = offsets.iter().find(|&&o| o > 0xffff) {
        return Err(SplitError::OffsetTooLarge(o));
    }
    let half = |k: u32| vdst + k * n;
    let ops = [
        Single {
            offset: offsets[0],
            addr,
            data: data0,
            vdst: half(0),
        },
        Single {
            offset: offsets[1],
            addr,
            data: data1,
            vdst: half(1),
        },
    ];
    let swapped = match kind {
        Kind::Store => false,
        Kind::Load => overlaps(addr, 1, half(0), n),
        Kind::Exchange => {
            let natural_ok = !overlaps(half(0), n, addr, 1) && !overlaps(half(0), n, data1, n);
            let swapped_ok = !overlaps(half(1), n, addr, 1) && !overlaps(half(1), n, data0, n);
            match (natural_ok, swapped_ok) {
                (true, _) => false,
                (false, true) if offsets[0] != offsets[1] => true,
                (false, true) => return Err(SplitError::ExchangeReorderOneAddress),
                (false, false) => return Err(SplitError::CyclicExchange),
            }
        }
    };
    let order = if swapped { [ops[1], ops[0]] } else { ops };

    let mut out = Vec::with_capacity(36);
    let mut current = mode;
    for op in order {
        // The slots this operation uses, and the mode it needs.
        let mut needed = current;
        let mut set = |slot: u32, reg: u32| {
            needed = (needed & !(3 << (2 * slot))) | (((reg >> 8) as u8) << (2 * slot));
        };
        set(0, op.addr);
        match kind {
            Kind::Load => set(3, op.vdst),
            Kind::Store => set(1, op.data),
            Kind::Exchange => {
                set(1, op.data);
                set(3, op.vdst);
            }
        }
        if needed != current {
            out.extend_from_slice(&set_vgpr_msb(needed, current));
            current = needed;
        }
        let w0 = op.offset | single_op << 18 | DS_ENCODING << 26;
        let (data, dst) = match kind {
            Kind::Load => (0, op.vdst & 0xff),
            Kind::Store => (op.data & 0xff, 0),
            Kind::Exchange => (op.data & 0xff, op.vdst & 0xff),
        };
        let w1 = (op.addr & 0xff) | data << 8 | dst << 24;
        out.extend_from_slice(&w0.to_le_bytes());
        out.extend_from_slice(&w1.to_le_bytes());
    }
    if current != mode {
        out.extend_from_slice(&set_vgpr_msb(mode, current));
    }
    out.extend_from_slice(&S_WAIT_DSCNT_0);
    Ok((out, swapped))
}

/// `s_set_vgpr_msb` to `mode`, recording `previous` in the high byte as LLVM
/// does (the hardware reads only the low byte).
pub fn set_vgpr_msb(mode: u8, previous: u8) -> [u8; 4] {
    [mode, previous, 0x86, 0xbf]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(bytes: &[u8]) -> Vec<u8> {
        bytes.to_vec()
    }

    // Expected bytes: llvm-mc-22 -triple=amdgcn-amd-amdhsa -mcpu=gfx1250 -show-encoding.
    #[test]
    fn load_b32_splits_into_two_loads_and_a_wait() {
        // ds_load_2addr_b32 v[0:1], v2 offset0:1 offset1:2
        let (out, swapped) = split(&[0x01, 0x02, 0xdc, 0xd8, 0x02, 0x00, 0x00, 0x00], 0).unwrap();
        assert!(!swapped);
        // ds_load_b32 v0, v2 offset:4 ; ds_load_b32 v1, v2 offset:8 ; s_wait_dscnt 0x0
        assert_eq!(
            out,
            hex(&[
                0x04, 0x00, 0xd8, 0xd8, 0x02, 0x00, 0x00, 0x00, //
                0x08, 0x00, 0xd8, 0xd8, 0x02, 0x00, 0x00, 0x01, //
                0x00, 0x00, 0xc6, 0xbf
            ])
        );
    }

    #[test]
    fn stride64_b64_load_scales_by_512() {
        // ds_load_2addr_stride64_b64 v[0:3], v4 offset0:1 offset1:2
        let (out, _) = split(&[0x01, 0x02, 0xe0, 0xd9, 0x04, 0x00, 0x00, 0x00], 0).unwrap();
        // ds_load_b64 v[0:1], v4 offset:512 ; ds_load_b64 v[2:3], v4 offset:1024
        assert_eq!(
            &out[..16],
            &[
                0x00, 0x02, 0xd8, 0xd9, 0x04, 0x00, 0x00, 0x00, //
                0x00, 0x04, 0xd8, 0xd9, 0x04, 0x00, 0x00, 0x02
            ]
        );
    }

    #[test]
    fn load_swaps_when_the_address_is_the_first_destination() {
        // ds_load_2addr_b32 v[2:3], v2 offset0:0 offset1:1
        let (out, swapped) = split(&[0x00, 0x01, 0xdc, 0xd8, 0x02, 0x00, 0x00, 0x02], 0).unwrap();
        assert!(swapped);
        // ds_load_b32 v3, v2 offset:4 ; ds_load_b32 v2, v2
        assert_eq!(
            &out[..16],
            &[
                0x04, 0x00, 0xd8, 0xd8, 0x02, 0x00, 0x00, 0x03, //
                0x00, 0x00, 0xd8, 0xd8, 0x02, 0x00, 0x00, 0x02
            ]
        );
        // The address in the second half: natural order.
        // ds_load_2addr_b32 v[1:2], v2
        let (_, swapped) = split(&[0x00, 0x01, 0xdc, 0xd8, 0x02, 0x00, 0x00, 0x01], 0).unwrap();
        assert!(!swapped);
    }

    #[test]
    fn store_b64_stride64() {
        // ds_store_2addr_stride64_b64 v2, v[4:5], v[6:7] offset0:1 offset1:2
        let (out, _) = split(&[0x01, 0x02, 0x3c, 0xd9, 0x02, 0x04, 0x06, 0x00], 0).unwrap();
        // ds_store_b64 v2, v[4:5] offset:512 ; ds_store_b64 v2, v[6:7] offset:1024
        assert_eq!(
            &out[..16],
            &[
                0x00, 0x02, 0x34, 0xd9, 0x02, 0x04, 0x00, 0x00, //
                0x00, 0x04, 0x34, 0xd9, 0x02, 0x06, 0x00, 0x00
            ]
        );
    }

    #[test]
    fn exchange_b32() {
        // ds_storexchg_2addr_rtn_b32 v[0:1], v2, v3, v4 offset0:1 offset1:2
        let (out, swapped) = split(&[0x01, 0x02, 0xb8, 0xd8, 0x02, 0x03, 0x04, 0x00], 0).unwrap();
        assert!(!swapped);
        // ds_storexchg_rtn_b32 v0, v2, v3 offset:4 ; ds_storexchg_rtn_b32 v1, v2, v4 offset:8
        assert_eq!(
            &out[..16],
            &[
                0x04, 0x00, 0xb4, 0xd8, 0x02, 0x03, 0x00, 0x00, //
                0x08, 0x00, 0xb4, 0xd8, 0x02, 0x04, 0x00, 0x01
            ]
        );
    }

    #[test]
    fn exchange_overlaps() {
        // vdst v[4:5], addr v2, data0 v3, data1 v4: half 0 (v4) is data1 → swap
        // (half 1, v5, is neither addr nor data0).
        let (_, swapped) = split(&[0x01, 0x02, 0xb8, 0xd8, 0x02, 0x03, 0x04, 0x04], 0).unwrap();
        assert!(swapped);
        // vdst v[3:4], data0 v4, data1 v3: each half is the other's data → cyclic.
        assert_eq!(
            split(&[0x01, 0x02, 0xb8, 0xd8, 0x02, 0x04, 0x03, 0x03], 0),
            Err(SplitError::CyclicExchange)
        );
        // A swap needed on one address: refused, for that reason.
        assert_eq!(
            split(&[0x01, 0x01, 0xb8, 0xd8, 0x02, 0x03, 0x04, 0x04], 0),
            Err(SplitError::ExchangeReorderOneAddress)
        );
    }

    #[test]
    fn offsets_over_16_bits_refuse() {
        // ds_load_2addr_stride64_b64 offset1:255 → 255 * 512.
        assert_eq!(
            split(&[0x00, 0xff, 0xe0, 0xd9, 0x04, 0x00, 0x00, 0x00], 0),
            Err(SplitError::OffsetTooLarge(255 * 512))
        );
        // ds_load_2addr_stride64_b32 offset1:255 → 255 * 256 = 0xff00: fits.
        assert!(split(&[0x00, 0xff, 0xe0, 0xd8, 0x04, 0x00, 0x00, 0x00], 0).is_ok());
    }

    #[test]
    fn high_vgprs_bracket_the_mode() {
        // Mode: data1 (src2) in bank 1, others bank 0: the second store puts
        // data1 in the data0 slot (src1), so it is bracketed.
        // ds_store_2addr_b32 v2, v3, v260 (field 4)
        let (out, _) = split(&[0x01, 0x02, 0x38, 0xd8, 0x02, 0x03, 0x04, 0x00], 0x10).unwrap();
        assert_eq!(
            out,
            hex(&[
                0x04, 0x00, 0x34, 0xd8, 0x02, 0x03, 0x00,
                0x00, // ds_store_b32 v2, v3 offset:4
                0x14, 0x10, 0x86, 0xbf, // s_set_vgpr_msb 0x1014
                0x08, 0x00, 0x34, 0xd8, 0x02, 0x04, 0x00,
                0x00, // ds_store_b32 v2, v260 offset:8
                0x10, 0x14, 0x86, 0xbf, // s_set_vgpr_msb 0x1410
                0x00, 0x00, 0xc6, 0xbf
            ])
        );
        // A destination tuple crossing v255/v256: ds_load_2addr_b32 v[255:256], v2.
        let (out, _) = split(&[0x00, 0x01, 0xdc, 0xd8, 0x02, 0x00, 0x00, 0xff], 0).unwrap();
        assert_eq!(
            out,
            hex(&[
                0x00, 0x00, 0xd8, 0xd8, 0x02, 0x00, 0x00, 0xff, // ds_load_b32 v255, v2
                0x40, 0x00, 0x86, 0xbf, // s_set_vgpr_msb 0x40
                0x04, 0x00, 0xd8, 0xd8, 0x02, 0x00, 0x00,
                0x00, // ds_load_b32 v256, v2 offset:4
                0x00, 0x40, 0x86, 0xbf, // s_set_vgpr_msb 0x4000
                0x00, 0x00, 0xc6, 0xbf
            ])
        );
    }

    #[test]
    fn not_ds2_is_refused() {
        // ds_load_b32 v0, v2 offset:4
        assert!(!is_ds2(&[0x04, 0x00, 0xd8, 0xd8, 0x02, 0x00, 0x00, 0x00]));
        assert_eq!(
            split(&[0x04, 0x00, 0xd8, 0xd8, 0x02, 0x00, 0x00, 0x00], 0),
            Err(SplitError::NotDs2)
        );
        assert!(is_ds2(&[0x01, 0x02, 0xdc, 0xd8, 0x02, 0x00, 0x00, 0x00]));
    }
}
