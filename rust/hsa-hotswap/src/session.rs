//! One `OnLoad`'s state: the functions taken from its table, its agent cache and
//! its reader registry, and the decisions the hooks execute.
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

use std::sync::atomic::{AtomicBool, AtomicPtr, Ordering};
use std::sync::{Mutex, OnceLock};

use crate::agents::{AgentInfo, Agents};
use crate::code_object::{self, rewriter};
use crate::hsa::api::{hsa_agent_t, hsa_code_object_reader_t, Originals};
use crate::hsa::table::{CoreTable, TableError, PATCHED};
use crate::policy;
use crate::readers::{self, FileBytes, ReaderBytes, Readers};
use crate::retained::{self, Outcome};

/// State of one `OnLoad`.
#[derive(Debug)]
pub struct Session {
    /// What the hooks chain to, and the agent queries.
    pub originals: Originals,
    /// Agents of this runtime instance.
    pub agents: Agents,
    /// Readers created through our hooks.
    pub readers: Readers,
    /// The patched table (`CoreApiTable*` and its size), for `OnUnload`.
    table: (usize, u32),
    /// Our hooks, in `PATCHED` order, as written into the table.
    hooks: [usize; 4],
    unloaded: AtomicBool,
    /// Serialises the tool's writes to the table after `OnLoad` (leaving it,
    /// `OnUnload`), so nothing is written once `OnUnload` has run.
    table_writes: Mutex<()>,
    /// `AMD_COMGR_HOTSWAP_ENTRY_TRAMPOLINES`, read once by `OnLoad`.
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

/// `HSA_HOTSWAP_DISABLE` is true: `OnLoad` patches nothing and succeeds.
pub fn disabled() -> bool {
    crate::env::flag(crate::env::HSA_HOTSWAP_DISABLE)
}

/// `OnLoad`: checks every slot, then writes the four hooks. On error the table is
/// unchanged (nothing is written before every check passed).
pub fn load(table: CoreTable, originals: Originals, hooks: [usize; 4]) -> Result<(), TableError> {
    for (slot, hook) in PATCHED.iter().zip(hooks) {
        if table.read(*slot) == hook {
            return Err(TableError::AlreadyPatched(slot.name));
        }
    }
    let session: &'static Session = Box::leak(Box::new(Session {
        originals,
        agents: Agents::default(),
        readers: Readers::default(),
        table: (table.raw() as usize, table.size()),
        hooks,
        unloaded: AtomicBool::new(false),
        table_writes: Mutex::new(()),
        opt_in: policy::entry_trampolines_requested(),
        possible: OnceLock::new(),
    }));
    // Published before the hooks are reachable through the table.
    CURRENT.store(session as *const Session as *mut Session, Ordering::Release);
    for (slot, hook) in PATCHED.iter().zip(hooks) {
        table.write(*slot, hook);
    }
    log::info!(
        "tool loaded: intercepting code-object loading (CoreApiTable major {} size {})",
        table.major_id(),
        table.size()
    );
    Ok(())
}

/// `OnUnload`: puts back each slot that still holds our hook (a later tool may
/// have wrapped it: then it is left alone); frees nothing.
pub fn unload() {
    let Some(session) = current() else { return };
    let _writes = session
        .table_writes
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    if session.unloaded.swap(true, Ordering::AcqRel) {
        return;
    }
    session.restore_slots("OnUnload");
    log::info!("tool unloaded; {}", retained::STATS.summary());
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
        if decided_here && !possible {
            self.leave_table();
        }
        possible
    }

    /// Never rewriting: put the originals back into the table so that later calls
    /// skip the tool entirely. Not after `OnUnload` (ROCr may have reset the table).
    fn leave_table(&self) {
        let _writes = self
            .table_writes
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if self.unloaded.load(Ordering::Acquire) {
            return;
        }
        self.restore_slots("no rewrite possible");
        log::debug!("no rewrite is possible in this runtime: the tool left the API table");
    }

    /// Writes the original back into each slot that still holds our hook; a slot
    /// a later tool wrapped is left alone. Called with `table_writes` held.
    fn restore_slots(&self, why: &str) {
        // SAFETY: the table OnLoad checked (size in `self.table.1`); ROCr keeps it
        // for the runtime instance and resets it only after OnUnload, and neither
        // caller writes once OnUnload ran (`unloaded` under `table_writes`).
        let table = unsafe { CoreTable::from_raw(self.table.0 as *mut _, self.table.1) };
        let originals = self.originals.patched();
        for ((slot, hook), original) in PATCHED.iter().zip(self.hooks).zip(originals) {
            let current = table.read(*slot);
            if current == hook {
                table.write(*slot, original);
            } else if current != original {
                log::info!(
                    "{why}: {} was wrapped by a later tool; left as it is",
                    slot.name
                );
            }
        }
    }

    /// True when this session is known to never rewrite: the hooks then call
    /// the originals directly (one atomic load, no map, no boundary).
    pub fn passes_through(&self) -> bool {
        self.possible.get() == Some(&false)
    }

    fn compute_rewrite_possible(&self) -> bool {
        let agents = self.agents.all(&self.originals);
        let candidates: Vec<String> = agents
            .iter()
            .filter(|a| policy::has_candidate(a.target(), self.opt_in))
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
                 (this COMGR has no working amd_comgr_hotswap_rewrite): code objects are \
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

    /// The file's bytes when the file reader should become a memory reader.
    pub fn file_bytes_for_rewrite(&self, fd: i32) -> Option<FileBytes> {
        if !self.rewrite_possible() {
            return None;
        }
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
        log::debug!(
            "reader {:#x}: file fd {fd}, {} bytes read with pread, handed to ROCr as memory",
            reader.handle,
            bytes.len()
        );
        self.readers.remember(reader, ReaderBytes::File(bytes));
    }

    /// Decides what the load hook does for `reader` on `agent`.
    pub fn plan_load(&self, agent: hsa_agent_t, reader: hsa_code_object_reader_t) -> Plan {
        if !self.rewrite_possible() {
            return Plan::original();
        }
        // The agent first (lock-free): a load on an agent that is never rewritten
        // touches the reader map only while file readers are alive (to pin them).
        let queried;
        let info = match self.agents.listed(agent.handle) {
            Some(info) => info,
            None => {
                queried = self.agents.get(&self.originals, agent);
                &*queried
            }
        };
        let opt_in = self.opt_in;
        let what = Describe(info, reader);
        if !policy::has_candidate(info.target(), opt_in) {
            log::debug!("{what}: agent is not a rewrite candidate; original loaded");
            let pin = if self.readers.has_files() {
                self.readers.get(reader).and_then(|e| e.file())
            } else {
                None
            };
            return Plan::Original { pin };
        }
        let Some(entry) = self.readers.get(reader) else {
            log::debug!("{what}: reader not recorded (its code object cannot be rewritten here); original loaded");
            return Plan::original();
        };
        let pin = entry.file();
        // SAFETY: the application is loading through `reader`, so it has not been
        // destroyed and the memory behind it is still valid (ROCr's rule).
        let bytes = unsafe { entry.as_slice() };
        let source = match code_object::isa_name(bytes) {
            Ok(source) => source,
            Err(e) => {
                log::warn!(
                    "{what}: code object of {} bytes not identified ({e:?}); original loaded",
                    bytes.len()
                );
                return Plan::Original { pin };
            }
        };
        let Some(decision) = policy::decide(info.target(), &source, &info.isa_name, opt_in) else {
            log::debug!("{what}: source {source}: no rewrite for this pair; original loaded");
            return Plan::Original { pin };
        };
        let result = retained::rewrite_once(bytes, &decision, || {
            rewriter::retarget(bytes, &decision.source, &decision.target)
        });
        match result {
            Ok((Outcome::Changed(new), cached)) => {
                log::debug!(
                    "{what}: rewrite {} -> {}: {} -> {} bytes{}; loading the rewritten code object",
                    decision.source,
                    decision.target,
                    bytes.len(),
                    new.len(),
                    if cached { " (cached)" } else { "" }
                );
                Plan::Rewritten { bytes: new, pin }
            }
            Ok((Outcome::Unchanged, _)) => {
                log::debug!(
                    "{what}: rewrite {} -> {}: unchanged; original loaded",
                    decision.source,
                    decision.target
                );
                Plan::Original { pin }
            }
            Err(e) => {
                log::warn!(
                    "{what}: rewrite {} -> {} failed ({e:?}); falling back to the original code object",
                    decision.source,
                    decision.target
                );
                Plan::Original { pin }
            }
        }
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
