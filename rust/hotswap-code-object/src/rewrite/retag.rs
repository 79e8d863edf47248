//! The `.gfx1250_revision` retag of the metadata note: every string value of a
//! `.gfx1250_revision` key, in any map at any depth of the MessagePack document,
//! becomes `A0` (what COMGR's rewriter did), written back only when the
//! re-encoded document keeps its size (COMGR's rule too: the note descriptor,
//! and so the ELF layout, never changes size).
//!
//! The document is walked with bounded reads: every length comes from a decoded
//! prefix and is checked against the bytes that remain, nesting is bounded, and
//! each element consumes at least one byte, so the work is bounded by the
//! document's size whatever its declared counts say.

use std::ops::Range;

/// The key whose string values are retagged.
pub const REVISION_KEY: &[u8] = b".gfx1250_revision";
/// The A0 value, as MessagePack (fixstr of 2).
const A0_ENCODED: [u8; 3] = [0xa2, b'A', b'0'];
/// Nesting deeper than this is malformed (real metadata nests 3 to 4 levels).
const MAX_DEPTH: u32 = 32;

/// Why the document could not be walked.
pub type Malformed = &'static str;

/// A decoded element header.
enum Item<'a> {
    /// A string (its bytes).
    Str(&'a [u8]),
    /// An array of this many elements (not yet read).
    Array(u64),
    /// A map of this many pairs (not yet read).
    Map(u64),
    /// Any other value (already consumed).
    Scalar,
}

struct Cursor<'a> {
    doc: &'a [u8],
    at: usize,
}

impl<'a> Cursor<'a> {
    fn take(&mut self, n: u64) -> Result<&'a [u8], Malformed> {
        let n = usize::try_from(n).map_err(|_| "truncated")?;
        let end = self.at.checked_add(n).ok_or("truncated")?;
        let bytes = self.doc.get(self.at..end).ok_or("truncated")?;
        self.at = end;
        Ok(bytes)
    }

    /// A big-endian unsigned integer of `n` bytes (1, 2 or 4).
    fn be(&mut self, n: u64) -> Result<u64, Malformed> {
        Ok(self
            .take(n)?
            .iter()
            .fold(0u64, |v, &b| (v << 8) | u64::from(b)))
    }

    /// Reads one element header, consuming scalars and string bytes whole.
    fn item(&mut self) -> Result<Item<'a>, Malformed> {
        let marker = self.take(1)?[0];
        let skip = |c: &mut Self, n: u64| c.take(n).map(|_| Item::Scalar);
        match marker {
            0x00..=0x7f | 0xe0..=0xff | 0xc0 | 0xc2 | 0xc3 => Ok(Item::Scalar),
            0x80..=0x8f => Ok(Item::Map(u64::from(marker & 0x0f))),
            0x90..=0x9f => Ok(Item::Array(u64::from(marker & 0x0f))),
            0xa0..=0xbf => Ok(Item::Str(self.take(u64::from(marker & 0x1f))?)),
            0xc1 => Err("reserved marker 0xc1"),
            0xc4 | 0xc7 => {
                let n = self.be(1)? + u64::from(marker == 0xc7);
                skip(self, n)
            }
            0xc5 | 0xc8 => {
                let n = self.be(2)? + u64::from(marker == 0xc8);
                skip(self, n)
            }
            0xc6 | 0xc9 => {
                let n = self.be(4)? + u64::from(marker == 0xc9);
                skip(self, n)
            }
            0xca | 0xce | 0xd2 => skip(self, 4),
            0xcb | 0xcf | 0xd3 => skip(self, 8),
            0xcc | 0xd0 => skip(self, 1),
            0xcd | 0xd1 => skip(self, 2),
            0xd4 => skip(self, 2),
            0xd5 => skip(self, 3),
            0xd6 => skip(self, 5),
            0xd7 => skip(self, 9),
            0xd8 => skip(self, 17),
            0xd9 => {
                let n = self.be(1)?;
                Ok(Item::Str(self.take(n)?))
            }
            0xda => {
                let n = self.be(2)?;
                Ok(Item::Str(self.take(n)?))
            }
            0xdb => {
                let n = self.be(4)?;
                Ok(Item::Str(self.take(n)?))
            }
            0xdc => Ok(Item::Array(self.be(2)?)),
            0xdd => Ok(Item::Array(self.be(4)?)),
            0xde => Ok(Item::Map(self.be(2)?)),
            0xdf => Ok(Item::Map(self.be(4)?)),
        }
    }

    /// Walks the children of `item` (nothing for scalars and strings),
    /// recording revision values in `out`.
    fn children(
        &mut self,
        item: Item<'a>,
        depth: u32,
        out: &mut Vec<Range<usize>>,
    ) -> Result<(), Malformed> {
        if depth > MAX_DEPTH {
            return Err("nested too deeply");
        }
        match item {
            Item::Str(_) | Item::Scalar => Ok(()),
            Item::Array(n) => {
                for _ in 0..n {
                    let child = self.item()?;
                    self.children(child, depth + 1, out)?;
                }
                Ok(())
            }
            Item::Map(n) => {
                for _ in 0..n {
                    let key = self.item()?;
                    let is_revision = matches!(key, Item::Str(k) if k == REVISION_KEY);
                    self.children(key, depth + 1, out)?;
                    let value_at = self.at;
                    let value = self.item()?;
                    if is_revision && matches!(value, Item::Str(_)) {
                        out.push(value_at..self.at);
                    }
                    self.children(value, depth + 1, out)?;
                }
                Ok(())
            }
        }
    }
}

/// The encoded ranges (marker included) of every string value of a
/// `.gfx1250_revision` key in the document `doc`, in document order. Reads the
/// first top-level value only.
pub fn revision_values(doc: &[u8]) -> Result<Vec<Range<usize>>, Malformed> {
    let mut cursor = Cursor { doc, at: 0 };
    let mut out = Vec::new();
    let top = cursor.item()?;
    cursor.children(top, 0, &mut out)?;
    Ok(out)
}

/// The result of retagging one document.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Retagged {
    /// No `.gfx1250_revision` string in the document.
    None,
    /// Every one (this many) already says `A0`.
    AlreadyA0(usize),
    /// The document with every revision `A0`, the same size as the input;
    /// `changed` values differed.
    Same { document: Vec<u8>, changed: usize },
    /// The re-encoded document would change size (`new_len`): not written.
    SizeChanged { changed: usize, new_len: usize },
}

/// Retags `doc` (see the module documentation).
pub fn retag(doc: &[u8]) -> Result<Retagged, Malformed> {
    let values = revision_values(doc)?;
    if values.is_empty() {
        return Ok(Retagged::None);
    }
    let changed = values
        .iter()
        .filter(|r| doc[r.start..r.end] != A0_ENCODED)
        .count();
    if changed == 0 {
        return Ok(Retagged::AlreadyA0(values.len()));
    }
    let mut document = Vec::with_capacity(doc.len());
    let mut at = 0;
    for r in &values {
        document.extend_from_slice(&doc[at..r.start]);
        document.extend_from_slice(&A0_ENCODED);
        at = r.end;
    }
    document.extend_from_slice(&doc[at..]);
    if document.len() != doc.len() {
        return Ok(Retagged::SizeChanged {
            changed,
            new_len: document.len(),
        });
    }
    Ok(Retagged::Same { document, changed })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixstr(s: &str) -> Vec<u8> {
        let mut v = vec![0xa0 | s.len() as u8];
        v.extend_from_slice(s.as_bytes());
        v
    }

    /// `{amdhsa.kernels: [{.name: k0, .gfx1250_revision: r0}, ...]}`.
    fn document(revisions: &[&[u8]]) -> Vec<u8> {
        let mut d = vec![0x81];
        d.extend(fixstr("amdhsa.kernels"));
        d.push(0x90 | revisions.len() as u8);
        for (i, r) in revisions.iter().enumerate() {
            d.push(0x82);
            d.extend(fixstr(".name"));
            d.extend(fixstr(&format!("k{i}")));
            d.extend(fixstr(".gfx1250_revision"));
            d.extend_from_slice(r);
        }
        d
    }

    #[test]
    fn b0_becomes_a0_in_place() {
        let b0 = fixstr("B0");
        let doc = document(&[&b0, &b0]);
        let Retagged::Same { document, changed } = retag(&doc).unwrap() else {
            panic!("expected a same-size retag");
        };
        assert_eq!(changed, 2);
        assert_eq!(document, self::document(&[&fixstr("A0"), &fixstr("A0")]));
        // Idempotent.
        assert_eq!(retag(&document).unwrap(), Retagged::AlreadyA0(2));
    }

    #[test]
    fn a_size_change_is_reported_not_written() {
        let doc = document(&[&fixstr("B0-rev2")]);
        assert_eq!(
            retag(&doc).unwrap(),
            Retagged::SizeChanged {
                changed: 1,
                new_len: doc.len() - 5
            }
        );
        // A non-minimal str8 "B0" re-encodes as a fixstr: one byte shorter.
        let doc = document(&[&[0xd9, 2, b'B', b'0']]);
        assert!(matches!(retag(&doc).unwrap(), Retagged::SizeChanged { .. }));
    }

    #[test]
    fn non_string_values_and_other_keys_are_left_alone() {
        let doc = document(&[&[0x01]]);
        assert_eq!(retag(&doc).unwrap(), Retagged::None);
        let mut d = vec![0x81];
        d.extend(fixstr(".gfx1250_revisions"));
        d.extend(fixstr("B0"));
        assert_eq!(retag(&d).unwrap(), Retagged::None);
    }

    #[test]
    fn top_level_and_nested_keys_are_found() {
        let mut d = vec![0x82];
        d.extend(fixstr(".gfx1250_revision"));
        d.extend(fixstr("B0"));
        d.extend(fixstr("x"));
        d.extend([0x91, 0x91, 0x81]);
        d.extend(fixstr(".gfx1250_revision"));
        d.extend(fixstr("B1"));
        assert_eq!(revision_values(&d).unwrap().len(), 2);
    }

    #[test]
    fn malformed_documents_are_errors() {
        let doc = document(&[&fixstr("B0")]);
        for len in 0..doc.len() {
            assert!(retag(&doc[..len]).is_err(), "prefix of {len} bytes");
        }
        assert!(retag(&[0xdf, 0xff, 0xff, 0xff, 0xff]).is_err());
        assert!(retag(&[0xc1]).is_err());
        let mut deep = vec![0x91; 100];
        deep.push(0xc0);
        assert_eq!(retag(&deep), Err("nested too deeply"));
    }
}
