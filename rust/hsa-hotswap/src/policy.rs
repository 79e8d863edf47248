//! Which code objects are rewritten for which agents: upstream's gate and decision
//! table (`hotswap_loader_policy`, reference §4.2–§4.3), pure and total.
//!
//! - Baseline: an A0 agent — its first ISA's processor is `gfx1250` or
//!   `gfx1250-strict` (how ROCr reports A0 when `HSA_DISABLE_GFX12_STRICT=0`)
//!   and its ASIC revision is *known* and 0 — and a `gfx1250` code object →
//!   `source:gfx1250-b0-specific+` → `…--gfx1250:gfx1250-b0-specific-`
//!   ([`A0_TARGET_ISA`], the same pair for both kinds of A0 agent).
//! - A `gfx1250-strict` code object is never rewritten: it already is A0 code.
//! - Opt-in (`AMD_COMGR_HOTSWAP_ENTRY_TRAMPOLINES` true, read once by `OnLoad`): any
//!   gfx12.5 agent with a gfx12.5 code object → `source` → `source` (no processor
//!   retargeting; a `gfx1250` source gets the B0 feature on both sides).
//! - Everything else: no rewrite, the original is loaded.

pub use crate::rewriter::{A0_FEATURE, B0_FEATURE};

use hotswap_code_object::isa_name::processor_of as gfx_target;

const GFX1250: &str = "gfx1250";
const GFX1250_STRICT: &str = "gfx1250-strict";
const GFX12_5_GENERIC: &str = "gfx12-5-generic";

/// The target ISA sent to every rewriter backend for an A0 agent, whether ROCr
/// reports it as `gfx1250` or as `gfx1250-strict`.
///
/// The one assumption about strict agents, kept here: the rewriters know A0 as
/// gfx1250 with the A0 pseudo-feature (COMGR ABI) or as their fixed B0→A0
/// profile (rocjitsu: "A0 and B0 code objects share one machine identity", no
/// MACH retag), so the rewritten object stays a gfx1250 object (MACH 0x49). ROCr
/// loads it on a `gfx1250-strict` agent because its loader's compatibility check
/// for a non-generic code object compares the ISA version only (major, minor,
/// stepping), and gfx1250 and gfx1250-strict are both 12.5.0
/// (`Isa::IsCompatible`, rocm-systems `isa.cpp`, still a version-only comparison
/// in the sources that register `gfx1250-strict`, with generic
/// `gfx12-5-generic`; reference current-rocm.md §2.4, §5b).
/// If a later ROCr compared names, the load of the rewritten object would fail
/// and the tool would load the original, as after any failed load.
pub const A0_TARGET_ISA: &str = "amdgcn-amd-amdhsa--gfx1250";

/// What the gate needs to know about an agent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AgentTarget<'a> {
    /// The processor of the agent's first ISA (`gfx1250`), empty when unknown.
    pub gfx: &'a str,
    /// The ASIC revision (A0 = 0), `None` when the query failed.
    pub revision: Option<u32>,
}

/// The ISA pair sent to the rewriter.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Decision {
    /// Source ISA name (with feature suffixes).
    pub source: String,
    /// Target ISA name (with feature suffixes).
    pub target: String,
}

/// True for the processors of a gfx1250 agent: `gfx1250`, and `gfx1250-strict`
/// (how ROCr reports an A0 gfx1250 with strict reporting on).
fn is_gfx1250_agent(gfx: &str) -> bool {
    gfx == GFX1250 || gfx == GFX1250_STRICT
}

/// The baseline gate: a gfx1250 agent (`gfx1250` or `gfx1250-strict`) with a
/// known ASIC revision 0: the A0 stepping.
pub fn gate_allows(agent: AgentTarget<'_>) -> bool {
    is_gfx1250_agent(agent.gfx) && agent.revision == Some(0)
}

/// `gfx12-5-generic`, or `gfx125` followed by one or more digits only (a code
/// object's processor: `gfx1250-strict` code is not rewritten).
pub fn is_gfx12_5(gfx: &str) -> bool {
    gfx == GFX12_5_GENERIC
        || gfx
            .strip_prefix("gfx125")
            .is_some_and(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()))
}

/// True when some code object could be rewritten for this agent.
pub fn has_candidate(agent: AgentTarget<'_>, opt_in: bool) -> bool {
    gate_allows(agent) || (opt_in && (is_gfx12_5(agent.gfx) || is_gfx1250_agent(agent.gfx)))
}

/// True when [`decide`] can give a pair for a code object of processor
/// `source_gfx` on some agent: a reader over another object is never recorded.
pub fn source_may_be_rewritten(source_gfx: &str, opt_in: bool) -> bool {
    source_gfx == GFX1250 || (opt_in && is_gfx12_5(source_gfx))
}

/// Appends `feature` when the ISA's processor is `gfx1250` and it carries neither
/// stepping feature yet; otherwise returns the ISA unchanged.
fn with_stepping(isa: &str, feature: &str) -> String {
    if gfx_target(isa) == GFX1250 && !isa.contains(B0_FEATURE) && !isa.contains(A0_FEATURE) {
        format!("{isa}{feature}")
    } else {
        isa.to_owned()
    }
}

/// The ISA pair for loading a `source_isa` code object on an agent whose ISA is
/// `target_isa`, or `None` to load the original.
pub fn decide(
    agent: AgentTarget<'_>,
    source_isa: &str,
    target_isa: &str,
    opt_in: bool,
) -> Option<Decision> {
    if source_isa.is_empty() || target_isa.is_empty() {
        return None;
    }
    let source_gfx = gfx_target(source_isa);
    if gate_allows(agent) && source_gfx == GFX1250 && is_gfx1250_agent(gfx_target(target_isa)) {
        let target = if gfx_target(target_isa) == GFX1250 {
            target_isa
        } else {
            A0_TARGET_ISA
        };
        return Some(Decision {
            source: with_stepping(source_isa, B0_FEATURE),
            target: with_stepping(target, A0_FEATURE),
        });
    }
    let agent_is_gfx12_5 = is_gfx12_5(agent.gfx) || is_gfx1250_agent(agent.gfx);
    if !opt_in || !agent_is_gfx12_5 || !is_gfx12_5(source_gfx) {
        return None;
    }
    let source = with_stepping(source_isa, B0_FEATURE);
    Some(Decision {
        target: source.clone(),
        source,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const ISA1250: &str = "amdgcn-amd-amdhsa--gfx1250";
    const ISA1251: &str = "amdgcn-amd-amdhsa--gfx1251";
    const GENERIC: &str = "amdgcn-amd-amdhsa--gfx12-5-generic";
    const ISA942: &str = "amdgcn-amd-amdhsa--gfx942:sramecc+:xnack-";

    fn agent(gfx: &str, revision: Option<u32>) -> AgentTarget<'_> {
        AgentTarget { gfx, revision }
    }

    fn pair(s: &str, t: &str) -> Option<Decision> {
        Some(Decision {
            source: s.into(),
            target: t.into(),
        })
    }

    const STRICT: &str = "amdgcn-amd-amdhsa--gfx1250-strict";

    #[test]
    fn gate_is_exact() {
        assert!(gate_allows(agent("gfx1250", Some(0))));
        assert!(gate_allows(agent("gfx1250-strict", Some(0))));
        assert!(!gate_allows(agent("gfx1250-strict", Some(1))));
        assert!(!gate_allows(agent("gfx1250-strict", None)));
        assert!(!gate_allows(agent("gfx1250-strictx", Some(0))));
        assert!(!gate_allows(agent("gfx1250", Some(1))));
        assert!(
            !gate_allows(agent("gfx1250", None)),
            "unknown revision is never A0"
        );
        assert!(!gate_allows(agent("gfx1251", Some(0))));
        assert!(!gate_allows(agent("gfx12500", Some(0))));
    }

    #[test]
    fn gfx12_5_family() {
        for yes in ["gfx1250", "gfx1251", "gfx12-5-generic", "gfx12599"] {
            assert!(is_gfx12_5(yes), "{yes}");
        }
        for no in ["gfx125", "gfx125foo", "gfx942", "gfx1200", ""] {
            assert!(!is_gfx12_5(no), "{no}");
        }
    }

    /// One assertion per row of reference §4.3, both opt-in states where "any".
    #[test]
    fn decision_table() {
        let b0 = format!("{ISA1250}{B0_FEATURE}");
        let a0 = format!("{ISA1250}{A0_FEATURE}");
        // gfx1250 rev 0 (valid) | any | gfx1250 → src+B0 → tgt+A0
        for opt in [false, true] {
            assert_eq!(
                decide(agent("gfx1250", Some(0)), ISA1250, ISA1250, opt),
                pair(&b0, &a0)
            );
        }
        // gfx1250 rev ≠ 0 or unknown | off | any → none
        for rev in [Some(1), Some(2), None] {
            for src in [ISA1250, ISA1251, GENERIC, ISA942] {
                assert_eq!(decide(agent("gfx1250", rev), src, ISA1250, false), None);
            }
        }
        // gfx1250 rev ≠ 0 or unknown | on | gfx1250 → src+B0 → src+B0
        for rev in [Some(1), None] {
            assert_eq!(
                decide(agent("gfx1250", rev), ISA1250, ISA1250, true),
                pair(&b0, &b0)
            );
        }
        // gfx1251 | on | gfx1250 → gfx1250+B0 → gfx1250+B0 (agent ISA ignored)
        assert_eq!(
            decide(agent("gfx1251", Some(0)), ISA1250, ISA1251, true),
            pair(&b0, &b0)
        );
        // gfx1251 | on | gfx12-5-generic → generic → generic
        assert_eq!(
            decide(agent("gfx1251", Some(0)), GENERIC, ISA1251, true),
            pair(GENERIC, GENERIC)
        );
        // gfx1251 / gfx12-5-generic | on | same → src → src
        assert_eq!(
            decide(agent("gfx1251", Some(0)), ISA1251, ISA1251, true),
            pair(ISA1251, ISA1251)
        );
        assert_eq!(
            decide(agent("gfx12-5-generic", None), GENERIC, GENERIC, true),
            pair(GENERIC, GENERIC)
        );
        // any gfx12.5 | on | gfx942 → none
        for a in ["gfx1250", "gfx1251", "gfx12-5-generic"] {
            assert_eq!(decide(agent(a, Some(0)), ISA942, ISA1250, true), None);
        }
        // gfx942 | any | any → none
        for opt in [false, true] {
            for src in [ISA1250, GENERIC, ISA942] {
                assert_eq!(decide(agent("gfx942", Some(0)), src, ISA942, opt), None);
                assert!(!has_candidate(agent("gfx942", Some(0)), opt));
            }
        }
        // gfx1251 without the opt-in: none; A0 with a generic source, no opt-in: none.
        assert_eq!(
            decide(agent("gfx1251", Some(0)), ISA1250, ISA1251, false),
            None
        );
        assert_eq!(
            decide(agent("gfx1250", Some(0)), GENERIC, ISA1250, false),
            None
        );
        assert!(has_candidate(agent("gfx1250", Some(0)), false));
        // Empty ISA names never decide.
        assert_eq!(decide(agent("gfx1250", Some(0)), "", ISA1250, true), None);
        assert_eq!(decide(agent("gfx1250", Some(0)), ISA1250, "", true), None);
    }

    /// A0 reported as gfx1250-strict gets the same pair as A0 reported as
    /// gfx1250; strict code is never rewritten.
    #[test]
    fn strict_agents_and_strict_code() {
        let b0 = format!("{ISA1250}{B0_FEATURE}");
        let a0 = format!("{ISA1250}{A0_FEATURE}");
        for opt in [false, true] {
            assert_eq!(
                decide(agent("gfx1250-strict", Some(0)), ISA1250, STRICT, opt),
                pair(&b0, &a0)
            );
            assert!(has_candidate(agent("gfx1250-strict", Some(0)), opt));
            for target in [STRICT, ISA1250] {
                for rev in [Some(0), Some(1), None] {
                    for gfx in ["gfx1250-strict", "gfx1250"] {
                        assert_eq!(decide(agent(gfx, rev), STRICT, target, opt), None);
                    }
                }
            }
            assert!(!source_may_be_rewritten("gfx1250-strict", opt));
        }
        assert_eq!(
            decide(agent("gfx1250-strict", Some(0)), ISA1250, STRICT, false)
                .unwrap()
                .target,
            format!("{A0_TARGET_ISA}{A0_FEATURE}")
        );
        // Opt-in on a strict agent that is not A0 (ROCr reports strict on A0
        // only, but the revision query may fail): gfx1250 code, same target.
        assert_eq!(
            decide(agent("gfx1250-strict", None), ISA1250, STRICT, true),
            pair(&b0, &b0)
        );
        assert!(!has_candidate(agent("gfx1250-strict", None), false));
    }

    /// `source_may_be_rewritten` never rules out a pair `decide` would give.
    #[test]
    fn source_precheck_agrees_with_decide() {
        let agents = [
            ("gfx1250-strict", Some(0)),
            ("gfx1250-strict", None),
            ("gfx1250", Some(0)),
            ("gfx1250", Some(1)),
            ("gfx1250", None),
            ("gfx1251", Some(0)),
            ("gfx12-5-generic", None),
            ("gfx942", Some(0)),
            ("", None),
        ];
        let isas = [
            STRICT,
            ISA1250,
            ISA1251,
            GENERIC,
            ISA942,
            "amdgcn-amd-amdhsa--gfx125foo",
        ];
        for opt in [false, true] {
            for (gfx, rev) in agents {
                for src in isas {
                    for tgt in isas {
                        if decide(agent(gfx, rev), src, tgt, opt).is_some() {
                            assert!(
                                source_may_be_rewritten(gfx_target(src), opt),
                                "{gfx} {src} {opt}"
                            );
                        }
                    }
                }
            }
        }
        assert!(!source_may_be_rewritten("gfx942", true));
        assert!(!source_may_be_rewritten("gfx1251", false));
    }

    #[test]
    fn features_are_appended_once() {
        let with = format!("{ISA1250}:sramecc+{B0_FEATURE}");
        assert_eq!(with_stepping(&with, B0_FEATURE), with);
        assert_eq!(
            with_stepping(&format!("{ISA1250}:sramecc+"), B0_FEATURE),
            with
        );
        assert_eq!(with_stepping(ISA942, B0_FEATURE), ISA942);
    }
}
