//! The panic boundary: no panic ever unwinds into C.
//!
//! Every `extern "C"` function wraps its body in [`ffi_boundary`], naming the value
//! C sees if the body panics. That value is the function's documented fallback
//! (an error status, `false`, or "call the original" in the HSA hooks).

use std::panic::{catch_unwind, AssertUnwindSafe};

/// Runs `body`; if it panics, logs the panic and returns `fallback` instead.
///
/// `what` names the C function for the log line.
/// While `body` runs, the panic hook ([`crate::logging`]) logs a panic as one
/// `hotswap:` line instead of printing Rust's default text on stderr.
pub fn ffi_boundary<T>(what: &'static str, fallback: T, body: impl FnOnce() -> T) -> T {
    crate::logging::ensure_panic_hook();
    let result = crate::logging::in_boundary(|| catch_unwind(AssertUnwindSafe(body)));
    match result {
        Ok(value) => value,
        Err(_) => {
            let message = crate::logging::take_panic_message();
            log::error!("internal error in {what}: {message}; using the documented fallback");
            fallback
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn returns_body_value() {
        assert_eq!(ffi_boundary("t", 0, || 7), 7);
    }

    #[test]
    fn panic_becomes_fallback() {
        assert_eq!(ffi_boundary("t", -1, || panic!("boom")), -1);
        assert!(!ffi_boundary("t", false, || -> bool {
            panic!("{}", String::from("x"))
        }));
    }
}
