//! The emitters' stage: each growth site of a moved function replaced by its
//! class's straight-line code ([`crate::rewrite::emit`]), and each
//! replacement checked against the seam's contract.

use super::moving::Moving;
use super::refuse;
use super::scratch::FromLiveness;
use crate::gfx1250::{self, fields::Fields, Fix};
use crate::liveness::scratch::CountRaise;
use crate::liveness::ObjectLiveness;
use crate::rewrite::emit::{self, Emitted, NoScratch, Scratch, Site, Taken};
use crate::rewrite::vgpr_mode::{self, Flow, Mode};
use crate::rewrite::{RewriteError, SiteInfo};

/// What the emitters took beyond the sites' own registers.
#[derive(Default)]
pub(super) struct Extras {
    /// Per entry of `grown`: the scratch registers taken, the rounding note.
    pub sites: Vec<(Vec<Taken>, Option<&'static str>)>,
    /// The count raises the scratch registers need (not merged).
    pub raises: Vec<CountRaise>,
    /// With partial output allowed: the sites whose emitter refused (index
    /// in `sites`, the reason), left as they are.
    pub refused: Vec<(usize, String)>,
}

/// Replaces each site of `sites` in `m` (function `fi`), given the modes of
/// [`super::analyse::analyse`] and the object's liveness when a site may
/// need it ([`super::scratch::analyse`]); appends (function, instruction,
/// index in `sites`) to `grown` in the order of `sites`, and what each took
/// to `extras`.
#[allow(clippy::too_many_arguments)]
pub(super) fn emit_sites(
    bytes: &[u8],
    m: &mut Moving,
    fi: usize,
    modes: Option<&[Mode]>,
    liveness: Option<&ObjectLiveness<'_>>,
    sites: &[SiteInfo],
    grown: &mut Vec<(u32, u32, usize)>,
    extras: &mut Extras,
    partial: bool,
) -> Result<(), RewriteError> {
    let first = sites.partition_point(|s| s.vaddr < m.vaddr);
    let function = liveness.and_then(|l| l.function_at(m.vaddr));
    let end = m.insns.iter().last().map_or(0, |i| i.at + i.len);
    for (k, s) in sites[first..]
        .iter()
        .take_while(|s| s.vaddr - m.vaddr < m.size)
        .enumerate()
    {
        let Ok(idx) = m.insns.index_of_vaddr(s.vaddr) else {
            return Err(refuse(format!("{s}: not an instruction boundary")));
        };
        let mode = match modes.map(|v| v[idx]) {
            None => 0,
            Some(Mode::Known(x)) => x,
            Some(_) if partial => {
                extras
                    .refused
                    .push((first + k, "the VGPR-MSB mode at the site is unknown".into()));
                continue;
            }
            Some(_) => {
                return Err(refuse(format!(
                    "{s}: the VGPR-MSB mode at the site is unknown"
                )))
            }
        };
        let emitter = emit::emitter(s.class)
            .ok_or_else(|| refuse(format!("{s}: no emitter for its class")))?;
        let insn = m.insns.at(idx);
        let original = &bytes[insn.at..insn.at + insn.len];
        let following = bytes.get(insn.at + insn.len..end).unwrap_or_default();
        let mut no_scratch = NoScratch {
            site: s,
            why: "the liveness analysis was not run for this site's class",
        };
        let mut from_liveness = liveness.map(|liveness| FromLiveness {
            liveness,
            function,
            site: s,
            taken: Vec::new(),
            raises: Vec::new(),
        });
        let scratch: &mut dyn Scratch = match &mut from_liveness {
            Some(p) => p,
            None => &mut no_scratch,
        };
        let mut site = Site {
            info: s,
            original,
            fields: Fields::decode(original),
            vgpr_msb: mode,
            following,
            scratch,
        };
        let emitted = match emitter(&mut site) {
            Ok(e) => e,
            Err(e) if partial => {
                extras.refused.push((first + k, e.reason));
                continue;
            }
            Err(e) => return Err(refuse(format!("{s}: {e}"))),
        };
        check(&emitted, mode).map_err(|why| {
            refuse(format!(
                "{s}: the {} code {why} (an emitter defect)",
                emitted.fix
            ))
        })?;
        if m.replacements.contains_key(idx) {
            // A second growth class of one instruction: one replacement
            // cannot fix both. The class table gives none today (the
            // block-16 scaled 32x16x128 f4 WMMA, once `wmma_f4` and
            // `wmma_scale`, is `wmma_f4` only); this guards a future row.
            return Err(refuse(format!(
                "{s}: the instruction is a site of two growth classes"
            )));
        }
        m.replacements.insert(idx, &emitted.bytes, emitted.fix);
        grown.push((fi as u32, idx as u32, first + k));
        let taken = match from_liveness {
            Some(p) => {
                extras.raises.extend(p.raises);
                p.taken
            }
            None => Vec::new(),
        };
        extras.sites.push((taken, emitted.note));
    }
    m.replacements.shrink_to_fit();
    Ok(())
}

/// The seam's contract on a replacement: whole instructions, straight-line,
/// the VGPR-MSB mode after it the mode before it, and every instruction of
/// a same-size class in its A0 form (else rewriting the output would fix it
/// there: the output would be no fixed point).
fn check(emitted: &Emitted, mode: u8) -> Result<(), &'static str> {
    let code = &emitted.bytes;
    if code.is_empty() {
        return Err("is empty");
    }
    if code.len() > u32::MAX as usize / 2 {
        return Err("is too long");
    }
    let mut insns = Vec::new();
    for insn in gfx1250::instructions(code, 0) {
        let insn = insn.map_err(|_| "does not decode to whole instructions")?;
        let w0 = u32::from_le_bytes([insn.bytes[0], insn.bytes[1], insn.bytes[2], insn.bytes[3]]);
        if vgpr_mode::flow(insn.vaddr, w0) != Flow::Next || vgpr_mode::reads_or_writes_pc(w0) {
            return Err("is not straight-line");
        }
        insns.push(insn.bytes);
    }
    if vgpr_mode::after_straight_line(insns, Mode::Known(mode)) != Mode::Known(mode) {
        return Err("leaves another VGPR-MSB mode than it found");
    }
    if gfx1250::sites_in(code, 0)
        .iter()
        .any(|s| s.fix == Fix::SameSize && s.needs_change)
    {
        return Err("holds an instruction a same-size fix would still change");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn emitted(bytes: &[u8]) -> Emitted {
        Emitted {
            bytes: bytes.to_vec(),
            fix: "test",
            note: None,
        }
    }

    #[test]
    fn the_contract_rejects_what_the_layout_could_not_move() {
        let nop = [0x00, 0x00, 0x80, 0xbf];
        assert_eq!(check(&emitted(&nop), 0), Ok(()));
        assert_eq!(check(&emitted(&[]), 0), Err("is empty"));
        // A truncated literal instruction (s_mov_b32 s0, lit without it).
        assert_eq!(
            check(&emitted(&[0xff, 0x00, 0x80, 0xbe]), 0),
            Err("does not decode to whole instructions")
        );
        // s_branch 0, s_endpgm, s_get_pc_i64 s[0:1].
        for insn in [
            [0x00, 0x00, 0xa0, 0xbf],
            [0x00, 0x00, 0xb0, 0xbf],
            [0x00, 0x47, 0x80, 0xbe],
        ] {
            assert_eq!(
                check(&emitted(&insn), 0),
                Err("is not straight-line"),
                "{insn:02x?}"
            );
        }
        // s_set_vgpr_msb 0x41 left in force; bracketed, it is fine.
        let set = [0x41, 0x00, 0x86, 0xbf];
        assert_eq!(
            check(&emitted(&set), 0),
            Err("leaves another VGPR-MSB mode than it found")
        );
        let back = [0x00, 0x41, 0x86, 0xbf];
        assert_eq!(check(&emitted(&[set, nop, back].concat()), 0), Ok(()));
        // v_wmma_scale_f32_16x16x128_f8f6f4 v[0:7], v[8:23], v[24:39],
        // v[40:47], v2, v3 (llvm-mc-22): scale_src2 0x100, its A0 form;
        // with the field 0 (bits [58:50]: byte 7's low three bits, byte 6's
        // high six) a same-size site that still needs its fix.
        let scaled = [
            0x00, 0x00, 0x35, 0xcc, 0x02, 0x07, 0x02, 0x04, 0x00, 0x00, 0x33, 0xcc, 0x08, 0x31,
            0xa2, 0x04,
        ];
        assert_eq!(check(&emitted(&scaled), 0), Ok(()));
        let mut stale = scaled;
        stale[7] = 0x00;
        assert_eq!(
            check(&emitted(&stale), 0),
            Err("holds an instruction a same-size fix would still change")
        );
    }
}
