//! The `log` facade's backend: every line starts with `hotswap:` and is written in
//! one piece to stderr, or to syslog with `HSA_HOTSWAP_LOG=syslog` (falling back to
//! stderr when syslog cannot be reached).
//!
//! Level: `HSA_HOTSWAP_LOG_LEVEL` (`off`, `error`, `warn`/`warning`, `info`,
//! `debug`, `trace`); `HSA_HOTSWAP_VERBOSE` true (upstream's variable) raises it
//! to at least `debug`. Default: warnings and errors only, so a HIP application's
//! stderr stays clean. An invalid value gives one warning and the default.
//! Installed once per process (the first `OnLoad`, or the first C API call that
//! logs); a panic while installing cannot poison it (a later call tries again).
//!
//! Panics: a panic hook installed with the logger sends a panic raised inside
//! the tool's panic boundary to the log as one `hotswap:` error line, so the
//! application's stderr never sees Rust's default panic text. Panics raised
//! outside the boundary (the host's own Rust code, if any) go to the hook that
//! was installed before ours, unchanged.

use std::cell::Cell;
use std::io::Write;
use std::panic::PanicHookInfo;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

use log::{Level, LevelFilter, Log, Metadata, Record};

use crate::config::{
    self, LogVars, HSA_HOTSWAP_LOG as LOG_ENV, HSA_HOTSWAP_LOG_LEVEL as LOG_LEVEL_ENV,
};

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
pub fn settings(log: Option<&str>, level: Option<&str>, verbose: bool) -> Settings {
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
    if verbose && filter < LevelFilter::Debug {
        filter = LevelFilter::Debug;
    }
    Settings {
        level: filter,
        syslog,
        warnings,
    }
}

thread_local! {
    /// Depth of `ffi_boundary` frames on this thread: a panic raised here is
    /// the tool's own and is logged instead of printed.
    static IN_BOUNDARY: Cell<u32> = const { Cell::new(0) };
}

/// Runs `f` marked as inside the tool's panic boundary on this thread (one
/// thread-local access). `f` must not unwind: the boundary passes a
/// `catch_unwind`.
pub(crate) fn in_boundary<T>(f: impl FnOnce() -> T) -> T {
    IN_BOUNDARY.with(|depth| {
        depth.set(depth.get().saturating_add(1));
        let result = f();
        depth.set(depth.get().saturating_sub(1));
        result
    })
}

thread_local! {
    /// The message of the last panic raised inside the boundary on this thread,
    /// taken by the boundary for its one log line.
    static LAST_PANIC: Cell<Option<String>> = const { Cell::new(None) };
}

/// Installs, once per process, the panic hook: inside the boundary it keeps the
/// panic's message and location for the boundary's log line and prints
/// nothing; elsewhere it calls the hook that was there before. Never panics
/// (a failed attempt is retried on the next call).
pub(crate) fn ensure_panic_hook() {
    static STATE: AtomicBool = AtomicBool::new(false);
    if STATE.load(Ordering::Acquire)
        || STATE
            .compare_exchange(false, true, Ordering::AcqRel, Ordering::Acquire)
            .is_err()
    {
        return;
    }
    let installed = std::panic::catch_unwind(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info: &PanicHookInfo<'_>| {
            if IN_BOUNDARY.with(Cell::get) == 0 {
                return previous(info);
            }
            let location = info
                .location()
                .map(|l| format!(" at {}:{}", l.file(), l.line()))
                .unwrap_or_default();
            let message = format!("{}{location}", panic_message(info.payload()));
            LAST_PANIC.with(|p| p.set(Some(message)));
        }));
    })
    .is_ok();
    if !installed {
        STATE.store(false, Ordering::Release);
    }
}

/// The message the panic hook kept for the last panic on this thread.
pub(crate) fn take_panic_message() -> String {
    LAST_PANIC
        .with(Cell::take)
        .unwrap_or_else(|| "panic".to_owned())
}

/// The text of a panic payload.
fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".to_owned())
}

/// Installs the logger once per process from the logging variables of a
/// snapshot (later calls do nothing). Never panics; if installing fails
/// half-way, the next call tries again.
pub fn init(vars: LogVars<'_>) {
    static INSTALLING: AtomicBool = AtomicBool::new(false);
    static INSTALLED: AtomicBool = AtomicBool::new(false);
    if INSTALLED.load(Ordering::Acquire)
        || INSTALLING
            .compare_exchange(false, true, Ordering::AcqRel, Ordering::Acquire)
            .is_err()
    {
        return;
    }
    let done = std::panic::catch_unwind(|| install(vars)).is_ok();
    INSTALLED.store(done, Ordering::Release);
    INSTALLING.store(false, Ordering::Release);
}

fn install(vars: LogVars<'_>) {
    let s = settings(vars.log, vars.level, vars.verbose);
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
    // Leaked only when it becomes the process's logger: a host that installed
    // its own `log` backend first keeps it, and this one is dropped.
    if log::set_boxed_logger(Box::new(Logger { syslog })).is_ok() {
        log::set_max_level(s.level);
    }
    for w in warnings {
        log::warn!("{w}");
    }
}

/// Installs logging from the process-wide snapshot (the C API's entry).
pub fn init_for_process() {
    init(config::Config::process().log_vars());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_and_overrides() {
        let s = settings(None, None, false);
        assert_eq!(
            (s.level, s.syslog, s.warnings.len()),
            (LevelFilter::Warn, false, 0)
        );
        assert_eq!(
            settings(None, Some("DEBUG"), false).level,
            LevelFilter::Debug
        );
        assert_eq!(
            settings(None, Some("warning"), false).level,
            LevelFilter::Warn
        );
        assert_eq!(settings(None, None, true).level, LevelFilter::Debug);
        assert_eq!(settings(None, None, false).level, LevelFilter::Warn);
        assert_eq!(
            settings(None, Some("trace"), true).level,
            LevelFilter::Trace
        );
        assert!(settings(Some("syslog"), None, false).syslog);
    }

    #[test]
    fn invalid_values_warn_once_each_and_use_the_default() {
        let s = settings(Some("file"), Some("loud"), false);
        assert_eq!((s.level, s.syslog), (LevelFilter::Warn, false));
        assert_eq!(s.warnings.len(), 2);
    }
}
