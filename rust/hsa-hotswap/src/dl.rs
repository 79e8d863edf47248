//! The dynamic loader: libraries opened at run time with `dlopen`/`dlsym` (never
//! closed: function pointers taken from them live for the process), and what is
//! loaded in the process (`dl_iterate_phdr`, `dladdr`).
//!
//! Nothing the tool calls in COMGR, a rewriter or rocjitsu is bound at link time:
//! Debian's COMGR (2.4) and most others lack the hotswap symbols, and a rewriter
//! may be any library (`HSA_HOTSWAP_REWRITER`).
#![allow(unsafe_code)] // dlopen/dlsym/dladdr/dl_iterate_phdr

use std::ffi::{c_int, c_void, CStr, CString};

/// A loaded shared library (never closed).
#[derive(Debug)]
pub struct Library {
    handle: *mut c_void,
    /// What was loaded (the name or path given to `dlopen`), for log lines.
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
        // loading any such library means.
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

    /// The library if it is already loaded in the process (`RTLD_NOLOAD`).
    pub fn open_loaded(name: &str) -> Result<Self, String> {
        Self::open_with(name, libc::RTLD_NOLOAD)
    }

    /// The address of `symbol`, if the library (or its dependencies) exports it.
    pub fn address(&self, symbol: &CStr) -> Option<*mut c_void> {
        // SAFETY: the handle came from dlopen and is never closed; symbol is a
        // NUL-terminated string.
        let address = unsafe { libc::dlsym(self.handle, symbol.as_ptr()) };
        (!address.is_null()).then_some(address)
    }

    /// Looks up `name` and reinterprets it as the function pointer type `F`.
    ///
    /// # Safety
    /// `F` must be the exact C signature of `name` in this library.
    pub unsafe fn function<F: Copy>(&self, name: &CStr) -> Option<F> {
        const { assert!(std::mem::size_of::<F>() == std::mem::size_of::<*mut c_void>()) };
        let address = self.address(name)?;
        // SAFETY: non-NULL symbol address; the caller guarantees F is its
        // signature, and F is pointer-sized (asserted above).
        Some(unsafe { std::mem::transmute_copy::<*mut c_void, F>(&address) })
    }
}

/// The path of every object loaded in the process (the main program's is
/// empty), in load order.
pub fn loaded_objects() -> Vec<String> {
    unsafe extern "C" fn collect(
        info: *mut libc::dl_phdr_info,
        _size: usize,
        data: *mut c_void,
    ) -> c_int {
        // Non-zero stops the iteration: what a panic leaves is then what was
        // collected so far.
        crate::boundary::ffi_boundary("dl_iterate_phdr callback", 1, || {
            // SAFETY: glibc passes a valid info for the duration of the call;
            // `data` is the Vec below, alive during dl_iterate_phdr.
            unsafe {
                let list = &mut *data.cast::<Vec<String>>();
                let name = (*info).dlpi_name;
                list.push(if name.is_null() {
                    String::new()
                } else {
                    CStr::from_ptr(name).to_string_lossy().into_owned()
                });
            }
            0
        })
    }
    let mut list: Vec<String> = Vec::new();
    // SAFETY: the callback matches the C signature and `data` outlives the call.
    unsafe { libc::dl_iterate_phdr(Some(collect), (&mut list as *mut Vec<String>).cast()) };
    list
}

/// The path of the loaded object that contains `address` (`dladdr`), if any.
pub fn object_of(address: usize) -> Option<String> {
    // SAFETY: an all-zero Dl_info is a valid value to be overwritten.
    let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
    // SAFETY: dladdr only inspects the address; `info` is a valid out-pointer.
    if address == 0 || unsafe { libc::dladdr(address as *const c_void, &mut info) } == 0 {
        return None;
    }
    if info.dli_fname.is_null() {
        return None;
    }
    // SAFETY: non-NULL, NUL-terminated, owned by the loader while the object is loaded.
    Some(
        unsafe { CStr::from_ptr(info.dli_fname) }
            .to_string_lossy()
            .into_owned(),
    )
}

/// The largest note segment [`note_segments_of`] copies (a build-id note is
/// 36 bytes; anything past this bound is not read).
const MAX_NOTE_SEGMENT: usize = 64 << 10;

/// Copies of the `PT_NOTE` segments, as mapped in memory, of the loaded object
/// that contains `address` (each at most [`MAX_NOTE_SEGMENT`] bytes); `None`
/// when no loaded object contains it. Reads the loader's program headers, not
/// the file.
pub fn note_segments_of(address: usize) -> Option<Vec<Vec<u8>>> {
    struct Search {
        address: usize,
        found: Option<Vec<Vec<u8>>>,
    }
    unsafe extern "C" fn visit(
        info: *mut libc::dl_phdr_info,
        _size: usize,
        data: *mut c_void,
    ) -> c_int {
        crate::boundary::ffi_boundary("dl_iterate_phdr callback", 1, || {
            // SAFETY: glibc passes a valid info for the duration of the call;
            // `data` is the Search below, alive during dl_iterate_phdr.
            let (info, search) = unsafe { (&*info, &mut *data.cast::<Search>()) };
            if info.dlpi_phdr.is_null() {
                return 0;
            }
            // SAFETY: the loader's program headers of this object, dlpi_phnum of them.
            let headers =
                unsafe { std::slice::from_raw_parts(info.dlpi_phdr, usize::from(info.dlpi_phnum)) };
            let base = info.dlpi_addr as usize;
            let contains = headers.iter().any(|h| {
                let start = base.wrapping_add(h.p_vaddr as usize);
                h.p_type == libc::PT_LOAD
                    && search.address >= start
                    && search.address - start < h.p_memsz as usize
            });
            if !contains {
                return 0;
            }
            let notes = headers
                .iter()
                .filter(|h| h.p_type == libc::PT_NOTE)
                .map(|h| {
                    let len = (h.p_memsz as usize).min(MAX_NOTE_SEGMENT);
                    let start = base.wrapping_add(h.p_vaddr as usize) as *const u8;
                    // SAFETY: a PT_NOTE segment lies inside a loaded PT_LOAD
                    // segment of this object (mapped readable while the object
                    // is loaded, which it is during this call); `len` is at
                    // most its memory size.
                    unsafe { std::slice::from_raw_parts(start, len) }.to_vec()
                })
                .collect();
            search.found = Some(notes);
            1
        })
    }
    if address == 0 {
        return None;
    }
    let mut search = Search {
        address,
        found: None,
    };
    // SAFETY: the callback matches the C signature and `data` outlives the call.
    unsafe { libc::dl_iterate_phdr(Some(visit), (&mut search as *mut Search).cast()) };
    search.found
}

/// The file name of a path (the part after the last `/`).
pub fn file_name(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_c_library_is_loaded_and_found() {
        let objects = loaded_objects();
        assert!(objects.iter().any(|o| file_name(o).starts_with("libc.so")));
        let libc = Library::open_loaded("libc.so.6").unwrap();
        let strlen = libc.address(c"strlen").unwrap();
        let path = object_of(strlen as usize).unwrap();
        assert!(file_name(&path).starts_with("libc.so"), "{path}");
        assert!(Library::open_loaded("libdoes-not-exist.so").is_err());
        assert_eq!(object_of(0), None);
    }
}
