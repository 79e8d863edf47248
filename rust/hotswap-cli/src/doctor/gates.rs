//! What decides whether ROCr loads `HSA_TOOLS_LIB` tools and its own hotswap
//! hook, as the newest ROCr sources read (reference `current-rocm.md` §5b):
//!
//! - rocprofiler-register ([`register_gate`]): `LoadTools` has no exemption for
//!   `libhsa-hotswap.so` any more. With rocprofiler-register linked and a
//!   rocprofiler-sdk tool active, `HSA_TOOLS_LIB` tools load only when
//!   `HSA_TOOLS_ROCPROFILER_V1_TOOLS` is true; rocprofiler-sdk sets it to `0`
//!   when it is unset. With no SDK tool active, rocprofiler-register reports no
//!   tools and `HSA_TOOLS_LIB` tools load.
//! - `AT_SECURE` ([`secure_process`]): ROCr ignores `HSA_TOOLS_LIB` in a
//!   setuid/setgid process.
//! - ROCr's hook ([`predict_hook`]): one of two gates
//!   ([`HookGate`]), which a ROCr's version does not tell;
//!   this ROCr's strings may. Naming the hook in `HSA_TOOLS_LIB` loads it too.
//!
//! Every finding carries what to set.

use hsa_hotswap::cli_api::{is_true, HookGate, HSA_HOTSWAP_ENABLE, ROCR_HOOK_LIBRARY};
use serde::Serialize;

use super::{variables, Rocr, Variables};

/// rocprofiler-register's gate.
#[derive(Debug, Serialize)]
pub struct RegisterGate {
    /// The gate applies (ROCr links rocprofiler-register and
    /// `HSA_TOOLS_DISABLE_REGISTER` is not true).
    pub in_play: bool,
    /// The deciding variables.
    pub variables: Variables,
    /// `loaded`, `skipped`, or `skipped-if-sdk-tool` (skipped when a
    /// rocprofiler-sdk tool is active in the process, which only the
    /// application can tell).
    pub tools_lib: &'static str,
    /// Why.
    pub explanation: String,
    /// What to set so `HSA_TOOLS_LIB` tools load (`null`: nothing needed).
    pub set: Option<String>,
}

/// rocprofiler-register's gate on `HSA_TOOLS_LIB` for the environment `env`.
pub fn register_gate(env: &dyn Fn(&str) -> Option<String>, rocr: &Rocr) -> RegisterGate {
    let vars = variables(
        env,
        &[
            "HSA_TOOLS_DISABLE_REGISTER",
            "HSA_TOOLS_ROCPROFILER_V1_TOOLS",
            "ROCP_TOOL_LIBRARIES",
            "ROCPROFILER_REGISTER_FORCE_LOAD",
            "LD_PRELOAD",
        ],
    );
    let set = |n: &str| vars.get(n).and_then(|v| v.as_deref());
    let disabled = is_true(set("HSA_TOOLS_DISABLE_REGISTER"));
    let in_play = rocr.links_rocprofiler_register && !disabled;
    let v1 = is_true(set("HSA_TOOLS_ROCPROFILER_V1_TOOLS"));
    let sdk_tool = set("ROCP_TOOL_LIBRARIES").is_some_and(|v| !v.is_empty())
        || is_true(set("ROCPROFILER_REGISTER_FORCE_LOAD"))
        || set("LD_PRELOAD").is_some_and(|v| v.contains("librocprofiler-sdk-tool"));
    let fix = "HSA_TOOLS_ROCPROFILER_V1_TOOLS=1".to_owned();
    let (tools_lib, explanation, set) = if !rocr.links_rocprofiler_register {
        (
            "loaded",
            "this ROCr does not link rocprofiler-register: HSA_TOOLS_LIB tools are always loaded"
                .to_owned(),
            None,
        )
    } else if disabled {
        (
            "loaded",
            "HSA_TOOLS_DISABLE_REGISTER is true: ROCr skips rocprofiler-register, HSA_TOOLS_LIB \
             tools are loaded"
                .to_owned(),
            None,
        )
    } else if v1 {
        (
            "loaded",
            "HSA_TOOLS_ROCPROFILER_V1_TOOLS is true: HSA_TOOLS_LIB tools are loaded even with a \
             rocprofiler-sdk tool"
                .to_owned(),
            None,
        )
    } else if sdk_tool {
        (
            "skipped",
            format!(
                "a rocprofiler-sdk tool is requested (ROCP_TOOL_LIBRARIES, \
                 ROCPROFILER_REGISTER_FORCE_LOAD or a preloaded SDK tool): ROCr skips every \
                 HSA_TOOLS_LIB tool, this one included (no ROCr exempts libhsa-hotswap.so \
                 any more){}; set {fix}",
                if set("HSA_TOOLS_ROCPROFILER_V1_TOOLS").is_some() {
                    ""
                } else {
                    " and rocprofiler-sdk sets HSA_TOOLS_ROCPROFILER_V1_TOOLS=0 when it is unset"
                }
            ),
            Some(fix),
        )
    } else {
        (
            "skipped-if-sdk-tool",
            format!(
                "ROCr links rocprofiler-register: HSA_TOOLS_LIB tools load unless a \
                 rocprofiler-sdk tool is active in the application (rocprofv3, a linked or \
                 preloaded tool), which sets HSA_TOOLS_ROCPROFILER_V1_TOOLS=0 when unset; set \
                 {fix} to load them either way"
            ),
            Some(fix),
        )
    };
    RegisterGate {
        in_play,
        variables: vars,
        tools_lib,
        explanation,
        set,
    }
}

/// Whether `HSA_TOOLS_LIB` can work in a process like this one.
#[derive(Debug, Serialize)]
pub struct Secure {
    /// This process runs with `AT_SECURE` (set-user/group-ID or capabilities).
    pub this_process: bool,
    /// What it means, and what to do.
    pub explanation: String,
}

/// `AT_SECURE` from `/proc/self/auxv` (entries of two native words).
fn at_secure_of(auxv: &[u8]) -> bool {
    const AT_SECURE: u64 = 23;
    auxv.chunks_exact(16).any(|entry| {
        let word = |i: usize| u64::from_ne_bytes(entry[i..i + 8].try_into().unwrap_or([0; 8]));
        word(0) == AT_SECURE && word(8) != 0
    })
}

/// ROCr ignores `HSA_TOOLS_LIB` in `AT_SECURE` processes; this one is checked,
/// an application's own bits cannot be seen from here.
pub fn secure_process() -> Secure {
    let this_process = std::fs::read("/proc/self/auxv").is_ok_and(|a| at_secure_of(&a));
    let explanation = if this_process {
        "this process runs with AT_SECURE (set-user-ID, set-group-ID or file capabilities): \
         current ROCr ignores HSA_TOOLS_LIB here; run without those bits, no variable brings \
         it back"
            .to_owned()
    } else {
        "current ROCr ignores HSA_TOOLS_LIB in a set-user-ID or set-group-ID (AT_SECURE) \
         process: an application installed that way loads no tool; run it without those bits, \
         no variable brings HSA_TOOLS_LIB back"
            .to_owned()
    };
    Secure {
        this_process,
        explanation,
    }
}

/// One reading of ROCr's hook gate.
#[derive(Debug, Serialize)]
pub struct GateReading {
    /// `HSA_HOTSWAP_DISABLE` or `HSA_HOTSWAP_ENABLE`: the variable of this gate.
    pub variable: &'static str,
    /// The gate lets the hook in now.
    pub opens: bool,
}

/// What this ROCr's file says about its hook.
#[derive(Clone, Copy, Debug, Default)]
pub struct HookFacts {
    /// The ROCr names `libhsa_hotswap_rocjitsu.so`.
    pub known: bool,
    /// It names `HSA_HOTSWAP_DISABLE`.
    pub reads_disable: bool,
    /// It names `HSA_HOTSWAP_ENABLE`.
    pub reads_enable: bool,
    /// A gfx1250 A0 GPU is present.
    pub a0_gpu: bool,
    /// An A0 is reported as gfx1250-strict.
    pub strict_named_a0: bool,
    /// The hook library is found from ROCr.
    pub library_found: bool,
    /// `HSA_TOOLS_LIB` names the hook (and the loader finds it).
    pub named_in_tools_lib: bool,
    /// `HSA_TOOLS_LIB` tools are loaded (the register gate does not skip them).
    pub tools_lib_loads: bool,
}

/// The prediction for ROCr's hook.
#[derive(Debug, PartialEq, Eq)]
pub struct HookPrediction {
    /// The gate this ROCr uses (`None`: cannot tell, both readings apply).
    pub gate: Option<HookGate>,
    /// ROCr's gate loads it (under either reading when the gate is unknown).
    pub by_gate: bool,
    /// It would be loaded at all.
    pub would_load: bool,
    /// Why.
    pub explanation: String,
    /// What to set to keep it off and use this tool (`None`: it stays off).
    pub set: Option<String>,
}

/// The gate this ROCr uses, from the variables it names: `HSA_HOTSWAP_DISABLE`
/// only (#9856), `HSA_HOTSWAP_ENABLE` only (#11526/#11576); both or neither:
/// cannot tell.
pub fn gate_of(facts: &HookFacts) -> Option<HookGate> {
    match (facts.reads_disable, facts.reads_enable) {
        (true, false) => Some(HookGate::DisableVariable),
        (false, true) => Some(HookGate::EnableVariable),
        _ => None,
    }
}

/// What to set so neither gate nor `HSA_TOOLS_LIB` loads the hook and this tool
/// stays on.
pub fn use_this_tool_instead(named_in_tools_lib: bool) -> String {
    format!(
        "HSA_HOTSWAP_DISABLE=1 HSA_HOTSWAP_TOOL_ENABLE=1 with {HSA_HOTSWAP_ENABLE} unset (closes \
         both of ROCr's gates and keeps this tool on){}",
        if named_in_tools_lib {
            format!(", and remove {ROCR_HOOK_LIBRARY} from HSA_TOOLS_LIB")
        } else {
            String::new()
        }
    )
}

/// Predicts ROCr's hook for the environment `env` and `facts`.
pub fn predict_hook(env: &dyn Fn(&str) -> Option<String>, facts: &HookFacts) -> HookPrediction {
    let gate = gate_of(facts);
    let readings: Vec<(HookGate, bool)> = match gate {
        Some(g) => vec![(g, g.opens(env))],
        None => HookGate::ALL.iter().map(|&g| (g, g.opens(env))).collect(),
    };
    let opens = readings.iter().any(|&(_, o)| o);
    let by_gate = facts.known && facts.a0_gpu && opens && facts.library_found;
    let by_tools_lib = facts.named_in_tools_lib && facts.tools_lib_loads;
    let would_load = by_gate || by_tools_lib;
    let gate_text = match gate {
        Some(HookGate::DisableVariable) => {
            "its gate is HSA_HOTSWAP_DISABLE (on by default on A0; HSA_HOTSWAP_DISABLE=1 \
             switches it off)"
                .to_owned()
        }
        Some(HookGate::EnableVariable) => {
            "its gate is the opt-in HSA_HOTSWAP_ENABLE (off by default; HSA_HOTSWAP_ENABLE=1 \
             switches it on)"
                .to_owned()
        }
        None => format!(
            "which gate it uses cannot be told from this ROCr: with the HSA_HOTSWAP_DISABLE gate \
             it would {}, with the opt-in HSA_HOTSWAP_ENABLE gate it would {}",
            if readings[0].1 { "load" } else { "stay off" },
            if readings[1].1 { "load" } else { "stay off" }
        ),
    };
    let mut explanation = if !facts.known {
        "this ROCr has no hotswap hook of its own".to_owned()
    } else if !opens {
        format!("this ROCr has its own hotswap hook, kept off by the variables; {gate_text}")
    } else if !facts.a0_gpu {
        format!(
            "this ROCr has its own hotswap hook ({gate_text}); it loads only with a gfx1250 A0 \
             GPU, and there is none"
        )
    } else if !facts.library_found {
        format!(
            "this ROCr would load its hotswap hook ({gate_text}) but {ROCR_HOOK_LIBRARY} is not \
             found: hsa_init fails"
        )
    } else {
        format!("ROCr loads its own hotswap hook before any HSA_TOOLS_LIB tool ({gate_text})")
    };
    if facts.named_in_tools_lib {
        explanation = if !facts.tools_lib_loads {
            format!(
                "{explanation}; HSA_TOOLS_LIB names {ROCR_HOOK_LIBRARY}, but ROCr skips \
                 HSA_TOOLS_LIB tools here (rocprofiler-register)"
            )
        } else if by_gate {
            format!(
                "{explanation}; HSA_TOOLS_LIB names {ROCR_HOOK_LIBRARY} too: its second OnLoad \
                 refuses (already installed) and ROCr counts it as a failed tool"
            )
        } else {
            format!(
                "{explanation}; HSA_TOOLS_LIB names {ROCR_HOOK_LIBRARY}: ROCr loads it as a tool"
            )
        };
    }
    if would_load && facts.strict_named_a0 {
        explanation.push_str(
            "; an A0 is reported as gfx1250-strict (HSA_DISABLE_GFX12_STRICT=0): the hook passes \
             every object through on it (it reads the agent name's last part, \"strict\", as not \
             gfx1250), so B0 code is translated by neither tool there; leave \
             HSA_DISABLE_GFX12_STRICT unset, or use this tool",
        );
    }
    HookPrediction {
        gate,
        by_gate,
        would_load,
        explanation,
        set: would_load.then(|| use_this_tool_instead(facts.named_in_tools_lib)),
    }
}

/// The gate readings for the report.
pub fn readings(env: &dyn Fn(&str) -> Option<String>, gate: Option<HookGate>) -> Vec<GateReading> {
    let gates: Vec<HookGate> = gate.map_or(HookGate::ALL.to_vec(), |g| vec![g]);
    gates
        .into_iter()
        .map(|g| GateReading {
            variable: g.variable(),
            opens: g.opens(env),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        move |n| {
            pairs
                .iter()
                .find(|(k, _)| *k == n)
                .map(|(_, v)| v.to_string())
        }
    }

    fn rocr(register: bool) -> Rocr {
        Rocr {
            library: None,
            version: None,
            needed: Vec::new(),
            runpath: Vec::new(),
            links_rocprofiler_register: register,
            v1_tools_gate: register,
            names_this_tool: false,
            knows_hotswap_hook: true,
            reads_hotswap_disable: true,
            reads_hotswap_enable: false,
            reads_gfx12_strict: true,
        }
    }

    #[test]
    fn the_register_gate_as_it_is_now() {
        let g = register_gate(&env(&[]), &rocr(false));
        assert_eq!((g.tools_lib, g.set), ("loaded", None));
        let g = register_gate(&env(&[]), &rocr(true));
        assert_eq!(g.tools_lib, "skipped-if-sdk-tool");
        assert_eq!(g.set.as_deref(), Some("HSA_TOOLS_ROCPROFILER_V1_TOOLS=1"));
        let g = register_gate(
            &env(&[("ROCP_TOOL_LIBRARIES", "/x/libtool.so")]),
            &rocr(true),
        );
        assert_eq!(g.tools_lib, "skipped");
        assert!(
            g.explanation
                .contains("sets HSA_TOOLS_ROCPROFILER_V1_TOOLS=0"),
            "{}",
            g.explanation
        );
        assert!(!g.explanation.contains("unverified"));
        // The SDK's own 0 keeps them out; 1 lets them in.
        let g = register_gate(
            &env(&[
                ("ROCP_TOOL_LIBRARIES", "/x/t.so"),
                ("HSA_TOOLS_ROCPROFILER_V1_TOOLS", "0"),
            ]),
            &rocr(true),
        );
        assert_eq!(g.tools_lib, "skipped");
        let g = register_gate(
            &env(&[
                ("ROCP_TOOL_LIBRARIES", "/x/t.so"),
                ("HSA_TOOLS_ROCPROFILER_V1_TOOLS", "1"),
            ]),
            &rocr(true),
        );
        assert_eq!((g.tools_lib, g.set), ("loaded", None));
        let g = register_gate(
            &env(&[(
                "LD_PRELOAD",
                "/opt/rocm/lib/rocprofiler-sdk/librocprofiler-sdk-tool.so",
            )]),
            &rocr(true),
        );
        assert_eq!(g.tools_lib, "skipped");
    }

    #[test]
    fn at_secure_from_auxv() {
        let entry = |k: u64, v: u64| [k.to_ne_bytes(), v.to_ne_bytes()].concat();
        let auxv = [entry(6, 4096), entry(23, 1), entry(0, 0)].concat();
        assert!(at_secure_of(&auxv));
        let auxv = [entry(6, 4096), entry(23, 0), entry(0, 0)].concat();
        assert!(!at_secure_of(&auxv));
        assert!(!at_secure_of(&[]));
        assert!(
            !secure_process().this_process,
            "the test runs without AT_SECURE"
        );
    }

    fn facts() -> HookFacts {
        HookFacts {
            known: true,
            a0_gpu: true,
            library_found: true,
            tools_lib_loads: true,
            ..HookFacts::default()
        }
    }

    #[test]
    fn each_gate_and_both_readings() {
        let disable_gate = HookFacts {
            reads_disable: true,
            ..facts()
        };
        let p = predict_hook(&env(&[]), &disable_gate);
        assert_eq!(p.gate, Some(HookGate::DisableVariable));
        assert!(p.would_load && p.by_gate);
        assert!(p
            .set
            .as_deref()
            .unwrap()
            .contains("HSA_HOTSWAP_DISABLE=1 HSA_HOTSWAP_TOOL_ENABLE=1"));
        assert!(!predict_hook(&env(&[("HSA_HOTSWAP_DISABLE", "1")]), &disable_gate).would_load);

        let enable_gate = HookFacts {
            reads_enable: true,
            ..facts()
        };
        let p = predict_hook(&env(&[]), &enable_gate);
        assert_eq!(p.gate, Some(HookGate::EnableVariable));
        assert!(!p.would_load && p.set.is_none());
        assert!(predict_hook(&env(&[("HSA_HOTSWAP_ENABLE", "1")]), &enable_gate).would_load);

        // Both names in the file: both readings, loaded if either opens.
        let unknown = HookFacts {
            reads_disable: true,
            reads_enable: true,
            ..facts()
        };
        let p = predict_hook(&env(&[]), &unknown);
        assert_eq!(p.gate, None);
        assert!(p.would_load);
        assert!(
            p.explanation
                .contains("HSA_HOTSWAP_DISABLE gate it would load")
                && p.explanation
                    .contains("HSA_HOTSWAP_ENABLE gate it would stay off"),
            "{}",
            p.explanation
        );
        let closed = env(&[("HSA_HOTSWAP_DISABLE", "1")]);
        assert!(!predict_hook(&closed, &unknown).would_load);
        assert_eq!(readings(&closed, None).len(), 2);
        // No A0: the gate does not matter.
        let no_a0 = HookFacts {
            a0_gpu: false,
            ..disable_gate
        };
        assert!(!predict_hook(&env(&[]), &no_a0).would_load);
    }

    #[test]
    fn named_in_tools_lib_strict_and_missing() {
        let named = HookFacts {
            known: false,
            named_in_tools_lib: true,
            ..facts()
        };
        let p = predict_hook(&env(&[]), &named);
        assert!(p.would_load && !p.by_gate);
        assert!(p
            .set
            .as_deref()
            .unwrap()
            .contains("remove libhsa_hotswap_rocjitsu.so"));
        // Skipped with every HSA_TOOLS_LIB tool by rocprofiler-register.
        let skipped = HookFacts {
            tools_lib_loads: false,
            ..named
        };
        assert!(!predict_hook(&env(&[]), &skipped).would_load);
        // Gate and HSA_TOOLS_LIB: the second OnLoad refuses.
        let both = HookFacts {
            known: true,
            reads_disable: true,
            ..named
        };
        assert!(predict_hook(&env(&[]), &both)
            .explanation
            .contains("already installed"));
        let strict = HookFacts {
            reads_disable: true,
            strict_named_a0: true,
            ..facts()
        };
        let p = predict_hook(&env(&[]), &strict);
        assert!(
            p.explanation.contains("translated by neither tool"),
            "{}",
            p.explanation
        );
        let missing = HookFacts {
            reads_disable: true,
            library_found: false,
            ..facts()
        };
        assert!(predict_hook(&env(&[]), &missing)
            .explanation
            .contains("hsa_init fails"));
    }
}
