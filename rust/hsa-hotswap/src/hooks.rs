//! The functions written into ROCr's `CoreApiTable`, their C signatures, and
//! [`patches`], the one list of which slot each goes into. This is the FFI side
//! of every hook: the raw pointers of the call are read and written here and
//! nowhere else. Each hook is a thin shell: it finds the session and the
//! original the slot held before (ROCr's function or an earlier tool's wrapper),
//! checks its pointer arguments, and makes one call into the safe
//! [`Session`], handing it the original as a safe
//! closure over the caller's own arguments. The session decides inside its
//! panic boundary and always ends in a call to that closure. Any thread,
//! concurrently.
//!
//! Each hook's C signature is written once, in the `hooks!` invocation below:
//! the macro declares the signature's type (`CreateFromMemoryFn`, …, used to
//! call the originals and by the test doubles), the `extern "C"` function with
//! exactly that signature, and its entry in [`patches`].
#![allow(unsafe_code)] // C entry points called by ROCr's table trampolines

use std::ffi::{c_char, c_void};
use std::sync::Arc;

use crate::boundary::{try_out, Out};
use crate::hsa::api::{
    fn_from_slot, hsa_agent_t, hsa_code_object_reader_t, hsa_executable_t, hsa_file_t,
    hsa_loaded_code_object_t, hsa_status_t, HSA_STATUS_ERROR_NOT_INITIALIZED, HSA_STATUS_SUCCESS,
};
use crate::hsa::patch::PatchedTable;
use crate::hsa::table::{
    Slot, EXECUTABLE_DESTROY, LOAD_AGENT_CODE_OBJECT, READER_CREATE_FROM_FILE,
    READER_CREATE_FROM_MEMORY, READER_DESTROY,
};
use crate::readers::ReaderBytes;
use crate::session::{self, OwnReaders, Session};

/// Declares, for each hook, from one signature: the type of the slot's
/// function, the `extern "C"` hook, and its entry in [`patches`]. The body gets
/// the current session and the slot's original (typed), names chosen by the
/// invocation; before any `OnLoad` (unreachable: a hook is only in a table after
/// one) the hook returns `HSA_STATUS_ERROR_NOT_INITIALIZED`.
macro_rules! hooks {
    ($(
        $(#[$doc:meta])*
        $slot:ident => $alias:ident = fn $name:ident($($arg:ident: $ty:ty),* $(,)?)
            |$session:ident, $original:ident| $body:block
    )*) => {
        $(
            $(#[$doc])*
            pub(crate) type $alias = unsafe extern "C" fn($($ty),*) -> hsa_status_t;
        )*

        /// Number of slots the tool writes.
        pub(crate) const PATCH_COUNT: usize = [$(stringify!($name)),*].len();

        /// Every slot the tool writes, with the hook it writes there.
        pub fn patches() -> [(Slot, usize); PATCH_COUNT] {
            [$(($slot, $name as $alias as usize)),*]
        }

        $(
            $(#[$doc])*
            unsafe extern "C" fn $name($($arg: $ty),*) -> hsa_status_t {
                // SAFETY: `$alias` is this slot's signature (declared above from
                // the same text as this function's).
                match unsafe { chain::<$alias>($slot) } {
                    Some(($session, $original)) => $body,
                    None => HSA_STATUS_ERROR_NOT_INITIALIZED,
                }
            }
        )*
    };
}

hooks! {
    /// `hsa_code_object_reader_create_from_memory`: the original, then the
    /// session records the reader's bytes (pointer and size, no copy).
    READER_CREATE_FROM_MEMORY => CreateFromMemoryFn = fn create_from_memory(
        code_object: *const c_void,
        size: usize,
        reader: *mut hsa_code_object_reader_t,
    ) |session, original| {
        // SAFETY: the caller's arguments, forwarded unchanged to the saved original.
        let status = unsafe { original(code_object, size, reader) };
        if status == HSA_STATUS_SUCCESS && session.records_readers() {
            // SAFETY: NULL or the caller's out-pointer, which the original
            // succeeded in writing the handle through.
            let handle = try_out!(reader, status).read();
            // SAFETY: ROCr accepted the reader, so the caller keeps `size` bytes
            // at `code_object` readable until it destroys the reader; the
            // registry drops this view before the original destroy runs.
            let bytes = unsafe { ReaderBytes::borrowed(code_object.cast(), size) };
            session.created_from_memory(handle, bytes);
        }
        status
    }

    /// `hsa_code_object_reader_create_from_file`: a memory reader over the
    /// file's bytes when the session may rewrite it, else the original.
    READER_CREATE_FROM_FILE => CreateFromFileFn = fn create_from_file(
        file: hsa_file_t,
        reader: *mut hsa_code_object_reader_t,
    ) |session, original| {
        // SAFETY: NULL or the caller's out-pointer for the reader's handle.
        if let Some(mut out) = unsafe { Out::new(reader) } {
            if let Some(handle) = session.create_from_file(file) {
                out.write(handle);
                return HSA_STATUS_SUCCESS;
            }
        }
        // SAFETY: the caller's arguments, forwarded unchanged to the saved original.
        unsafe { original(file, reader) }
    }

    /// `hsa_code_object_reader_destroy`.
    READER_DESTROY => ReaderDestroyFn = fn reader_destroy(
        reader: hsa_code_object_reader_t,
    ) |session, original| {
        // SAFETY: the caller's argument (an opaque handle ROCr validates), unchanged.
        session.reader_destroy(reader, || unsafe { original(reader) })
    }

    /// `hsa_executable_destroy`: ROCr stops reading the executable's code
    /// objects when it returns; the session then releases what it kept for it.
    EXECUTABLE_DESTROY => ExecutableDestroyFn = fn executable_destroy(
        executable: hsa_executable_t,
    ) |session, original| {
        // SAFETY: the caller's argument (an opaque handle ROCr validates), unchanged.
        session.executable_destroy(executable, || unsafe { original(executable) })
    }

    /// `hsa_executable_load_agent_code_object`: the caller's reader or a
    /// reader over the rewritten code object.
    LOAD_AGENT_CODE_OBJECT => LoadAgentCodeObjectFn = fn load_agent_code_object(
        executable: hsa_executable_t,
        agent: hsa_agent_t,
        reader: hsa_code_object_reader_t,
        options: *const c_char,
        loaded: *mut hsa_loaded_code_object_t,
    ) |session, original| {
        // SAFETY: the caller's arguments with either the caller's reader or one
        // the session made over bytes it keeps while ROCr may read them.
        let load = |reader| unsafe { original(executable, agent, reader, options, loaded) };
        session.load_agent_code_object(executable, agent, reader, &load)
    }
}

/// The current session and the original of `slot` as an `F`; `None` before any
/// `OnLoad` (a hook is only reachable after one).
///
/// # Safety
/// `F` is the C signature of `slot`'s member in `hsa_api_trace.h`.
unsafe fn chain<F: Copy>(slot: Slot) -> Option<(Arc<Session>, F)> {
    let session = session::current()?;
    // SAFETY: the slot held a non-null function of `slot`'s signature (checked by
    // OnLoad), which is `F` (contract).
    let original = unsafe { fn_from_slot::<F>(session.original(slot)) }?;
    Some((session, original))
}

/// The saved create-from-memory and destroy of one `OnLoad`, for the readers
/// the tool makes over bytes it owns (rewritten objects, files' contents).
#[derive(Clone, Copy, Debug)]
pub(crate) struct ReaderCalls {
    create: CreateFromMemoryFn,
    destroy: ReaderDestroyFn,
}

impl ReaderCalls {
    /// The functions the create-from-memory and destroy slots held before the
    /// tool patched them (`original(slot)`: 0 when not patched).
    ///
    /// # Safety
    /// `original(slot)` is 0 or the address of a function with the C
    /// signature of `slot`'s member in `hsa_api_trace.h` (a value read from
    /// that slot of ROCr's table), valid until ROCr unloads the tool.
    pub unsafe fn from_originals(original: impl Fn(Slot) -> usize) -> Option<ReaderCalls> {
        // SAFETY: each value is 0 (`None`) or a function of its slot's
        // signature, which `CreateFromMemoryFn` and `ReaderDestroyFn` are
        // (declared from the same text as the hooks of these slots).
        unsafe {
            Some(ReaderCalls {
                create: fn_from_slot(original(READER_CREATE_FROM_MEMORY))?,
                destroy: fn_from_slot(original(READER_DESTROY))?,
            })
        }
    }
}

impl OwnReaders for ReaderCalls {
    /// A memory reader over `bytes`. The caller keeps `bytes` alive for as long
    /// as ROCr may read them.
    fn create(&self, bytes: &[u8]) -> Result<hsa_code_object_reader_t, hsa_status_t> {
        let mut reader = hsa_code_object_reader_t { handle: 0 };
        // SAFETY: a valid pointer/length pair and a valid out-pointer; `create` is
        // ROCr's (or a prior tool's) create-from-memory (checked non-null).
        let status = unsafe { (self.create)(bytes.as_ptr().cast(), bytes.len(), &mut reader) };
        if status == HSA_STATUS_SUCCESS {
            Ok(reader)
        } else {
            Err(status)
        }
    }

    /// Destroys a reader made by [`OwnReaders::create`].
    fn destroy(&self, reader: hsa_code_object_reader_t) -> hsa_status_t {
        // SAFETY: handles are opaque values ROCr validates; `destroy` is ROCr's
        // (or a prior tool's) reader destroy (checked non-null).
        unsafe { (self.destroy)(reader) }
    }
}

/// The session's maker of its own readers: [`ReaderCalls`] over the originals
/// `OnLoad` saved ([`session::on_load`] takes it, so the session names no C
/// signature).
pub(crate) fn own_readers(patched: &PatchedTable) -> Option<Box<dyn OwnReaders>> {
    // SAFETY: a `PatchedTable` is made only by `PatchedTable::check`, which
    // read each original from its slot of ROCr's checked table (0 for a slot
    // not patched); ROCr unloads the tool only after `OnUnload`.
    let calls = unsafe { ReaderCalls::from_originals(|slot| patched.original(slot)) };
    calls.map(|c| Box::new(c) as Box<dyn OwnReaders>)
}
