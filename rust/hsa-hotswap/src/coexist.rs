//! Never two hotswap tools in one process: ROCr's own hook.
//!
//! ROCr (rocm-systems PR 9856 and later) loads its own hotswap tool,
//! `libhsa_hotswap_rocjitsu.so`, on a machine with a gfx1250 A0 GPU, before any
//! `HSA_TOOLS_LIB` tool, and it wraps a superset of our slots: with both active
//! every B0 object would be translated twice. What lets it in ([`HookGate`]):
//! - the `HSA_HOTSWAP_DISABLE` gate (#9856; the shipping environment-variable
//!   documentation): loaded unless the variable is true, so on by default on A0;
//! - the `HSA_HOTSWAP_ENABLE` gate (open PRs #11526/#11576; a newer rocjitsu user
//!   guide): loaded only with `HSA_HOTSWAP_ENABLE=1`, off by default.
//!
//! Which gate a ROCr has is not visible from its version, so a tool must expect
//! either. Independently of both, naming the hook's library in `HSA_TOOLS_LIB`
//! loads it as an ordinary tool ([`HookOrigin::ToolsLib`]).
//!
//! The hook exports nothing distinctive (only `OnLoad`/`OnUnload`), so it is
//! recognised by facts a test can reproduce:
//! - a loaded object whose file name is `libhsa_hotswap_rocjitsu.so`
//!   (`dl_iterate_phdr`): true whichever tool was loaded first;
//! - a slot we are about to patch already holding a function of that library
//!   (`dladdr`): ROCr (either gate), or an earlier `HSA_TOOLS_LIB` entry,
//!   installed it before us.
//!
//! When it is active this tool rewrites nothing (see `crate::session`), on every
//! agent. [`hook_load`] states what the hook itself then does with each load,
//! from its source: on an A0 agent whose first ISA is `…--gfx1250` it translates
//! gfx1250 objects (`EF_AMDGPU_MACH` 0x49) and loads every other object (0xEB
//! gfx1250-strict code included) unchanged; an A0 reported as
//! `…--gfx1250-strict` (`HSA_DISABLE_GFX12_STRICT=0`) it loads for, but its
//! per-load classification keeps the text after the name's last `-`
//! (`strict`), so there it passes every object through, B0 code included.
//! gfx1250-strict objects are A0 code and need no rewrite either way; B0 code
//! on a strict-named A0 is then translated by neither tool, which the stand-back
//! warning says, with what to set.

#[cfg(test)]
use hotswap_code_object::isa_name::processor_of;

use crate::config::{self, Config};
use crate::dl;
use crate::tools_lib::{parse_tool_names, ToolNames};

/// The file name of ROCr's hotswap hook.
pub const ROCR_HOOK_LIBRARY: &str = "libhsa_hotswap_rocjitsu.so";

/// How ROCr's hook was recognised.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RocrHook {
    /// A slot we patch already holds a function of the hook (`slot`, `path`).
    WrapsSlot {
        /// The slot's member name.
        slot: &'static str,
        /// The hook library's path.
        path: String,
    },
    /// The hook library is loaded in the process.
    Loaded {
        /// Its path.
        path: String,
    },
}

impl std::fmt::Display for RocrHook {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::WrapsSlot { slot, path } => write!(f, "{path} already wraps {slot}"),
            Self::Loaded { path } => write!(f, "{path} is loaded in this process"),
        }
    }
}

/// True when `path` names ROCr's hook library.
fn is_hook(path: &str) -> bool {
    dl::file_name(path) == ROCR_HOOK_LIBRARY
}

/// ROCr's hook, if active: one of `slots` (name, current value) holds one of
/// its functions, or the library is loaded.
pub fn detect(slots: &[(&'static str, usize)]) -> Option<RocrHook> {
    for &(slot, value) in slots {
        if let Some(path) = object_of(value).filter(|p| is_hook(p)) {
            return Some(RocrHook::WrapsSlot { slot, path });
        }
    }
    detect_loaded()
}

/// ROCr's hook, if its library is loaded in the process.
pub fn detect_loaded() -> Option<RocrHook> {
    #[cfg(any(test, feature = "testing"))]
    if let Some(path) = testing::loaded() {
        return Some(RocrHook::Loaded { path });
    }
    dl::loaded_objects()
        .into_iter()
        .find(|p| is_hook(p))
        .map(|path| RocrHook::Loaded { path })
}

/// The file of the loaded object holding `address` (a fake hook's functions
/// count as the hook's library in tests).
fn object_of(address: usize) -> Option<String> {
    #[cfg(any(test, feature = "testing"))]
    if let Some(path) = testing::object_of(address) {
        return Some(path);
    }
    dl::object_of(address)
}

/// What lets ROCr load its hook.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HookGate {
    /// Loaded on A0 unless `HSA_HOTSWAP_DISABLE` is true (rocm-systems #9856;
    /// the shipping documentation).
    DisableVariable,
    /// Loaded on A0 only when `HSA_HOTSWAP_ENABLE` is true (rocm-systems
    /// #11526/#11576; the newer rocjitsu user guide).
    EnableVariable,
}

/// `HSA_HOTSWAP_ENABLE`, the opt-in gate's variable.
pub const HSA_HOTSWAP_ENABLE: &str = "HSA_HOTSWAP_ENABLE";

impl HookGate {
    /// Both gates, the shipping one first.
    pub const ALL: [HookGate; 2] = [HookGate::DisableVariable, HookGate::EnableVariable];

    /// True when this gate lets the hook in (with an A0 GPU present), for the
    /// environment `lookup`.
    pub fn opens(self, lookup: &dyn Fn(&str) -> Option<String>) -> bool {
        match self {
            Self::DisableVariable => {
                !config::is_true(lookup(config::HSA_HOTSWAP_DISABLE).as_deref())
            }
            Self::EnableVariable => config::is_true(lookup(HSA_HOTSWAP_ENABLE).as_deref()),
        }
    }

    /// The variable that decides it.
    pub fn variable(self) -> &'static str {
        match self {
            Self::DisableVariable => config::HSA_HOTSWAP_DISABLE,
            Self::EnableVariable => HSA_HOTSWAP_ENABLE,
        }
    }

    /// How to keep the hook off under this gate.
    pub fn to_close(self) -> &'static str {
        match self {
            Self::DisableVariable => "HSA_HOTSWAP_DISABLE=1",
            Self::EnableVariable => "HSA_HOTSWAP_ENABLE unset (or 0)",
        }
    }
}

/// True when ROCr loads its hook for an agent with this first ISA name and
/// ASIC revision (newest `LoadHotswapTool`: `gfx1250` or `gfx1250-strict`,
/// revision 0). The tests hold [`hook_load`] against it.
#[cfg(test)]
pub fn rocr_loads_hook_for(first_isa: &str, revision: Option<u32>) -> bool {
    matches!(processor_of(first_isa), "gfx1250" | "gfx1250-strict") && revision == Some(0)
}

/// What the hook does with one `hsa_executable_load_agent_code_object` (the
/// fake hook of [`crate::testing`] follows it).
#[cfg(any(test, feature = "testing"))]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HookLoad {
    /// Not a gfx1250 A0 agent to it (B0, another processor, or an A0 named
    /// `gfx1250-strict`): the application's reader, untouched.
    PassesThrough,
    /// An A0 agent, an object that is not gfx1250 (0xEB strict code included):
    /// its saved copy, unchanged, through a reader of its own.
    LoadsCopyUnchanged,
    /// An A0 agent and a gfx1250 (0x49) object: translated B0 to A0 (a refusal
    /// fails the load; there is no fallback to the original).
    Translates,
    /// The agent's revision cannot be read: the load fails with
    /// `HSA_STATUS_ERROR_INVALID_AGENT`.
    InvalidAgent,
}

/// The hook's rule for one load, from its source (`classify_agent`, then the
/// object's `EF_AMDGPU_MACH`): the agent's first ISA name, its ASIC revision
/// (`None`: the query fails), the object's MACH.
#[cfg(any(test, feature = "testing"))]
pub fn hook_load(first_isa: &str, revision: Option<u32>, object_mach: u32) -> HookLoad {
    // The text after the last '-', cut at ':' ("…--gfx1250-strict" gives "strict").
    let tail = first_isa.rsplit('-').next().unwrap_or(first_isa);
    let tail = tail.split(':').next().unwrap_or(tail);
    if tail != "gfx1250" {
        return HookLoad::PassesThrough;
    }
    match revision {
        None => HookLoad::InvalidAgent,
        Some(0) if object_mach == 0x49 => HookLoad::Translates,
        Some(0) => HookLoad::LoadsCopyUnchanged,
        Some(_) => HookLoad::PassesThrough,
    }
}

/// How the hook got into the process, as far as `HSA_TOOLS_LIB` tells.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HookOrigin {
    /// `HSA_TOOLS_LIB` names it (ROCr's gate may have loaded it first; then the
    /// `HSA_TOOLS_LIB` copy's `OnLoad` refuses, "already installed").
    ToolsLib,
    /// Not named there: ROCr's own gate loaded it.
    RocrGate,
}

/// The origin for an `HSA_TOOLS_LIB` value.
pub fn origin(tools_lib: Option<&[u8]>) -> HookOrigin {
    let names = match tools_lib.map(parse_tool_names) {
        Some(ToolNames::Returned(names)) => names,
        _ => Vec::new(),
    };
    let named = names.iter().any(|n| is_hook(&String::from_utf8_lossy(n)));
    if named {
        HookOrigin::ToolsLib
    } else {
        HookOrigin::RocrGate
    }
}

/// The one warning when the hook is active in this process.
pub fn stand_back_message(hook: &RocrHook) -> String {
    stand_back_message_for(hook, origin(Config::process().tools_lib.as_deref()))
}

/// The warning: what happens, on gfx1250 and strict-named A0 agents, and what to
/// set for `origin` to use this tool instead.
pub fn stand_back_message_for(hook: &RocrHook, origin: HookOrigin) -> String {
    let how = match origin {
        HookOrigin::ToolsLib => format!(
            "HSA_TOOLS_LIB names {ROCR_HOOK_LIBRARY}: remove it from HSA_TOOLS_LIB, and keep ROCr's \
             own gate closed too"
        ),
        HookOrigin::RocrGate => "ROCr loaded it through its own gate".to_owned(),
    };
    format!(
        "ROCr's own hotswap tool is active ({hook}): libhsa-hotswap.so rewrites nothing, so no \
         code object is translated twice (the hook translates gfx1250 code for A0 agents reported \
         as gfx1250 and loads gfx1250-strict code unchanged; for an A0 reported as gfx1250-strict \
         it passes every object through, so B0 code is translated by neither tool there). {how}. \
         To use libhsa-hotswap.so instead, close both of ROCr's gates (HSA_HOTSWAP_DISABLE=1, \
         HSA_HOTSWAP_ENABLE unset), do not name {ROCR_HOOK_LIBRARY} in HSA_TOOLS_LIB, and set \
         HSA_HOTSWAP_TOOL_ENABLE=1, which keeps this tool on although HSA_HOTSWAP_DISABLE is true"
    )
}

/// A fake hook for tests (`cfg(test)` or the `testing` feature): addresses that
/// count as functions of the hook's library, and a hook library "loaded".
#[cfg(any(test, feature = "testing"))]
pub mod testing {
    use std::sync::Mutex;

    /// The path a fake hook is reported under.
    pub const FAKE_HOOK_PATH: &str = "/fake/lib/libhsa_hotswap_rocjitsu.so";

    static ADDRESSES: Mutex<Vec<usize>> = Mutex::new(Vec::new());
    static LOADED: Mutex<bool> = Mutex::new(false);

    /// Makes `addresses` count as the hook's functions, and the hook library as
    /// loaded, until [`clear`].
    pub fn install(addresses: &[usize]) {
        ADDRESSES
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .extend_from_slice(addresses);
        *LOADED.lock().unwrap_or_else(|e| e.into_inner()) = true;
    }

    /// No fake hook.
    pub fn clear() {
        ADDRESSES.lock().unwrap_or_else(|e| e.into_inner()).clear();
        *LOADED.lock().unwrap_or_else(|e| e.into_inner()) = false;
    }

    pub(super) fn object_of(address: usize) -> Option<String> {
        let fake = ADDRESSES
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .contains(&address);
        fake.then(|| FAKE_HOOK_PATH.to_owned())
    }

    pub(super) fn loaded() -> Option<String> {
        let loaded = *LOADED.lock().unwrap_or_else(|e| e.into_inner());
        loaded.then(|| FAKE_HOOK_PATH.to_owned())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_exact_file_name_is_the_hook() {
        assert!(is_hook("/opt/rocm/lib/libhsa_hotswap_rocjitsu.so"));
        assert!(is_hook("libhsa_hotswap_rocjitsu.so"));
        assert!(!is_hook("/opt/rocm/lib/libhsa_hotswap_rocjitsu.so.1"));
        assert!(!is_hook("/opt/rocm/lib/libhsa-hotswap.so"));
        assert!(!is_hook(""));
    }

    #[test]
    fn nothing_in_this_test_process_is_the_hook() {
        let strlen = libc::strlen as *const () as usize;
        assert_eq!(detect(&[("hsa_x_fn", strlen), ("hsa_y_fn", 0)]), None);
    }

    #[test]
    fn the_message_names_the_variables() {
        let m = stand_back_message(&RocrHook::Loaded {
            path: "/x/libhsa_hotswap_rocjitsu.so".into(),
        });
        for v in [
            "HSA_HOTSWAP_DISABLE=1",
            "HSA_HOTSWAP_ENABLE",
            "HSA_HOTSWAP_TOOL_ENABLE=1",
            "HSA_TOOLS_LIB",
        ] {
            assert!(m.contains(v), "{v}");
        }
    }

    const P: &str = "amdgcn-amd-amdhsa--";

    #[test]
    fn the_hooks_rule_per_agent_and_object() {
        use HookLoad::*;
        let gfx1250 = format!("{P}gfx1250");
        let strict = format!("{P}gfx1250-strict");
        let cases: &[(&str, Option<u32>, u32, HookLoad)] = &[
            (&gfx1250, Some(0), 0x49, Translates),
            (&gfx1250, Some(0), 0xeb, LoadsCopyUnchanged),
            (&gfx1250, Some(0), 0x4c, LoadsCopyUnchanged),
            (&gfx1250, Some(1), 0x49, PassesThrough),
            (&gfx1250, None, 0x49, InvalidAgent),
            // "strict" after the last '-': not gfx1250 to the hook.
            (&strict, Some(0), 0x49, PassesThrough),
            (&strict, Some(0), 0xeb, PassesThrough),
            (
                "amdgcn-amd-amdhsa--gfx942:sramecc+:xnack-",
                Some(0),
                0x49,
                PassesThrough,
            ),
            ("", None, 0x49, PassesThrough),
        ];
        for &(isa, revision, mach, expected) in cases {
            assert_eq!(
                hook_load(isa, revision, mach),
                expected,
                "{isa} {revision:?} {mach:#x}"
            );
        }
        // ROCr still loads it for both spellings of an A0.
        assert!(rocr_loads_hook_for(&gfx1250, Some(0)));
        assert!(rocr_loads_hook_for(&strict, Some(0)));
        assert!(!rocr_loads_hook_for(&gfx1250, Some(1)));
        assert!(!rocr_loads_hook_for(&format!("{P}gfx1251"), Some(0)));
    }

    #[test]
    fn both_gates() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |n: &str| {
                pairs
                    .iter()
                    .find(|(k, _)| *k == n)
                    .map(|(_, v)| v.to_string())
            }
        };
        let unset = env(&[]);
        assert!(
            HookGate::DisableVariable.opens(&unset),
            "on by default on A0"
        );
        assert!(
            !HookGate::EnableVariable.opens(&unset),
            "opt-in: off by default"
        );
        let disabled = env(&[("HSA_HOTSWAP_DISABLE", "1")]);
        assert!(!HookGate::DisableVariable.opens(&disabled));
        let enabled = env(&[("HSA_HOTSWAP_ENABLE", "1")]);
        assert!(HookGate::EnableVariable.opens(&enabled));
        assert!(HookGate::DisableVariable.opens(&enabled));
        // The launchers' setting closes both.
        let both_off = env(&[("HSA_HOTSWAP_DISABLE", "1"), ("HSA_HOTSWAP_ENABLE", "0")]);
        for gate in HookGate::ALL {
            assert!(!gate.opens(&both_off), "{gate:?}");
        }
    }

    #[test]
    fn origin_from_tools_lib() {
        assert_eq!(origin(None), HookOrigin::RocrGate);
        assert_eq!(origin(Some(b"libhsa-hotswap.so")), HookOrigin::RocrGate);
        assert_eq!(
            origin(Some(
                b"/opt/rj/lib/libhsa_hotswap_rocjitsu.so libhsa-hotswap.so"
            )),
            HookOrigin::ToolsLib
        );
        assert_eq!(
            origin(Some(b"libhsa_hotswap_rocjitsu.so.1")),
            HookOrigin::RocrGate
        );
        let hook = RocrHook::Loaded {
            path: "/x/libhsa_hotswap_rocjitsu.so".into(),
        };
        let named = stand_back_message_for(&hook, HookOrigin::ToolsLib);
        assert!(named.contains("remove it from HSA_TOOLS_LIB"), "{named}");
        let gated = stand_back_message_for(&hook, HookOrigin::RocrGate);
        assert!(gated.contains("through its own gate"), "{gated}");
        assert!(gated.contains("gfx1250-strict"), "{gated}");
    }

    /// The hook in front of the tool (either gate, or named first in
    /// `HSA_TOOLS_LIB`), and named after it: the tool rewrites nothing on any
    /// agent; what is translated, the hook alone translated once by its rule.
    #[test]
    fn with_the_hook_active_only_the_hook_translates() {
        use crate::config::LoadConfig;
        use crate::hsa::api::HSA_STATUS_SUCCESS;
        use crate::testing::{
            code_object_with_flags, FakeAgent, FakeBackend, FakeMode, FakeRocrHook, FakeRuntime,
        };
        let agents = || {
            vec![
                FakeAgent::gpu(0x5100, &format!("{P}gfx1250"), Some(0)),
                FakeAgent::gpu(0x5180, &format!("{P}gfx1250-strict"), Some(0)),
                FakeAgent::gpu(0x5200, &format!("{P}gfx1250"), Some(1)),
                FakeAgent::gpu(0x5600, &format!("{P}gfx942:sramecc+:xnack-"), Some(0)),
            ]
        };
        let objects = [
            (0x49, code_object_with_flags(0x549)),
            (0xeb, code_object_with_flags(0x0eb)),
            (0x4c, code_object_with_flags(0xe4c)),
        ];
        for hook_first in [true, false] {
            let runtime = if hook_first {
                FakeRuntime::start_with(agents(), Some(&LoadConfig::default()), |core| {
                    FakeRocrHook::install_before_tools(core)
                })
            } else {
                let runtime = FakeRuntime::start_configured(agents(), &LoadConfig::default());
                FakeRocrHook::load_after_tools();
                runtime
            };
            assert!(runtime.on_load);
            let backend = FakeBackend::install(FakeMode::Change);
            let mut expected_translations = 0;
            for agent in agents() {
                for (mach, bytes) in &objects {
                    let (status, load) = runtime.load_memory(bytes, agent.handle);
                    let load = load.expect("loaded");
                    assert_eq!(status, HSA_STATUS_SUCCESS);
                    assert!(
                        !load.marked,
                        "the tool rewrote {mach:#x} on {:#x}",
                        agent.handle
                    );
                    let rule = hook_load(&agent.isa, agent.revision, *mach);
                    let translates = hook_first && rule == HookLoad::Translates;
                    expected_translations += usize::from(translates);
                    assert_eq!(
                        load.hook_marked, translates,
                        "{mach:#x} on {} (hook first: {hook_first})",
                        agent.isa
                    );
                }
            }
            assert_eq!(backend.calls(), 0, "hook first: {hook_first}");
            // Hook first: B0 code on the gfx1250-named A0 only; the strict-named A0
            // gets every object as it is (0xEB code is A0 code; B0 code untranslated).
            assert_eq!(FakeRocrHook::translations(), expected_translations);
            assert_eq!(expected_translations, usize::from(hook_first));
        }
    }
}
