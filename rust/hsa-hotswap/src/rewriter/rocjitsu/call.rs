//! One call of the translator through the entry point of its shape: the
//! output buffer released with the library's own free, the diagnostic callback
//! and its bounded copies, the debug summary, and the mapping of
//! `rj_status_t` to a result.
#![allow(unsafe_code)] // calls the translator through dlsym pointers; its diagnostic callback

use std::ffi::{c_char, c_void};

use super::abi::*;
use crate::boundary::ffi_boundary;
use crate::rewriter::{RetargetError, Rewritten};

/// The translator's output buffer, released with its own free function when
/// dropped (`rj_gfx1250_b0_to_a0_free` accepts NULL; a NULL is not passed).
pub(super) struct Output {
    pub(super) ptr: *mut u8,
    pub(super) size: usize,
    pub(super) free: FreeFn,
}

impl Output {
    /// Gives up the buffer without releasing it (a library broke its contract
    /// and the pointer may not be its allocation).
    pub(super) fn leak(&mut self) {
        self.ptr = std::ptr::null_mut();
    }
}

impl Drop for Output {
    fn drop(&mut self) {
        if !self.ptr.is_null() {
            // SAFETY: a buffer the translator returned and nothing else owns;
            // released once, with the library's own release function.
            unsafe { (self.free)(self.ptr.cast()) }
        }
    }
}

/// What one translate call gave.
pub(super) struct Call {
    pub(super) status: Status,
    pub(super) output: Output,
    /// The info struct after the call (`None` for shape (a), which has none).
    pub(super) info: Option<TranslationInfo>,
    pub(super) diagnostics: Diagnostics,
}

/// The diagnostics of one call (shape (c)), filled by [`on_diagnostic`].
#[derive(Debug, Default)]
pub(super) struct Diagnostics {
    pub(super) count: usize,
    /// "kind: message" of the first error diagnostics, for a refusal's reason.
    pub(super) errors: Vec<String>,
}

/// How many error diagnostics a refusal's reason quotes.
pub(super) const MAX_QUOTED_ERRORS: usize = 4;

impl Diagnostics {
    pub(super) fn note(&mut self, view: &DiagnosticView) {
        self.count += 1;
        if view.severity.as_deref() == Some("error") && self.errors.len() < MAX_QUOTED_ERRORS {
            let kind = view.kind.as_deref().unwrap_or("?");
            self.errors.push(match &view.message {
                Some(message) => format!("{kind}: {message}"),
                None => kind.to_owned(),
            });
        }
    }
}

/// The longest diagnostic string copied (bytes); longer ones are cut.
pub(super) const MAX_DIAGNOSTIC_TEXT: usize = 1024;

/// One diagnostic, its strings copied.
#[derive(Debug, Default, PartialEq, Eq)]
pub(super) struct DiagnosticView {
    pub(super) severity: Option<String>,
    pub(super) kind: Option<String>,
    pub(super) guest_offset: Option<u64>,
    pub(super) mnemonic: Option<String>,
    pub(super) message: Option<String>,
    pub(super) required_work: bool,
}

/// A copy of the C string at `text` (NULL: `None`), at most
/// [`MAX_DIAGNOSTIC_TEXT`] bytes, control characters escaped so a log entry
/// stays one line.
///
/// # Safety
/// `text` is NULL or points to a NUL-terminated string, or to at least
/// `MAX_DIAGNOSTIC_TEXT` readable bytes.
unsafe fn copy_text(text: *const c_char) -> Option<String> {
    if text.is_null() {
        return None;
    }
    // SAFETY: the caller's promise; strnlen reads no further than the NUL or the bound.
    let len = unsafe { libc::strnlen(text, MAX_DIAGNOSTIC_TEXT) };
    // SAFETY: `len` bytes were just read by strnlen.
    let bytes = unsafe { std::slice::from_raw_parts(text.cast::<u8>(), len) };
    let mut copy = String::with_capacity(len);
    for c in String::from_utf8_lossy(bytes).chars() {
        if c.is_control() {
            copy.extend(c.escape_default());
        } else {
            copy.push(c);
        }
    }
    if len == MAX_DIAGNOSTIC_TEXT {
        copy.push('…');
    }
    Some(copy)
}

impl DiagnosticView {
    /// Copies `diagnostic`'s fields.
    ///
    /// # Safety
    /// Every string field is NULL or a NUL-terminated string (valid during the
    /// callback that delivered `diagnostic`).
    pub(super) unsafe fn copy(diagnostic: &Diagnostic) -> Self {
        // SAFETY: the caller's promise, for each field.
        unsafe {
            Self {
                severity: copy_text(diagnostic.severity),
                kind: copy_text(diagnostic.kind),
                guest_offset: (diagnostic.has_guest_offset != 0).then_some(diagnostic.guest_offset),
                mnemonic: copy_text(diagnostic.mnemonic),
                message: copy_text(diagnostic.message),
                required_work: diagnostic.required_work != 0,
            }
        }
    }
}

impl std::fmt::Display for DiagnosticView {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} {}",
            self.severity.as_deref().unwrap_or("(no severity)"),
            self.kind.as_deref().unwrap_or("(no kind)")
        )?;
        if let Some(offset) = self.guest_offset {
            write!(f, " at guest offset {offset:#x}")?;
        }
        if let Some(mnemonic) = &self.mnemonic {
            write!(f, " ({mnemonic})")?;
        }
        write!(f, ": {}", self.message.as_deref().unwrap_or("(no message)"))?;
        if self.required_work {
            write!(f, " [required work]")?;
        }
        Ok(())
    }
}

/// The diagnostic callback handed to shape (c): logs each diagnostic at debug
/// level and notes it in the call's [`Diagnostics`] (`user_data`).
unsafe extern "C" fn on_diagnostic(diagnostic: *const Diagnostic, user_data: *mut c_void) {
    ffi_boundary("the rocjitsu diagnostic callback", (), || {
        // SAFETY: the translator passes NULL or a diagnostic that is valid, strings
        // included, for the duration of this call.
        let Some(diagnostic) = (unsafe { diagnostic.as_ref() }) else {
            log::debug!("rocjitsu diagnostic: (NULL)");
            return;
        };
        // SAFETY: as above, the strings are NULL or NUL-terminated during the callback.
        let view = unsafe { DiagnosticView::copy(diagnostic) };
        log::debug!("rocjitsu diagnostic: {view}");
        // SAFETY: `user_data` is what `Rocjitsu::call` passed: NULL or its own
        // `Diagnostics`, alive and not otherwise borrowed during the synchronous call.
        if let Some(diagnostics) = unsafe { user_data.cast::<Diagnostics>().as_mut() } {
            diagnostics.note(&view);
        }
    })
}

/// One call of `entry` on `input`; `info` starts as [`SENTINEL`].
pub(super) fn call(entry: Entry, free: FreeFn, input: &[u8]) -> Call {
    let mut output: *mut u8 = std::ptr::null_mut();
    let mut size: usize = 0;
    let mut info = SENTINEL;
    let mut diagnostics = Diagnostics::default();
    let source = input.as_ptr().cast::<c_void>();
    let status = match entry {
        // SAFETY: shape (a)'s declaration; `input` is readable for its length and
        // never written (const); both out-pointers are valid for the call.
        Entry::Plain(translate) => unsafe {
            translate(source, input.len(), &mut output, &mut size)
        },
        // SAFETY: shape (b)'s declaration; as above, plus a valid info struct.
        Entry::WithInfo(translate) => unsafe {
            translate(source, input.len(), &mut output, &mut size, &mut info)
        },
        // SAFETY: shape (c)'s declaration (or the probe, see the module
        // documentation); as above, plus a callback that matches the declared type
        // and its user data, a `Diagnostics` that outlives this synchronous call.
        Entry::WithCallback(translate) => unsafe {
            translate(
                source,
                input.len(),
                &mut output,
                &mut size,
                &mut info,
                Some(on_diagnostic),
                (&mut diagnostics as *mut Diagnostics).cast(),
            )
        },
    };
    Call {
        status,
        output: Output {
            ptr: output,
            size,
            free,
        },
        info: (!matches!(entry, Entry::Plain(_))).then_some(info),
        diagnostics,
    }
}

impl Call {
    /// The debug summary of the call.
    pub(super) fn log_summary(&self) {
        let info = match self.info {
            Some(info) if info != SENTINEL => format!(
                "source id fnv1a64:{:016x}, {} changed instruction(s)",
                info.source_code_object_id, info.changed_instruction_count
            ),
            Some(_) => "translation info not filled in".to_owned(),
            None => "no translation info in this shape".to_owned(),
        };
        log::debug!(
            "rocjitsu translate: status {} ({}), {info}, {} diagnostic(s), {} output byte(s)",
            status_name(self.status),
            self.status,
            self.diagnostics.count,
            self.output.size
        );
    }

    /// The call's result (see the module documentation); the translator's buffer
    /// is released when `self` is dropped.
    pub(super) fn into_result(mut self) -> Result<Rewritten, RetargetError> {
        let status = self.status;
        let name = status_name(status);
        if status != STATUS_SUCCESS && !self.output.ptr.is_null() {
            log::warn!(
                "rocjitsu translate returned {name} ({status}) but left an output buffer; \
                 not releasing a pointer a failed call should have cleared"
            );
            self.output.leak();
        }
        match status {
            STATUS_SUCCESS => {
                let (ptr, size) = (self.output.ptr, self.output.size);
                if ptr.is_null() || size == 0 || size > isize::MAX as usize {
                    log::warn!(
                        "rocjitsu translate returned SUCCESS with {} and {size} byte(s); treated as a failure",
                        if ptr.is_null() { "no buffer" } else { "a buffer" }
                    );
                    return Err(RetargetError::Failed);
                }
                // SAFETY: on SUCCESS the translator returns a buffer of `size` bytes
                // (bounded above) that stays valid until released by `self.output`.
                let bytes = unsafe { std::slice::from_raw_parts(ptr, size) };
                Rewritten::copy_of(bytes)
            }
            STATUS_INVALID_CODE_OBJECT => {
                let reason = if self.diagnostics.errors.is_empty() {
                    "the rocjitsu translator reports INVALID_CODE_OBJECT: not a translatable \
                     gfx1250 code object, or nothing dispatchable after translation"
                        .to_owned()
                } else {
                    format!(
                        "the rocjitsu translator reports INVALID_CODE_OBJECT: {}",
                        self.diagnostics.errors.join("; ")
                    )
                };
                log::warn!("rocjitsu translate returned {name} ({status}): refused: {reason}");
                Err(RetargetError::Refused(reason))
            }
            STATUS_OUT_OF_RESOURCES => {
                log::warn!("rocjitsu translate returned {name} ({status})");
                Err(RetargetError::OutOfMemory)
            }
            _ => {
                log::warn!("rocjitsu translate returned {name} ({status}); the rewrite failed");
                Err(RetargetError::Failed)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    unsafe extern "C" fn never_called_free(_: *mut c_void) {
        panic!("a NULL output must not be released");
    }

    pub(super) fn failed_call(status: Status, errors: &[&str]) -> Call {
        Call {
            status,
            output: Output {
                ptr: std::ptr::null_mut(),
                size: 0,
                free: never_called_free,
            },
            info: Some(SENTINEL),
            diagnostics: Diagnostics {
                count: errors.len(),
                errors: errors.iter().map(|e| e.to_string()).collect(),
            },
        }
    }

    #[test]
    pub(super) fn statuses_map_to_errors() {
        let result = |status, errors: &[&str]| failed_call(status, errors).into_result();
        assert_eq!(result(1, &[]).unwrap_err(), RetargetError::Failed);
        assert_eq!(result(2, &[]).unwrap_err(), RetargetError::Failed);
        assert_eq!(result(3, &[]).unwrap_err(), RetargetError::OutOfMemory);
        assert_eq!(result(5, &[]).unwrap_err(), RetargetError::Failed);
        assert_eq!(result(77, &[]).unwrap_err(), RetargetError::Failed);
        assert_eq!(result(-3, &[]).unwrap_err(), RetargetError::Failed);
        // SUCCESS without a buffer is a failure, not a crash.
        assert_eq!(result(0, &[]).unwrap_err(), RetargetError::Failed);
        match result(4, &["result-not-dispatchable: nothing left"]).unwrap_err() {
            RetargetError::Refused(why) => {
                assert!(
                    why.contains("result-not-dispatchable: nothing left"),
                    "{why}"
                )
            }
            other => panic!("{other:?}"),
        }
        match result(4, &[]).unwrap_err() {
            RetargetError::Refused(why) => assert!(why.contains("INVALID_CODE_OBJECT"), "{why}"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    pub(super) fn a_successful_output_is_copied_then_released_with_the_libraries_free() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        static RELEASED: AtomicUsize = AtomicUsize::new(0);
        unsafe extern "C" fn release(ptr: *mut c_void) {
            RELEASED.fetch_add(1, Ordering::SeqCst);
            // SAFETY: the test's own malloc'd buffer.
            unsafe { libc::free(ptr) }
        }
        let mut call = failed_call(STATUS_SUCCESS, &[]);
        // SAFETY: a fresh malloc of 4 bytes, filled before use.
        let ptr = unsafe { libc::malloc(4) }.cast::<u8>();
        assert!(!ptr.is_null());
        // SAFETY: 4 writable bytes.
        unsafe { std::ptr::copy_nonoverlapping(b"\x7fELF".as_ptr(), ptr, 4) };
        call.output = Output {
            ptr,
            size: 4,
            free: release,
        };
        let rewritten = call.into_result().unwrap();
        assert_eq!(rewritten.bytes(), b"\x7fELF");
        assert_eq!(RELEASED.load(Ordering::SeqCst), 1);
    }

    #[test]
    pub(super) fn diagnostics_with_null_fields_and_unknown_kinds_are_accepted() {
        let mut diagnostics = Diagnostics::default();
        let user_data = (&mut diagnostics as *mut Diagnostics).cast::<c_void>();
        let empty = Diagnostic {
            severity: std::ptr::null(),
            kind: std::ptr::null(),
            has_guest_offset: 0,
            guest_offset: 0,
            mnemonic: std::ptr::null(),
            message: std::ptr::null(),
            required_work: 0,
        };
        let long = vec![b'x'; 3 * MAX_DIAGNOSTIC_TEXT]
            .into_iter()
            .chain([0])
            .collect::<Vec<u8>>();
        let error = Diagnostic {
            severity: c"error".as_ptr(),
            kind: c"a-kind-from-the-future".as_ptr(),
            has_guest_offset: 1,
            guest_offset: 0x1c0,
            mnemonic: c"v_wmma".as_ptr(),
            message: long.as_ptr().cast(),
            required_work: 1,
        };
        // SAFETY: valid diagnostics (or NULL) and user data, as the translator passes them.
        unsafe {
            on_diagnostic(&empty, user_data);
            on_diagnostic(std::ptr::null(), user_data);
            on_diagnostic(&error, user_data);
            on_diagnostic(&error, std::ptr::null_mut());
        }
        assert_eq!(diagnostics.count, 2);
        assert_eq!(diagnostics.errors.len(), 1);
        assert!(diagnostics.errors[0].starts_with("a-kind-from-the-future: xxx"));
        assert!(diagnostics.errors[0].len() < MAX_DIAGNOSTIC_TEXT + 64);
        // SAFETY: valid diagnostics.
        let (empty, error) =
            unsafe { (DiagnosticView::copy(&empty), DiagnosticView::copy(&error)) };
        assert_eq!(empty, DiagnosticView::default());
        assert_eq!(empty.to_string(), "(no severity) (no kind): (no message)");
        let line = error.to_string();
        assert!(
            line.starts_with("error a-kind-from-the-future at guest offset 0x1c0 (v_wmma): xxx"),
            "{line}"
        );
        assert!(line.ends_with("… [required work]"), "{line}");
    }

    #[test]
    pub(super) fn control_characters_stay_on_one_line() {
        // SAFETY: a NUL-terminated string.
        let text = unsafe { copy_text(c"two\nlines\tand \u{1b}[31m".as_ptr()) }.unwrap();
        assert_eq!(text, "two\\nlines\\tand \\u{1b}[31m");
        // SAFETY: NULL is accepted.
        assert_eq!(unsafe { copy_text(std::ptr::null()) }, None);
    }
}
