//! The `log` facade's backend: every line starts with `hotswap:` and is written in
//! one piece to stderr, or to syslog with `HSA_HOTSWAP_LOG=syslog` (falling back to
//! stderr when syslog cannot be reached).
//!
//! Level: `HSA_HOTSWAP_LOG_LEVEL` (`off`, `error`, `warn`/`warning`, `info`,
//! `debug`, `trace`); `HSA_HOTSWAP_VERBOSE` true (upstream's variable) raises it
//! to at least `debug`. Default: warnings and errors only, so a HIP application's
//! stderr stays clean. An invalid value gives one warning and the default.
//! Installed once per process (the first `OnLoad`); never panics.

use std::io::Write;
use std::sync::{Mutex, Once};

use log::{Level, LevelFilter, Log, Metadata, Record};

use crate::env;

/// Output selection: `stderr` (default) or `syslog`.
pub const LOG_ENV: &str = "HSA_HOTSWAP_LOG";
/// Level selection.
pub const LOG_LEVEL_ENV: &str = "HSA_HOTSWAP_LOG_LEVEL";
/// Upstream's verbose switch: true = debug.
pub const VERBOSE_ENV: &str = "HSA_HOTSWAP_VERBOSE";

type Syslog = syslog::Logger<syslog::LoggerBackend, syslog::Formatter3164>;

struct Logger {
    syslog: Option<Mutex<Syslog>>,
}

impl Log for Logger {
    fn enabled(&self, metadata: &Metadata<'_>) -> bool {
        metadata.level() <= log::max_level()
    }

    fn log(&self, record: &Record<'_>) {
        if !self.enabled(record.metadata()) {
            return;
        }
        if let Some(syslog) = &self.syslog {
            let message = format!("hotswap: {}", record.args());
            if let Ok(mut s) = syslog.lock() {
                let sent = match record.level() {
                    Level::Error => s.err(&message),
                    Level::Warn => s.warning(&message),
                    Level::Info => s.info(&message),
                    Level::Debug | Level::Trace => s.debug(&message),
                };
                if sent.is_ok() {
                    return;
                }
            }
        }
        let line = format!("hotswap: {}\n", record.args());
        let _ = std::io::stderr().lock().write_all(line.as_bytes());
    }

    fn flush(&self) {}
}

/// The settings read from the environment, with the warnings invalid values earn.
#[derive(Debug, PartialEq, Eq)]
pub struct Settings {
    /// The level filter.
    pub level: LevelFilter,
    /// True to log to syslog.
    pub syslog: bool,
    /// One warning per invalid value.
    pub warnings: Vec<String>,
}

fn parse_level(value: &str) -> Option<LevelFilter> {
    match value.trim().to_ascii_lowercase().as_str() {
        "off" | "none" => Some(LevelFilter::Off),
        "error" => Some(LevelFilter::Error),
        "warn" | "warning" => Some(LevelFilter::Warn),
        "info" => Some(LevelFilter::Info),
        "debug" => Some(LevelFilter::Debug),
        "trace" => Some(LevelFilter::Trace),
        _ => None,
    }
}

/// Computes the settings from the three variables' values.
pub fn settings(log: Option<&str>, level: Option<&str>, verbose: Option<&str>) -> Settings {
    let mut warnings = Vec::new();
    let syslog = match log.map(str::trim) {
        None | Some("") => false,
        Some(v) if v.eq_ignore_ascii_case("stderr") => false,
        Some(v) if v.eq_ignore_ascii_case("syslog") => true,
        Some(v) => {
            warnings.push(format!(
                "{LOG_ENV}={v:?} is not stderr or syslog; using stderr"
            ));
            false
        }
    };
    let mut filter = match level {
        None => LevelFilter::Warn,
        Some(v) if v.trim().is_empty() => LevelFilter::Warn,
        Some(v) => parse_level(v).unwrap_or_else(|| {
            warnings.push(format!(
                "{LOG_LEVEL_ENV}={v:?} is not one of off, error, warn, info, debug, trace; using warn"
            ));
            LevelFilter::Warn
        }),
    };
    if env::is_true(verbose) && filter < LevelFilter::Debug {
        filter = LevelFilter::Debug;
    }
    Settings {
        level: filter,
        syslog,
        warnings,
    }
}

/// Installs the logger once per process (later calls do nothing).
pub fn init() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let s = settings(
            env::var(LOG_ENV).as_deref(),
            env::var(LOG_LEVEL_ENV).as_deref(),
            env::var(VERBOSE_ENV).as_deref(),
        );
        let mut warnings = s.warnings;
        let syslog = if s.syslog {
            let formatter = syslog::Formatter3164 {
                facility: syslog::Facility::LOG_USER,
                hostname: None,
                process: "hotswap".into(),
                pid: std::process::id(),
            };
            match syslog::unix(formatter) {
                Ok(logger) => Some(Mutex::new(logger)),
                Err(e) => {
                    warnings.push(format!("cannot connect to syslog ({e}); logging to stderr"));
                    None
                }
            }
        } else {
            None
        };
        let logger: &'static Logger = Box::leak(Box::new(Logger { syslog }));
        if log::set_logger(logger).is_ok() {
            log::set_max_level(s.level);
        }
        for w in warnings {
            log::warn!("{w}");
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_and_overrides() {
        let s = settings(None, None, None);
        assert_eq!(
            (s.level, s.syslog, s.warnings.len()),
            (LevelFilter::Warn, false, 0)
        );
        assert_eq!(
            settings(None, Some("DEBUG"), None).level,
            LevelFilter::Debug
        );
        assert_eq!(
            settings(None, Some("warning"), None).level,
            LevelFilter::Warn
        );
        assert_eq!(settings(None, None, Some("1")).level, LevelFilter::Debug);
        assert_eq!(settings(None, None, Some("false")).level, LevelFilter::Warn);
        assert_eq!(
            settings(None, Some("trace"), Some("1")).level,
            LevelFilter::Trace
        );
        assert!(settings(Some("syslog"), None, None).syslog);
    }

    #[test]
    fn invalid_values_warn_once_each_and_use_the_default() {
        let s = settings(Some("file"), Some("loud"), None);
        assert_eq!((s.level, s.syslog), (LevelFilter::Warn, false));
        assert_eq!(s.warnings.len(), 2);
    }
}
