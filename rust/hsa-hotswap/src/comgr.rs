//! COMGR's data-object ABI (`amd_comgr_create_data` …), as the linked COMGR and
//! COMGR-ABI rewriter libraries export it: used by the ISA fallback (a processor
//! the table lacks) and by the COMGR-ABI rewriter backend. Libraries are loaded
//! at run time ([`crate::dl`]) and never closed.
#![allow(unsafe_code)] // calls through COMGR function pointers

use std::ffi::{c_char, c_int};
use std::sync::OnceLock;

use crate::dl::Library;

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
        match Library::open_loaded(name).or_else(|_| Library::open(name)) {
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

impl DataApi {
    /// Resolves the data-object functions; `Err` names the first one missing.
    pub fn resolve(library: &Library) -> Result<Self, &'static str> {
        // SAFETY: each type is the declaration in amd_comgr.h for that name.
        unsafe {
            Ok(Self {
                create: library
                    .function(c"amd_comgr_create_data")
                    .ok_or("amd_comgr_create_data")?,
                release: library
                    .function(c"amd_comgr_release_data")
                    .ok_or("amd_comgr_release_data")?,
                set: library
                    .function(c"amd_comgr_set_data")
                    .ok_or("amd_comgr_set_data")?,
                get: library
                    .function(c"amd_comgr_get_data")
                    .ok_or("amd_comgr_get_data")?,
                isa_name: library.function(c"amd_comgr_get_data_isa_name"),
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
