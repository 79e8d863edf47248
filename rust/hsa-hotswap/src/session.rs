//! One `OnLoad`'s state (its patched table, agent queries, agent cache and
//! reader registry) and everything the hooks do: each hook forwards here, the
//! decisions run inside the panic boundary, and every path ends in a call to
//! an original with the caller's arguments or our rewritten reader.
//!
//! Each `OnLoad` creates a new `Session`, published through one atomic pointer;
//! a later `OnLoad` (after `hsa_shut_down` + `hsa_init`) works only from its own
//! table. Sessions are never freed and their saved functions are never cleared:
//! a hook that runs concurrently with `OnUnload` (or is called after it by a tool
//! that chained to us) still reads a complete, valid set of originals and calls
//! them, which is exactly what the application would have called without us.
//! The only cost is one small leaked struct per `hsa_init` of the process.
//!
//! Once a session knows it will never rewrite (no agent is a rewrite candidate,
//! or no rewriter is usable: decided on the first hook call), the tool leaves
//! the table: every slot that still holds its hook gets its original back, so
//! from then on ROCr's trampolines call ROCr directly, exactly as without the
//! tool. A caller that already holds a hook pointer (another thread in flight, a
//! later tool that wrapped us) still passes through it correctly.
#![allow(unsafe_code)] // keeps ROCr's table pointer from OnLoad to OnUnload

use std::ffi::{c_char, c_void};
use std::sync::atomic::{AtomicPtr, Ordering};
use std::sync::{Arc, OnceLock};

use crate::agents::{AgentInfo, Agents};
use crate::boundary::ffi_boundary;
use crate::code_object;
use crate::coexist;
use crate::config::Config;
use crate::fault;
use crate::hsa::api::{
    self, fn_from_slot, hsa_agent_t, hsa_code_object_reader_t, hsa_executable_t, hsa_file_t,
    hsa_loaded_code_object_t, hsa_status_t, CreateFromFileFn, CreateFromMemoryFn,
    LoadAgentCodeObjectFn, Originals, ReaderDestroyFn, HSA_STATUS_SUCCESS,
};
use crate::hsa::patch::{PatchedTable, Restore};
use crate::hsa::table::{CoreTable, Slot, TableError, READER_CREATE_FROM_MEMORY, READER_DESTROY};
use crate::policy;
use crate::readers::{self, FileBytes, ReaderBytes, Readers};
use crate::retained::{self, Outcome};
use crate::rewriter::{self, RetargetError};
use crate::stats::STATS;

/// State of one `OnLoad`.
#[derive(Debug)]
pub struct Session {
    /// The agent queries.
    pub queries: Originals,
    /// Agents of this runtime instance.
    pub agents: Agents,
    /// Readers created through our hooks.
    pub readers: Readers,
    /// The slots we patched, their hooks and originals.
    patched: PatchedTable,
    /// `AMD_COMGR_HOTSWAP_ENTRY_TRAMPOLINES` of this `OnLoad`'s configuration.
    opt_in: bool,
    /// Whether any rewrite is possible in this runtime instance (decided on the
    /// first hook call: agents and the rewriter do not change afterwards).
    possible: OnceLock<bool>,
}

static CURRENT: AtomicPtr<Session> = AtomicPtr::new(std::ptr::null_mut());

/// The session of the latest `OnLoad`, if any.
pub fn current() -> Option<&'static Session> {
    let ptr = CURRENT.load(Ordering::Acquire);
    // SAFETY: non-null values come from `Box::leak` in `load` and are never freed.
    unsafe { ptr.as_ref() }
}

/// `OnLoad` after the table view was checked (`table` is the check's result):
/// returns what `OnLoad` returns to ROCr.
///
/// - This tool switched off ([`Config::tool_disabled`]): true, nothing patched.
/// - A refused table: false, the table unchanged (nothing is written before
///   every check passed).
/// - ROCr's own hotswap hook active ([`coexist`]): true, nothing patched, one
///   warning naming the variables that choose between the two tools.
/// - Otherwise the hooks are installed: true.
pub fn on_load(
    table: Result<CoreTable, TableError>,
    patches: &[(Slot, usize)],
    config: &Config,
    runtime_version: u64,
) -> bool {
    if config.tool_disabled() {
        log::info!("HSA_HOTSWAP_DISABLE is true: tool loaded, nothing patched");
        return true;
    }
    let result = table.and_then(|table| {
        let patched = PatchedTable::check(&table, patches)?;
        if let Some(hook) = coexist::detect(&patched.originals()) {
            log::warn!("{}", coexist::stand_back_message(&hook));
            return Ok(());
        }
        load(table, patched, config)
    });
    match result {
        Ok(()) => true,
        Err(e) => {
            log::warn!("not loaded (runtime version {runtime_version}): {e}; table left unchanged");
            false
        }
    }
}

/// Reads the agent queries, publishes the session, then writes the hooks.
fn load(table: CoreTable, patched: PatchedTable, config: &Config) -> Result<(), TableError> {
    let queries = Originals::from_table(&table)?;
    let session: &'static Session = Box::leak(Box::new(Session {
        queries,
        agents: Agents::new(config.entry_trampolines),
        readers: Readers::default(),
        patched,
        opt_in: config.entry_trampolines,
        possible: OnceLock::new(),
    }));
    // Published before the hooks are reachable through the table.
    CURRENT.store(session as *const Session as *mut Session, Ordering::Release);
    session.patched.install();
    log::info!(
        "tool loaded: intercepting code-object loading (CoreApiTable major {} size {})",
        table.major_id(),
        table.size()
    );
    Ok(())
}

/// Every slot `OnLoad` must find in the table: the patched ones and the queries.
pub fn needed_slots(patches: &[(Slot, usize)]) -> Vec<Slot> {
    let mut slots: Vec<Slot> = patches.iter().map(|(slot, _)| *slot).collect();
    slots.extend(crate::hsa::table::QUERIED);
    slots
}

/// `OnUnload`: puts back each slot that still holds our hook (a later tool may
/// have wrapped it: then it is left alone); frees nothing.
pub fn unload() {
    let Some(session) = current() else { return };
    if session.patched.restore(Restore::Unload) {
        log::info!("tool unloaded; {}", STATS.summary());
        log::info!("{}", crate::rewrite_cache::COUNTERS.summary());
    }
}

/// What the load hook does.
#[derive(Debug)]
pub enum Plan {
    /// Load the caller's reader; pin the file bytes if that succeeds.
    Original {
        /// File bytes to keep once ROCr loaded them.
        pin: Option<FileBytes>,
    },
    /// Load these process-lifetime bytes through a temporary reader; on any
    /// failure load the caller's reader instead.
    Rewritten {
        /// The rewritten code object.
        bytes: &'static [u8],
        /// As in `Original`, used on fallback.
        pin: Option<FileBytes>,
    },
}

impl Plan {
    /// The fallback plan of the hook's panic boundary.
    pub fn original() -> Plan {
        Plan::Original { pin: None }
    }
}

impl Session {
    /// True when some agent of this runtime is a rewrite candidate and a rewriter
    /// is present: only then are readers recorded and files read. Decided once
    /// per `OnLoad` (one atomic load afterwards), so a process that never
    /// rewrites pays nothing that grows with code objects or readers.
    pub fn rewrite_possible(&self) -> bool {
        if let Some(&possible) = self.possible.get() {
            return possible;
        }
        // Computed outside any lock (it calls ROCr and may load the rewriter); a
        // race on the first call computes twice and keeps the first answer.
        let computed = self.compute_rewrite_possible();
        let mut decided_here = false;
        let possible = *self.possible.get_or_init(|| {
            decided_here = true;
            computed
        });
        if decided_here && !possible && self.patched.restore(Restore::Leave) {
            log::debug!("no rewrite is possible in this runtime: the tool left the API table");
        }
        possible
    }

    /// True when this session is known to never rewrite: the hooks then call
    /// the originals directly (one atomic load, no map, no boundary).
    pub fn passes_through(&self) -> bool {
        self.possible.get() == Some(&false)
    }

    /// The function `slot` held before `OnLoad` patched it (0 if not patched).
    pub fn original(&self, slot: Slot) -> usize {
        self.patched.original(slot)
    }

    /// The saved create-from-memory and destroy, for our temporary readers.
    fn reader_functions(&self) -> Option<(CreateFromMemoryFn, ReaderDestroyFn)> {
        // SAFETY: both slots held non-null functions of these signatures (OnLoad).
        unsafe {
            Some((
                fn_from_slot(self.original(READER_CREATE_FROM_MEMORY))?,
                fn_from_slot(self.original(READER_DESTROY))?,
            ))
        }
    }

    /// The create-from-memory hook: the original, then (when a rewrite is
    /// possible in this process) remember the reader's pointer and size.
    ///
    /// # Safety
    /// The caller's arguments of `hsa_code_object_reader_create_from_memory`.
    pub unsafe fn create_from_memory(
        &self,
        original: CreateFromMemoryFn,
        code_object: *const c_void,
        size: usize,
        reader: *mut hsa_code_object_reader_t,
    ) -> hsa_status_t {
        // SAFETY: the caller's arguments, forwarded unchanged to the saved original.
        let status = unsafe { original(code_object, size, reader) };
        if status == HSA_STATUS_SUCCESS && !reader.is_null() && !self.passes_through() {
            // SAFETY: the original succeeded, so it wrote the handle through `reader`.
            let handle = unsafe { reader.read() };
            ffi_boundary("create_from_memory hook", (), || {
                self.created_from_memory(handle, code_object as usize, size)
            });
        }
        status
    }

    /// The create-from-file hook: a memory reader over the file's bytes when
    /// the file could be rewritten here, else (and on any failure) the original.
    ///
    /// # Safety
    /// The caller's arguments of `hsa_code_object_reader_create_from_file`.
    pub unsafe fn create_from_file(
        &self,
        original: CreateFromFileFn,
        file: hsa_file_t,
        reader: *mut hsa_code_object_reader_t,
    ) -> hsa_status_t {
        if !reader.is_null() && !self.passes_through() {
            let made = ffi_boundary("create_from_file hook", None, || {
                let bytes = self.file_bytes_for_rewrite(file)?;
                let (create, _) = self.reader_functions()?;
                Some((api::create_reader(create, &bytes).ok()?, bytes))
            });
            if let Some((handle, bytes)) = made {
                let keep = Arc::clone(&bytes);
                let recorded = ffi_boundary("create_from_file hook", false, || {
                    self.created_from_file(handle, file, bytes);
                    true
                });
                if !recorded {
                    // ROCr's reader points into the bytes: never free them.
                    std::mem::forget(keep);
                }
                // Where ROCr's own create-from-file leaves the descriptor (it
                // seeks to the end to learn the size, then maps the file), so
                // the application sees the offset it would see without us.
                readers::seek_to_end(file);
                // SAFETY: `reader` is non-null and the caller's out-pointer.
                unsafe { reader.write(handle) };
                return HSA_STATUS_SUCCESS;
            }
        }
        // SAFETY: the caller's arguments, forwarded unchanged to the saved original.
        unsafe { original(file, reader) }
    }

    /// The destroy hook: forget the reader, then the original. The bytes (if
    /// ours) are released only after ROCr stopped using them.
    pub fn reader_destroy(
        &self,
        original: ReaderDestroyFn,
        reader: hsa_code_object_reader_t,
    ) -> hsa_status_t {
        // Nothing recorded (always so for a code object that is never
        // rewritten here): the original alone, no boundary, no lock.
        let entry = if self.passes_through() || !self.readers.any() {
            None
        } else {
            ffi_boundary("reader_destroy hook", None, || {
                fault::point("reader_destroy.forget");
                self.rewrite_possible()
                    .then(|| self.readers.forget(reader))
                    .flatten()
            })
        };
        // SAFETY: handles are opaque values; ROCr validates them.
        let status = unsafe { original(reader) };
        drop(entry);
        status
    }

    /// The load hook: the rewritten code object when the policy and the
    /// rewriter produce one, else (and on any failure) the caller's.
    ///
    /// # Safety
    /// The caller's arguments of `hsa_executable_load_agent_code_object`.
    pub unsafe fn load_agent_code_object(
        &self,
        load: LoadAgentCodeObjectFn,
        executable: hsa_executable_t,
        agent: hsa_agent_t,
        reader: hsa_code_object_reader_t,
        options: *const c_char,
        loaded: *mut hsa_loaded_code_object_t,
    ) -> hsa_status_t {
        // Known to never rewrite, or a listed agent that is not a candidate
        // while no file reader needs pinning: the original alone. Both checks
        // are atomic loads and a scan of the agent list; nothing can panic.
        let pass = self.passes_through()
            || (!self.readers.has_files()
                && self
                    .agents
                    .listed(agent.handle)
                    .is_some_and(|info| !info.candidate));
        if pass {
            // SAFETY: the caller's arguments, forwarded unchanged to the saved original.
            return unsafe { load(executable, agent, reader, options, loaded) };
        }
        let plan = ffi_boundary("load_agent_code_object hook", Plan::original(), || {
            self.plan_load(agent, reader)
        });
        let pin = match plan {
            Plan::Rewritten { bytes, pin } => {
                // SAFETY: the caller's arguments with our reader over 'static bytes.
                let status =
                    unsafe { self.load_rewritten(load, bytes, executable, agent, options, loaded) };
                if status == Some(HSA_STATUS_SUCCESS) {
                    log::debug!(
                        "load reader {:#x} on agent {:#x}: rewritten code object loaded",
                        reader.handle,
                        agent.handle
                    );
                    return HSA_STATUS_SUCCESS;
                }
                pin
            }
            Plan::Original { pin } => pin,
        };
        // SAFETY: the caller's arguments, forwarded unchanged to the saved original.
        let status = unsafe { load(executable, agent, reader, options, loaded) };
        if status == HSA_STATUS_SUCCESS {
            if let Some(bytes) = pin {
                ffi_boundary("load_agent_code_object hook", (), || {
                    fault::point("load.pin");
                    retained::pin(&bytes)
                });
            }
        }
        status
    }

    /// Loads `bytes` through a temporary reader; `None` when no reader could be
    /// made. A failure is logged; the caller then loads the original.
    ///
    /// # Safety
    /// The caller's `executable`, `agent`, `options` and `loaded`.
    unsafe fn load_rewritten(
        &self,
        load: LoadAgentCodeObjectFn,
        bytes: &'static [u8],
        executable: hsa_executable_t,
        agent: hsa_agent_t,
        options: *const c_char,
        loaded: *mut hsa_loaded_code_object_t,
    ) -> Option<hsa_status_t> {
        let (temporary, destroy) = ffi_boundary("load_agent_code_object hook", None, || {
            fault::point("load.rewritten_reader");
            let (create, destroy) = self.reader_functions()?;
            match api::create_reader(create, bytes) {
                Ok(temporary) => Some((temporary, destroy)),
                Err(status) => {
                    log::warn!(
                        "reader over the rewritten code object failed (status {status:#x}); \
                         falling back to the original code object"
                    );
                    None
                }
            }
        })?;
        // SAFETY: the caller's arguments with our reader over 'static bytes.
        let status = unsafe { load(executable, agent, temporary, options, loaded) };
        // SAFETY: our own reader, made above.
        unsafe { destroy(temporary) };
        if status != HSA_STATUS_SUCCESS {
            log::warn!(
                "loading the rewritten code object failed (status {status:#x}); \
                 falling back to the original code object"
            );
        }
        Some(status)
    }

    fn compute_rewrite_possible(&self) -> bool {
        fault::point("rewrite_possible");
        // A tool loaded after this one (named later in HSA_TOOLS_LIB) may be
        // ROCr's hook: never two hotswap tools.
        if let Some(hook) = coexist::detect_loaded() {
            log::warn!("{}", coexist::stand_back_message(&hook));
            return false;
        }
        let agents = self.agents.all(&self.queries);
        let candidates: Vec<String> = agents
            .iter()
            .filter(|a| a.candidate)
            .map(|a| format!("{:#x} ({} {})", a.handle, a.isa_name, a.stepping()))
            .collect();
        if candidates.is_empty() {
            log::debug!(
                "{} agent(s), none needs a rewrite (opt-in {}): every call passes through",
                agents.len(),
                if self.opt_in { "on" } else { "off" }
            );
            return false;
        }
        if !rewriter::is_available() {
            log::warn!(
                "rewrite candidate agent(s) {} present but no rewriter is available \
                 (the one HSA_HOTSWAP_REWRITER names cannot be used): code objects are \
                 loaded unmodified",
                candidates.join(", ")
            );
            return false;
        }
        log::debug!("rewrite candidate agent(s): {}", candidates.join(", "));
        true
    }

    /// After a successful original create-from-memory.
    /// Records the reader only when its code object could be rewritten for some
    /// agent (its ELF header names a processor the decision table can route).
    pub fn created_from_memory(&self, reader: hsa_code_object_reader_t, addr: usize, len: usize) {
        fault::point("create_from_memory.record");
        if !self.rewrite_possible() {
            return;
        }
        let bytes = ReaderBytes::Borrowed { addr, len };
        // SAFETY: ROCr's create-from-memory accepted the reader, and the caller
        // must keep `len` bytes at `addr` valid until it destroys the reader.
        let source = code_object::processor(unsafe { bytes.as_slice() });
        match source {
            Ok(gfx) if policy::source_may_be_rewritten(&gfx, self.opt_in) => {
                self.readers.remember(reader, bytes);
                log::debug!(
                    "reader {:#x}: memory, {len} bytes at {addr:#x}, {gfx} (recorded, not copied)",
                    reader.handle
                );
            }
            Ok(gfx) => log::debug!(
                "reader {:#x}: memory, {len} bytes, {gfx}: never rewritten here; not recorded",
                reader.handle
            ),
            Err(e) => log::debug!(
                "reader {:#x}: memory, {len} bytes, not an identifiable code object ({e:?}); not recorded",
                reader.handle
            ),
        }
    }

    /// The file's bytes when the file reader should become a memory reader:
    /// only when a rewrite is possible and the file's 64-byte header (one
    /// `pread`) names a processor that could be rewritten here. Any other file
    /// stays the application's file reader.
    pub fn file_bytes_for_rewrite(&self, fd: i32) -> Option<FileBytes> {
        if !self.rewrite_possible() {
            return None;
        }
        fault::point("create_from_file.header");
        let header = match readers::read_header(fd) {
            Ok(header) => header,
            Err(e) => {
                log::debug!(
                    "fd {fd}: cannot read its header ({e}); original create-from-file used"
                );
                return None;
            }
        };
        // The header tables are checked against the whole file only if it is
        // read (the load checks the whole object before rewriting it).
        match code_object::isa::processor_of_prefix(&header.prefix, u64::MAX) {
            Ok(gfx) if policy::source_may_be_rewritten(gfx, self.opt_in) => {}
            Ok(gfx) => {
                log::debug!("fd {fd}: {gfx} code object, never rewritten here; original create-from-file used");
                return None;
            }
            Err(e) => {
                log::debug!("fd {fd}: not an identifiable code object ({e:?}); original create-from-file used");
                return None;
            }
        }
        fault::point("create_from_file.read");
        match readers::read_whole_file(fd) {
            Ok(bytes) => Some(bytes),
            Err(e) => {
                log::debug!("fd {fd}: cannot read ({e}); original create-from-file used");
                None
            }
        }
    }

    /// After a memory reader was made from a file's bytes.
    pub fn created_from_file(&self, reader: hsa_code_object_reader_t, fd: i32, bytes: FileBytes) {
        fault::point("create_from_file.record");
        log::debug!(
            "reader {:#x}: file fd {fd}, {} bytes read with pread, handed to ROCr as memory",
            reader.handle,
            bytes.len()
        );
        self.readers.remember(reader, ReaderBytes::File(bytes));
    }

    /// Decides what the load hook does for `reader` on `agent`.
    pub fn plan_load(&self, agent: hsa_agent_t, reader: hsa_code_object_reader_t) -> Plan {
        fault::point("load.plan");
        if !self.rewrite_possible() {
            return Plan::original();
        }
        // The agent first (lock-free): a load on an agent that is never rewritten
        // touches the reader map only while file readers are alive (to pin them).
        let queried;
        let info = match self.agents.listed(agent.handle) {
            Some(info) => info,
            None => {
                queried = self.agents.get(&self.queries, agent);
                &*queried
            }
        };
        let what = Describe(info, reader);
        if !info.candidate {
            log::debug!("{what}: agent is not a rewrite candidate; original loaded");
            let pin = if self.readers.has_files() {
                self.readers.get(reader).and_then(|e| e.file())
            } else {
                None
            };
            return Plan::Original { pin };
        }
        let Some(lookup) = self.readers.lookup(reader, agent.handle) else {
            log::debug!("{what}: reader not recorded (its code object cannot be rewritten here); original loaded");
            return Plan::original();
        };
        let pin = lookup.bytes.file();
        let outcome = match lookup.known {
            Some(outcome) => outcome,
            None => {
                // SAFETY: the application is loading through `reader`, so it has
                // not been destroyed and the memory behind it is still valid
                // (ROCr's rule for memory readers).
                let bytes = unsafe { lookup.bytes.as_slice() };
                match self.decide(info, &what, reader, bytes) {
                    (Some(outcome), pair) => {
                        self.readers
                            .set_outcome(reader, agent.handle, pair.as_ref(), outcome);
                        outcome
                    }
                    (None, _) => return Plan::Original { pin },
                }
            }
        };
        match outcome {
            Outcome::Changed(bytes) => Plan::Rewritten { bytes, pin },
            Outcome::Unchanged | Outcome::Declined => Plan::Original { pin },
        }
    }

    /// The first load of a recorded reader on a candidate agent: identify the
    /// code object (its header), choose the ISA pair, then the outcome this
    /// reader had with that pair on another agent, else rewrite once per
    /// content. The outcome is `None` when it must not be remembered (a
    /// failure that may not repeat); the pair is returned when one was chosen.
    fn decide(
        &self,
        info: &AgentInfo,
        what: &Describe<'_>,
        reader: hsa_code_object_reader_t,
        bytes: &[u8],
    ) -> (Option<Outcome>, Option<policy::Decision>) {
        let source = match code_object::isa_name(bytes) {
            Ok(source) => source,
            Err(e) => {
                log::warn!(
                    "{what}: code object of {} bytes not identified ({e}); original loaded",
                    bytes.len()
                );
                return (Some(Outcome::Declined), None);
            }
        };
        let Some(decision) = policy::decide(info.target(), &source, &info.isa_name, self.opt_in)
        else {
            log::debug!("{what}: source {source}: no rewrite for this pair; original loaded");
            return (Some(Outcome::Declined), None);
        };
        if let Some(outcome) = self.readers.pair_outcome(reader, &decision) {
            log::debug!(
                "{what}: rewrite {}: known from another agent",
                Pair(&decision)
            );
            return (Some(outcome), Some(decision));
        }
        let outcome = self.rewrite(what, bytes, &decision);
        (outcome, Some(decision))
    }

    /// One rewrite through the content-keyed cache, logged.
    fn rewrite(
        &self,
        what: &Describe<'_>,
        bytes: &[u8],
        decision: &policy::Decision,
    ) -> Option<Outcome> {
        let result = retained::rewrite_once(bytes, decision, || {
            fault::point("load.rewrite");
            rewriter::retarget(bytes, &decision.source, &decision.target)
        });
        let pair = Pair(decision);
        match result {
            Ok((outcome @ Outcome::Changed(new), cached)) => {
                log::debug!(
                    "{what}: rewrite {pair}: {} -> {} bytes{}; loading the rewritten code object",
                    bytes.len(),
                    new.len(),
                    if cached { " (cached)" } else { "" }
                );
                Some(outcome)
            }
            Ok((Outcome::Unchanged, _)) => {
                log::debug!("{what}: rewrite {pair}: unchanged; original loaded");
                Some(Outcome::Unchanged)
            }
            Ok((Outcome::Declined, _)) => {
                log::debug!(
                    "{what}: rewrite {pair}: declined before for these bytes; original loaded"
                );
                Some(Outcome::Declined)
            }
            Err(e @ RetargetError::Refused(_)) => {
                // The backend has warned, naming why (once: refusals are remembered).
                log::info!("{what}: rewrite {pair}: {e}; the original code object is loaded");
                Some(Outcome::Declined)
            }
            Err(e @ RetargetError::Unsupported) => {
                log::warn!("{what}: rewrite {pair}: {e}; the original code object is loaded");
                Some(Outcome::Declined)
            }
            Err(e) => {
                log::warn!(
                    "{what}: rewrite {pair} failed ({e}); falling back to the original code object"
                );
                None
            }
        }
    }
}

/// "source -> target" of a decision, formatted only when logged.
struct Pair<'a>(&'a policy::Decision);

impl std::fmt::Display for Pair<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} -> {}", self.0.source, self.0.target)
    }
}

/// "load reader … on agent … (isa stepping)", formatted only when logged.
struct Describe<'a>(&'a AgentInfo, hsa_code_object_reader_t);

impl std::fmt::Display for Describe<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let info = self.0;
        write!(
            f,
            "load reader {:#x} on agent {:#x} ({} {})",
            self.1.handle,
            info.handle,
            if info.isa_name.is_empty() {
                "no ISA"
            } else {
                &info.isa_name
            },
            info.stepping()
        )
    }
}

#[cfg(test)]
#[path = "session_tests.rs"]
mod tests;
