//! Test-only fault injection at the tool's decision points.
//!
//! Each decision the hooks delegate to the session calls [`point`] with a stable
//! name from [`POINTS`]. In a normal build `point` is an empty inline function.
//! With `cfg(test)` or the `testing` feature, a test can `arm` a point: the
//! next time it is reached it panics, which proves that a bug at that point
//! ends in the documented fallback (the application's own reader loaded, the
//! runtime's own status returned), never in a crash or a wrong answer.

/// Every decision point, in the order a reader's life reaches them.
#[cfg(any(test, feature = "testing"))]
pub const POINTS: &[&str] = &[
    "rewrite_possible",
    "create_from_memory.record",
    "create_from_file.header",
    "create_from_file.read",
    "create_from_file.record",
    "load.plan",
    "load.rewrite",
    "load.rewritten_reader",
    "load.keep",
    "load.pin",
    "reader_destroy.forget",
    "executable_destroy.take",
];

#[cfg(any(test, feature = "testing"))]
mod armed {
    use std::sync::Mutex;

    pub static ARMED: Mutex<Vec<&'static str>> = Mutex::new(Vec::new());
    pub static FIRED: Mutex<Vec<&'static str>> = Mutex::new(Vec::new());

    pub fn take(name: &'static str) -> bool {
        let mut armed = ARMED.lock().unwrap_or_else(|e| e.into_inner());
        let before = armed.len();
        armed.retain(|p| *p != name);
        let fired = armed.len() != before;
        if fired {
            FIRED.lock().unwrap_or_else(|e| e.into_inner()).push(name);
        }
        fired
    }
}

/// Arms `name` (one of [`POINTS`]): the next [`point`] call with that name
/// panics once.
#[cfg(any(test, feature = "testing"))]
pub fn arm(name: &'static str) {
    assert!(POINTS.contains(&name), "unknown fault point {name}");
    armed::ARMED
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .push(name);
}

/// True when `name` fired since the last [`disarm_all`].
#[cfg(any(test, feature = "testing"))]
pub fn fired(name: &str) -> bool {
    armed::FIRED
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .contains(&name)
}

/// Disarms every point and forgets which fired.
#[cfg(any(test, feature = "testing"))]
pub fn disarm_all() {
    armed::FIRED
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .clear();
    armed::ARMED
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .clear();
}

/// A decision point: panics if a test armed it; nothing otherwise.
#[inline(always)]
pub fn point(name: &'static str) {
    #[cfg(any(test, feature = "testing"))]
    if armed::take(name) {
        panic!("injected fault at {name}");
    }
    let _ = name;
}
