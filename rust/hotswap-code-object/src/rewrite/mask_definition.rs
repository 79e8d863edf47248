//! The definition-site form of the `tensor_load_to_lds` mask fix, wired into
//! the rewrite: which tensor sites get their mask SGPR's only reaching
//! definition changed in place (same size: neither the load nor its function
//! moves) instead of an at-site form (growth: the function moves).
//!
//! A site takes it when
//! - `liveness::ObjectLiveness::only_definition` proves one whole-register
//!   write of the mask SGPR reaches the load, read by nothing but tensor loads
//!   whose mask is that SGPR, with no way out of the function but `s_endpgm`;
//! - `emit::tensor_mask::clear_at_definition` accepts that write (a 32-bit
//!   literal `s_mov_b32`, an `s_movk_i32` with bit 15 clear, an `s_and_b32`
//!   with a literal and SCC dead after it);
//! - no function holding the site moves for another site (a growth site the
//!   definition form does not take): a moved function keeps today's at-site
//!   form for every tensor site in it.
//!
//! The same proof recognises a site already fixed this way (the definition
//! yields a zero mask: the change would leave its bytes as they are), which
//! needs nothing: the rewrite of an output changes nothing, and `hotswap
//! inspect` does not count it as pending ([`cleared_at_definition`]).

use std::collections::BTreeMap;

use crate::elf;
use crate::gfx1250::{A0Class, Analysis, Fix};
use crate::liveness::{self, Convention, ObjectLiveness, Reg};
use crate::object::CodeObject;

use super::emit::tensor_mask;

/// The mask SGPR's only reaching definition of one tensor site, and its
/// replacement.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MaskDefinition {
    /// The definition's address.
    pub vaddr: u64,
    /// Its offset in the code object.
    pub file_offset: u64,
    /// Its bytes in the input.
    pub original: Vec<u8>,
    /// The bytes that replace them (as many).
    pub bytes: Vec<u8>,
}

impl MaskDefinition {
    /// Whether the definition already yields a zero mask (the change would
    /// leave it as it is).
    pub fn is_clear(&self) -> bool {
        self.original == self.bytes
    }
}

/// The definition-site form of the `tensor_load_to_lds` at `vaddr`
/// (`file_offset`, `len` bytes) in `code_object`, whose liveness is
/// `liveness`; `None` when the proof or the emitter refuses.
pub fn mask_definition(
    liveness: &ObjectLiveness<'_>,
    code_object: &[u8],
    vaddr: u64,
    file_offset: u64,
    len: u8,
) -> Option<MaskDefinition> {
    let load = elf::range(code_object, file_offset, u64::from(len))?;
    let mask = tensor_mask::mask_sgpr(load).ok()?;
    let f = liveness.function_at(vaddr)?;
    let allowed = |_: u64, b: &[u8]| tensor_mask::mask_sgpr(b) == Ok(mask);
    let d = liveness.only_definition(f, vaddr, mask, &allowed).ok()?;
    let original = code_object
        .get(d.offset..d.offset.checked_add(usize::from(d.len))?)?
        .to_vec();
    let scc_live = liveness.live_at(f, d.vaddr)?.after.contains(Reg::Scc);
    let bytes = tensor_mask::clear_at_definition(&original, mask, scc_live).ok()?;
    (bytes.len() == original.len()).then_some(MaskDefinition {
        vaddr: d.vaddr,
        file_offset: u64::try_from(d.offset).ok()?,
        original,
        bytes,
    })
}

/// Whether the `tensor_load_to_lds` at `vaddr` needs nothing: its mask
/// SGPR's only reaching definition (the same proof as the rewrite's) already
/// yields a zero mask.
pub fn cleared_at_definition(
    liveness: &ObjectLiveness<'_>,
    code_object: &[u8],
    vaddr: u64,
    file_offset: u64,
    len: u8,
) -> bool {
    mask_definition(liveness, code_object, vaddr, file_offset, len).is_some_and(|d| d.is_clear())
}

/// The addresses (sorted) of the `tensor_load_to_lds` sites of `analysis`
/// (the analysis of `object`) whose mask needs nothing
/// ([`cleared_at_definition`]); register liveness is computed only when
/// there is a tensor load. What `hotswap inspect` does not count as pending.
pub fn cleared_sites(object: &CodeObject<'_>, analysis: &Analysis) -> Vec<u64> {
    let tensor: Vec<&crate::gfx1250::Site> = analysis
        .sites()
        .filter(|s| s.class == A0Class::TensorLds)
        .collect();
    if tensor.is_empty() {
        return Vec::new();
    }
    let Ok(l) = liveness::analyze_object(object, Convention::Unknown) else {
        return Vec::new();
    };
    let bytes = object.bytes();
    let mut out: Vec<u64> = tensor
        .into_iter()
        .filter(|s| cleared_at_definition(&l, bytes, s.vaddr, s.file_offset, s.len))
        .map(|s| s.vaddr)
        .collect();
    out.sort_unstable();
    out.dedup();
    out
}

/// The tensor sites of `analysis` that take the definition-site form, by
/// site file offset. `takes_growth(vaddr, class)`: whether a growth site
/// (other than a tensor site fixed here) moves its function; `skip(vaddr)`:
/// sites the rewrite does not consider (in the old copy of a function moved
/// before); `in_code(offset, len)`: whether a file range lies in the
/// executable code the rewrite may change (a definition outside it is not
/// changed: its site takes the at-site form). Liveness is computed only when
/// there is a tensor site.
pub(super) fn plan(
    object: &CodeObject<'_>,
    analysis: &Analysis,
    takes_growth: &dyn Fn(A0Class) -> bool,
    skip: &dyn Fn(u64) -> bool,
    in_code: &dyn Fn(u64, u64) -> bool,
) -> BTreeMap<u64, MaskDefinition> {
    let mut out = BTreeMap::new();
    let tensor = |s: &crate::gfx1250::Site| {
        s.class == A0Class::TensorLds && s.fix == Fix::Growth && !skip(s.vaddr)
    };
    if !analysis
        .functions
        .iter()
        .any(|f| f.sites.iter().any(&tensor))
    {
        return out;
    }
    let Ok(liveness) = liveness::analyze_object(object, Convention::Unknown) else {
        return out;
    };
    let bytes = object.bytes();
    // (site vaddr, site offset, its definition) and the other growth sites.
    let mut candidates = Vec::new();
    let mut growth: Vec<u64> = Vec::new();
    for f in &analysis.functions {
        for s in &f.sites {
            if tensor(s) {
                if let Some(d) = mask_definition(&liveness, bytes, s.vaddr, s.file_offset, s.len)
                    .filter(|d| in_code(d.file_offset, d.bytes.len() as u64))
                {
                    candidates.push((s.vaddr, s.file_offset, d));
                    continue;
                }
            }
            if s.fix == Fix::Growth && !skip(s.vaddr) && takes_growth(s.class) {
                growth.push(s.vaddr);
            }
        }
    }
    // A candidate in a function that moves anyway keeps the at-site form,
    // which moves that function too: until nothing changes.
    let in_moving = |vaddr: u64, growth: &[u64]| {
        analysis.functions.iter().any(|f| {
            let holds = |v: u64| v >= f.vaddr && v - f.vaddr < f.size;
            holds(vaddr) && growth.iter().any(|&g| g != vaddr && holds(g))
        })
    };
    loop {
        let before = candidates.len();
        let mut k = 0;
        while k < candidates.len() {
            if in_moving(candidates[k].0, &growth) {
                growth.push(candidates.swap_remove(k).0);
            } else {
                k += 1;
            }
        }
        if candidates.len() == before {
            break;
        }
    }
    for (_, offset, d) in candidates {
        out.insert(offset, d);
    }
    out
}
