//! The rocjitsu backend: AMD's maintained B0→A0 translator,
//! `librocjitsu_gfx1250_b0_to_a0.so.0` (`rj_gfx1250_b0_to_a0_translate`, its
//! output released with `rj_gfx1250_b0_to_a0_free`).
//!
//! # Three API shapes under one symbol name
//!
//! - (a) `rj_status_t rj_gfx1250_b0_to_a0_translate(const void *source, size_t
//!   source_size, uint8_t **translated, size_t *translated_size)`;
//! - (b) `rj_gfx1250_b0_to_a0_translate_with_info(…, info)`: (a)'s four
//!   arguments plus a required `rj_gfx1250_b0_to_a0_translation_info_t *`; the
//!   plain symbol is a four-argument wrapper around it;
//! - (c) `rj_gfx1250_b0_to_a0_translate(…, info, diagnostic_callback,
//!   user_data)`: seven arguments, `_with_info` gone from the header.
//!
//! The symbol `rj_gfx1250_b0_to_a0_free` (`free()`, NULL accepted) is the same in
//! every shape and is required: a library without it is refused, since its
//! output could not be released.
//!
//! # How the shape is told apart
//!
//! Once, in [`Rocjitsu::from_library`]:
//! - `rj_gfx1250_b0_to_a0_translate_with_info` exported: shape (b); it is called
//!   with its own five-argument declaration, which no shape contradicts.
//! - Otherwise the plain symbol is (a) or (c): same name, no symbol version,
//!   different arity, which `dlsym` cannot see. One probe translation of
//!   [`hotswap_code_object::GFX1250_PROBE`] calls it with the seven-argument
//!   shape (c), with the `info` struct pre-filled with a sentinel. Shape (c)
//!   clears `info` before it validates its arguments (and, the arguments being
//!   valid, sets the FNV-1a-64 source id), so a changed `info` says (c) answered;
//!   an untouched sentinel says (a) did. From then on each shape is called with
//!   its own declaration.
//!
//! Calling a four-argument (a) with seven arguments is sound only because of
//! the x86-64 System V calling convention: the first six integer arguments
//! travel in registers that are caller-saved scratch registers for the callee
//! (`info` in `r8`, the callback in `r9`), the seventh on the stack in the
//! caller's own frame, which the caller pops; a callee declared with fewer
//! parameters never reads them, and its return value is in `eax` either way.
//! The crate supports only x86-64 Linux; the build fails elsewhere (below)
//! rather than probe on a convention where this does not hold.
//!
//! # What is translated
//!
//! Only [`Profile::B0ToA0`] requests with a gfx1250 source (`EF_AMDGPU_MACH`
//! 0x49), exactly what ROCr's own hook hands the translator (a fixed B0→A0
//! profile; the output stays gfx1250, no MACH retag). Anything else, and any
//! COMGR-ABI flag, is [`RetargetError::Unsupported`] without a call.
//!
//! # Outcomes
//!
//! | `rj_status_t` | result |
//! |---|---|
//! | `SUCCESS` (0) | the bytes, copied into a [`Rewritten`]; a NULL buffer or size 0 is `Failed` |
//! | `INVALID_CODE_OBJECT` (4) | `Refused`: a property of the input, the same verdict next time |
//! | `OUT_OF_RESOURCES` (3) | `OutOfMemory` |
//! | `ERROR` (1), `INVALID_ARGUMENT` (2), `INVALID_FILE` (5), any other | `Failed` |
//!
//! Every failure is logged as a warning naming the status. The translator's
//! buffer is released with its own `rj_gfx1250_b0_to_a0_free` once copied (or
//! rejected).
//!
//! # Diagnostics
//!
//! Shape (c) reports diagnostics through a synchronous callback; each one is
//! logged at debug level (severity, kind, guest offset, mnemonic, message,
//! required work), its strings copied during the callback with a bounded
//! length; NULL fields and unknown kinds are accepted. The error diagnostics of
//! a refusal become its reason. Every call also logs a debug summary: status,
//! source id and changed-instruction count (shapes (b) and (c)).
#![allow(unsafe_code)] // calls the translator through dlsym pointers; its diagnostic callback

#[cfg(not(all(target_arch = "x86_64", target_os = "linux")))]
compile_error!(
    "the rocjitsu shape probe calls a function of unknown arity with extra arguments, which is \
     sound on the x86-64 System V calling convention only (see rewriter/rocjitsu.rs)"
);

use std::ffi::{c_char, c_int, c_void, CStr};

use hotswap_code_object::{isa, GFX1250_PROBE};

use super::{Backend, BackendKind, Profile, Request, RetargetError, RewriteFlags, Rewritten};
use crate::boundary::ffi_boundary;
use crate::dl::{self, Library};

/// The translator library's SONAME (the name ROCr's hook is linked against).
pub const SONAME: &str = "librocjitsu_gfx1250_b0_to_a0.so.0";

/// The translator's entry point (shape (a) or (c); (b)'s four-argument wrapper).
const TRANSLATE_SYMBOL: &CStr = c"rj_gfx1250_b0_to_a0_translate";
/// Shape (b)'s entry point.
const TRANSLATE_WITH_INFO_SYMBOL: &CStr = c"rj_gfx1250_b0_to_a0_translate_with_info";
/// The translator's release function (`free()`), every shape.
const FREE_SYMBOL: &CStr = c"rj_gfx1250_b0_to_a0_free";

/// The file name a loaded ROCr has (`libhsa-runtime64.so`, `.so.1`, `.so.1.x.y`).
const ROCR_FILE_PREFIX: &str = "libhsa-runtime64.so";

/// `rj_status_t`: a C enum, passed as `int`.
type Status = c_int;
const STATUS_SUCCESS: Status = 0;
const STATUS_ERROR: Status = 1;
const STATUS_INVALID_ARGUMENT: Status = 2;
const STATUS_OUT_OF_RESOURCES: Status = 3;
const STATUS_INVALID_CODE_OBJECT: Status = 4;
const STATUS_INVALID_FILE: Status = 5;

/// The name of an `rj_status_t` value, for log lines.
fn status_name(status: Status) -> &'static str {
    match status {
        STATUS_SUCCESS => "SUCCESS",
        STATUS_ERROR => "ERROR",
        STATUS_INVALID_ARGUMENT => "INVALID_ARGUMENT",
        STATUS_OUT_OF_RESOURCES => "OUT_OF_RESOURCES",
        STATUS_INVALID_CODE_OBJECT => "INVALID_CODE_OBJECT",
        STATUS_INVALID_FILE => "INVALID_FILE",
        _ => "an unknown status",
    }
}

/// `rj_gfx1250_b0_to_a0_translation_info_t` (shapes (b) and (c)): no size or
/// version member.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct TranslationInfo {
    /// FNV-1a-64 of the whole input.
    source_code_object_id: u64,
    changed_instruction_count: usize,
}
const _: () = assert!(std::mem::size_of::<TranslationInfo>() == 16);

/// What `info` holds before a call: a value no translator leaves (shape (c)
/// clears the struct before anything else, and no count reaches `usize::MAX`).
const SENTINEL: TranslationInfo = TranslationInfo {
    source_code_object_id: 0x686f_7473_7761_7021, // "hotswap!"
    changed_instruction_count: usize::MAX,
};

/// `rj_gfx1250_b0_to_a0_diagnostic_t` (shape (c)); the strings are valid only
/// during the callback.
#[repr(C)]
#[derive(Debug)]
struct Diagnostic {
    severity: *const c_char,
    kind: *const c_char,
    has_guest_offset: c_int,
    guest_offset: u64,
    mnemonic: *const c_char,
    message: *const c_char,
    required_work: c_int,
}

/// `rj_gfx1250_b0_to_a0_diagnostic_callback_t`.
type DiagnosticCallback = unsafe extern "C" fn(*const Diagnostic, *mut c_void);

/// Shape (a), and (b)'s wrapper.
type TranslateFn = unsafe extern "C" fn(*const c_void, usize, *mut *mut u8, *mut usize) -> Status;
/// Shape (b).
type TranslateWithInfoFn = unsafe extern "C" fn(
    *const c_void,
    usize,
    *mut *mut u8,
    *mut usize,
    *mut TranslationInfo,
) -> Status;
/// Shape (c).
type TranslateWithCallbackFn = unsafe extern "C" fn(
    *const c_void,
    usize,
    *mut *mut u8,
    *mut usize,
    *mut TranslationInfo,
    Option<DiagnosticCallback>,
    *mut c_void,
) -> Status;
/// `rj_gfx1250_b0_to_a0_free`.
type FreeFn = unsafe extern "C" fn(*mut c_void);

/// The entry point of a library whose shape is known, with its declaration.
#[derive(Clone, Copy, Debug)]
enum Entry {
    /// (a): the four-argument `rj_gfx1250_b0_to_a0_translate`.
    Plain(TranslateFn),
    /// (b): `rj_gfx1250_b0_to_a0_translate_with_info`.
    WithInfo(TranslateWithInfoFn),
    /// (c): the seven-argument `rj_gfx1250_b0_to_a0_translate`.
    WithCallback(TranslateWithCallbackFn),
}

impl Entry {
    /// The shape, for log lines.
    fn shape(self) -> &'static str {
        match self {
            Self::Plain(_) => "(a): 4-argument rj_gfx1250_b0_to_a0_translate",
            Self::WithInfo(_) => "(b): rj_gfx1250_b0_to_a0_translate_with_info",
            Self::WithCallback(_) => {
                "(c): 7-argument rj_gfx1250_b0_to_a0_translate with diagnostics"
            }
        }
    }
}

/// True when `library` exports the translator's entry point.
pub fn exports_translate(library: &Library) -> bool {
    library.address(TRANSLATE_SYMBOL).is_some()
}

/// A usable rocjitsu translator.
#[derive(Debug)]
pub struct Rocjitsu {
    describe: String,
    entry: Entry,
    free: FreeFn,
}

/// The translator's output buffer, released with its own free function when
/// dropped (`rj_gfx1250_b0_to_a0_free` accepts NULL; a NULL is not passed).
struct Output {
    ptr: *mut u8,
    size: usize,
    free: FreeFn,
}

impl Output {
    /// Gives up the buffer without releasing it (a library broke its contract
    /// and the pointer may not be its allocation).
    fn leak(&mut self) {
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
struct Call {
    status: Status,
    output: Output,
    /// The info struct after the call (`None` for shape (a), which has none).
    info: Option<TranslationInfo>,
    diagnostics: Diagnostics,
}

/// The diagnostics of one call (shape (c)), filled by [`on_diagnostic`].
#[derive(Debug, Default)]
struct Diagnostics {
    count: usize,
    /// "kind: message" of the first error diagnostics, for a refusal's reason.
    errors: Vec<String>,
}

/// How many error diagnostics a refusal's reason quotes.
const MAX_QUOTED_ERRORS: usize = 4;

impl Diagnostics {
    fn note(&mut self, view: &DiagnosticView) {
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
const MAX_DIAGNOSTIC_TEXT: usize = 1024;

/// One diagnostic, its strings copied.
#[derive(Debug, Default, PartialEq, Eq)]
struct DiagnosticView {
    severity: Option<String>,
    kind: Option<String>,
    guest_offset: Option<u64>,
    mnemonic: Option<String>,
    message: Option<String>,
    required_work: bool,
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
    unsafe fn copy(diagnostic: &Diagnostic) -> Self {
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

/// FNV-1a-64, the translator's source id.
fn fnv1a64(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, &b| {
        (hash ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// One call of `entry` on `input`; `info` starts as [`SENTINEL`].
fn call(entry: Entry, free: FreeFn, input: &[u8]) -> Call {
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
    fn log_summary(&self) {
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
    fn into_result(mut self) -> Result<Rewritten, RetargetError> {
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

impl Rocjitsu {
    /// Vets `library` as the rocjitsu translator and learns its API shape with one
    /// probe translation (see the module documentation); `Err` is the reason it is
    /// unusable.
    pub fn from_library(library: Library) -> Result<Rocjitsu, String> {
        let name = &library.name;
        if !exports_translate(&library) {
            return Err(format!(
                "{name} does not export rj_gfx1250_b0_to_a0_translate"
            ));
        }
        // SAFETY: `void rj_gfx1250_b0_to_a0_free(void *)` in every shape.
        let free: FreeFn = unsafe { library.function(FREE_SYMBOL) }.ok_or_else(|| {
            format!(
                "{name} exports rj_gfx1250_b0_to_a0_translate but not rj_gfx1250_b0_to_a0_free, \
                 so its output could not be released; not using it"
            )
        })?;
        // SAFETY: shape (b)'s declaration; only (b) exports this name, and it has
        // one declaration.
        let with_info: Option<TranslateWithInfoFn> =
            unsafe { library.function(TRANSLATE_WITH_INFO_SYMBOL) };
        let (entry, probe) = match with_info {
            Some(translate) => {
                let entry = Entry::WithInfo(translate);
                (entry, call(entry, free, GFX1250_PROBE))
            }
            None => {
                // SAFETY: the plain symbol is shape (a) or (c); calling it with (c)'s
                // seven arguments is sound for both on x86-64 System V (module
                // documentation); nothing else is assumed about it here.
                let seven: TranslateWithCallbackFn = unsafe { library.function(TRANSLATE_SYMBOL) }
                    .ok_or_else(|| format!("{name}: rj_gfx1250_b0_to_a0_translate vanished"))?;
                let mut probe = call(Entry::WithCallback(seven), free, GFX1250_PROBE);
                if probe.info == Some(SENTINEL) {
                    probe.info = None; // shape (a) has no info
                                       // SAFETY: the probe showed shape (a): it left `info` untouched, which
                                       // shape (c) never does; this is (a)'s declaration.
                    let four: TranslateFn = unsafe { library.function(TRANSLATE_SYMBOL) }
                        .ok_or_else(|| format!("{name}: rj_gfx1250_b0_to_a0_translate vanished"))?;
                    (Entry::Plain(four), probe)
                } else {
                    (Entry::WithCallback(seven), probe)
                }
            }
        };
        let describe = format!("rocjitsu translator {name}, API shape {}", entry.shape());
        let id_note = match probe.info {
            Some(info) if info != SENTINEL => {
                if info.source_code_object_id == fnv1a64(GFX1250_PROBE) {
                    ", source id as documented"
                } else {
                    ", source id is not the FNV-1a-64 of the input"
                }
            }
            _ => "",
        };
        log::info!(
            "{describe} (probe translation: {} ({}), {} diagnostic(s){id_note})",
            status_name(probe.status),
            probe.status,
            probe.diagnostics.count
        );
        probe.log_summary();
        drop(probe); // releases the probe's output with the library's free
        Ok(Rocjitsu {
            describe,
            entry,
            free,
        })
    }
}

/// Where to look for the translator, in order, the way ROCr looks for its hook:
/// the directory of every loaded `libhsa-runtime64.so*` (from `loaded`, the
/// paths of the loaded objects), then the bare SONAME (the dynamic loader's
/// search path).
fn candidates(loaded: &[String]) -> Vec<String> {
    let mut candidates: Vec<String> = Vec::new();
    for path in loaded {
        if !dl::file_name(path).starts_with(ROCR_FILE_PREFIX) {
            continue;
        }
        let Some(slash) = path.rfind('/') else {
            continue;
        };
        let candidate = format!("{}/{SONAME}", &path[..slash]);
        if !candidates.contains(&candidate) {
            candidates.push(candidate);
        }
    }
    candidates.push(SONAME.to_owned());
    candidates
}

/// The translator found the way ROCr finds its hook: next to the loaded ROCr,
/// then by library name. `Err` gives every candidate's reason.
pub fn find() -> Result<Rocjitsu, String> {
    let candidates = candidates(&dl::loaded_objects());
    let mut reasons = Vec::new();
    if candidates.len() == 1 {
        reasons.push(format!(
            "no {ROCR_FILE_PREFIX}* loaded in this process to look next to"
        ));
    }
    for candidate in candidates {
        match Library::open(&candidate) {
            Err(e) if e.contains(&candidate) => reasons.push(e),
            Err(e) => reasons.push(format!("{candidate}: {e}")),
            Ok(library) => match Rocjitsu::from_library(library) {
                Ok(backend) => return Ok(backend),
                Err(reason) => reasons.push(reason),
            },
        }
    }
    Err(format!("no rocjitsu translator: {}", reasons.join("; ")))
}

impl Backend for Rocjitsu {
    fn kind(&self) -> BackendKind {
        BackendKind::Rocjitsu
    }

    fn describe(&self) -> &str {
        &self.describe
    }

    fn cache_identity(&self) -> Option<String> {
        crate::rewrite_cache::library_identity(&self.describe, self.free as usize)
    }

    fn rewrite(
        &self,
        code_object: &[u8],
        request: &Request<'_>,
    ) -> Result<Rewritten, RetargetError> {
        let (source, target) = (request.source_isa, request.target_isa);
        if request.profile() != Some(Profile::B0ToA0) {
            log::debug!(
                "rocjitsu translator: translates gfx1250 B0 -> A0 only, not {source} -> {target}"
            );
            return Err(RetargetError::Unsupported);
        }
        if request.flags != RewriteFlags::default() {
            log::debug!(
                "rocjitsu translator: has no rewrite options (flags {:#x})",
                request.flags.bits()
            );
            return Err(RetargetError::Unsupported);
        }
        match isa::processor(code_object) {
            Ok("gfx1250") => {}
            other => {
                log::debug!(
                    "rocjitsu translator: translates gfx1250 (EF_AMDGPU_MACH 0x49) code objects \
                     only; this one is {}",
                    match other {
                        Ok(processor) => processor.to_owned(),
                        Err(e) => e.to_string(),
                    }
                );
                return Err(RetargetError::Unsupported);
            }
        }
        let call = call(self.entry, self.free, code_object);
        call.log_summary();
        call.into_result()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sentinel_is_not_what_shape_c_leaves_after_the_probe() {
        assert_ne!(SENTINEL.source_code_object_id, 0);
        assert_ne!(SENTINEL.source_code_object_id, fnv1a64(GFX1250_PROBE));
        assert_eq!(fnv1a64(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a64(b"a"), 0xaf63_dc4c_8601_ec8c); // the published FNV-1a-64 vector
    }

    #[test]
    fn candidates_are_next_to_rocr_then_by_name() {
        let loaded = |paths: &[&str]| paths.iter().map(|p| p.to_string()).collect::<Vec<_>>();
        assert_eq!(candidates(&[]), vec![SONAME.to_owned()]);
        assert_eq!(
            candidates(&loaded(&[
                "",
                "/lib/x86_64-linux-gnu/libc.so.6",
                "/opt/rocm-7.2/lib/libhsa-runtime64.so.1",
                "/opt/rocm-7.2/lib/libhsa-runtime64.so.1.18.0",
                "/usr/lib/libhsa-runtime64.so",
                "libhsa-runtime64.so.1",
                "/opt/x/libhsa-runtime64-other.so",
            ])),
            vec![
                format!("/opt/rocm-7.2/lib/{SONAME}"),
                format!("/usr/lib/{SONAME}"),
                SONAME.to_owned()
            ]
        );
        assert_eq!(
            candidates(&loaded(&["/libhsa-runtime64.so.1"])),
            vec![format!("/{SONAME}"), SONAME.to_owned()]
        );
        // A file named like ROCr's directory is not ROCr.
        assert_eq!(
            candidates(&loaded(&["/opt/libhsa-runtime64.so.1/libfoo.so"])),
            vec![SONAME.to_owned()]
        );
    }

    #[test]
    fn status_names() {
        assert_eq!(status_name(0), "SUCCESS");
        assert_eq!(status_name(4), "INVALID_CODE_OBJECT");
        assert_eq!(status_name(5), "INVALID_FILE");
        assert_eq!(status_name(-1), "an unknown status");
        assert_eq!(status_name(6), "an unknown status");
    }

    unsafe extern "C" fn never_called_free(_: *mut c_void) {
        panic!("a NULL output must not be released");
    }

    fn failed_call(status: Status, errors: &[&str]) -> Call {
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
    fn statuses_map_to_errors() {
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
    fn a_successful_output_is_copied_then_released_with_the_libraries_free() {
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
    fn diagnostics_with_null_fields_and_unknown_kinds_are_accepted() {
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
    fn control_characters_stay_on_one_line() {
        // SAFETY: a NUL-terminated string.
        let text = unsafe { copy_text(c"two\nlines\tand \u{1b}[31m".as_ptr()) }.unwrap();
        assert_eq!(text, "two\\nlines\\tand \\u{1b}[31m");
        // SAFETY: NULL is accepted.
        assert_eq!(unsafe { copy_text(std::ptr::null()) }, None);
    }
}
