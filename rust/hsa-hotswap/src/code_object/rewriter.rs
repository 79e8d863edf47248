//! The COMGR-ABI rewriter client (`amd_comgr_hotswap_rewrite`, data-object ABI,
//! "Gen 2").
//!
//! The rewriter is resolved lazily, once, thread-safe, from the library named by
//! `HSA_HOTSWAP_REWRITER` (an absolute path) or else from the COMGR this library
//! was linked against. A library is refused when it
//! - cannot be loaded, or lacks the data-object functions or
//!   `amd_comgr_hotswap_rewrite`;
//! - exports `amd_comgr_hotswap_needs_transpile`: the raw-buffer prototype
//!   ("Gen 1"), whose `amd_comgr_hotswap_rewrite` has the same name and version
//!   node but another signature (calling it would corrupt memory);
//! - answers one probe rewrite of a small valid gfx1250 code object (B0 → A0 via
//!   the pseudo-feature) with `INVALID_ARGUMENT`: COMGR's deprecated stub, which
//!   fails every call.
//!
//! Each refusal is logged once with its reason; afterwards [`retarget`] costs
//! one atomic load. COMGR's SUCCESS does not mean "changed": identical bytes are
//! [`Retargeted::Unchanged`]; empty output or output that is not an AMDGPU ELF is
//! a failure.
#![allow(unsafe_code)] // owns malloc'd buffers and calls COMGR through dlsym

use std::ffi::{c_char, CStr, CString};
use std::ptr::NonNull;
use std::sync::OnceLock;

use super::comgr::{self, DataApi, DataHandle, Library, Status};
use super::elf::Header;
use super::{isa, metadata};
use crate::status::hotswap_status_t;

use crate::config::HSA_HOTSWAP_REWRITER;

/// Options of `amd_comgr_hotswap_rewrite_with_options`
/// (`amd_comgr_hotswap_rewrite_flag_t` bits). All false: the plain
/// `amd_comgr_hotswap_rewrite` is used.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RewriteFlags {
    /// `AMD_COMGR_HOTSWAP_REWRITE_FLAG_ENTRY_TRAMPOLINES` (0x1).
    pub entry_trampolines: bool,
    /// `AMD_COMGR_HOTSWAP_REWRITE_FLAG_STRICT_MODE` (0x2).
    pub strict_mode: bool,
}

impl RewriteFlags {
    /// The flag word COMGR expects.
    fn bits(self) -> u64 {
        u64::from(self.entry_trampolines) | (u64::from(self.strict_mode) << 1)
    }
}

/// The probe: a real gfx1250 code object embedded by the code-object crate.
static PROBE_CODE_OBJECT: &[u8] = hotswap_code_object::GFX1250_PROBE;
/// The probe's ISA names: gfx1250 B0 to gfx1250 A0, the one pair every hotswap
/// rewriter supports.
const PROBE_SOURCE_ISA: &CStr = c"amdgcn-amd-amdhsa--gfx1250:gfx1250-b0-specific+";
const PROBE_TARGET_ISA: &CStr = c"amdgcn-amd-amdhsa--gfx1250:gfx1250-b0-specific-";

/// A rewritten code object: bytes that differ from the input, allocated with
/// `malloc` so the C API can hand them to a caller who releases them with `free()`.
#[derive(Debug)]
pub struct Rewritten {
    ptr: std::ptr::NonNull<u8>,
    len: usize,
}

// SAFETY: `Rewritten` uniquely owns its heap buffer, like `Box<[u8]>`.
unsafe impl Send for Rewritten {}
// SAFETY: shared access only reads the buffer.
unsafe impl Sync for Rewritten {}

impl Rewritten {
    /// A new zeroed `malloc` buffer of `len` bytes filled by `fill`; fails when
    /// `len` is 0 or `fill` returns false (Failed), or allocation fails.
    fn from_fill(len: usize, fill: impl FnOnce(&mut [u8]) -> bool) -> Result<Self, RetargetError> {
        if len == 0 {
            return Err(RetargetError::Failed);
        }
        // SAFETY: malloc with a non-zero size; NULL is handled below.
        let raw = unsafe { libc::malloc(len) }.cast::<u8>();
        let ptr = NonNull::new(raw).ok_or(RetargetError::OutOfMemory)?;
        let rewritten = Self { ptr, len };
        // SAFETY: ptr is a fresh allocation of len bytes owned by `rewritten`.
        let buffer = unsafe { std::slice::from_raw_parts_mut(rewritten.ptr.as_ptr(), len) };
        buffer.fill(0);
        if !fill(buffer) {
            return Err(RetargetError::Failed); // `rewritten` frees the buffer
        }
        Ok(rewritten)
    }

    /// The bytes.
    pub fn bytes(&self) -> &[u8] {
        // SAFETY: ptr points to len initialised bytes owned by self.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }

    /// Gives up ownership: the caller must `free()` the returned pointer.
    pub fn into_raw(self) -> (*mut u8, usize) {
        let this = std::mem::ManuallyDrop::new(self);
        (this.ptr.as_ptr(), this.len)
    }
}

impl Drop for Rewritten {
    fn drop(&mut self) {
        // SAFETY: ptr came from malloc and is owned by self; freed exactly once.
        unsafe { libc::free(self.ptr.as_ptr().cast()) }
    }
}

/// Why a rewrite did not produce new bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RetargetError {
    /// No usable rewriter in this process (reason logged once).
    Unavailable,
    /// Empty input, or an ISA name that is not a C string.
    InvalidArgument,
    /// The rewriter failed, or returned empty or non-AMDGPU output.
    Failed,
    /// Allocation failed.
    OutOfMemory,
}

impl RetargetError {
    /// The C status for this error.
    pub fn status(&self) -> hotswap_status_t {
        match self {
            Self::Unavailable => hotswap_status_t::HOTSWAP_STATUS_REWRITER_UNAVAILABLE,
            Self::InvalidArgument => hotswap_status_t::HOTSWAP_STATUS_INVALID_ARGUMENT,
            Self::Failed => hotswap_status_t::HOTSWAP_STATUS_REWRITE_FAILED,
            Self::OutOfMemory => hotswap_status_t::HOTSWAP_STATUS_OUT_OF_MEMORY,
        }
    }
}

/// The result of a successful rewriter call.
#[derive(Debug)]
pub enum Retargeted {
    /// New bytes, different from the input.
    Changed(Rewritten),
    /// The rewriter returned the input byte for byte.
    Unchanged,
}

/// `amd_comgr_hotswap_rewrite` (node `amd_comgr_3.2`).
type RewriteFn =
    unsafe extern "C" fn(DataHandle, *const c_char, *const c_char, *mut DataHandle) -> Status;

/// `amd_comgr_hotswap_rewrite_options_t`.
#[repr(C)]
#[derive(Debug)]
struct RewriteOptions {
    size: usize,
    flags: u64,
}

/// `amd_comgr_hotswap_rewrite_with_options` (node `amd_comgr_3.4`).
type RewriteWithOptionsFn = unsafe extern "C" fn(
    DataHandle,
    *const c_char,
    *const c_char,
    *const RewriteOptions,
    *mut DataHandle,
) -> Status;

/// A usable rewriter.
#[derive(Debug)]
struct Rewriter {
    /// What was loaded, for log lines.
    name: String,
    data: DataApi,
    rewrite: RewriteFn,
    rewrite_with_options: Option<RewriteWithOptionsFn>,
}

/// Loads the rewriter library: `HSA_HOTSWAP_REWRITER` or the linked COMGR.
fn load_library() -> Result<Library, String> {
    match crate::config::Config::process().rewriter.clone() {
        Some(path) => {
            if !path.starts_with('/') {
                return Err(format!(
                    "{HSA_HOTSWAP_REWRITER}={path:?} is not an absolute path"
                ));
            }
            Library::open(&path)
                .map_err(|e| format!("cannot load {HSA_HOTSWAP_REWRITER}={path}: {e}"))
        }
        None => {
            comgr::open_linked_comgr().map_err(|e| format!("cannot load the linked COMGR: {e}"))
        }
    }
}

/// Resolves and vets the rewriter; `Err` is the reason it is unusable.
fn resolve() -> Result<Rewriter, String> {
    let library = load_library()?;
    let name = library.name.clone();
    if library
        .address(c"amd_comgr_hotswap_needs_transpile")
        .is_some()
    {
        return Err(format!(
            "{name} exports amd_comgr_hotswap_needs_transpile: it is the raw-buffer hotswap \
             prototype, whose amd_comgr_hotswap_rewrite has an incompatible signature; not calling it"
        ));
    }
    // SAFETY: RewriteFn is the Gen-2 declaration of amd_comgr_hotswap_rewrite; the
    // Gen-1 library with the same name was refused above.
    let rewrite: RewriteFn = unsafe { comgr::function(&library, c"amd_comgr_hotswap_rewrite") }
        .ok_or_else(|| {
            format!("{name} has no amd_comgr_hotswap_rewrite (no hotswap rewriter in this COMGR)")
        })?;
    let data = DataApi::resolve(&library).map_err(|missing| format!("{name} lacks {missing}"))?;
    // SAFETY: the Gen-2 declaration of amd_comgr_hotswap_rewrite_with_options.
    let rewrite_with_options: Option<RewriteWithOptionsFn> =
        unsafe { comgr::function(&library, c"amd_comgr_hotswap_rewrite_with_options") };
    let rewriter = Rewriter {
        name,
        data,
        rewrite,
        rewrite_with_options,
    };
    rewriter.probe()?;
    Ok(rewriter)
}

impl Rewriter {
    /// One rewrite of the embedded gfx1250 object. Only `INVALID_ARGUMENT` (the
    /// deprecated stub's only answer) disqualifies: a valid object and the one
    /// pair every hotswap rewriter supports leave it no other reason.
    fn probe(&self) -> Result<(), String> {
        let input = self.data.executable(PROBE_CODE_OBJECT).map_err(|s| {
            format!(
                "{}: cannot create a data object ({})",
                self.name,
                comgr::status_name(s)
            )
        })?;
        let mut output = DataHandle { handle: 0 };
        // SAFETY: live input handle, NUL-terminated ISA names, valid output pointer.
        let status = unsafe {
            (self.rewrite)(
                input.handle(),
                PROBE_SOURCE_ISA.as_ptr(),
                PROBE_TARGET_ISA.as_ptr(),
                &mut output,
            )
        };
        if status == comgr::STATUS_SUCCESS {
            drop(self.data.adopt(output));
        }
        if status == comgr::STATUS_INVALID_ARGUMENT {
            return Err(format!(
                "{} rejects a valid gfx1250 B0->A0 rewrite with INVALID_ARGUMENT: it is COMGR's \
                 deprecated hotswap stub, which always fails",
                self.name
            ));
        }
        log::info!(
            "rewriter: {} (probe: {}; _with_options {})",
            self.name,
            comgr::status_name(status),
            if self.rewrite_with_options.is_some() {
                "present"
            } else {
                "absent"
            }
        );
        Ok(())
    }

    /// One rewrite call; the output data object on SUCCESS.
    fn call(
        &self,
        input: DataHandle,
        source: &CString,
        target: &CString,
        flags: u64,
    ) -> Result<comgr::Data<'_>, Status> {
        let mut output = DataHandle { handle: 0 };
        let status = if flags == 0 {
            // SAFETY: live input handle, NUL-terminated names, valid output pointer.
            unsafe { (self.rewrite)(input, source.as_ptr(), target.as_ptr(), &mut output) }
        } else {
            let Some(with_options) = self.rewrite_with_options else {
                log::warn!(
                    "{} has no amd_comgr_hotswap_rewrite_with_options; flags {flags:#x} need it",
                    self.name
                );
                return Err(comgr::STATUS_ERROR);
            };
            let options = RewriteOptions {
                size: std::mem::size_of::<RewriteOptions>(),
                flags,
            };
            // SAFETY: as above, plus a valid options struct that outlives the call.
            unsafe {
                with_options(
                    input,
                    source.as_ptr(),
                    target.as_ptr(),
                    &options,
                    &mut output,
                )
            }
        };
        if status == comgr::STATUS_SUCCESS {
            Ok(self.data.adopt(output))
        } else {
            Err(status)
        }
    }
}

/// The rewriter of this process, resolved on first use.
fn rewriter() -> Option<&'static Rewriter> {
    static REWRITER: OnceLock<Option<Rewriter>> = OnceLock::new();
    REWRITER
        .get_or_init(|| match resolve() {
            Ok(rewriter) => Some(rewriter),
            Err(reason) => {
                log::warn!("no hotswap rewriter: {reason}");
                None
            }
        })
        .as_ref()
}

/// True when a usable rewriter is present in this process. Resolved lazily,
/// once, thread-safe; later calls cost one atomic load.
pub fn is_available() -> bool {
    rewriter().is_some()
}

/// True when `bytes` is an AMDGPU ELF64 object (header check only).
fn is_amdgpu_elf(bytes: &[u8]) -> bool {
    Header::parse(bytes).is_ok_and(|h| h.machine == isa::EM_AMDGPU)
}

/// Warns when the metadata note names another target than the header.
fn cross_check_metadata(code_object: &[u8]) {
    let Ok(header_isa) = isa::isa_name(code_object) else {
        return;
    };
    match metadata::read(code_object) {
        Ok(m) => match m.target.as_deref() {
            Some(target) if target.replace("-unknown-", "--") != header_isa => log::warn!(
                "code object metadata says amdhsa.target {target} but its ELF header says {header_isa}"
            ),
            _ => {}
        },
        Err(e) => log::warn!("code object metadata unreadable ({e}); the ELF header says {header_isa}"),
    }
}

/// Rewrites `code_object` from `source_isa` to `target_isa` (ISA names, possibly
/// with the `:gfx1250-b0-specific±` pseudo-feature).
pub fn retarget(
    code_object: &[u8],
    source_isa: &str,
    target_isa: &str,
) -> Result<Retargeted, RetargetError> {
    retarget_with_flags(code_object, source_isa, target_isa, RewriteFlags::default())
}

/// [`retarget`] with `amd_comgr_hotswap_rewrite_with_options` flags
/// ([`RewriteFlags`]); no flag uses the plain rewrite. Flags with a rewriter
/// lacking `_with_options` fail.
pub fn retarget_with_flags(
    code_object: &[u8],
    source_isa: &str,
    target_isa: &str,
    flags: RewriteFlags,
) -> Result<Retargeted, RetargetError> {
    if code_object.is_empty() {
        return Err(RetargetError::InvalidArgument);
    }
    let (Ok(source), Ok(target)) = (CString::new(source_isa), CString::new(target_isa)) else {
        return Err(RetargetError::InvalidArgument);
    };
    let rewriter = rewriter().ok_or(RetargetError::Unavailable)?;
    cross_check_metadata(code_object);
    let from_comgr = |status: Status| {
        if status == comgr::STATUS_OUT_OF_RESOURCES {
            RetargetError::OutOfMemory
        } else {
            RetargetError::Failed
        }
    };
    let input = rewriter.data.executable(code_object).map_err(|status| {
        log::warn!(
            "{}: cannot create the input data object ({})",
            rewriter.name,
            comgr::status_name(status)
        );
        from_comgr(status)
    })?;
    let output = rewriter
        .call(input.handle(), &source, &target, flags.bits())
        .map_err(|status| {
            log::warn!(
                "rewrite {source_isa} -> {target_isa} failed: {} ({status})",
                comgr::status_name(status)
            );
            from_comgr(status)
        })?;
    drop(input);
    let size = output.size().map_err(from_comgr)?;
    if size == 0 {
        log::warn!("rewrite {source_isa} -> {target_isa} returned an empty code object");
        return Err(RetargetError::Failed);
    }
    let rewritten = Rewritten::from_fill(size, |buffer| output.copy_into(buffer) == Ok(size))?;
    if !is_amdgpu_elf(rewritten.bytes()) {
        log::warn!(
            "rewrite {source_isa} -> {target_isa} returned {size} bytes that are not an AMDGPU ELF"
        );
        return Err(RetargetError::Failed);
    }
    if rewritten.bytes() == code_object {
        log::info!("rewrite {source_isa} -> {target_isa} left the code object unchanged");
        return Ok(Retargeted::Unchanged);
    }
    Ok(Retargeted::Changed(rewritten))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn probe_is_a_gfx1250_code_object() {
        assert_eq!(
            isa::isa_name(PROBE_CODE_OBJECT).as_deref(),
            Ok("amdgcn-amd-amdhsa--gfx1250")
        );
        let m = metadata::read(PROBE_CODE_OBJECT).unwrap();
        assert_eq!(m.target.as_deref(), Some("amdgcn-amd-amdhsa--gfx1250"));
        assert_eq!(m.kernels[0].name.as_deref(), Some("hotswap_kernel"));
        assert_eq!(m.kernels[0].symbol.as_deref(), Some("hotswap_kernel.kd"));
    }

    #[test]
    fn flag_bits_match_comgr() {
        assert_eq!(RewriteFlags::default().bits(), 0);
        let both = RewriteFlags {
            entry_trampolines: true,
            strict_mode: true,
        };
        assert_eq!(both.bits(), 0x3);
        let strict = RewriteFlags {
            strict_mode: true,
            ..RewriteFlags::default()
        };
        assert_eq!(strict.bits(), 0x2);
    }

    #[test]
    fn rewritten_owns_a_malloc_buffer() {
        let r = Rewritten::from_fill(4, |b| {
            b.copy_from_slice(b"abcd");
            true
        })
        .unwrap();
        assert_eq!(r.bytes(), b"abcd");
        let (ptr, len) = r.into_raw();
        assert_eq!(len, 4);
        // SAFETY: into_raw hands over a malloc'd pointer.
        unsafe { libc::free(ptr.cast()) };
        assert_eq!(
            Rewritten::from_fill(0, |_| true).unwrap_err(),
            RetargetError::Failed
        );
        assert_eq!(
            Rewritten::from_fill(4, |_| false).unwrap_err(),
            RetargetError::Failed
        );
    }

    #[test]
    fn invalid_arguments_are_refused_before_any_rewriter_is_loaded() {
        assert_eq!(
            retarget(&[], "a", "b").unwrap_err(),
            RetargetError::InvalidArgument
        );
        assert_eq!(
            retarget(b"x", "a\0", "b").unwrap_err(),
            RetargetError::InvalidArgument
        );
    }
}
