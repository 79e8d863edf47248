//! Never two hotswap tools in one process: ROCr's own hook.
//!
//! ROCr (rocm-systems PR 9856 and later) loads its own hotswap tool,
//! `libhsa_hotswap_rocjitsu.so`, on a machine with a gfx1250 A0 GPU unless
//! `HSA_HOTSWAP_DISABLE` is true (open PRs make it opt-in through
//! `HSA_HOTSWAP_ENABLE`). It installs itself before any `HSA_TOOLS_LIB` tool
//! and wraps a superset of our slots, so with both active every B0 object would
//! be translated twice. Users also load it explicitly through `HSA_TOOLS_LIB`.
//!
//! The hook exports nothing distinctive (only `OnLoad`/`OnUnload`), so it is
//! recognised by facts a test can reproduce:
//! - a loaded object whose file name is `libhsa_hotswap_rocjitsu.so`
//!   (`dl_iterate_phdr`): true whichever tool was loaded first;
//! - a slot we are about to patch already holding a function of that library
//!   (`dladdr`): ROCr installed it before us.
//!
//! When it is active this tool rewrites nothing (see `crate::session`).

use crate::dl;

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
        if let Some(path) = dl::object_of(value).filter(|p| is_hook(p)) {
            return Some(RocrHook::WrapsSlot { slot, path });
        }
    }
    detect_loaded()
}

/// ROCr's hook, if its library is loaded in the process.
pub fn detect_loaded() -> Option<RocrHook> {
    dl::loaded_objects()
        .into_iter()
        .find(|p| is_hook(p))
        .map(|path| RocrHook::Loaded { path })
}

/// The one warning when the hook is active: what happens, and which variables
/// choose between the two tools.
pub fn stand_back_message(hook: &RocrHook) -> String {
    format!(
        "ROCr's own hotswap tool is active ({hook}): libhsa-hotswap.so rewrites nothing, so no \
         code object is translated twice. To use libhsa-hotswap.so instead, switch ROCr's hook \
         off (HSA_HOTSWAP_DISABLE=1, or leave HSA_HOTSWAP_ENABLE unset on a ROCr where the hook \
         is opt-in, and do not name {ROCR_HOOK_LIBRARY} in HSA_TOOLS_LIB) and set \
         HSA_HOTSWAP_TOOL_ENABLE=1, which keeps this tool on although HSA_HOTSWAP_DISABLE is true"
    )
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
}
