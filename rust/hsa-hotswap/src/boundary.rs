//! The C boundary: the panic boundary every `extern "C"` function runs inside,
//! and the one way every export checks and converts its arguments.
//!
//! Every `extern "C"` function wraps its body in [`ffi_boundary`], naming the value
//! C sees if the body panics. That value is the function's documented fallback
//! (an error status, `false`, or "call the original" in the HSA hooks).
//!
//! Inside the boundary, each pointer argument goes through one checked
//! conversion, which returns the export's documented answer from the body when
//! the argument is NULL (or, for strings where the export says so, not UTF-8):
//! - [`try_c_str!`]: a NUL-terminated string, as `&CStr` (its bytes, unconverted);
//! - [`try_c_utf8!`]: a NUL-terminated string that must be UTF-8, as `&str`;
//! - [`try_bytes!`]: a pointer and a length, as `&[u8]` (NULL or 0 bytes refused);
//! - [`try_out!`]: an out-pointer, as an [`Out`] (written only as the export says);
//! - [`OutBuffer::new`]: a caller's byte buffer and its capacity, NULL allowed
//!   (a size query).
//!
//! A conversion is sound only where the export's `# Safety` section promises
//! what it assumes (each one states it), so each use carries a `// SAFETY:` line
//! naming that promise. The body then makes one call into safe Rust and maps
//! its result to the C result.
#![allow(unsafe_code)] // turns the caller's pointers into checked views

use std::ffi::{c_char, c_void, CStr};
use std::marker::PhantomData;
use std::mem::MaybeUninit;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr::NonNull;

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

/// `try_c_str!(ptr, on_null)`: the NUL-terminated string at `ptr` as a
/// `&CStr`; NULL returns `on_null` from the enclosing body.
///
/// # Safety (of each use)
/// `ptr` is NULL or points to a NUL-terminated string that stays valid and
/// unmodified for the rest of the call.
macro_rules! try_c_str {
    ($ptr:expr, $on_null:expr) => {{
        let ptr: *const ::std::ffi::c_char = $ptr;
        // SAFETY: NULL or a NUL-terminated string valid for the call (the
        // export's contract, restated at the use).
        match unsafe { $crate::boundary::c_str(ptr) } {
            Some(value) => value,
            None => return $on_null,
        }
    }};
}

/// `try_c_utf8!(ptr, invalid)`: the NUL-terminated string at `ptr` as a
/// `&str`; NULL, or bytes that are not UTF-8, return `invalid` from the
/// enclosing body.
///
/// # Safety (of each use)
/// As [`try_c_str!`].
macro_rules! try_c_utf8 {
    ($ptr:expr, $invalid:expr) => {{
        match $crate::boundary::try_c_str!($ptr, $invalid).to_str() {
            Ok(value) => value,
            Err(_) => return $invalid,
        }
    }};
}

/// `try_bytes!(ptr, len, invalid)`: the `len` bytes at `ptr` as a `&[u8]`;
/// NULL or `len` 0 return `invalid` from the enclosing body.
///
/// # Safety (of each use)
/// `ptr` is NULL or points to `len` readable bytes that stay valid and
/// unmodified for the rest of the call.
macro_rules! try_bytes {
    ($ptr:expr, $len:expr, $invalid:expr) => {{
        let (ptr, len): (*const ::std::ffi::c_void, usize) = ($ptr, $len);
        // SAFETY: NULL or `len` readable bytes valid for the call (the
        // export's contract, restated at the use).
        match unsafe { $crate::boundary::bytes(ptr, len) } {
            Some(value) => value,
            None => return $invalid,
        }
    }};
}

/// `try_out!(ptr, on_null)`: the out-pointer `ptr` as an [`Out`]; NULL
/// returns `on_null` from the enclosing body.
///
/// # Safety (of each use)
/// `ptr` is NULL or valid for reads and writes of its type (aligned) for the
/// rest of the call.
macro_rules! try_out {
    ($ptr:expr, $on_null:expr) => {{
        let ptr = $ptr;
        // SAFETY: NULL or valid for reads and writes for the call (the
        // export's contract, restated at the use).
        match unsafe { $crate::boundary::Out::new(ptr) } {
            Some(value) => value,
            None => return $on_null,
        }
    }};
}

pub(crate) use {try_bytes, try_c_str, try_c_utf8, try_out};

/// The string at `ptr`; `None` for NULL.
///
/// # Safety
/// `ptr` is NULL or points to a NUL-terminated string valid and unmodified
/// for `'a`.
pub unsafe fn c_str<'a>(ptr: *const c_char) -> Option<&'a CStr> {
    if ptr.is_null() {
        return None;
    }
    // SAFETY: non-NULL and NUL-terminated, valid for 'a (contract).
    Some(unsafe { CStr::from_ptr(ptr) })
}

/// The `len` bytes at `ptr`; `None` for NULL or an empty range.
///
/// # Safety
/// `ptr` is NULL or points to `len` readable bytes valid and unmodified for `'a`.
pub unsafe fn bytes<'a>(ptr: *const c_void, len: usize) -> Option<&'a [u8]> {
    if ptr.is_null() || len == 0 {
        return None;
    }
    // SAFETY: non-NULL, `len` readable bytes valid for 'a (contract); u8 has
    // no alignment or validity requirement.
    Some(unsafe { std::slice::from_raw_parts(ptr.cast::<u8>(), len) })
}

/// An out-pointer of the caller's, checked non-NULL. Reads and writes go
/// through the raw pointer (no reference to the caller's memory is made), so
/// an out-pointer that overlaps another argument is no aliasing violation.
#[derive(Debug)]
pub struct Out<'a, T> {
    ptr: NonNull<T>,
    call: PhantomData<&'a mut T>,
}

impl<'a, T> Out<'a, T> {
    /// `ptr` as an out-pointer; `None` for NULL.
    ///
    /// # Safety
    /// `ptr` is NULL or valid for reads and writes of a `T` (aligned) for `'a`.
    pub unsafe fn new(ptr: *mut T) -> Option<Out<'a, T>> {
        Some(Out {
            ptr: NonNull::new(ptr)?,
            call: PhantomData,
        })
    }

    /// Writes `value`.
    pub fn write(&mut self, value: T) {
        // SAFETY: valid for writes for 'a (contract of `new`).
        unsafe { self.ptr.as_ptr().write(value) }
    }
}

impl<T: Copy> Out<'_, T> {
    /// What the caller put there (an in-out argument's input).
    pub fn read(&self) -> T {
        // SAFETY: valid for reads for 'a (contract of `new`); `T: Copy`.
        unsafe { self.ptr.as_ptr().read() }
    }
}

/// A caller's buffer for a NUL-terminated string: `capacity` writable bytes,
/// written only by [`OutBuffer::write_c_string`] and only when it fits.
#[derive(Debug)]
pub struct OutBuffer<'a> {
    ptr: NonNull<MaybeUninit<u8>>,
    capacity: usize,
    call: PhantomData<&'a mut [MaybeUninit<u8>]>,
}

impl<'a> OutBuffer<'a> {
    /// The buffer at `ptr` of `capacity` bytes; `None` for NULL (a size query).
    ///
    /// # Safety
    /// `ptr` is NULL or points to `capacity` bytes writable for `'a`.
    pub unsafe fn new(ptr: *mut c_char, capacity: usize) -> Option<OutBuffer<'a>> {
        Some(OutBuffer {
            ptr: NonNull::new(ptr.cast::<MaybeUninit<u8>>())?,
            capacity,
            call: PhantomData,
        })
    }

    /// Writes `text` and a NUL when `text.len() + 1 <= capacity`; otherwise
    /// writes nothing and returns false (never a truncated string).
    pub fn write_c_string(&mut self, text: &[u8]) -> bool {
        if text.len() >= self.capacity {
            return false;
        }
        // SAFETY: `text.len() + 1 <= capacity` bytes are writable (contract of
        // `new`); `text` is ours, so the ranges do not overlap.
        unsafe {
            let to = self.ptr.as_ptr().cast::<u8>();
            std::ptr::copy_nonoverlapping(text.as_ptr(), to, text.len());
            to.add(text.len()).write(0);
        }
        true
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

    fn utf8_or(ptr: *const c_char) -> Result<String, &'static str> {
        Ok(try_c_utf8!(ptr, Err("invalid")).to_owned())
    }

    fn bytes_or(ptr: *const c_void, len: usize) -> Result<Vec<u8>, ()> {
        Ok(try_bytes!(ptr, len, Err(())).to_vec())
    }

    #[test]
    fn conversions_refuse_null_empty_and_non_utf8() {
        assert_eq!(utf8_or(c"gfx1250".as_ptr()), Ok("gfx1250".to_owned()));
        assert_eq!(utf8_or(std::ptr::null()), Err("invalid"));
        assert_eq!(utf8_or(c"\xff".as_ptr()), Err("invalid"));
        let data = [1u8, 2, 3];
        assert_eq!(bytes_or(data.as_ptr().cast(), 3), Ok(vec![1, 2, 3]));
        assert_eq!(bytes_or(data.as_ptr().cast(), 0), Err(()));
        assert_eq!(bytes_or(std::ptr::null(), 3), Err(()));
    }

    #[test]
    fn out_pointers_and_buffers_write_only_what_fits() {
        let mut size = 4usize;
        // SAFETY: `size` outlives the view.
        let mut out = unsafe { Out::new(&mut size) }.unwrap();
        assert_eq!(out.read(), 4);
        out.write(9);
        assert_eq!(size, 9);
        // SAFETY: NULL.
        assert!(unsafe { Out::<usize>::new(std::ptr::null_mut()) }.is_none());
        let mut buffer = [b'x'; 4];
        // SAFETY: `buffer` is 4 writable bytes and outlives the view.
        let mut out = unsafe { OutBuffer::new(buffer.as_mut_ptr().cast(), 4) }.unwrap();
        assert!(!out.write_c_string(b"abcd"), "no room for the NUL");
        assert_eq!(&buffer, b"xxxx");
        // SAFETY: as above.
        let mut out = unsafe { OutBuffer::new(buffer.as_mut_ptr().cast(), 4) }.unwrap();
        assert!(out.write_c_string(b"abc"));
        assert_eq!(&buffer, b"abc\0");
    }
}
