//! ISA names (`hotswap-code-object::isa_name`, `mach`) and the decision table
//! (`hsa-hotswap::policy`, the rewriter's `Request::profile`) on arbitrary
//! strings and revisions.
//!
//! Input: fields separated by TAB: a code object's ISA name, an agent's ISA name, a
//! processor, an ASIC revision in decimal (anything else: the query failed).
//! Seeds: `seeds/isa_names.txt`. Checked: the byte matcher against a plain
//! restatement of its contract and against the `str` parser; the parser's
//! parts are parts of the name; the processor table round-trips; every pair
//! `decide` gives is one the session's cheaper prechecks (`has_candidate`,
//! `source_may_be_rewritten`) allow, the A0 gate always gives one, no opt-in
//! gives nothing else, and for well-formed names the pair is the kind of
//! rewrite (`Profile`) the rewriters are asked for.
#![no_main]

use hotswap_code_object::isa_name::{features_of, is_supported_pair, isa_is_gfx, processor_of};
use hotswap_code_object::{mach, HSA_ISA_PREFIX};
use hsa_hotswap::internals::policy::{self, AgentTarget, A0_FEATURE, B0_FEATURE};
use hsa_hotswap::internals::rewriter::{Profile, Request, RewriteFlags};
use libfuzzer_sys::fuzz_target;

/// `isa_is_gfx`'s contract, restated: the text after the last `--`, up to
/// the first `:`, is exactly `gfx` (non-empty); no `--`, no match.
fn names_gfx(isa: &[u8], gfx: &[u8]) -> bool {
    let Some(at) = (0..isa.len().saturating_sub(1))
        .rev()
        .find(|&i| &isa[i..i + 2] == b"--")
    else {
        return false;
    };
    let processor = isa[at + 2..]
        .split(|&b| b == b':')
        .next()
        .unwrap_or_default();
    !gfx.is_empty() && processor == gfx
}

/// `amdgcn-amd-amdhsa--<processor>[:sramecc±][:xnack±]…`, the names the
/// tool builds from a code object's header and ROCr reports for agents.
fn well_formed(isa: &str) -> bool {
    let Some(rest) = isa.strip_prefix(HSA_ISA_PREFIX) else {
        return false;
    };
    let mut parts = rest.split(':');
    let processor = parts.next().unwrap_or_default();
    !processor.is_empty()
        && !processor.contains("--")
        && processor
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && parts.all(|f| ["sramecc+", "sramecc-", "xnack+", "xnack-"].contains(&f))
}

fn check_str(s: &str) {
    let processor = processor_of(s);
    let at = processor.as_ptr() as usize - s.as_ptr() as usize;
    assert!(
        at + processor.len() <= s.len(),
        "the processor is part of the name"
    );
    assert!(
        !processor.contains(':') && !processor.contains("--"),
        "{s:?} -> {processor:?}"
    );
    for f in features_of(s) {
        assert!(!f.is_empty() && !f.contains(':'), "{s:?} -> feature {f:?}");
    }
    assert_eq!(
        isa_is_gfx(s.as_bytes(), processor.as_bytes()),
        s.contains("--") && !processor.is_empty()
    );
    if let Some(value) = mach::mach_of(s) {
        assert_eq!(mach::processor(value), Some(s));
    }
    let digits = processor.strip_prefix("gfx125");
    assert_eq!(
        policy::is_gfx12_5(processor),
        processor == "gfx12-5-generic"
            || digits.is_some_and(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()))
    );
}

fuzz_target!(init: hotswap_fuzz::init(), |data: &[u8]| {
    let mut fields = data.split(|&b| b == b'\t');
    let source = fields.next().unwrap_or_default();
    let target = fields.next().unwrap_or_default();
    let gfx = fields.next().unwrap_or_default();
    let revision = fields.next().and_then(|r| std::str::from_utf8(r).ok()?.parse::<u32>().ok());

    for (isa, g) in [(source, gfx), (target, gfx), (source, target), (gfx, gfx)] {
        assert_eq!(isa_is_gfx(isa, g), names_gfx(isa, g), "{isa:?} {g:?}");
    }
    let (Ok(source), Ok(target)) = (std::str::from_utf8(source), std::str::from_utf8(target)) else {
        return;
    };
    check_str(source);
    check_str(target);
    assert_eq!(is_supported_pair(source, target), source == "gfx1250" && target == "gfx1250");

    let agent = AgentTarget {
        gfx: processor_of(target),
        revision,
    };
    let source_gfx = processor_of(source);
    let gate = policy::gate_allows(agent)
        && source_gfx == "gfx1250"
        && ["gfx1250", "gfx1250-strict"].contains(&agent.gfx);
    let plain = !source.contains("gfx1250-b0-specific") && !target.contains("gfx1250-b0-specific");
    for opt_in in [false, true] {
        let decision = policy::decide(agent, source, target, opt_in);
        let Some(d) = decision else {
            assert!(!gate, "the A0 gate gives a pair: {source:?} on {target:?} rev {revision:?}");
            continue;
        };
        assert!(gate || opt_in, "{d:?} without the gate or the opt-in");
        assert!(policy::has_candidate(agent, opt_in), "{d:?} for an agent that is no candidate");
        assert!(policy::source_may_be_rewritten(source_gfx, opt_in), "{d:?} for an unrecorded source");
        assert!(!d.source.is_empty() && !d.target.is_empty());
        assert_eq!(processor_of(&d.source), source_gfx);
        if gate {
            assert_eq!(processor_of(&d.target), "gfx1250");
            if plain {
                assert!(d.source.ends_with(B0_FEATURE) && d.target.ends_with(A0_FEATURE), "{d:?}");
            }
        } else {
            assert_eq!(d.source, d.target);
        }
        if plain && well_formed(source) && well_formed(target) {
            let request = Request {
                source_isa: &d.source,
                target_isa: &d.target,
                flags: RewriteFlags::default(),
            };
            let expected = if gate { Profile::B0ToA0 } else { Profile::SameTarget };
            assert_eq!(request.profile(), Some(expected), "{d:?}");
        }
    }
});
