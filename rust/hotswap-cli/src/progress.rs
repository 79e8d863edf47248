//! A progress bar on stderr for long runs: shown only when stderr is a
//! terminal and there are at least [`MIN_ITEMS`] items, redrawn at most every
//! [`REDRAW`] and erased when done, so that redirected output and short runs
//! never see it. Hand-rolled: one line, no dependency.

use std::io::{IsTerminal, Write};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Fewer items than this never show a bar.
pub const MIN_ITEMS: usize = 16;
/// The shortest interval between two redraws.
const REDRAW: Duration = Duration::from_millis(100);
/// Width of the bar itself, in characters.
const WIDTH: usize = 30;

/// A progress bar over `total` items (a no-op when hidden).
#[derive(Debug)]
pub struct Progress {
    state: Option<Mutex<State>>,
}

#[derive(Debug)]
struct State {
    what: &'static str,
    total: usize,
    done: usize,
    last_draw: Option<Instant>,
}

impl Progress {
    /// A bar over `total` items named `what` (e.g. "code objects"), visible
    /// only when stderr is a terminal and `total` is at least [`MIN_ITEMS`].
    pub fn new(what: &'static str, total: usize) -> Self {
        let visible = total >= MIN_ITEMS && std::io::stderr().is_terminal();
        Self {
            state: visible.then(|| {
                Mutex::new(State {
                    what,
                    total,
                    done: 0,
                    last_draw: None,
                })
            }),
        }
    }

    /// One more item done (any thread).
    pub fn tick(&self) {
        let Some(state) = &self.state else { return };
        let mut s = state.lock().unwrap_or_else(|e| e.into_inner());
        s.done = (s.done + 1).min(s.total);
        let now = Instant::now();
        if s.last_draw.is_none_or(|t| now.duration_since(t) >= REDRAW) || s.done == s.total {
            s.last_draw = Some(now);
            let _ = std::io::stderr().write_all(line(s.what, s.done, s.total).as_bytes());
        }
    }

    /// Erases the bar.
    pub fn finish(&self) {
        if self.state.is_some() {
            let _ = std::io::stderr().write_all(b"\r\x1b[2K");
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.finish();
    }
}

/// The bar's text: `\r[#####.....]  12/40 code objects`.
fn line(what: &str, done: usize, total: usize) -> String {
    let filled = WIDTH * done / total.max(1);
    format!(
        "\r[{}{}] {done:>width$}/{total} {what}",
        "#".repeat(filled),
        ".".repeat(WIDTH - filled),
        width = total.to_string().len()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_line_fills_in_proportion() {
        assert_eq!(
            line("objects", 0, 40),
            format!("\r[{}]  0/40 objects", ".".repeat(30))
        );
        assert_eq!(
            line("objects", 20, 40),
            format!("\r[{}{}] 20/40 objects", "#".repeat(15), ".".repeat(15))
        );
        assert_eq!(
            line("objects", 40, 40),
            format!("\r[{}] 40/40 objects", "#".repeat(30))
        );
    }

    #[test]
    fn short_runs_and_pipes_show_nothing() {
        // Under the test harness stderr is captured or a pipe in CI; either way a
        // run below the threshold is hidden.
        assert!(Progress::new("x", MIN_ITEMS - 1).state.is_none());
    }
}
