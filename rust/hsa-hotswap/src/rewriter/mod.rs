//! Rewriter backends behind one interface ([`Backend`]), the choice of one per
//! process, and the rewrite through it with the checks every backend's output
//! gets ([`retarget_with`]); the entry the tool's load path and
//! `hotswap_retarget_code_object` share is [`crate::retarget::retarget`].
//!
//! Backends:
//! - [`comgr_abi`]: `amd_comgr_hotswap_rewrite` (COMGR's data-object ABI; the
//!   linked COMGR, rocjitsu's COMGR shim, the test rewriters);
//! - [`rocjitsu`]: AMD's maintained translator,
//!   `librocjitsu_gfx1250_b0_to_a0.so.0` (`rj_gfx1250_b0_to_a0_translate`);
//! - [`native`]: the Rust rewriter of `hotswap_code_object::rewrite` (same-size
//!   fixes, and the DS two-address split by moving each function that holds
//!   one into an appended code segment; objects with another growth site are
//!   refused).
//!
//! The backends, their order, detection, probing and description are one list,
//! [`registry::REGISTRY`]; [`select`], [`candidates`] and `hotswap doctor` read
//! it. A new backend is a module and one registry entry.
//!
//! Choice ([`select`], once per process, from [`Config::process`]):
//! `HSA_HOTSWAP_REWRITER=native` is the native rewriter; set to an absolute
//! path it loads that library and uses the first registered backend whose ABI
//! it exports (COMGR-ABI, then the rocjitsu translator; anything else is "no
//! rewriter"); unset, the first usable backend in registry order: the linked
//! COMGR's rewriter if it works, else the rocjitsu translator found the way
//! ROCr finds its hook (next to ROCr, then by library name), else the native
//! rewriter. The reason a candidate was not used is logged.
//!
//! Resolution runs on first use, exactly once per process
//! (`OnceLock::get_or_init`): a concurrent first caller waits for the one
//! resolution in flight; one that panics (caught by its caller's boundary)
//! leaves the choice unmade, and the next call resolves again. Afterwards
//! [`backend`] costs one atomic load.
//!
//! Every backend's output is checked the same way: empty output or output that
//! is not an AMDGPU ELF is a failure, identical bytes are
//! [`Retargeted::Unchanged`].
#![allow(unsafe_code)] // owns malloc'd buffers handed to C callers

pub mod comgr_abi;
pub mod identity;
pub mod native;
pub mod registry;
pub mod rocjitsu;

use std::ptr::NonNull;
use std::sync::OnceLock;

use hotswap_code_object::elf::Header;
use hotswap_code_object::isa_name::{features_of, processor_of};
use hotswap_code_object::{CodeObject, EM_AMDGPU};

use crate::config::{Config, HSA_HOTSWAP_REWRITER, REWRITER_NATIVE};
use crate::dl::Library;
use crate::status::hotswap_status_t;

/// COMGR's hotswap-local pseudo-feature for code built for B0.
pub const B0_FEATURE: &str = ":gfx1250-b0-specific+";
/// COMGR's hotswap-local pseudo-feature for the A0 stepping.
pub const A0_FEATURE: &str = ":gfx1250-b0-specific-";

/// Options of `amd_comgr_hotswap_rewrite_with_options`
/// (`amd_comgr_hotswap_rewrite_flag_t` bits). All false: the plain
/// `amd_comgr_hotswap_rewrite` is used. Only the COMGR-ABI backend has flags.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RewriteFlags {
    /// `AMD_COMGR_HOTSWAP_REWRITE_FLAG_ENTRY_TRAMPOLINES` (0x1).
    pub entry_trampolines: bool,
    /// `AMD_COMGR_HOTSWAP_REWRITE_FLAG_STRICT_MODE` (0x2).
    pub strict_mode: bool,
}

impl RewriteFlags {
    /// The flag word COMGR expects.
    pub fn bits(self) -> u64 {
        u64::from(self.entry_trampolines) | (u64::from(self.strict_mode) << 1)
    }
}

/// What a rewrite is for, derived from the ISA pair ([`Request::profile`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Profile {
    /// gfx1250 code built for B0, made loadable on an A0 GPU: the source is
    /// `gfx1250` (with or without the B0 pseudo-feature) and the target is
    /// `gfx1250` with the A0 pseudo-feature, or `gfx1250-strict` (the A0 target).
    B0ToA0,
    /// The same ISA on both sides, ignoring the B0 pseudo-feature (upstream's
    /// opt-in entry-trampoline rewrite).
    SameTarget,
}

/// One rewrite request.
#[derive(Clone, Copy, Debug)]
pub struct Request<'a> {
    /// Source ISA name, possibly with COMGR's `:gfx1250-b0-specific±`.
    pub source_isa: &'a str,
    /// Target ISA name, likewise.
    pub target_isa: &'a str,
    /// COMGR-ABI flags.
    pub flags: RewriteFlags,
}

impl Request<'_> {
    /// The profile of this ISA pair, `None` for a pair no profile covers (only
    /// a COMGR-ABI rewriter may still accept it).
    pub fn profile(&self) -> Option<Profile> {
        let (source, target) = (self.source_isa, self.target_isa);
        let a0 = |isa: &str| features_of(isa).any(|f| f == &A0_FEATURE[1..]);
        let target_processor = processor_of(target);
        if processor_of(source) == "gfx1250"
            && !a0(source)
            && (target_processor == "gfx1250-strict"
                || (target_processor == "gfx1250" && a0(target)))
        {
            return Some(Profile::B0ToA0);
        }
        // The B0 feature only says what the code was built for; an A0 feature on
        // either side is a change of stepping, not the same target.
        let without_b0 = |isa: &str| isa.replace(B0_FEATURE, "");
        (!a0(source) && !a0(target) && without_b0(source) == without_b0(target))
            .then_some(Profile::SameTarget)
    }
}

/// Which backend this is: the key of the backend registry (`registry::REGISTRY`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BackendKind {
    /// `amd_comgr_hotswap_rewrite` (data-object ABI).
    ComgrAbi,
    /// rocjitsu's `rj_gfx1250_b0_to_a0_translate`.
    Rocjitsu,
    /// The native Rust rewriter.
    Native,
}

/// A rewriter. Implementations never modify the input and return new bytes in
/// a `malloc` buffer; [`crate::retarget::retarget`] checks the output.
pub trait Backend: Send + Sync + std::fmt::Debug {
    /// Which registered backend this is.
    fn kind(&self) -> BackendKind;
    /// For log lines: the ABI and the library.
    fn describe(&self) -> &str;
    /// One rewrite of `object` (parsed once by the caller; a backend that
    /// reads the object reads this view) for `request`.
    fn rewrite(
        &self,
        object: &CodeObject<'_>,
        request: &Request<'_>,
    ) -> Result<Rewritten, RetargetError>;
    /// What names this backend across processes, for the persistent rewrite
    /// cache's key ([`crate::rewrite_cache`]): the native rewriter's version and
    /// options, a library's ABI and build-id (never a path, so the same build
    /// has one identity on every machine). `None` (the default, test doubles):
    /// never cached.
    fn cache_identity(&self) -> Option<String> {
        None
    }
}

/// A rewritten code object, allocated with `malloc` so the C API can hand it
/// to a caller who releases it with `free()`.
#[derive(Debug)]
pub struct Rewritten {
    ptr: NonNull<u8>,
    len: usize,
}

// SAFETY: `Rewritten` uniquely owns its heap buffer, like `Box<[u8]>`.
unsafe impl Send for Rewritten {}
// SAFETY: shared access only reads the buffer.
unsafe impl Sync for Rewritten {}

impl Rewritten {
    /// A new zeroed `malloc` buffer of `len` bytes filled by `fill`; fails when
    /// `len` is 0 or `fill` returns false (Failed), or allocation fails.
    pub fn from_fill(
        len: usize,
        fill: impl FnOnce(&mut [u8]) -> bool,
    ) -> Result<Self, RetargetError> {
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

    /// A copy of `bytes` in a new `malloc` buffer.
    pub fn copy_of(bytes: &[u8]) -> Result<Self, RetargetError> {
        Self::from_fill(bytes.len(), |buffer| {
            buffer.copy_from_slice(bytes);
            true
        })
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
    /// The rewriter in use does not rewrite this ISA pair.
    Unsupported,
    /// The rewriter refused this code object as a property of its content
    /// (e.g. a site that needs code growth, or not a translatable object);
    /// repeating the call gives the same answer. The text says why.
    Refused(String),
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
            Self::Unsupported => hotswap_status_t::HOTSWAP_STATUS_REWRITE_UNSUPPORTED,
            Self::Refused(_) => hotswap_status_t::HOTSWAP_STATUS_REWRITE_REFUSED,
            Self::Failed => hotswap_status_t::HOTSWAP_STATUS_REWRITE_FAILED,
            Self::OutOfMemory => hotswap_status_t::HOTSWAP_STATUS_OUT_OF_MEMORY,
        }
    }
}

impl std::fmt::Display for RetargetError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Unavailable => write!(f, "no usable rewriter"),
            Self::InvalidArgument => write!(f, "invalid argument"),
            Self::Unsupported => write!(f, "the rewriter does not rewrite this ISA pair"),
            Self::Refused(why) => write!(f, "refused: {why}"),
            Self::Failed => write!(f, "the rewriter failed"),
            Self::OutOfMemory => write!(f, "out of memory"),
        }
    }
}

/// The result of a successful rewrite.
#[derive(Debug)]
pub enum Retargeted {
    /// New bytes, different from the input.
    Changed(Rewritten),
    /// The rewriter returned the input byte for byte.
    Unchanged,
}

/// The backend `config` selects (see the module documentation); `Err` gives
/// the reasons nothing is usable.
pub fn select(config: &Config) -> Result<Box<dyn Backend>, String> {
    match config.rewriter.as_deref() {
        Some(REWRITER_NATIVE) => (registry::entry(BackendKind::Native).find)(config),
        Some(path) if path.starts_with('/') => from_path(path),
        Some(other) => Err(format!(
            "{HSA_HOTSWAP_REWRITER}={other:?} is neither {REWRITER_NATIVE:?} nor an absolute path"
        )),
        None => automatic(config),
    }
}

/// One rewriter backend as `candidates` reports it.
#[derive(Debug)]
pub struct Candidate {
    /// The registry's name of the backend, or `HSA_HOTSWAP_REWRITER` when that
    /// variable chooses.
    pub name: &'static str,
    /// The backend this is (for `HSA_HOTSWAP_REWRITER`: the one its library
    /// turned out to be; `None` when it is not usable).
    pub kind: Option<BackendKind>,
    /// The backend's description (usable) or why it is not.
    pub result: Result<String, String>,
}

/// Every backend [`select`] considers for `config`, in its order
/// ([`registry::REGISTRY`]); [`select`] uses the first usable one. For
/// diagnostics (`hotswap doctor`): loads and probes exactly as [`select`] does.
pub fn candidates(config: &Config) -> Vec<Candidate> {
    if config.rewriter.is_some() {
        let backend = select(config);
        return vec![Candidate {
            name: HSA_HOTSWAP_REWRITER,
            kind: backend.as_ref().ok().map(|b| b.kind()),
            result: backend.map(|b| b.describe().to_owned()),
        }];
    }
    registry::REGISTRY
        .iter()
        .map(|r| {
            let backend = (r.find)(config);
            Candidate {
                name: r.name,
                kind: Some(r.kind),
                result: backend.map(|b| b.describe().to_owned()),
            }
        })
        .collect()
}

/// The backend of the library at `path`: the first registered backend whose ABI
/// it exports.
fn from_path(path: &str) -> Result<Box<dyn Backend>, String> {
    let library = Library::open(path)
        .map_err(|e| format!("cannot load {HSA_HOTSWAP_REWRITER}={path}: {e}"))?;
    let by_path = || registry::REGISTRY.iter().filter_map(|r| r.by_path.as_ref());
    match by_path().find(|p| (p.exports)(&library)) {
        Some(p) => (p.open)(library),
        None => Err(format!(
            "{HSA_HOTSWAP_REWRITER}={path} exports neither {}",
            by_path()
                .map(|p| p.symbol)
                .collect::<Vec<_>>()
                .join(" nor ")
        )),
    }
}

/// Without `HSA_HOTSWAP_REWRITER`: the first usable backend of the registry
/// (the linked COMGR's rewriter, else the rocjitsu translator, else the native
/// rewriter), with the reasons the earlier ones were not used logged.
fn automatic(config: &Config) -> Result<Box<dyn Backend>, String> {
    let mut passed: Vec<&str> = Vec::new();
    let mut reasons = Vec::new();
    for (i, r) in registry::REGISTRY.iter().enumerate() {
        match (r.find)(config) {
            Ok(backend) => {
                if i + 1 == registry::REGISTRY.len() && !passed.is_empty() {
                    log::info!(
                        "no {} usable ({}): using the {}",
                        passed.join(" or "),
                        reasons.join("; "),
                        r.name
                    );
                } else if !passed.is_empty() {
                    log::info!(
                        "not using the {}: {}",
                        passed.join(" or "),
                        reasons.join("; ")
                    );
                }
                return Ok(backend);
            }
            Err(reason) => {
                passed.push(r.name);
                reasons.push(reason);
            }
        }
    }
    Err(reasons.join("; "))
}

/// The one resolution of the process (unset until the first [`backend`]).
static BACKEND: OnceLock<Option<&'static dyn Backend>> = OnceLock::new();

/// The backend of this process, resolved on first use (see the module
/// documentation); later calls cost one atomic load.
pub fn backend() -> Option<&'static dyn Backend> {
    #[cfg(any(test, feature = "testing"))]
    if let Some(backend) = *testing_override::OVERRIDE
        .lock()
        .unwrap_or_else(|e| e.into_inner())
    {
        return backend;
    }
    *BACKEND.get_or_init(resolve)
}

/// Chooses the process's backend from [`Config::process`], logging the choice
/// or why there is none.
fn resolve() -> Option<&'static dyn Backend> {
    match select(Config::process()) {
        Ok(backend) => {
            log::info!(
                "rewriter: {} ({})",
                backend.describe(),
                registry::entry(backend.kind()).name
            );
            Some(Box::leak(backend))
        }
        Err(reason) => {
            log::warn!("no hotswap rewriter: {reason}");
            None
        }
    }
}

/// A backend tests put in place of the process's (`cfg(test)` or the `testing`
/// feature only).
#[cfg(any(test, feature = "testing"))]
pub mod testing_override {
    use super::Backend;
    use std::sync::Mutex;

    /// `Some(x)`: [`super::backend`] returns `x` instead of resolving.
    #[allow(clippy::type_complexity)]
    pub static OVERRIDE: Mutex<Option<Option<&'static dyn Backend>>> = Mutex::new(None);

    /// Makes [`super::backend`] return `backend` (`None`: no rewriter) until
    /// [`clear`] is called.
    pub fn set(backend: Option<&'static dyn Backend>) {
        *OVERRIDE.lock().unwrap_or_else(|e| e.into_inner()) = Some(backend);
    }

    /// Back to the process's own resolution.
    pub fn clear() {
        *OVERRIDE.lock().unwrap_or_else(|e| e.into_inner()) = None;
    }
}

/// True when a usable rewriter is present in this process.
pub fn is_available() -> bool {
    backend().is_some()
}

/// True when `bytes` is an AMDGPU ELF64 object (header check only).
fn is_amdgpu_elf(bytes: &[u8]) -> bool {
    Header::parse(bytes).is_ok_and(|h| h.machine == EM_AMDGPU)
}

/// Warns when the metadata note names another target than the header.
fn cross_check_metadata(object: &CodeObject<'_>) {
    let Ok(header_isa) = object.isa_name() else {
        return;
    };
    match object.metadata() {
        Ok(m) => match m.target {
            Some(target) if target.replace("-unknown-", "--") != header_isa => log::warn!(
                "code object metadata says amdhsa.target {target} but its ELF header says {header_isa}"
            ),
            _ => {}
        },
        Err(e) => {
            log::warn!("code object metadata unreadable ({e}); the ELF header says {header_isa}")
        }
    }
}

/// One rewrite through `backend`, with the output checks every backend gets.
pub fn retarget_with(
    backend: &dyn Backend,
    object: &CodeObject<'_>,
    request: &Request<'_>,
) -> Result<Retargeted, RetargetError> {
    cross_check_metadata(object);
    let (source, target) = (request.source_isa, request.target_isa);
    let code_object = object.bytes();
    let rewritten = backend.rewrite(object, request)?;
    let size = rewritten.bytes().len();
    if !is_amdgpu_elf(rewritten.bytes()) {
        log::warn!("rewrite {source} -> {target} returned {size} bytes that are not an AMDGPU ELF");
        return Err(RetargetError::Failed);
    }
    if rewritten.bytes() == code_object {
        log::info!("rewrite {source} -> {target} left the code object unchanged");
        return Ok(Retargeted::Unchanged);
    }
    Ok(Retargeted::Changed(rewritten))
}

#[cfg(test)]
mod tests {
    use super::*;

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
        let r = Rewritten::copy_of(b"abcd").unwrap();
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
    fn profiles_of_isa_pairs() {
        let request = |source_isa, target_isa| Request {
            source_isa,
            target_isa,
            flags: RewriteFlags::default(),
        };
        const P: &str = "amdgcn-amd-amdhsa--";
        let b0 = format!("{P}gfx1250{B0_FEATURE}");
        let a0 = format!("{P}gfx1250{A0_FEATURE}");
        let strict = format!("{P}gfx1250-strict");
        let plain = format!("{P}gfx1250");
        assert_eq!(request(&b0, &a0).profile(), Some(Profile::B0ToA0));
        assert_eq!(request(&plain, &a0).profile(), Some(Profile::B0ToA0));
        assert_eq!(request(&plain, &strict).profile(), Some(Profile::B0ToA0));
        assert_eq!(request(&b0, &b0).profile(), Some(Profile::SameTarget));
        assert_eq!(request(&plain, &plain).profile(), Some(Profile::SameTarget));
        let g = format!("{P}gfx12-5-generic");
        assert_eq!(request(&g, &g).profile(), Some(Profile::SameTarget));
        assert_eq!(request(&a0, &b0).profile(), None, "A0 to B0");
        assert_eq!(
            request(&strict, &a0).profile(),
            None,
            "strict code is A0 code"
        );
        assert_eq!(
            request(&format!("{P}gfx942"), &a0).profile(),
            None,
            "another processor"
        );
    }
}
