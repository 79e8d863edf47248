//! The functions written into ROCr's `CoreApiTable`, and [`patches`], the one
//! list of which slot each goes into. Each hook is a thin shell: it finds the
//! session and the original the slot held before (ROCr's function or an earlier
//! tool's wrapper) and forwards to the session, which decides inside its panic
//! boundary and always ends in a call to an original. Any thread, concurrently.
#![allow(unsafe_code)] // C entry points called by ROCr's table trampolines

use std::ffi::{c_char, c_void};

use crate::hsa::api::{
    fn_from_slot, hsa_agent_t, hsa_code_object_reader_t, hsa_executable_t, hsa_file_t,
    hsa_loaded_code_object_t, hsa_status_t, CreateFromFileFn, CreateFromMemoryFn,
    LoadAgentCodeObjectFn, ReaderDestroyFn, HSA_STATUS_ERROR_NOT_INITIALIZED,
};
use crate::hsa::table::{
    Slot, LOAD_AGENT_CODE_OBJECT, READER_CREATE_FROM_FILE, READER_CREATE_FROM_MEMORY,
    READER_DESTROY,
};
use crate::session::{self, Session};

/// Every slot the tool writes, with the hook it writes there.
pub fn patches() -> [(Slot, usize); 4] {
    [
        (
            READER_CREATE_FROM_MEMORY,
            create_from_memory as CreateFromMemoryFn as usize,
        ),
        (
            READER_CREATE_FROM_FILE,
            create_from_file as CreateFromFileFn as usize,
        ),
        (READER_DESTROY, reader_destroy as ReaderDestroyFn as usize),
        (
            LOAD_AGENT_CODE_OBJECT,
            load_agent_code_object as LoadAgentCodeObjectFn as usize,
        ),
    ]
}

/// The current session and the original of `slot` as an `F`; `None` before any
/// `OnLoad` (a hook is only reachable after one).
///
/// # Safety
/// `F` is the C signature of `slot`'s member in `hsa_api_trace.h`.
unsafe fn chain<F: Copy>(slot: Slot) -> Option<(&'static Session, F)> {
    let session = session::current()?;
    // SAFETY: the slot held a non-null function of `slot`'s signature (checked by
    // OnLoad), which is `F` (contract).
    let original = unsafe { fn_from_slot::<F>(session.original(slot)) }?;
    Some((session, original))
}

/// `hsa_code_object_reader_create_from_memory`.
unsafe extern "C" fn create_from_memory(
    code_object: *const c_void,
    size: usize,
    reader: *mut hsa_code_object_reader_t,
) -> hsa_status_t {
    // SAFETY: `CreateFromMemoryFn` is this slot's signature.
    match unsafe { chain::<CreateFromMemoryFn>(READER_CREATE_FROM_MEMORY) } {
        // SAFETY: the caller's arguments, unchanged.
        Some((session, original)) => unsafe {
            session.create_from_memory(original, code_object, size, reader)
        },
        None => HSA_STATUS_ERROR_NOT_INITIALIZED,
    }
}

/// `hsa_code_object_reader_create_from_file`.
unsafe extern "C" fn create_from_file(
    file: hsa_file_t,
    reader: *mut hsa_code_object_reader_t,
) -> hsa_status_t {
    // SAFETY: `CreateFromFileFn` is this slot's signature.
    match unsafe { chain::<CreateFromFileFn>(READER_CREATE_FROM_FILE) } {
        // SAFETY: the caller's arguments, unchanged.
        Some((session, original)) => unsafe { session.create_from_file(original, file, reader) },
        None => HSA_STATUS_ERROR_NOT_INITIALIZED,
    }
}

/// `hsa_code_object_reader_destroy`.
unsafe extern "C" fn reader_destroy(reader: hsa_code_object_reader_t) -> hsa_status_t {
    // SAFETY: `ReaderDestroyFn` is this slot's signature.
    match unsafe { chain::<ReaderDestroyFn>(READER_DESTROY) } {
        Some((session, original)) => session.reader_destroy(original, reader),
        None => HSA_STATUS_ERROR_NOT_INITIALIZED,
    }
}

/// `hsa_executable_load_agent_code_object`.
unsafe extern "C" fn load_agent_code_object(
    executable: hsa_executable_t,
    agent: hsa_agent_t,
    reader: hsa_code_object_reader_t,
    options: *const c_char,
    loaded: *mut hsa_loaded_code_object_t,
) -> hsa_status_t {
    // SAFETY: `LoadAgentCodeObjectFn` is this slot's signature.
    match unsafe { chain::<LoadAgentCodeObjectFn>(LOAD_AGENT_CODE_OBJECT) } {
        // SAFETY: the caller's arguments, unchanged.
        Some((session, original)) => unsafe {
            session.load_agent_code_object(original, executable, agent, reader, options, loaded)
        },
        None => HSA_STATUS_ERROR_NOT_INITIALIZED,
    }
}
