//! The native B0→A0 rewriter (`hotswap-code-object::rewrite`:
//! `plan_b0_to_a0`, `rewrite_b0_to_a0`) on arbitrary objects, with every
//! option.
//!
//! Input: one byte of options (bit 0 `allow_partial`, bit 1 the `s_clause`
//! policy `ReplaceWithNop`), then the object. Seeds: `seeds.py` puts each
//! option byte in front of every gfx12.5 object (the analyzer's corpus has
//! every A0 class). Checked against the module's promises: the output has the
//! input's size, and only bytes inside executable sections or the metadata
//! note's descriptor differ (never the header); the plan's patches are in file
//! order, apart, inside the object, and applying them gives the output;
//! `allow_partial` never refuses for growth, and where it gives an object the
//! default options give the same or refuse for exactly its remaining sites;
//! the rewrite is idempotent; afterwards no same-size site needs a
//! change except clauses kept by policy.
#![no_main]

use hotswap_code_object::elf::{self, Header, SHF_EXECINSTR};
use hotswap_code_object::gfx1250::{self, A0Class, Fix};
use hotswap_code_object::rewrite::{self, ClausePolicy, Options, RewriteError};
use hotswap_fuzz::is_within;
use libfuzzer_sys::fuzz_target;

/// The byte ranges a rewrite may change: executable sections and the AMDGPU
/// metadata note's descriptor.
fn changeable(object: &[u8]) -> Vec<(usize, usize)> {
    let Ok(header) = Header::parse(object) else {
        return Vec::new();
    };
    let mut ranges: Vec<(usize, usize)> = header
        .sections(object)
        .iter()
        .filter(|s| s.flags & SHF_EXECINSTR != 0)
        .filter_map(|s| s.data(object))
        .map(|d| {
            let at = d.as_ptr() as usize - object.as_ptr() as usize;
            (at, at + d.len())
        })
        .collect();
    for area in header.note_areas(object).flatten() {
        for note in elf::notes(area).flatten() {
            if note.name == b"AMDGPU" && note.note_type == 32 && is_within(note.desc, object) {
                let at = note.desc.as_ptr() as usize - object.as_ptr() as usize;
                ranges.push((at, at + note.desc.len()));
            }
        }
    }
    ranges
}

fuzz_target!(init: hotswap_fuzz::init(), |data: &[u8]| {
    let Some((&flags, object)) = data.split_first() else {
        return;
    };
    let options = Options {
        allow_partial: flags & 1 == 1,
        clauses: if flags & 2 == 2 { ClausePolicy::ReplaceWithNop } else { ClausePolicy::Keep },
    };
    let plan = rewrite::plan_b0_to_a0(object, &options);
    let rewritten = rewrite::rewrite_b0_to_a0(object, &options);
    assert_eq!(
        plan.as_ref().map(|p| &p.report).map_err(|e| e.kind()),
        rewritten.as_ref().map(|r| &r.report).map_err(|e| e.kind())
    );
    // Growth: allow_partial never refuses for it; when it gives an object,
    // the default options give the same, or refuse exactly its remaining
    // sites of classes without an emitter, or (only when an emitter refused a
    // site, which allow_partial leaves in place) refuse the growth.
    let partial = rewrite::plan_b0_to_a0(object, &Options { allow_partial: true, ..options });
    let strict = rewrite::plan_b0_to_a0(object, &Options { allow_partial: false, ..options });
    assert!(!matches!(partial, Err(RewriteError::NeedsGrowth(_))));
    if let Ok(partial) = &partial {
        let refused: Vec<_> = partial.report.growth_refused.iter().map(|r| &r.site).collect();
        let without_emitter: Vec<_> = partial
            .report
            .remaining
            .iter()
            .filter(|s| !refused.contains(s))
            .cloned()
            .collect();
        match &strict {
            Ok(strict) => assert!(partial.report.remaining.is_empty() && strict == partial),
            Err(RewriteError::NeedsGrowth(sites)) => assert_eq!(sites, &without_emitter),
            Err(RewriteError::Growth(_)) if !refused.is_empty() && without_emitter.is_empty() => {}
            Err(e) => panic!("allow_partial rewrites, the default refuses: {e}"),
        }
    }
    let (Ok(plan), Ok(rewritten)) = (plan, rewritten) else {
        return;
    };
    let out = &rewritten.bytes;
    if !plan.tail.is_empty() {
        // Code growth (DS two-address split): larger, functions moved, a
        // fixed point; the growth proof checks the copies themselves.
        assert!(!plan.report.moved.is_empty() && out.len() == plan.output_len());
        let again = rewrite::rewrite_b0_to_a0(out, &options).expect("the grown output rewrites again");
        assert_eq!(&again.bytes, out, "rewriting the grown output changes nothing");
        assert!(again.report.grown.is_empty());
        return;
    }
    assert_eq!(plan.len, object.len());
    assert_eq!(out.len(), object.len(), "the output keeps the input's size");
    let mut applied = object.to_vec();
    assert!(plan.apply(&mut applied));
    assert_eq!(&applied, out);
    assert_eq!(plan.changes_bytes(), out != object);
    let mut end = 0u64;
    for p in &plan.patches {
        assert!(p.file_offset >= end, "patches in file order, apart");
        end = p.file_offset + p.bytes.len() as u64;
        assert!(end <= object.len() as u64);
    }
    let ranges = changeable(object);
    for (i, (a, b)) in object.iter().zip(out).enumerate() {
        if a != b {
            assert!(i >= 64, "the header changed at {i}");
            assert!(
                ranges.iter().any(|&(s, e)| i >= s && i < e),
                "byte {i:#x} changed outside code and the metadata note"
            );
        }
    }
    // Idempotent, and nothing same-size left to fix but kept clauses.
    let again = rewrite::rewrite_b0_to_a0(out, &options).expect("the output rewrites again");
    assert_eq!(&again.bytes, out, "rewriting the output changes nothing");
    let analysis = gfx1250::analyze(out).expect("the output is a gfx1250 object");
    for s in analysis.sites().filter(|s| s.needs_change && s.fix == Fix::SameSize) {
        assert!(
            s.class == A0Class::SClause && options.clauses == ClausePolicy::Keep,
            "{s:?} still needs a change after the rewrite"
        );
    }
});
