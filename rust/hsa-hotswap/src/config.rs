//! Every environment variable the tool reads, read in one place, into one of
//! two snapshots, each its own type so that which one a variable is read from
//! is a compile-time fact:
//!
//! - [`LoadConfig`]: what `OnLoad` reads, afresh at each call
//!   ([`LoadConfig::from_env`]): whether the tool is switched off, the
//!   entry-trampoline opt-in, logging. The session of that `OnLoad` sees only
//!   this.
//! - [`Config`]: the process's snapshot, taken once on first use
//!   ([`Config::process`]): what the C API, the rewriter choice and the
//!   rewrite cache read (`HSA_TOOLS_LIB`, the switch, logging for the C API,
//!   the rewriter, the cache), so that every runtime instance of the process
//!   uses one rewriter and one cache. `hotswap doctor` and `hotswap cache`
//!   build both from the environment they examine.
//!
//! A new variable is a name constant here, a field of the snapshot of the code
//! that reads it and one line in that type's `from_lookup` (both when both
//! read it). Nothing else in the crate reads the environment.
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
/// The persistent rewrite cache's switch: unset or empty is on, a false word
/// (`off`, `0`, ...) turns it off.
pub const HSA_HOTSWAP_CACHE: &str = "HSA_HOTSWAP_CACHE";
/// The rewrite cache's directory (absolute), before `$XDG_CACHE_HOME/hotswap`
/// and `$HOME/.cache/hotswap`.
pub const HSA_HOTSWAP_CACHE_DIR: &str = "HSA_HOTSWAP_CACHE_DIR";
/// The read-only store of pretranslated entries, consulted after the cache
/// (absolute directory; `off`: none; unset: `<prefix>/share/hotswap/store`).
pub const HSA_HOTSWAP_CACHE_STORE: &str = "HSA_HOTSWAP_CACHE_STORE";
/// The rewrite cache's size bound: bytes, or a number with `K`, `M`, `G` or
/// `T` (powers of 1024).
pub const HSA_HOTSWAP_CACHE_MAX: &str = "HSA_HOTSWAP_CACHE_MAX";
/// Seconds a process waits for another one rewriting the same object before it
/// rewrites it itself.
pub const HSA_HOTSWAP_CACHE_LOCK_TIMEOUT: &str = "HSA_HOTSWAP_CACHE_LOCK_TIMEOUT";
/// The XDG base directory of per-user caches.
pub const XDG_CACHE_HOME: &str = "XDG_CACHE_HOME";
/// The user's home directory.
pub const HOME: &str = "HOME";

/// What `OnLoad` reads, one snapshot per call ([`LoadConfig::from_env`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LoadConfig {
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
}

impl LoadConfig {
    /// True when this tool is switched off: `HSA_HOTSWAP_DISABLE` without
    /// `HSA_HOTSWAP_TOOL_ENABLE`.
    pub fn tool_disabled(&self) -> bool {
        self.disable && !self.tool_enable
    }

    /// Reads `OnLoad`'s variables from the process environment now.
    pub fn from_env() -> LoadConfig {
        LoadConfig::from_lookup(lossy_env)
    }

    /// Builds `OnLoad`'s snapshot from `lookup(name)` (the environment, or a
    /// test's map).
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> LoadConfig {
        let flag = |name| is_true(lookup(name).as_deref());
        LoadConfig {
            disable: flag(HSA_HOTSWAP_DISABLE),
            tool_enable: flag(HSA_HOTSWAP_TOOL_ENABLE),
            entry_trampolines: flag(AMD_COMGR_HOTSWAP_ENTRY_TRAMPOLINES),
            log: lookup(HSA_HOTSWAP_LOG),
            log_level: lookup(HSA_HOTSWAP_LOG_LEVEL),
            verbose: flag(HSA_HOTSWAP_VERBOSE),
        }
    }

    /// The logging variables.
    pub fn log_vars(&self) -> LogVars<'_> {
        LogVars {
            log: self.log.as_deref(),
            level: self.log_level.as_deref(),
            verbose: self.verbose,
        }
    }
}

/// The logging variables of either snapshot, for the logger.
#[derive(Clone, Copy, Debug)]
pub struct LogVars<'a> {
    /// `HSA_HOTSWAP_LOG`.
    pub log: Option<&'a str>,
    /// `HSA_HOTSWAP_LOG_LEVEL`.
    pub level: Option<&'a str>,
    /// `HSA_HOTSWAP_VERBOSE`.
    pub verbose: bool,
}

/// The process's snapshot ([`Config::process`]): what the C API, the rewriter
/// choice and the rewrite cache read. `OnLoad` reads a [`LoadConfig`] instead.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Config {
    /// `HSA_TOOLS_LIB`, its bytes as ROCr's `getenv` sees them (not converted
    /// to UTF-8: the tool-list parser must give ROCr's answer for any bytes).
    pub tools_lib: Option<Vec<u8>>,
    /// `HSA_HOTSWAP_DISABLE`.
    pub disable: bool,
    /// `HSA_HOTSWAP_TOOL_ENABLE`.
    pub tool_enable: bool,
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
    /// `HSA_HOTSWAP_CACHE` is a false word (unset or empty: the cache is on).
    pub cache_off: bool,
    /// `HSA_HOTSWAP_CACHE_DIR`, raw; empty counts as unset.
    pub cache_dir: Option<String>,
    /// `HSA_HOTSWAP_CACHE_STORE`, raw; empty counts as unset.
    pub cache_store: Option<String>,
    /// `HSA_HOTSWAP_CACHE_MAX`, raw (validated by the cache).
    pub cache_max: Option<String>,
    /// `HSA_HOTSWAP_CACHE_LOCK_TIMEOUT`, raw (validated by the cache).
    pub cache_lock_timeout: Option<String>,
    /// `XDG_CACHE_HOME`; empty counts as unset.
    pub xdg_cache_home: Option<String>,
    /// `HOME`; empty counts as unset.
    pub home: Option<String>,
}

impl Config {
    /// True when this tool is switched off: `HSA_HOTSWAP_DISABLE` without
    /// `HSA_HOTSWAP_TOOL_ENABLE`.
    pub fn tool_disabled(&self) -> bool {
        self.disable && !self.tool_enable
    }

    /// Reads every variable from the process environment now:
    /// `HSA_TOOLS_LIB` as its bytes, the others lossily as UTF-8.
    pub fn from_env() -> Config {
        use std::os::unix::ffi::OsStringExt;
        Config {
            tools_lib: std::env::var_os(HSA_TOOLS_LIB).map(OsStringExt::into_vec),
            ..Config::from_lookup(lossy_env)
        }
    }

    /// Builds a snapshot from `lookup(name)` (a test's map; `HSA_TOOLS_LIB` is
    /// then the UTF-8 bytes of its value).
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Config {
        let flag = |name| is_true(lookup(name).as_deref());
        let non_empty = |name| lookup(name).filter(|v: &String| !v.is_empty());
        Config {
            tools_lib: lookup(HSA_TOOLS_LIB).map(String::into_bytes),
            disable: flag(HSA_HOTSWAP_DISABLE),
            tool_enable: flag(HSA_HOTSWAP_TOOL_ENABLE),
            log: lookup(HSA_HOTSWAP_LOG),
            log_level: lookup(HSA_HOTSWAP_LOG_LEVEL),
            verbose: flag(HSA_HOTSWAP_VERBOSE),
            rewriter: lookup(HSA_HOTSWAP_REWRITER).filter(|v| !v.is_empty()),
            native_allow_partial: flag(HSA_HOTSWAP_NATIVE_ALLOW_PARTIAL),
            cache_off: lookup(HSA_HOTSWAP_CACHE)
                .is_some_and(|v| !v.trim().is_empty() && !is_true(Some(&v))),
            cache_dir: non_empty(HSA_HOTSWAP_CACHE_DIR),
            cache_store: non_empty(HSA_HOTSWAP_CACHE_STORE),
            cache_max: non_empty(HSA_HOTSWAP_CACHE_MAX),
            cache_lock_timeout: non_empty(HSA_HOTSWAP_CACHE_LOCK_TIMEOUT),
            xdg_cache_home: non_empty(XDG_CACHE_HOME),
            home: non_empty(HOME),
        }
    }

    /// The snapshot taken on first use in this process: the C API's, and what
    /// the process-wide rewriter and rewrite cache are resolved from.
    pub fn process() -> &'static Config {
        static PROCESS: OnceLock<Config> = OnceLock::new();
        PROCESS.get_or_init(Config::from_env)
    }

    /// The logging variables (the C API's logger).
    pub fn log_vars(&self) -> LogVars<'_> {
        LogVars {
            log: self.log.as_deref(),
            level: self.log_level.as_deref(),
            verbose: self.verbose,
        }
    }
}

/// The variable `name` from the process environment, converted lossily.
fn lossy_env(name: &str) -> Option<String> {
    std::env::var_os(name).map(|v| v.to_string_lossy().into_owned())
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
        assert!(!config.disable && config.verbose);
        assert!(config.tool_enable && !config.tool_disabled());
        assert_eq!(config.log.as_deref(), Some("syslog"));
        assert_eq!(config.log_level.as_deref(), Some("debug"));
        assert_eq!(config.rewriter, None, "empty is unset");
        assert!(config.native_allow_partial);
        assert_eq!(Config::from_lookup(|_| None), Config::default());
        // OnLoad's snapshot: the same reading of the variables it shares.
        let load = LoadConfig::from_lookup(lookup);
        assert!(!load.disable && load.tool_enable && !load.tool_disabled());
        assert!(load.entry_trampolines && load.verbose);
        assert_eq!(load.log.as_deref(), Some("syslog"));
        assert_eq!(load.log_level.as_deref(), Some("debug"));
        assert_eq!(LoadConfig::from_lookup(|_| None), LoadConfig::default());
    }

    #[test]
    fn the_cache_is_on_unless_switched_off() {
        let with = |value: Option<&'static str>| {
            Config::from_lookup(move |name| {
                (name == HSA_HOTSWAP_CACHE)
                    .then_some(value)
                    .flatten()
                    .map(str::to_owned)
            })
        };
        assert!(!with(None).cache_off);
        assert!(!with(Some("")).cache_off, "empty is unset");
        assert!(!with(Some("on")).cache_off);
        assert!(!with(Some("1")).cache_off);
        assert!(with(Some("off")).cache_off);
        assert!(with(Some("0")).cache_off);
        let dirs = Config::from_lookup(|name| match name {
            HSA_HOTSWAP_CACHE_DIR => Some("/c".into()),
            HSA_HOTSWAP_CACHE_MAX => Some("1G".into()),
            HSA_HOTSWAP_CACHE_LOCK_TIMEOUT => Some("5".into()),
            XDG_CACHE_HOME => Some(String::new()),
            HOME => Some("/home/u".into()),
            _ => None,
        });
        assert_eq!(dirs.cache_dir.as_deref(), Some("/c"));
        assert_eq!(dirs.cache_max.as_deref(), Some("1G"));
        assert_eq!(dirs.cache_lock_timeout.as_deref(), Some("5"));
        assert_eq!(dirs.xdg_cache_home, None, "empty is unset");
        assert_eq!(dirs.home.as_deref(), Some("/home/u"));
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
