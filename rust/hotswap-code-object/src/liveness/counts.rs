//! Applying [`CountRaise`]s: a kernel descriptor's GRANULATED_WORKITEM_VGPR_COUNT
//! (`compute_pgm_rsrc1` bits 5:0, at byte 48 of the 64-byte descriptor) and the
//! metadata note's `.vgpr_count` / `.sgpr_count` of that kernel, in place.
//!
//! In place only: a count whose MessagePack encoding (positive fixint,
//! uint8, uint16, uint32) cannot hold the new value without growing the note
//! is refused ([`PatchError::NoteGrows`]); a rewrite that moves the note may
//! re-encode it instead.

use std::collections::HashMap;

use super::scratch::{CountRaise, RegClass};
use super::ObjectLiveness;
use crate::elf::Header;
use crate::metadata;

/// Why a raise could not be applied.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PatchError {
    /// The kernel's descriptor is not mapped in the object.
    NoDescriptor(String),
    /// The object has no readable metadata note.
    NoMetadata,
    /// The kernel has no entry with that count in the metadata.
    NoCount(String, &'static str),
    /// The new count does not fit the old encoding.
    NoteGrows(String, &'static str),
    /// The new VGPR count is above 1024.
    TooMany(String),
}

impl std::fmt::Display for PatchError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::NoDescriptor(k) => write!(f, "{k}: kernel descriptor not mapped"),
            Self::NoMetadata => write!(f, "no readable metadata note"),
            Self::NoCount(k, key) => write!(f, "{k}: no {key} in the metadata"),
            Self::NoteGrows(k, key) => write!(f, "{k}: the new {key} does not fit its encoding"),
            Self::TooMany(k) => write!(f, "{k}: more than 1024 VGPRs"),
        }
    }
}

impl std::error::Error for PatchError {}

/// Where one count's value is encoded: offset of its first byte in the
/// note descriptor, the encoding's byte length (1, 2, 3 or 5), the value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Slot {
    at: usize,
    len: usize,
    value: u64,
}

/// The `.vgpr_count` and `.sgpr_count` slots of each kernel (by `.name`).
/// A kernel's name and its `.vgpr_count` and `.sgpr_count` slots.
type KernelSlots = (String, Option<Slot>, Option<Slot>);

fn count_slots(desc: &[u8]) -> Option<Vec<KernelSlots>> {
    let mut rd = Reader { b: desc, at: 0 };
    let mut out = Vec::new();
    for _ in 0..rd.map()? {
        if rd.str()? == b"amdhsa.kernels" {
            for _ in 0..rd.array()? {
                let (mut name, mut v, mut s) = (None, None, None);
                for _ in 0..rd.map()? {
                    match rd.str()? {
                        b".name" => name = Some(String::from_utf8_lossy(rd.str()?).into_owned()),
                        b".vgpr_count" => v = Some(rd.uint()?),
                        b".sgpr_count" => s = Some(rd.uint()?),
                        _ => rd.skip(0)?,
                    }
                }
                out.push((name?, v, s));
            }
        } else {
            rd.skip(0)?;
        }
    }
    Some(out)
}

/// A bounded MessagePack reader that knows offsets.
struct Reader<'a> {
    b: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn byte(&mut self) -> Option<u8> {
        let v = *self.b.get(self.at)?;
        self.at += 1;
        Some(v)
    }
    fn be(&mut self, n: usize) -> Option<u64> {
        let s = self.b.get(self.at..self.at.checked_add(n)?)?;
        self.at += n;
        Some(s.iter().fold(0u64, |a, &x| a << 8 | u64::from(x)))
    }
    fn map(&mut self) -> Option<u64> {
        match self.byte()? {
            m @ 0x80..=0x8F => Some(u64::from(m & 0x0F)),
            0xDE => self.be(2),
            0xDF => self.be(4),
            _ => None,
        }
    }
    fn array(&mut self) -> Option<u64> {
        match self.byte()? {
            m @ 0x90..=0x9F => Some(u64::from(m & 0x0F)),
            0xDC => self.be(2),
            0xDD => self.be(4),
            _ => None,
        }
    }
    fn str(&mut self) -> Option<&'a [u8]> {
        let n = match self.byte()? {
            m @ 0xA0..=0xBF => u64::from(m & 0x1F),
            0xD9 => self.be(1)?,
            0xDA => self.be(2)?,
            0xDB => self.be(4)?,
            _ => return None,
        };
        let n = usize::try_from(n).ok()?;
        let s = self.b.get(self.at..self.at.checked_add(n)?)?;
        self.at += n;
        Some(s)
    }
    fn uint(&mut self) -> Option<Slot> {
        let at = self.at;
        let (value, len) = match self.byte()? {
            v @ 0x00..=0x7F => (u64::from(v), 1),
            0xCC => (self.be(1)?, 2),
            0xCD => (self.be(2)?, 3),
            0xCE => (self.be(4)?, 5),
            _ => return None,
        };
        Some(Slot { at, len, value })
    }
    /// Skips one value (nesting bounded).
    fn skip(&mut self, depth: u32) -> Option<()> {
        if depth > 32 {
            return None;
        }
        let t = *self.b.get(self.at)?;
        let fixed = |r: &mut Self, n: usize| {
            r.at = r.at.checked_add(n)?;
            (r.at <= r.b.len()).then_some(())
        };
        match t {
            0x00..=0x7F | 0xE0..=0xFF | 0xC0 | 0xC2 | 0xC3 => fixed(self, 1),
            0x80..=0x8F | 0xDE | 0xDF => {
                let n = self.map()?;
                for _ in 0..n {
                    self.skip(depth + 1)?;
                    self.skip(depth + 1)?;
                }
                Some(())
            }
            0x90..=0x9F | 0xDC | 0xDD => {
                let n = self.array()?;
                for _ in 0..n {
                    self.skip(depth + 1)?;
                }
                Some(())
            }
            0xA0..=0xBF | 0xD9..=0xDB => self.str().map(|_| ()),
            0xC4..=0xC6 => {
                self.at += 1;
                let n = self.be(1 << (t - 0xC4))?;
                fixed(self, usize::try_from(n).ok()?)
            }
            0xCC | 0xD0 => fixed(self, 2),
            0xCD | 0xD1 => fixed(self, 3),
            0xCA | 0xCE | 0xD2 => fixed(self, 5),
            0xCB | 0xCF | 0xD3 => fixed(self, 9),
            0xD4 => fixed(self, 3),
            0xD5 => fixed(self, 4),
            0xD6 => fixed(self, 6),
            0xD7 => fixed(self, 10),
            0xD8 => fixed(self, 18),
            0xC7..=0xC9 => {
                self.at += 1;
                let n = self.be(1 << (t - 0xC7))?;
                fixed(self, usize::try_from(n).ok()?.checked_add(1)?)
            }
            0xC1 => None,
        }
    }
}

/// Rewrites the slot to `value` in its own encoding width; false when it
/// does not fit.
fn write_slot(desc: &mut [u8], slot: Slot, value: u64) -> bool {
    match encode_slot(slot, value) {
        Some((bytes, len)) => {
            desc[slot.at..slot.at + len].copy_from_slice(&bytes[..len]);
            true
        }
        None => false,
    }
}

/// `value` in the MessagePack form of `slot`'s width (its bytes and their
/// number, `slot.len`), or `None` when it does not fit that width.
fn encode_slot(slot: Slot, value: u64) -> Option<([u8; 5], usize)> {
    let mut b = [0u8; 5];
    match slot.len {
        1 if value <= 0x7F => b[0] = value as u8,
        2 if value <= 0xFF => b[..2].copy_from_slice(&[0xCC, value as u8]),
        3 if value <= 0xFFFF => {
            b[0] = 0xCD;
            b[1..3].copy_from_slice(&(value as u16).to_be_bytes());
        }
        5 if value <= 0xFFFF_FFFF => {
            b[0] = 0xCE;
            b[1..5].copy_from_slice(&(value as u32).to_be_bytes());
        }
        _ => return None,
    }
    Some((b, slot.len))
}

/// Applies `raises` (from [`ObjectLiveness::scratch`] of `liveness`, the
/// analysis of `object`'s current bytes) to `object` in place: descriptor
/// fields and metadata counts. Nothing is written unless every raise fits.
pub fn apply(
    liveness: &ObjectLiveness<'_>,
    object: &mut [u8],
    raises: &[CountRaise],
) -> Result<(), PatchError> {
    let header = Header::parse(object).map_err(|_| PatchError::NoMetadata)?;
    let desc_range = {
        let desc = metadata::find_note(&header, object)
            .ok()
            .flatten()
            .ok_or(PatchError::NoMetadata)?;
        let start = desc.as_ptr() as usize - object.as_ptr() as usize;
        start..start + desc.len()
    };
    let slots = count_slots(&object[desc_range.clone()]).ok_or(PatchError::NoMetadata)?;
    // By kernel name, the first entry of a name as a scan would find it.
    let mut by_name: HashMap<&str, usize> = HashMap::with_capacity(slots.len());
    for (i, (n, _, _)) in slots.iter().enumerate() {
        by_name.entry(n.as_str()).or_insert(i);
    }
    // Plan every write first.
    let mut rsrc_writes = Vec::new();
    let mut note_writes = Vec::new();
    for r in raises {
        let kernel = liveness
            .kernels
            .get(r.kernel)
            .ok_or_else(|| PatchError::NoDescriptor(r.name.clone()))?;
        let key = match r.class {
            RegClass::Vgpr => ".vgpr_count",
            RegClass::Sgpr => ".sgpr_count",
        };
        let entry = by_name
            .get(kernel.name.as_str())
            .map(|&i| &slots[i])
            .ok_or_else(|| PatchError::NoCount(kernel.name.clone(), key))?;
        let slot = match r.class {
            RegClass::Vgpr => entry.1,
            RegClass::Sgpr => entry.2,
        }
        .ok_or_else(|| PatchError::NoCount(kernel.name.clone(), key))?;
        if r.class == RegClass::Vgpr {
            if r.new_count > 1024 {
                return Err(PatchError::TooMany(kernel.name.clone()));
            }
            let off = kernel
                .descriptor_offset
                .and_then(|o| usize::try_from(o).ok())
                .filter(|o| o.checked_add(64).is_some_and(|end| end <= object.len()))
                .ok_or_else(|| PatchError::NoDescriptor(kernel.name.clone()))?;
            let granulated = u32::from((r.new_count.div_ceil(super::VGPR_GRANULE)).max(1) - 1);
            rsrc_writes.push((off + 48, granulated));
        }
        // The metadata count never shrinks; SGPR counts keep the extra
        // (VCC, ...) registers the producer added above the numbered ones.
        let new = match r.class {
            RegClass::Vgpr => slot.value.max(u64::from(r.new_count)),
            RegClass::Sgpr => {
                let extra = slot.value.saturating_sub(u64::from(r.old_count));
                slot.value.max(u64::from(r.new_count) + extra)
            }
        };
        if encode_slot(slot, new).is_none() {
            return Err(PatchError::NoteGrows(kernel.name.clone(), key));
        }
        note_writes.push((slot, new));
    }
    for (at, granulated) in rsrc_writes {
        let old = u32::from_le_bytes(object[at..at + 4].try_into().expect("4 bytes"));
        let new = (old & !0x3F) | granulated.max(old & 0x3F);
        object[at..at + 4].copy_from_slice(&new.to_le_bytes());
    }
    for (slot, value) in note_writes {
        let desc = &mut object[desc_range.clone()];
        write_slot(desc, slot, value);
    }
    Ok(())
}

/// The `.vgpr_count` / `.sgpr_count` of kernel `name` in `object`'s metadata.
pub fn metadata_counts(object: &[u8], name: &str) -> Option<(Option<u64>, Option<u64>)> {
    let header = Header::parse(object).ok()?;
    let desc = metadata::find_note(&header, object).ok()??;
    count_slots(desc)?
        .into_iter()
        .find(|(n, _, _)| n == name)
        .map(|(_, v, s)| (v.map(|s| s.value), s.map(|s| s.value)))
}
