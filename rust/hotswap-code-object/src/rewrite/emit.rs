//! The emitter seam: how a site that needs code growth becomes the
//! straight-line code that replaces it.
//!
//! One [`Emitter`] per class that growth fixes, listed in [`emitter`]. The
//! growth pipeline ([`super::placement`]) calls it for every site of its class
//! in a function it moves, with a [`Site`]: the instruction's original bytes,
//! its decoded fields ([`Fields`]), the VGPR-MSB mode in force there (the
//! emitter completes 8-bit VGPR fields with it; the pipeline refuses a site
//! whose mode it cannot tell) and a [`Scratch`] provider. The emitter
//! returns the replacement ([`Emitted`]) or a [`Refusal`] with its reason; a
//! refusal refuses the object, reported as `<site>: <reason>`.
//!
//! What the replacement must be, checked by the pipeline on every site
//! (a violation refuses the object as an emitter defect):
//! - whole gfx1250 instructions, at least one, as the walker sizes them;
//! - straight-line: no branch, no `s_endpgm`, no instruction that reads or
//!   writes the PC (`s_*_pc_i64`, `s_rfe_i64`): the layout moves code by the
//!   replacement's length and re-targets nothing inside it;
//! - the VGPR-MSB mode after it is the mode before it (bracket any
//!   `s_set_vgpr_msb` it needs, as [`ds2`] does).
//!
//! What it must do on its own: compute what the original computes on B0,
//! exactly, for every register state, or refuse; take no register beyond the
//! instruction's own unless [`Site::scratch`] granted it.
//!
//! Adding a class: its row in `gfx1250/classes.rs` (`CLASSES`, with
//! `Fix::Growth` and the rule's name), an emitter module under
//! `rewrite/emit/` with its tests, and one arm in [`emitter`]. See
//! CONTRIBUTING.md ("How to add a class").

pub mod ds2;

use super::SiteInfo;
use crate::gfx1250::fields::Fields;
use crate::gfx1250::A0Class;

/// Why an emitter cannot replace a site (the object is refused).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refusal {
    /// The reason, naming what is not understood or not possible.
    pub reason: String,
}

impl Refusal {
    /// A refusal for `reason`.
    pub fn new(reason: impl Into<String>) -> Self {
        Refusal {
            reason: reason.into(),
        }
    }
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.reason)
    }
}

/// A register class an emitter can ask scratch registers of.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RegClass {
    /// Scalar registers.
    Sgpr,
    /// Vector registers (full 10-bit numbers, above v255 through the
    /// VGPR-MSB mode).
    Vgpr,
}

impl RegClass {
    /// Its name in messages.
    pub fn as_str(self) -> &'static str {
        match self {
            RegClass::Sgpr => "SGPR",
            RegClass::Vgpr => "VGPR",
        }
    }
}

/// Where an emitter gets registers the original code does not free.
pub trait Scratch {
    /// `count` consecutive registers of `class`, the first a multiple of
    /// `align`, that the replacement may overwrite at the site (dead there
    /// on every path, or saved and restored around it by the provider):
    /// the first one's number; or a refusal naming the site and the class.
    fn take(&mut self, class: RegClass, count: u16, align: u16) -> Result<u16, Refusal>;
}

/// The provider until the liveness analysis exists: it refuses every
/// request, naming the site and the class.
#[derive(Clone, Copy, Debug)]
pub struct NoScratch<'a> {
    /// The site asking.
    pub site: &'a SiteInfo,
}

impl Scratch for NoScratch<'_> {
    fn take(&mut self, class: RegClass, count: u16, _align: u16) -> Result<u16, Refusal> {
        Err(Refusal::new(format!(
            "{count} scratch {} register(s) needed at {}: the rewriter takes no scratch \
             registers yet",
            class.as_str(),
            self.site
        )))
    }
}

/// What an emitter gets for one site.
pub struct Site<'a> {
    /// The site: function, address, class, mnemonic.
    pub info: &'a SiteInfo,
    /// The instruction's bytes in the input (exactly its length).
    pub original: &'a [u8],
    /// Its fields, decoded once ([`crate::gfx1250::fields`]).
    pub fields: Fields,
    /// The `s_set_vgpr_msb` mode in force before it (bits 1:0 src0, 3:2
    /// src1, 5:4 src2, 7:6 dst: the high bits of each 8-bit VGPR field).
    pub vgpr_msb: u8,
    /// Where to ask for registers the original does not free.
    pub scratch: &'a mut dyn Scratch,
}

impl std::fmt::Debug for Site<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Site")
            .field("info", self.info)
            .field("original", &self.original)
            .field("fields", &self.fields)
            .field("vgpr_msb", &self.vgpr_msb)
            .finish_non_exhaustive()
    }
}

/// An emitter's replacement of one site.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Emitted {
    /// The straight-line code that replaces the instruction (any length).
    pub bytes: Vec<u8>,
    /// The fix's name in the report (`ds2-split`, ...).
    pub fix: &'static str,
}

/// Replaces one site.
pub type Emitter = fn(&mut Site<'_>) -> Result<Emitted, Refusal>;

/// The emitter of the sites of `class` that need growth, if growth fixes
/// the class; sites of other classes remain (the object is refused unless
/// partial output is allowed).
pub fn emitter(class: A0Class) -> Option<Emitter> {
    match class {
        A0Class::Ds2addr => Some(ds2::emit),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;

    #[test]
    fn only_the_ds2_class_has_an_emitter_and_no_scratch_refuses_naming_the_site() {
        for class in A0Class::ALL {
            assert_eq!(
                emitter(class).is_some(),
                class == A0Class::Ds2addr,
                "{class}"
            );
        }
        let info = SiteInfo {
            function: Arc::from("k"),
            function_vaddr: 0x1000,
            vaddr: 0x1010,
            file_offset: 0x10,
            len: 8,
            class: A0Class::Ds2addr,
            mnemonic: "ds_load_2addr_b32",
        };
        let why = NoScratch { site: &info }
            .take(RegClass::Vgpr, 2, 2)
            .unwrap_err()
            .reason;
        assert!(
            why.contains("VGPR") && why.contains("in k at offset 0x10"),
            "{why}"
        );
    }
}
