//! The four functions written into ROCr's `CoreApiTable`. Each is a thin shell:
//! it calls the function the slot held before (the "original", possibly an earlier
//! tool's wrapper) on every path; the decisions run inside [`ffi_boundary`] whose
//! fallback is that plain call. Any thread, concurrently; no lock is held while
//! ROCr or the rewriter runs. Once a session is known to never rewrite, each hook
//! is one atomic load and the call to the original.
#![allow(unsafe_code)] // C entry points called by ROCr's table trampolines

use std::ffi::{c_char, c_void};
use std::sync::Arc;

use crate::boundary::ffi_boundary;
use crate::hsa::api::{
    hsa_agent_t, hsa_code_object_reader_t, hsa_executable_t, hsa_file_t, hsa_loaded_code_object_t,
    hsa_status_t, CreateFromFileFn, CreateFromMemoryFn, LoadAgentCodeObjectFn, ReaderDestroyFn,
    HSA_STATUS_ERROR_NOT_INITIALIZED, HSA_STATUS_SUCCESS,
};
use crate::retained;
use crate::session::{self, Plan};

/// The hooks as table values, in `hsa::table::PATCHED` order.
pub fn addresses() -> [usize; 4] {
    [
        create_from_memory as CreateFromMemoryFn as usize,
        create_from_file as CreateFromFileFn as usize,
        reader_destroy as ReaderDestroyFn as usize,
        load_agent_code_object as LoadAgentCodeObjectFn as usize,
    ]
}

/// `hsa_code_object_reader_create_from_memory`: the original, then (when a rewrite
/// is possible in this process) remember the reader's pointer and size.
unsafe extern "C" fn create_from_memory(
    code_object: *const c_void,
    size: usize,
    reader: *mut hsa_code_object_reader_t,
) -> hsa_status_t {
    let Some(session) = session::current() else {
        return HSA_STATUS_ERROR_NOT_INITIALIZED;
    };
    // SAFETY: the caller's arguments, forwarded unchanged to the saved original.
    let status = unsafe { (session.originals.create_from_memory)(code_object, size, reader) };
    if status == HSA_STATUS_SUCCESS && !reader.is_null() && !session.passes_through() {
        // SAFETY: the original succeeded, so it wrote the handle through `reader`.
        let handle = unsafe { reader.read() };
        ffi_boundary("create_from_memory hook", (), || {
            session.created_from_memory(handle, code_object as usize, size)
        });
    }
    status
}

/// `hsa_code_object_reader_create_from_file`: when a rewrite is possible, a memory
/// reader over the file's bytes (read with `pread`, offset untouched); otherwise,
/// or on any failure, the original.
unsafe extern "C" fn create_from_file(
    file: hsa_file_t,
    reader: *mut hsa_code_object_reader_t,
) -> hsa_status_t {
    let Some(session) = session::current() else {
        return HSA_STATUS_ERROR_NOT_INITIALIZED;
    };
    if !reader.is_null() && !session.passes_through() {
        let bytes = ffi_boundary("create_from_file hook", None, || {
            session.file_bytes_for_rewrite(file)
        });
        if let Some(bytes) = bytes {
            if let Ok(handle) = session.originals.create_from_memory(&bytes) {
                let keep = Arc::clone(&bytes);
                let kept = ffi_boundary("create_from_file hook", false, || {
                    session.created_from_file(handle, file, bytes);
                    true
                });
                if !kept {
                    // ROCr's reader points into the bytes: never free them.
                    std::mem::forget(keep);
                }
                // SAFETY: `reader` is non-null and the caller's out-pointer.
                unsafe { reader.write(handle) };
                return HSA_STATUS_SUCCESS;
            }
        }
    }
    // SAFETY: the caller's arguments, forwarded unchanged to the saved original.
    unsafe { (session.originals.create_from_file)(file, reader) }
}

/// `hsa_code_object_reader_destroy`: forget the reader, then the original. The
/// bytes (if ours) are released only after ROCr stopped using them.
unsafe extern "C" fn reader_destroy(reader: hsa_code_object_reader_t) -> hsa_status_t {
    let Some(session) = session::current() else {
        return HSA_STATUS_ERROR_NOT_INITIALIZED;
    };
    if session.passes_through() {
        return session.originals.destroy(reader);
    }
    let entry = ffi_boundary("reader_destroy hook", None, || {
        session
            .rewrite_possible()
            .then(|| session.readers.forget(reader))
            .flatten()
    });
    let status = session.originals.destroy(reader);
    drop(entry);
    status
}

/// `hsa_executable_load_agent_code_object`: the rewritten code object when the
/// policy and the rewriter produce one, else (and on any failure) the caller's.
unsafe extern "C" fn load_agent_code_object(
    executable: hsa_executable_t,
    agent: hsa_agent_t,
    reader: hsa_code_object_reader_t,
    options: *const c_char,
    loaded: *mut hsa_loaded_code_object_t,
) -> hsa_status_t {
    let Some(session) = session::current() else {
        return HSA_STATUS_ERROR_NOT_INITIALIZED;
    };
    let load = session.originals.load_agent_code_object;
    if session.passes_through() {
        // SAFETY: the caller's arguments, forwarded unchanged to the saved original.
        return unsafe { load(executable, agent, reader, options, loaded) };
    }
    let plan = ffi_boundary("load_agent_code_object hook", Plan::original(), || {
        session.plan_load(agent, reader)
    });
    let pin = match plan {
        Plan::Rewritten { bytes, pin } => {
            match session.originals.create_from_memory(bytes) {
                Ok(temporary) => {
                    // SAFETY: the caller's arguments with our reader over 'static bytes.
                    let status = unsafe { load(executable, agent, temporary, options, loaded) };
                    session.originals.destroy(temporary);
                    if status == HSA_STATUS_SUCCESS {
                        log::debug!(
                            "load reader {:#x} on agent {:#x}: rewritten code object loaded",
                            reader.handle,
                            agent.handle
                        );
                        return status;
                    }
                    log::warn!(
                        "loading the rewritten code object failed (status {status:#x}); \
                         falling back to the original code object"
                    );
                }
                Err(status) => log::warn!(
                    "reader over the rewritten code object failed (status {status:#x}); \
                     falling back to the original code object"
                ),
            }
            pin
        }
        Plan::Original { pin } => pin,
    };
    // SAFETY: the caller's arguments, forwarded unchanged to the saved original.
    let status = unsafe { load(executable, agent, reader, options, loaded) };
    if status == HSA_STATUS_SUCCESS {
        if let Some(bytes) = pin {
            ffi_boundary("load_agent_code_object hook", (), || retained::pin(&bytes));
        }
    }
    status
}
