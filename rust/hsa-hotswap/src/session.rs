//! One `OnLoad`'s state (its patched table, agent queries, agent cache and
//! reader registry) and everything the hooks do: each hook forwards here, the
//! decisions run inside the panic boundary, and every path ends in a call to
//! an original with the caller's arguments or our rewritten reader.
//!
//! This module is safe Rust but for the two reads of a recorded reader's bytes
//! ([`ReaderBytes::view`], each under a `SAFETY:` note: only the hook call it
//! runs in proves the reader alive): the hooks ([`crate::hooks`]) read and
//! write the caller's pointers and hand the session the originals as safe
//! closures.
//!
//! Each `OnLoad` creates a new `Session`, published as the current one; a later
//! `OnLoad` (after `hsa_shut_down` + `hsa_init`) works only from its own table.
//! A session's saved functions are never cleared: a hook that runs concurrently
//! with `OnUnload` (or is called after it by a tool that chained to us) still
//! reads a complete, valid set of originals and calls them, which is exactly
//! what the application would have called without us. Every hook call holds a
//! reference to the session it started with, so a session is freed only when
//! the next `OnLoad` has replaced it and no hook call still uses it.
//!
//! Once a session knows it will never rewrite (no agent is a rewrite candidate,
//! or no rewriter is usable: decided on the first hook call), the tool leaves
//! the table: every slot that still holds its hook gets its original back, so
//! from then on ROCr's trampolines call ROCr directly, exactly as without the
//! tool. A caller that already holds a hook pointer (another thread in flight, a
//! later tool that wrapped us) still passes through it correctly.

use std::sync::{Arc, OnceLock, RwLock};

use crate::agents::{AgentInfo, Agents};
use crate::boundary::ffi_boundary;
use crate::code_object::{self, CodeObject, IsaError};
use crate::coexist;
use crate::config::LoadConfig;
use crate::fault;
use crate::hsa::api::{
    hsa_agent_t, hsa_code_object_reader_t, hsa_executable_t, hsa_file_t, hsa_status_t, Originals,
    HSA_STATUS_SUCCESS,
};
use crate::hsa::patch::{PatchedTable, Restore};
use crate::hsa::table::{CoreTable, Slot, TableError};
use crate::policy;
use crate::readers::{self, FileBytes, ReaderBytes, Readers};
use crate::retained::{self, Executables, Kept, Outcome, RewrittenBytes};
use crate::rewriter::{self, RetargetError};
use crate::stats::STATS;

/// How the session makes and destroys readers over bytes it owns (rewritten
/// objects, files' contents): through the create-from-memory and destroy that
/// the patched slots held before. Implemented on the FFI side
/// (`hooks::own_readers`).
pub trait OwnReaders: Send + Sync + std::fmt::Debug {
    /// A memory reader over `bytes`; the caller keeps `bytes` alive for as
    /// long as ROCr may read them.
    fn create(&self, bytes: &[u8]) -> Result<hsa_code_object_reader_t, hsa_status_t>;
    /// Destroys a reader made by [`OwnReaders::create`].
    fn destroy(&self, reader: hsa_code_object_reader_t) -> hsa_status_t;
}

/// Makes the session's [`OwnReaders`] from the originals of the patched slots
/// (`None` when a slot held nothing). It takes the [`PatchedTable`] itself,
/// not bare addresses, so the function pointers it makes come from the
/// table's slots by construction.
pub type OwnReadersFn = fn(&PatchedTable) -> Option<Box<dyn OwnReaders>>;

/// State of one `OnLoad`.
#[derive(Debug)]
pub struct Session {
    /// The agent queries.
    pub queries: Originals,
    /// Agents of this runtime instance.
    pub agents: Agents,
    /// Readers created through our hooks.
    pub readers: Readers,
    /// What each executable loaded from the tool's own buffers.
    pub executables: Executables,
    /// The slots we patched, their hooks and originals.
    patched: PatchedTable,
    /// The saved create-from-memory and destroy, for our own readers.
    reader_calls: Option<Box<dyn OwnReaders>>,
    /// `AMD_COMGR_HOTSWAP_ENTRY_TRAMPOLINES` of this `OnLoad`'s configuration.
    opt_in: bool,
    /// Whether any rewrite is possible in this runtime instance (decided on the
    /// first hook call: agents and the rewriter do not change afterwards).
    possible: OnceLock<bool>,
}

/// The session of the latest `OnLoad`. A hook clones the `Arc` (one short
/// read lock), so the session it started with stays alive until it returns.
static CURRENT: RwLock<Option<Arc<Session>>> = RwLock::new(None);

/// The session of the latest `OnLoad`, if any.
pub fn current() -> Option<Arc<Session>> {
    CURRENT.read().unwrap_or_else(|e| e.into_inner()).clone()
}

/// `OnLoad` after the table view was checked (`table` is the check's result):
/// returns what `OnLoad` returns to ROCr.
///
/// - This tool switched off ([`LoadConfig::tool_disabled`]): true, nothing patched.
/// - A refused table: false, the table unchanged (nothing is written before
///   every check passed).
/// - ROCr's own hotswap hook active ([`coexist`]): true, nothing patched, one
///   warning naming the variables that choose between the two tools.
/// - Otherwise the hooks are installed: true.
pub fn on_load(
    table: Result<CoreTable, TableError>,
    patches: &[(Slot, usize)],
    own_readers: OwnReadersFn,
    config: &LoadConfig,
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
        load(table, patched, own_readers, config)
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
fn load(
    table: CoreTable,
    patched: PatchedTable,
    own_readers: OwnReadersFn,
    config: &LoadConfig,
) -> Result<(), TableError> {
    let queries = Originals::from_table(&table)?;
    let reader_calls = own_readers(&patched);
    let session = Arc::new(Session {
        queries,
        agents: Agents::new(config.entry_trampolines),
        readers: Readers::default(),
        executables: Executables::default(),
        patched,
        reader_calls,
        opt_in: config.entry_trampolines,
        possible: OnceLock::new(),
    });
    // Published before the hooks are reachable through the table. The previous
    // runtime instance's session is dropped outside the lock (ROCr finished its
    // `hsa_shut_down`, loader included, before this `hsa_init` began).
    let previous = CURRENT
        .write()
        .unwrap_or_else(|e| e.into_inner())
        .replace(Arc::clone(&session));
    drop(previous);
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
    /// Load these bytes through a temporary reader (and keep them for the
    /// executable); on any failure load the caller's reader instead.
    Rewritten {
        /// The rewritten code object.
        bytes: RewrittenBytes,
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

    /// True when the create-from-memory hook should hand the reader to
    /// [`Session::created_from_memory`] (false once the session is known to
    /// never rewrite: one atomic load).
    pub fn records_readers(&self) -> bool {
        !self.passes_through()
    }

    /// After a successful original create-from-memory: records the reader when
    /// its code object could be rewritten here (inside the panic boundary).
    pub fn created_from_memory(&self, reader: hsa_code_object_reader_t, bytes: ReaderBytes) {
        ffi_boundary("create_from_memory hook", (), || {
            self.record_memory_reader(reader, bytes)
        });
    }

    /// The create-from-file hook's decision: a memory reader (made with the
    /// original create-from-memory) over the file's bytes when the file could
    /// be rewritten here; `None`: the hook calls the original create-from-file.
    pub fn create_from_file(&self, file: hsa_file_t) -> Option<hsa_code_object_reader_t> {
        if self.passes_through() {
            return None;
        }
        let (handle, bytes) = ffi_boundary("create_from_file hook", None, || {
            let bytes = self.file_bytes_for_rewrite(file)?;
            let handle = self.reader_calls.as_deref()?.create(&bytes).ok()?;
            Some((handle, bytes))
        })?;
        let keep = Arc::clone(&bytes);
        let recorded = ffi_boundary("create_from_file hook", false, || {
            self.created_from_file(handle, file, bytes);
            true
        });
        if !recorded {
            // ROCr's reader points into the bytes: never free them.
            std::mem::forget(keep);
        }
        // Where ROCr's own create-from-file leaves the descriptor (it seeks to
        // the end to learn the size, then maps the file), so the application
        // sees the offset it would see without us.
        readers::seek_to_end(file);
        Some(handle)
    }

    /// The destroy hook: forget the reader, then `destroy` (the original with
    /// the caller's argument). The bytes (if ours) are released only after ROCr
    /// stopped using them.
    pub fn reader_destroy(
        &self,
        reader: hsa_code_object_reader_t,
        destroy: impl FnOnce() -> hsa_status_t,
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
        let status = destroy();
        drop(entry);
        status
    }

    /// The executable-destroy hook: `destroy` (the original with the caller's
    /// argument), then what the tool kept for the executable is released (freed
    /// when no reader or other executable holds it). If the destroy fails, the
    /// executable (if it is one) still lives and keeps its bytes.
    pub fn executable_destroy(
        &self,
        executable: hsa_executable_t,
        destroy: impl FnOnce() -> hsa_status_t,
    ) -> hsa_status_t {
        // Nothing kept for any executable: the original alone, no lock.
        if self.executables.is_empty() {
            return destroy();
        }
        let kept = ffi_boundary("executable_destroy hook", None, || {
            fault::point("executable_destroy.take");
            self.executables.take(executable)
        });
        let status = destroy();
        if let Some(kept) = kept {
            if status == HSA_STATUS_SUCCESS {
                log::debug!(
                    "executable {:#x} destroyed: {} buffer(s) kept for it released",
                    executable.handle,
                    kept.len()
                );
                drop(kept);
            } else {
                let guard = kept.clone();
                let back = ffi_boundary("executable_destroy hook", false, || {
                    self.executables.give_back(executable, kept);
                    true
                });
                if !back {
                    // Could not be put back: ROCr may still read them.
                    std::mem::forget(guard);
                }
            }
        }
        status
    }

    /// The load hook: the rewritten code object when the policy and the
    /// rewriter produce one, else (and on any failure) the caller's. `load` is
    /// the original with the caller's arguments and the reader to load.
    pub fn load_agent_code_object(
        &self,
        executable: hsa_executable_t,
        agent: hsa_agent_t,
        reader: hsa_code_object_reader_t,
        load: &dyn Fn(hsa_code_object_reader_t) -> hsa_status_t,
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
            return load(reader);
        }
        let plan = ffi_boundary("load_agent_code_object hook", Plan::original(), || {
            self.plan_load(agent, reader)
        });
        let pin = match plan {
            Plan::Rewritten { bytes, pin } => {
                if self.load_rewritten(load, &bytes) == Some(HSA_STATUS_SUCCESS) {
                    self.keep_for(executable, Kept::Rewritten(bytes), "load.keep");
                    log::debug!(
                        "load reader {:#x} into executable {:#x} on agent {:#x}: \
                         rewritten code object loaded",
                        reader.handle,
                        executable.handle,
                        agent.handle
                    );
                    return HSA_STATUS_SUCCESS;
                }
                pin
            }
            Plan::Original { pin } => pin,
        };
        let status = load(reader);
        if status == HSA_STATUS_SUCCESS {
            if let Some(bytes) = pin {
                self.keep_for(executable, Kept::File(bytes), "load.pin");
            }
        }
        status
    }

    /// Keeps `kept` (ROCr just loaded from it) while `executable` lives. If
    /// that fails (a panic caught by the boundary), the bytes are never freed.
    fn keep_for(&self, executable: hsa_executable_t, kept: Kept, point: &'static str) {
        let guard = kept.clone();
        let done = ffi_boundary("load_agent_code_object hook", false, || {
            fault::point(point);
            self.executables.keep(executable, kept);
            true
        });
        if !done {
            // ROCr loaded from these bytes: never free them.
            std::mem::forget(guard);
        }
    }

    /// Loads `bytes` through a temporary reader; `None` when no reader could be
    /// made. A failure is logged; the caller then loads the original.
    fn load_rewritten(
        &self,
        load: &dyn Fn(hsa_code_object_reader_t) -> hsa_status_t,
        bytes: &[u8],
    ) -> Option<hsa_status_t> {
        let calls = ffi_boundary("load_agent_code_object hook", None, || {
            fault::point("load.rewritten_reader");
            let calls = self.reader_calls.as_deref()?;
            match calls.create(bytes) {
                Ok(temporary) => Some((calls, temporary)),
                Err(status) => {
                    log::warn!(
                        "reader over the rewritten code object failed (status {status:#x}); \
                         falling back to the original code object"
                    );
                    None
                }
            }
        });
        let (calls, temporary) = calls?;
        let status = load(temporary);
        calls.destroy(temporary);
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

    /// Records a memory reader only when its code object could be rewritten
    /// for some agent (its ELF header names a processor the decision table can
    /// route).
    fn record_memory_reader(&self, reader: hsa_code_object_reader_t, bytes: ReaderBytes) {
        fault::point("create_from_memory.record");
        if !self.rewrite_possible() {
            return;
        }
        let (addr, len) = (bytes.addr(), bytes.len());
        // SAFETY: called from the create-from-memory hook, inside the
        // application's create call for `reader`, after ROCr accepted it: the
        // reader is not destroyed before that call returns.
        #[allow(unsafe_code)]
        let view = unsafe { bytes.view() };
        let processor = CodeObject::parse(view).and_then(|o| code_object::processor(&o));
        match processor {
            Ok(gfx) if policy::source_may_be_rewritten(&gfx, self.opt_in) => {
                log::debug!(
                    "reader {:#x}: memory, {len} bytes at {addr:#x}, {gfx} (recorded, not copied)",
                    reader.handle
                );
                self.readers.remember(reader, bytes);
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
        let unknown = match code_object::isa::processor_of_prefix(&header.prefix, u64::MAX) {
            Ok(gfx) if policy::source_may_be_rewritten(gfx, self.opt_in) => false,
            Ok(gfx) => {
                log::debug!("fd {fd}: {gfx} code object, never rewritten here; original create-from-file used");
                return None;
            }
            // A processor the table lacks is named the way a memory reader's
            // is (by the linked COMGR), which needs the whole object.
            Err(IsaError::UnknownProcessor(_)) => true,
            Err(e) => {
                log::debug!("fd {fd}: not an identifiable code object ({e:?}); original create-from-file used");
                return None;
            }
        };
        fault::point("create_from_file.read");
        let bytes = match readers::read_whole_file(fd) {
            Ok(bytes) => bytes,
            Err(e) => {
                log::debug!("fd {fd}: cannot read ({e}); original create-from-file used");
                return None;
            }
        };
        if unknown {
            let processor = CodeObject::parse(&bytes[..]).and_then(|o| code_object::processor(&o));
            match processor {
                Ok(gfx) if policy::source_may_be_rewritten(&gfx, self.opt_in) => {}
                other => {
                    log::debug!(
                        "fd {fd}: {other:?}: never rewritten here; original create-from-file used"
                    );
                    return None;
                }
            }
        }
        Some(bytes)
    }

    /// After a memory reader was made from a file's bytes.
    pub fn created_from_file(&self, reader: hsa_code_object_reader_t, fd: i32, bytes: FileBytes) {
        fault::point("create_from_file.record");
        log::debug!(
            "reader {:#x}: file fd {fd}, {} bytes read with pread, handed to ROCr as memory",
            reader.handle,
            bytes.len()
        );
        self.readers.remember(reader, ReaderBytes::from_file(bytes));
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
                // SAFETY: called from the load hook: the application is
                // loading through `reader`, so it has not been destroyed and
                // the memory behind it stays valid for this call (ROCr's rule
                // for memory readers); `bytes` is not kept past it.
                #[allow(unsafe_code)]
                let bytes = unsafe { lookup.bytes.view() };
                match self.decide(info, &what, reader, bytes) {
                    (Some(outcome), pair) => {
                        self.readers.set_outcome(
                            reader,
                            agent.handle,
                            pair.as_ref(),
                            outcome.clone(),
                        );
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
        // The one parse of this object: identification, the policy and the
        // rewriter all read this view.
        let object = match CodeObject::parse(bytes) {
            Ok(object) => object,
            Err(e) => {
                log::warn!(
                    "{what}: code object of {} bytes not identified ({e}); original loaded",
                    bytes.len()
                );
                return (Some(Outcome::Declined), None);
            }
        };
        let source = match code_object::isa_name(&object) {
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
        let outcome = self.rewrite(what, &object, &decision);
        (outcome, Some(decision))
    }

    /// One rewrite through the content-keyed cache, logged.
    fn rewrite(
        &self,
        what: &Describe<'_>,
        object: &CodeObject<'_>,
        decision: &policy::Decision,
    ) -> Option<Outcome> {
        let bytes = object.bytes();
        let persistent_cache = crate::retarget::persistent_cache_in_use;
        let result = retained::rewrite_once(bytes, decision, persistent_cache, |digest| {
            fault::point("load.rewrite");
            let flags = rewriter::RewriteFlags::default();
            let (source, target) = (&decision.source, &decision.target);
            crate::retarget::retarget_object(object, source, target, flags, digest)
        });
        let pair = Pair(decision);
        match result {
            Ok((Outcome::Changed(new), cached)) => {
                log::debug!(
                    "{what}: rewrite {pair}: {} -> {} bytes{}; loading the rewritten code object",
                    bytes.len(),
                    new.len(),
                    if cached { " (cached)" } else { "" }
                );
                Some(Outcome::Changed(new))
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
