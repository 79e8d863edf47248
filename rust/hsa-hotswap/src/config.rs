//! Every environment variable the tool reads, read in one place.
//!
//! [`Config::from_env`] takes one snapshot of all of them: `OnLoad` takes one per
//! call, the C API one per process ([`Config::process`]). Nothing else in the
//! crate reads the environment.
//!
//! Booleans follow one rule: unset, empty, `0`, `off`, `false`, `no`, `n` and
//! `f` (any case, surrounding whitespace ignored) are false; anything else is
//! true. A value that is not UTF-8 is read lossily (it is then "true" unless it
//! spells one of the false words); `HSA_TOOLS_LIB` is kept as bytes.

use std::sync::OnceLock;

/// `HSA_TOOLS_LIB`: ROCr's list of tool libraries.
pub const HSA_TOOLS_LIB: &str = "HSA_TOOLS_LIB";
/// `HSA_HOTSWAP_DISABLE`: true turns the tool into a no-op (upstream's switch;
/// ROCr reads it too, for its own hotswap hook).
pub const HSA_HOTSWAP_DISABLE: &str = "HSA_HOTSWAP_DISABLE";
/// `HSA_HOTSWAP_TOOL_ENABLE`: true keeps this tool on even when
/// `HSA_HOTSWAP_DISABLE` is true, so that a user can switch ROCr's own hook off
/// and use this tool instead.
pub const HSA_HOTSWAP_TOOL_ENABLE: &str = "HSA_HOTSWAP_TOOL_ENABLE";
/// Upstream's opt-in for gfx12.5 agents with gfx12.5 code objects.
pub const AMD_COMGR_HOTSWAP_ENTRY_TRAMPOLINES: &str = "AMD_COMGR_HOTSWAP_ENTRY_TRAMPOLINES";
/// Log output selection: `stderr` (default) or `syslog`.
pub const HSA_HOTSWAP_LOG: &str = "HSA_HOTSWAP_LOG";
/// Log level selection.
pub const HSA_HOTSWAP_LOG_LEVEL: &str = "HSA_HOTSWAP_LOG_LEVEL";
/// Upstream's verbose switch: true = debug.
pub const HSA_HOTSWAP_VERBOSE: &str = "HSA_HOTSWAP_VERBOSE";
/// The rewriter to use: an absolute library path, or `native`.
pub const HSA_HOTSWAP_REWRITER: &str = "HSA_HOTSWAP_REWRITER";
/// `HSA_HOTSWAP_REWRITER`'s value that selects the native rewriter.
pub const REWRITER_NATIVE: &str = "native";
/// True: the native rewriter returns a partly fixed code object (sites that
/// need code growth left as they are) instead of refusing it.
pub const HSA_HOTSWAP_NATIVE_ALLOW_PARTIAL: &str = "HSA_HOTSWAP_NATIVE_ALLOW_PARTIAL";

/// One snapshot of the tool's environment variables.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Config {
    /// `HSA_TOOLS_LIB`, its bytes as ROCr's `getenv` sees them (not converted
    /// to UTF-8: the tool-list parser must give ROCr's answer for any bytes).
    pub tools_lib: Option<Vec<u8>>,
    /// `HSA_HOTSWAP_DISABLE`.
    pub disable: bool,
    /// `HSA_HOTSWAP_TOOL_ENABLE`.
    pub tool_enable: bool,
    /// `AMD_COMGR_HOTSWAP_ENTRY_TRAMPOLINES`.
    pub entry_trampolines: bool,
    /// `HSA_HOTSWAP_LOG`, raw (validated by the logger).
    pub log: Option<String>,
    /// `HSA_HOTSWAP_LOG_LEVEL`, raw (validated by the logger).
    pub log_level: Option<String>,
    /// `HSA_HOTSWAP_VERBOSE`.
    pub verbose: bool,
    /// `HSA_HOTSWAP_REWRITER`, raw; empty counts as unset.
    pub rewriter: Option<String>,
    /// `HSA_HOTSWAP_NATIVE_ALLOW_PARTIAL`.
    pub native_allow_partial: bool,
}

impl Config {
    /// True when this tool is switched off: `HSA_HOTSWAP_DISABLE` without
    /// `HSA_HOTSWAP_TOOL_ENABLE`.
    pub fn tool_disabled(&self) -> bool {
        self.disable && !self.tool_enable
    }

    /// Reads every variable from the process environment now.
    pub fn from_env() -> Config {
        Config::from_lookup(|name| std::env::var_os(name).map(|v| v.to_string_lossy().into_owned()))
    }

    /// Builds a snapshot from `lookup(name)` (the environment, or a test's map).
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Config {
        let flag = |name| is_true(lookup(name).as_deref());
        Config {
            tools_lib: lookup(HSA_TOOLS_LIB).map(String::into_bytes),
            disable: flag(HSA_HOTSWAP_DISABLE),
            tool_enable: flag(HSA_HOTSWAP_TOOL_ENABLE),
            entry_trampolines: flag(AMD_COMGR_HOTSWAP_ENTRY_TRAMPOLINES),
            log: lookup(HSA_HOTSWAP_LOG),
            log_level: lookup(HSA_HOTSWAP_LOG_LEVEL),
            verbose: flag(HSA_HOTSWAP_VERBOSE),
            rewriter: lookup(HSA_HOTSWAP_REWRITER).filter(|v| !v.is_empty()),
            native_allow_partial: flag(HSA_HOTSWAP_NATIVE_ALLOW_PARTIAL),
        }
    }

    /// The snapshot taken on first use in this process: the C API's, and what
    /// the process-wide rewriter is resolved from.
    pub fn process() -> &'static Config {
        static PROCESS: OnceLock<Config> = OnceLock::new();
        PROCESS.get_or_init(Config::from_env)
    }
}

/// The project's truthiness rule applied to an optional value.
pub fn is_true(value: Option<&str>) -> bool {
    let Some(value) = value else { return false };
    let value = value.trim();
    !(value.is_empty()
        || ["0", "off", "false", "no", "n", "f"]
            .iter()
            .any(|falsy| value.eq_ignore_ascii_case(falsy)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn false_words() {
        for v in ["", " ", "0", "off", "OFF", "False", "no", "N", "f", " no "] {
            assert!(!is_true(Some(v)), "{v:?} must be false");
        }
        assert!(!is_true(None));
    }

    #[test]
    fn everything_else_is_true() {
        for v in ["1", "yes", "on", "true", "2", "00", "disable", "nope"] {
            assert!(is_true(Some(v)), "{v:?} must be true");
        }
    }

    #[test]
    fn one_snapshot_holds_every_variable() {
        let env = [
            (HSA_TOOLS_LIB, "libhsa-hotswap.so"),
            (HSA_HOTSWAP_DISABLE, "no"),
            (HSA_HOTSWAP_TOOL_ENABLE, "1"),
            (AMD_COMGR_HOTSWAP_ENTRY_TRAMPOLINES, "1"),
            (HSA_HOTSWAP_LOG, "syslog"),
            (HSA_HOTSWAP_LOG_LEVEL, "debug"),
            (HSA_HOTSWAP_VERBOSE, "yes"),
            (HSA_HOTSWAP_REWRITER, ""),
            (HSA_HOTSWAP_NATIVE_ALLOW_PARTIAL, "on"),
        ];
        let lookup = |name: &str| {
            env.iter()
                .find(|(n, _)| *n == name)
                .map(|(_, v)| v.to_string())
        };
        let config = Config::from_lookup(lookup);
        assert_eq!(config.tools_lib.as_deref(), Some(&b"libhsa-hotswap.so"[..]));
        assert!(!config.disable && config.entry_trampolines && config.verbose);
        assert!(config.tool_enable && !config.tool_disabled());
        assert_eq!(config.log.as_deref(), Some("syslog"));
        assert_eq!(config.log_level.as_deref(), Some("debug"));
        assert_eq!(config.rewriter, None, "empty is unset");
        assert!(config.native_allow_partial);
        assert_eq!(Config::from_lookup(|_| None), Config::default());
    }

    #[test]
    fn tool_enable_overrides_disable_for_this_tool_only() {
        let with = |pairs: &[(&str, &str)]| {
            let pairs: Vec<(String, String)> = pairs
                .iter()
                .map(|(n, v)| (n.to_string(), v.to_string()))
                .collect();
            Config::from_lookup(move |name| {
                pairs
                    .iter()
                    .find(|(n, _)| n == name)
                    .map(|(_, v)| v.clone())
            })
        };
        assert!(!with(&[]).tool_disabled());
        assert!(with(&[(HSA_HOTSWAP_DISABLE, "1")]).tool_disabled());
        assert!(
            !with(&[(HSA_HOTSWAP_DISABLE, "1"), (HSA_HOTSWAP_TOOL_ENABLE, "1")]).tool_disabled()
        );
        assert!(
            with(&[(HSA_HOTSWAP_DISABLE, "1"), (HSA_HOTSWAP_TOOL_ENABLE, "0")]).tool_disabled()
        );
    }
}
