//! COMGR and COMGR-ABI libraries, loaded at run time with `dlopen`/`dlsym`, and
//! the data-object calls both the ISA fallback and the rewriter client use.
//!
//! Nothing is bound at link time: Debian's COMGR (2.4) and most others lack the
//! hotswap symbols, and a rewriter may be any library (`HSA_HOTSWAP_REWRITER`).
//! Libraries are never closed: function pointers taken from them live in
//! process-wide `OnceLock`s.
#![allow(unsafe_code)] // dlopen/dlsym and calls through COMGR function pointers

use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::sync::OnceLock;

/// `amd_comgr_status_t` (a C enum).
pub type Status = c_int;
/// `AMD_COMGR_STATUS_SUCCESS`.
pub(crate) const STATUS_SUCCESS: Status = 0;
/// `AMD_COMGR_STATUS_ERROR`.
pub(crate) const STATUS_ERROR: Status = 1;
/// `AMD_COMGR_STATUS_ERROR_INVALID_ARGUMENT`.
pub(crate) const STATUS_INVALID_ARGUMENT: Status = 2;
/// `AMD_COMGR_STATUS_ERROR_OUT_OF_RESOURCES`.
pub(crate) const STATUS_OUT_OF_RESOURCES: Status = 3;
/// `AMD_COMGR_DATA_KIND_EXECUTABLE`.
const DATA_KIND_EXECUTABLE: c_int = 0x8;

/// `amd_comgr_data_t`.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DataHandle {
    /// Opaque to the caller.
    pub handle: u64,
}

type CreateDataFn = unsafe extern "C" fn(c_int, *mut DataHandle) -> Status;
type ReleaseDataFn = unsafe extern "C" fn(DataHandle) -> Status;
type SetDataFn = unsafe extern "C" fn(DataHandle, usize, *const c_char) -> Status;
type GetDataFn = unsafe extern "C" fn(DataHandle, *mut usize, *mut c_char) -> Status;
type GetDataIsaNameFn = unsafe extern "C" fn(DataHandle, *mut usize, *mut c_char) -> Status;

/// A name for a COMGR status in logs.
pub fn status_name(status: Status) -> &'static str {
    match status {
        STATUS_SUCCESS => "AMD_COMGR_STATUS_SUCCESS",
        STATUS_ERROR => "AMD_COMGR_STATUS_ERROR",
        STATUS_INVALID_ARGUMENT => "AMD_COMGR_STATUS_ERROR_INVALID_ARGUMENT",
        STATUS_OUT_OF_RESOURCES => "AMD_COMGR_STATUS_ERROR_OUT_OF_RESOURCES",
        _ => "an unknown COMGR status",
    }
}

/// A loaded shared library (never closed).
#[derive(Debug)]
pub struct Library {
    handle: *mut c_void,
    /// What was loaded, for log lines.
    pub name: String,
}

// SAFETY: a dlopen handle is a process-wide token; dlsym is thread-safe.
unsafe impl Send for Library {}
// SAFETY: as above; the handle is never closed or mutated.
unsafe impl Sync for Library {}

/// The last `dlerror()` message, or a fallback.
fn dl_error() -> String {
    // SAFETY: dlerror returns NULL or a NUL-terminated string valid until the next
    // dl* call on this thread; it is copied at once.
    let message = unsafe { libc::dlerror() };
    if message.is_null() {
        "unknown dlopen error".to_owned()
    } else {
        // SAFETY: non-NULL, NUL-terminated (see above).
        unsafe { CStr::from_ptr(message) }
            .to_string_lossy()
            .into_owned()
    }
}

impl Library {
    /// `dlopen(name, RTLD_NOW | RTLD_LOCAL | extra)`.
    fn open_with(name: &str, extra: c_int) -> Result<Self, String> {
        let c_name = CString::new(name).map_err(|_| format!("{name:?}: contains a NUL byte"))?;
        // SAFETY: c_name is a valid NUL-terminated string; dlopen has no other
        // preconditions. Loading runs the library's constructors, which is what
        // loading any COMGR means.
        let handle =
            unsafe { libc::dlopen(c_name.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL | extra) };
        if handle.is_null() {
            Err(dl_error())
        } else {
            Ok(Self {
                handle,
                name: name.to_owned(),
            })
        }
    }

    /// Loads the library at `path` (an absolute path, or a name the dynamic
    /// loader searches for).
    pub fn open(path: &str) -> Result<Self, String> {
        Self::open_with(path, 0)
    }

    /// The address of `symbol`, if the library (or its dependencies) exports it.
    pub fn address(&self, symbol: &CStr) -> Option<*mut c_void> {
        // SAFETY: the handle came from dlopen and is never closed; symbol is a
        // NUL-terminated string.
        let address = unsafe { libc::dlsym(self.handle, symbol.as_ptr()) };
        (!address.is_null()).then_some(address)
    }
}

/// The SONAME of the COMGR this library was linked against, set by CMake
/// (`HOTSWAP_COMGR_SONAME`); `None` in a plain `cargo` build.
pub(crate) const LINKED_COMGR_SONAME: Option<&str> = option_env!("HOTSWAP_COMGR_SONAME");

/// Names tried when the build did not record the linked COMGR.
const FALLBACK_COMGR_NAMES: [&str; 2] = ["libamd_comgr.so.3", "libamd_comgr.so.2"];

/// Loads the COMGR this library was linked against: already in the process
/// (`RTLD_NOLOAD`) when the shared library is in use, else loaded by its SONAME;
/// without a recorded SONAME, the first of `libamd_comgr.so.3` and `.so.2`.
pub fn open_linked_comgr() -> Result<Library, String> {
    let names: Vec<&str> = match LINKED_COMGR_SONAME {
        Some(soname) if !soname.is_empty() => vec![soname],
        _ => FALLBACK_COMGR_NAMES.to_vec(),
    };
    let mut errors = Vec::new();
    for name in names {
        match Library::open_with(name, libc::RTLD_NOLOAD).or_else(|_| Library::open(name)) {
            Ok(library) => return Ok(library),
            Err(e) => errors.push(e),
        }
    }
    Err(errors.join("; "))
}

/// The data-object functions of a COMGR-ABI library.
#[derive(Clone, Copy, Debug)]
pub struct DataApi {
    create: CreateDataFn,
    release: ReleaseDataFn,
    set: SetDataFn,
    get: GetDataFn,
    isa_name: Option<GetDataIsaNameFn>,
}

/// Looks up `name` and reinterprets it as the function pointer type `F`.
///
/// # Safety
/// `F` must be the exact C signature of `name` in `library`.
pub unsafe fn function<F: Copy>(library: &Library, name: &CStr) -> Option<F> {
    assert_eq!(std::mem::size_of::<F>(), std::mem::size_of::<*mut c_void>());
    let address = library.address(name)?;
    // SAFETY: non-NULL symbol address; the caller guarantees F is its signature,
    // and F is pointer-sized (asserted above).
    Some(unsafe { std::mem::transmute_copy::<*mut c_void, F>(&address) })
}

impl DataApi {
    /// Resolves the data-object functions; `Err` names the first one missing.
    pub fn resolve(library: &Library) -> Result<Self, &'static str> {
        // SAFETY: each type is the declaration in amd_comgr.h for that name.
        unsafe {
            Ok(Self {
                create: function(library, c"amd_comgr_create_data")
                    .ok_or("amd_comgr_create_data")?,
                release: function(library, c"amd_comgr_release_data")
                    .ok_or("amd_comgr_release_data")?,
                set: function(library, c"amd_comgr_set_data").ok_or("amd_comgr_set_data")?,
                get: function(library, c"amd_comgr_get_data").ok_or("amd_comgr_get_data")?,
                isa_name: function(library, c"amd_comgr_get_data_isa_name"),
            })
        }
    }

    /// A new EXECUTABLE data object holding a copy of `bytes`.
    pub fn executable(&self, bytes: &[u8]) -> Result<Data<'_>, Status> {
        let mut handle = DataHandle { handle: 0 };
        // SAFETY: create_data writes one handle through a valid pointer.
        let status = unsafe { (self.create)(DATA_KIND_EXECUTABLE, &mut handle) };
        if status != STATUS_SUCCESS {
            return Err(status);
        }
        let data = Data { api: self, handle };
        // SAFETY: the handle is live; bytes is valid for bytes.len() reads.
        let status = unsafe { (self.set)(handle, bytes.len(), bytes.as_ptr().cast()) };
        if status != STATUS_SUCCESS {
            return Err(status);
        }
        Ok(data)
    }

    /// Takes ownership of a handle a COMGR function returned.
    pub fn adopt(&self, handle: DataHandle) -> Data<'_> {
        Data { api: self, handle }
    }
}

/// A COMGR data object, released on drop.
#[derive(Debug)]
pub struct Data<'a> {
    api: &'a DataApi,
    handle: DataHandle,
}

impl Data<'_> {
    /// The handle, for passing to COMGR.
    pub fn handle(&self) -> DataHandle {
        self.handle
    }

    /// The size of the data in bytes.
    pub fn size(&self) -> Result<usize, Status> {
        let mut size = 0usize;
        // SAFETY: live handle; NULL bytes is the size query.
        let status = unsafe { (self.api.get)(self.handle, &mut size, std::ptr::null_mut()) };
        if status == STATUS_SUCCESS {
            Ok(size)
        } else {
            Err(status)
        }
    }

    /// Copies the data into `buffer` (exactly its size); returns the size COMGR
    /// reports afterwards.
    pub fn copy_into(&self, buffer: &mut [u8]) -> Result<usize, Status> {
        let mut size = buffer.len();
        // SAFETY: live handle; COMGR copies at most `size` bytes into buffer.
        let status = unsafe { (self.api.get)(self.handle, &mut size, buffer.as_mut_ptr().cast()) };
        if status == STATUS_SUCCESS {
            Ok(size)
        } else {
            Err(status)
        }
    }

    /// `amd_comgr_get_data_isa_name`: the size query, then the copy, then the
    /// trailing NUL removed. `None` when the library lacks the function.
    pub fn isa_name(&self) -> Option<Result<String, Status>> {
        let get = self.api.isa_name?;
        let mut size = 0usize;
        // SAFETY: live handle; NULL buffer is the size query.
        let status = unsafe { get(self.handle, &mut size, std::ptr::null_mut()) };
        if status != STATUS_SUCCESS {
            return Some(Err(status));
        }
        // ISA names are short (today's are under 64 bytes); a larger size is a
        // broken library, and allocating it could abort the process.
        const MAX_ISA_NAME: usize = 1024;
        if size > MAX_ISA_NAME {
            return Some(Err(STATUS_ERROR));
        }
        let mut buffer = vec![0u8; size];
        let mut copied = size;
        // SAFETY: buffer holds `size` writable bytes; COMGR copies at most that.
        let status = unsafe { get(self.handle, &mut copied, buffer.as_mut_ptr().cast()) };
        if status != STATUS_SUCCESS {
            return Some(Err(status));
        }
        buffer.truncate(copied.min(size));
        while buffer.last() == Some(&0) {
            buffer.pop();
        }
        Some(String::from_utf8(buffer).map_err(|_| STATUS_ERROR))
    }
}

impl Drop for Data<'_> {
    fn drop(&mut self) {
        // SAFETY: the handle is live and released exactly once, here.
        let status = unsafe { (self.api.release)(self.handle) };
        if status != STATUS_SUCCESS {
            log::debug!("amd_comgr_release_data returned {}", status_name(status));
        }
    }
}

/// The linked COMGR's data-object API, loaded on first use (the ISA fallback).
pub fn linked() -> Option<&'static DataApi> {
    static LINKED: OnceLock<Option<DataApi>> = OnceLock::new();
    LINKED
        .get_or_init(|| {
            let library = match open_linked_comgr() {
                Ok(library) => library,
                Err(e) => {
                    log::warn!("cannot load the linked COMGR for ISA identification: {e}");
                    return None;
                }
            };
            match DataApi::resolve(&library) {
                Ok(api) => Some(api),
                Err(missing) => {
                    log::warn!("the linked COMGR {} lacks {missing}", library.name);
                    None
                }
            }
        })
        .as_ref()
}

/// ISA name of a code object according to the linked COMGR
/// (`amd_comgr_get_data_isa_name`). Copies the object into a data object: used
/// only where the native path cannot answer, and by the benchmark.
pub fn linked_isa_name(code_object: &[u8]) -> Result<String, Status> {
    let api = linked().ok_or(STATUS_ERROR)?;
    let data = api.executable(code_object)?;
    data.isa_name().unwrap_or(Err(STATUS_ERROR))
}
