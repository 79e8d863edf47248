//! A fake ROCr for tests and fuzz targets (`cfg(test)` or the `testing`
//! feature): a real `HsaApiTable`/`CoreApiTable` whose slots hold Rust
//! `extern "C"` fakes — agents with ISA names and ASIC revisions, code-object
//! readers from memory and from file descriptors, and a loader that records
//! what it loaded — plus a [`FakeBackend`] rewriter. The tool is driven exactly
//! as ROCr drives it: [`FakeRuntime::start`] calls the exported `OnLoad`, the
//! application's calls go through the table's slots, and dropping the runtime
//! calls `OnUnload`.
//!
//! The fakes keep their state in one process-wide place, so one runtime runs at
//! a time: [`FakeRuntime::start`] takes a lock that its drop releases.
#![allow(unsafe_code)] // builds a C table of extern "C" fakes and calls through it

use std::collections::HashMap;
use std::ffi::{c_char, c_void};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard};

use crate::hooks::{
    CreateFromFileFn, CreateFromMemoryFn, ExecutableDestroyFn, LoadAgentCodeObjectFn,
    ReaderDestroyFn,
};
use crate::hsa::api::{
    fn_from_slot, hsa_agent_t, hsa_code_object_reader_t, hsa_executable_t, hsa_file_t, hsa_isa_t,
    hsa_loaded_code_object_t, hsa_status_t, AgentCallback, IsaCallback, HSA_STATUS_ERROR,
    HSA_STATUS_INFO_BREAK, HSA_STATUS_SUCCESS,
};
use crate::hsa::table::{
    ApiTableVersion, CoreApiTable, HsaApiTable, Slot, AGENT_GET_INFO, AGENT_ITERATE_ISAS,
    CORE_SLOT_COUNT, EXECUTABLE_DESTROY, ISA_GET_INFO_ALT, ITERATE_AGENTS, LOAD_AGENT_CODE_OBJECT,
    READER_CREATE_FROM_FILE, READER_CREATE_FROM_MEMORY, READER_DESTROY,
};
use crate::rewriter::{self, Backend, BackendKind, Request, RetargetError, Rewritten};

#[cfg(test)]
mod rules;

// The fakes' constants are private here, behind functions, so that the C
// header generator (which reads every module and exports public constants)
// does not take them for part of the C API.

// The rules these fakes follow (statuses, agent order, ISA names) are the C++
// stand-in's too: tests/common/rocr_rules.txt, checked here by `rules`.

/// `HSA_STATUS_ERROR_INVALID_ARGUMENT`.
const INVALID_ARGUMENT: hsa_status_t = 0x1001;
/// `HSA_STATUS_ERROR_INVALID_EXECUTABLE`.
const INVALID_EXECUTABLE: hsa_status_t = 0x1011;
/// `HSA_STATUS_ERROR_INVALID_CODE_OBJECT`.
const INVALID_CODE_OBJECT: hsa_status_t = 0x1010;
/// `HSA_STATUS_ERROR_INVALID_FILE`.
const INVALID_FILE: hsa_status_t = 0x1020;
/// `HSA_STATUS_ERROR_INVALID_CODE_OBJECT_READER`.
const INVALID_CODE_OBJECT_READER: hsa_status_t = 0x1021;
/// An executable handle whose loads fail with `INVALID_EXECUTABLE`.
const FAILING_EXECUTABLE: u64 = 0xBAD;
/// What a [`FakeBackend`] writes into `e_ident[9..16)` of its output.
const MARKER: &[u8; 7] = b"HOTSWAP";

impl FakeRuntime {
    /// `HSA_STATUS_ERROR_INVALID_EXECUTABLE`: what the fake loader returns for
    /// [`FakeRuntime::failing_executable`].
    pub fn invalid_executable() -> hsa_status_t {
        INVALID_EXECUTABLE
    }
    /// `HSA_STATUS_ERROR_INVALID_CODE_OBJECT`: what the fake loader returns
    /// for bytes that are not an ELF.
    pub fn invalid_code_object() -> hsa_status_t {
        INVALID_CODE_OBJECT
    }
    /// An executable handle whose loads fail with `invalid_executable()`.
    pub fn failing_executable() -> hsa_executable_t {
        hsa_executable_t {
            handle: FAILING_EXECUTABLE,
        }
    }
}

impl FakeBackend {
    /// The marker a [`FakeBackend`] writes into `e_ident[9..16)` of its output.
    pub fn marker() -> &'static [u8; 7] {
        MARKER
    }
}

/// One fake agent.
#[derive(Clone, Debug)]
pub struct FakeAgent {
    /// `hsa_agent_t.handle`.
    pub handle: u64,
    /// A GPU (else a CPU, with no ISA).
    pub gpu: bool,
    /// The first ISA's name.
    pub isa: String,
    /// The ASIC revision; `None`: the query fails.
    pub revision: Option<u32>,
}

impl FakeAgent {
    /// A GPU agent.
    pub fn gpu(handle: u64, isa: &str, revision: Option<u32>) -> FakeAgent {
        FakeAgent {
            handle,
            gpu: true,
            isa: isa.to_owned(),
            revision,
        }
    }

    /// A CPU agent.
    pub fn cpu(handle: u64) -> FakeAgent {
        FakeAgent {
            handle,
            gpu: false,
            isa: String::new(),
            revision: None,
        }
    }
}

/// What the fake loader saw for one load.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Load {
    /// The agent.
    pub agent: u64,
    /// The status returned.
    pub status: hsa_status_t,
    /// Address and size of the bytes loaded (a file reader's: its copy).
    pub bytes: (usize, usize),
    /// The reader was a file reader.
    pub from_file: bool,
    /// The bytes carry [`FakeBackend::marker`].
    pub marked: bool,
    /// The bytes carry [`FakeRocrHook::marker`] (ROCr's hook translated them).
    pub hook_marked: bool,
}

impl Load {
    /// The bytes the fake loader loaded: the caller's, the runtime's copy of a
    /// live file reader, or bytes the tool keeps while the executable that
    /// loaded them lives (read it before destroying that executable).
    pub fn loaded(&self) -> &[u8] {
        // SAFETY: the record points at bytes that are alive as documented above.
        unsafe { std::slice::from_raw_parts(self.bytes.0 as *const u8, self.bytes.1) }
    }
}

enum FakeReader {
    Memory(usize, usize),
    /// A file reader: ROCr reads the file when the reader is created.
    File(Box<[u8]>),
}

#[derive(Default)]
struct State {
    agents: Vec<FakeAgent>,
    readers: HashMap<u64, FakeReader>,
    next_reader: u64,
    loads: Vec<Load>,
    creates_from_file: usize,
    executables_destroyed: usize,
}

static STATE: Mutex<Option<State>> = Mutex::new(None);
static ONE_RUNTIME: Mutex<()> = Mutex::new(());

fn state() -> MutexGuard<'static, Option<State>> {
    STATE.lock().unwrap_or_else(|e| e.into_inner())
}

fn with_state<T>(f: impl FnOnce(&mut State) -> T) -> T {
    f(state().get_or_insert_with(State::default))
}

fn has_marker(bytes: &[u8]) -> bool {
    bytes.get(9..16) == Some(&MARKER[..])
}

unsafe extern "C" fn iterate_agents(
    callback: Option<AgentCallback>,
    data: *mut c_void,
) -> hsa_status_t {
    let Some(callback) = callback else {
        return HSA_STATUS_ERROR;
    };
    // As ROCr (Runtime::IterateAgent): the CPU agents first, then the GPUs.
    let handles: Vec<u64> = with_state(|s| {
        let cpus = s.agents.iter().filter(|a| !a.gpu);
        cpus.chain(s.agents.iter().filter(|a| a.gpu))
            .map(|a| a.handle)
            .collect()
    });
    for handle in handles {
        // SAFETY: the caller's callback and data, as hsa_iterate_agents passes them.
        let status = unsafe { callback(hsa_agent_t { handle }, data) };
        if status != HSA_STATUS_SUCCESS {
            return status;
        }
    }
    HSA_STATUS_SUCCESS
}

fn agent(handle: u64) -> Option<FakeAgent> {
    with_state(|s| s.agents.iter().find(|a| a.handle == handle).cloned())
}

unsafe extern "C" fn agent_get_info(
    agent_handle: hsa_agent_t,
    attribute: u32,
    value: *mut c_void,
) -> hsa_status_t {
    let Some(a) = agent(agent_handle.handle) else {
        return HSA_STATUS_ERROR;
    };
    let answer = match attribute {
        17 => Some(u32::from(a.gpu)), // HSA_AGENT_INFO_DEVICE: GPU 1, CPU 0
        0xA012 if a.gpu => a.revision,
        _ => None,
    };
    match answer {
        Some(v) => {
            // SAFETY: the caller passes a buffer for a u32 attribute.
            unsafe { value.cast::<u32>().write_unaligned(v) };
            HSA_STATUS_SUCCESS
        }
        None => HSA_STATUS_ERROR,
    }
}

unsafe extern "C" fn agent_iterate_isas(
    agent_handle: hsa_agent_t,
    callback: Option<IsaCallback>,
    data: *mut c_void,
) -> hsa_status_t {
    let (Some(a), Some(callback)) = (agent(agent_handle.handle), callback) else {
        return HSA_STATUS_ERROR;
    };
    if a.isa.is_empty() {
        return HSA_STATUS_SUCCESS;
    }
    // SAFETY: the caller's callback and data; the ISA handle is the agent's.
    let status = unsafe { callback(hsa_isa_t { handle: a.handle }, data) };
    if status == HSA_STATUS_INFO_BREAK {
        HSA_STATUS_SUCCESS
    } else {
        status
    }
}

unsafe extern "C" fn isa_get_info_alt(
    isa: hsa_isa_t,
    attribute: u32,
    value: *mut c_void,
) -> hsa_status_t {
    let Some(a) = agent(isa.handle) else {
        return HSA_STATUS_ERROR;
    };
    match attribute {
        0 => {
            // As ROCr: the length counts the terminating NUL.
            // SAFETY: the caller passes a buffer for a u32 attribute.
            unsafe { value.cast::<u32>().write_unaligned(a.isa.len() as u32 + 1) };
            HSA_STATUS_SUCCESS
        }
        1 => {
            // SAFETY: the caller passes NAME_LENGTH bytes: the name and its NUL.
            unsafe {
                std::ptr::copy_nonoverlapping(a.isa.as_ptr(), value.cast::<u8>(), a.isa.len());
                value.cast::<u8>().add(a.isa.len()).write(0);
            };
            HSA_STATUS_SUCCESS
        }
        _ => HSA_STATUS_ERROR,
    }
}

fn new_reader(reader: FakeReader, out: *mut hsa_code_object_reader_t) -> hsa_status_t {
    if out.is_null() {
        return INVALID_ARGUMENT;
    }
    let handle = with_state(|s| {
        s.next_reader += 1;
        let handle = 0x7000_0000 + s.next_reader;
        s.readers.insert(handle, reader);
        handle
    });
    // SAFETY: non-null out-pointer from the caller.
    unsafe { out.write(hsa_code_object_reader_t { handle }) };
    HSA_STATUS_SUCCESS
}

unsafe extern "C" fn create_from_memory(
    bytes: *const c_void,
    size: usize,
    out: *mut hsa_code_object_reader_t,
) -> hsa_status_t {
    if bytes.is_null() || size == 0 {
        return INVALID_ARGUMENT;
    }
    new_reader(FakeReader::Memory(bytes as usize, size), out)
}

/// The whole file behind `fd`, read with `pread` from offset 0 (ROCr reads a
/// file reader's bytes when it creates the reader).
fn read_file(fd: hsa_file_t) -> Option<Box<[u8]>> {
    let mut bytes = Vec::new();
    let mut chunk = [0u8; 65536];
    loop {
        // SAFETY: `chunk` is writable for its length; a bad fd only fails.
        let n = unsafe {
            libc::pread(
                fd,
                chunk.as_mut_ptr().cast(),
                chunk.len(),
                bytes.len() as libc::off_t,
            )
        };
        match n {
            0 => return Some(bytes.into_boxed_slice()),
            n if n > 0 => bytes.extend_from_slice(&chunk[..n as usize]),
            _ => return None,
        }
    }
}

unsafe extern "C" fn create_from_file(
    file: hsa_file_t,
    out: *mut hsa_code_object_reader_t,
) -> hsa_status_t {
    with_state(|s| s.creates_from_file += 1);
    // As ROCr's SetFile on Linux: -1 is an invalid argument; the size from
    // lseek(SEEK_END), which leaves the offset there; an empty file is an
    // invalid code object.
    if file == -1 {
        return INVALID_ARGUMENT;
    }
    // SAFETY: lseek only moves the descriptor's offset; a bad fd only fails.
    match unsafe { libc::lseek(file, 0, libc::SEEK_END) } {
        -1 => return INVALID_FILE,
        0 => return INVALID_CODE_OBJECT,
        _ => {}
    }
    match read_file(file) {
        Some(bytes) => new_reader(FakeReader::File(bytes), out),
        None => INVALID_FILE,
    }
}

unsafe extern "C" fn reader_destroy(reader: hsa_code_object_reader_t) -> hsa_status_t {
    match with_state(|s| s.readers.remove(&reader.handle)) {
        Some(_) => HSA_STATUS_SUCCESS,
        None => INVALID_CODE_OBJECT_READER,
    }
}

unsafe extern "C" fn load(
    executable: hsa_executable_t,
    agent_handle: hsa_agent_t,
    reader: hsa_code_object_reader_t,
    _options: *const c_char,
    _loaded: *mut hsa_loaded_code_object_t,
) -> hsa_status_t {
    let mut guard = state();
    let s = guard.get_or_insert_with(State::default);
    let Some(r) = s.readers.get(&reader.handle) else {
        return INVALID_CODE_OBJECT_READER;
    };
    let (bytes, from_file): (&[u8], bool) = match r {
        // SAFETY: the application keeps a memory reader's bytes alive while
        // the reader lives (the rule the tool also relies on).
        FakeReader::Memory(addr, len) => (
            unsafe { std::slice::from_raw_parts(*addr as *const u8, *len) },
            false,
        ),
        FakeReader::File(bytes) => (bytes, true),
    };
    let status = if executable.handle == FAILING_EXECUTABLE {
        INVALID_EXECUTABLE
    } else if bytes.get(..4) != Some(b"\x7fELF") {
        INVALID_CODE_OBJECT
    } else {
        HSA_STATUS_SUCCESS
    };
    let record = Load {
        agent: agent_handle.handle,
        status,
        bytes: (bytes.as_ptr() as usize, bytes.len()),
        from_file,
        marked: has_marker(bytes),
        hook_marked: hook_translated(bytes),
    };
    s.loads.push(record);
    status
}

unsafe extern "C" fn executable_destroy(executable: hsa_executable_t) -> hsa_status_t {
    with_state(|s| s.executables_destroyed += 1);
    if executable.handle == FAILING_EXECUTABLE {
        INVALID_EXECUTABLE
    } else {
        HSA_STATUS_SUCCESS
    }
}

/// A running fake runtime with the tool loaded (or refused) by `OnLoad`.
#[derive(Debug)]
pub struct FakeRuntime {
    root: Box<HsaApiTable>,
    core: Box<CoreApiTable>,
    /// What `OnLoad` returned.
    pub on_load: bool,
    _one: MutexGuard<'static, ()>,
}

impl std::fmt::Debug for FakeReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Memory(a, n) => write!(f, "Memory({a:#x}, {n})"),
            Self::File(b) => write!(f, "File({} bytes)", b.len()),
        }
    }
}

/// The fake functions in their slots (everything else is 0).
pub fn fake_slots() -> Vec<(Slot, usize)> {
    vec![
        (ITERATE_AGENTS, iterate_agents as *const () as usize),
        (AGENT_GET_INFO, agent_get_info as *const () as usize),
        (AGENT_ITERATE_ISAS, agent_iterate_isas as *const () as usize),
        (ISA_GET_INFO_ALT, isa_get_info_alt as *const () as usize),
        (
            READER_CREATE_FROM_MEMORY,
            create_from_memory as *const () as usize,
        ),
        (
            READER_CREATE_FROM_FILE,
            create_from_file as *const () as usize,
        ),
        (READER_DESTROY, reader_destroy as *const () as usize),
        (EXECUTABLE_DESTROY, executable_destroy as *const () as usize),
        (LOAD_AGENT_CODE_OBJECT, load as *const () as usize),
    ]
}

/// Holds off every fake runtime (and other tests that touch the process-wide
/// counters) while the guard lives.
pub fn exclusive() -> MutexGuard<'static, ()> {
    ONE_RUNTIME.lock().unwrap_or_else(|e| e.into_inner())
}

impl FakeRuntime {
    /// A runtime with `agents`, then `OnLoad` as ROCr calls it. Waits while
    /// another fake runtime of the process is alive.
    pub fn start(agents: Vec<FakeAgent>) -> FakeRuntime {
        Self::start_with(agents, None, |_| {})
    }

    /// [`FakeRuntime::start`] with `config` instead of the environment's
    /// (`OnLoad`'s body after it read the environment).
    pub fn start_configured(
        agents: Vec<FakeAgent>,
        config: &crate::config::LoadConfig,
    ) -> FakeRuntime {
        Self::start_with(agents, Some(config), |_| {})
    }

    /// [`FakeRuntime::start`], with `config` (else the environment's) and
    /// `edit` applied to the core table before `OnLoad` (a refused table,
    /// another tool's wrappers…).
    pub fn start_with(
        agents: Vec<FakeAgent>,
        config: Option<&crate::config::LoadConfig>,
        edit: impl FnOnce(&mut CoreApiTable),
    ) -> FakeRuntime {
        let one = ONE_RUNTIME.lock().unwrap_or_else(|e| e.into_inner());
        *state() = Some(State {
            agents,
            ..State::default()
        });
        let mut core = Box::new(CoreApiTable {
            version: ApiTableVersion {
                major_id: 1,
                minor_id: std::mem::size_of::<CoreApiTable>() as u32,
                ..Default::default()
            },
            slots: [0; CORE_SLOT_COUNT],
        });
        for (slot, value) in fake_slots() {
            core.slots[(slot.offset - std::mem::size_of::<ApiTableVersion>()) / 8] = value;
        }
        edit(&mut core);
        let mut root = Box::new(HsaApiTable {
            version: ApiTableVersion {
                major_id: 1,
                minor_id: std::mem::size_of::<HsaApiTable>() as u32,
                ..Default::default()
            },
            core_: &mut *core,
            amd_ext_: std::ptr::null_mut(),
            finalizer_ext_: std::ptr::null_mut(),
            image_ext_: std::ptr::null_mut(),
        });
        let on_load = match config {
            // SAFETY: a live table of the declared sizes, as ROCr passes it.
            None => unsafe { crate::tool::OnLoad(&mut *root, 1, 0, std::ptr::null()) },
            Some(config) => {
                let patches = crate::hooks::patches();
                let needed = crate::session::needed_slots(&patches);
                // SAFETY: as above.
                let table = unsafe { crate::hsa::table::CoreTable::from_root(&mut *root, &needed) };
                crate::session::on_load(table, &patches, crate::hooks::own_readers, config, 1)
            }
        };
        FakeRuntime {
            root,
            core,
            on_load,
            _one: one,
        }
    }

    /// The current value of `slot`.
    pub fn slot(&self, slot: Slot) -> usize {
        self.core.slots[(slot.offset - std::mem::size_of::<ApiTableVersion>()) / 8]
    }

    /// The fake runtime's own function for `slot`.
    pub fn fake(slot: Slot) -> usize {
        fake_slots()
            .into_iter()
            .find(|(s, _)| *s == slot)
            .map_or(0, |(_, v)| v)
    }

    fn call<F: Copy>(&self, slot: Slot) -> F {
        // SAFETY: every slot this harness calls holds a function of the header's
        // signature for it (the fakes, or the tool's hooks, or a test's wrapper).
        unsafe { fn_from_slot::<F>(self.slot(slot)) }.expect("slot is set")
    }

    /// `hsa_code_object_reader_create_from_memory` through the table.
    pub fn create_from_memory(
        &self,
        bytes: &[u8],
    ) -> Result<hsa_code_object_reader_t, hsa_status_t> {
        let mut reader = hsa_code_object_reader_t { handle: 0 };
        let f: CreateFromMemoryFn = self.call(READER_CREATE_FROM_MEMORY);
        // SAFETY: valid bytes and out-pointer; the caller keeps `bytes` alive
        // until it destroys the reader.
        let status = unsafe { f(bytes.as_ptr().cast(), bytes.len(), &mut reader) };
        if status == HSA_STATUS_SUCCESS {
            Ok(reader)
        } else {
            Err(status)
        }
    }

    /// `hsa_code_object_reader_create_from_file` through the table.
    pub fn create_from_file(&self, fd: i32) -> Result<hsa_code_object_reader_t, hsa_status_t> {
        let mut reader = hsa_code_object_reader_t { handle: 0 };
        let f: CreateFromFileFn = self.call(READER_CREATE_FROM_FILE);
        // SAFETY: a valid out-pointer; any fd value is allowed.
        let status = unsafe { f(fd, &mut reader) };
        if status == HSA_STATUS_SUCCESS {
            Ok(reader)
        } else {
            Err(status)
        }
    }

    /// `hsa_code_object_reader_destroy` through the table.
    pub fn destroy(&self, reader: hsa_code_object_reader_t) -> hsa_status_t {
        let f: ReaderDestroyFn = self.call(READER_DESTROY);
        // SAFETY: handles are opaque values.
        unsafe { f(reader) }
    }

    /// `hsa_executable_destroy` through the table (the fake answers
    /// `invalid_executable()` for `failing_executable()`, else success).
    pub fn destroy_executable(&self, executable: hsa_executable_t) -> hsa_status_t {
        let f: ExecutableDestroyFn = self.call(EXECUTABLE_DESTROY);
        // SAFETY: handles are opaque values.
        unsafe { f(executable) }
    }

    /// Calls of the runtime's own executable destroy.
    pub fn executables_destroyed(&self) -> usize {
        with_state(|s| s.executables_destroyed)
    }

    /// `hsa_executable_load_agent_code_object` through the table: the status
    /// and what the fake loader recorded.
    pub fn load(
        &self,
        executable: hsa_executable_t,
        agent: u64,
        reader: hsa_code_object_reader_t,
    ) -> (hsa_status_t, Option<Load>) {
        let before = with_state(|s| s.loads.len());
        let f: LoadAgentCodeObjectFn = self.call(LOAD_AGENT_CODE_OBJECT);
        let mut loaded = hsa_loaded_code_object_t { handle: 0 };
        // SAFETY: handles are opaque; a NULL options string and a valid out-pointer.
        let status = unsafe {
            f(
                executable,
                hsa_agent_t { handle: agent },
                reader,
                std::ptr::null(),
                &mut loaded,
            )
        };
        let record = with_state(|s| s.loads.get(before..).and_then(|l| l.last().cloned()));
        (status, record)
    }

    /// Create from memory, load on `agent`, destroy: what the application got.
    pub fn load_memory(&self, bytes: &[u8], agent: u64) -> (hsa_status_t, Option<Load>) {
        self.load_memory_into(hsa_executable_t { handle: 1 }, bytes, agent)
    }

    /// [`FakeRuntime::load_memory`] into `executable`.
    pub fn load_memory_into(
        &self,
        executable: hsa_executable_t,
        bytes: &[u8],
        agent: u64,
    ) -> (hsa_status_t, Option<Load>) {
        let reader = match self.create_from_memory(bytes) {
            Ok(reader) => reader,
            Err(status) => return (status, None),
        };
        let result = self.load(executable, agent, reader);
        assert_eq!(self.destroy(reader), HSA_STATUS_SUCCESS, "destroy");
        result
    }

    /// Readers the fake runtime holds (not yet destroyed).
    pub fn live_readers(&self) -> usize {
        with_state(|s| s.readers.len())
    }

    /// Calls of the runtime's own create-from-file.
    pub fn creates_from_file(&self) -> usize {
        with_state(|s| s.creates_from_file)
    }

    /// The root table, for tests that call `OnLoad` again.
    pub fn root(&mut self) -> *mut HsaApiTable {
        &mut *self.root
    }
}

impl Drop for FakeRuntime {
    fn drop(&mut self) {
        crate::tool::OnUnload();
        rewriter::testing_override::clear();
        crate::coexist::testing::clear();
        crate::retained::forget_cache();
        crate::fault::disarm_all();
    }
}

/// What a [`FakeBackend`] answers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FakeMode {
    /// A copy of the input with [`FakeBackend::marker`] in `e_ident[9..16)`.
    Change,
    /// A copy of the input.
    Unchanged,
    /// This error.
    Fail(RetargetError),
    /// Output that is not an ELF.
    Garbage,
    /// These bytes (a fuzz target's).
    Bytes(Vec<u8>),
}

/// A rewriter backend for tests: answers per [`FakeMode`], counts calls and
/// keeps the last ISA pair.
#[derive(Debug)]
pub struct FakeBackend {
    /// What it answers.
    pub mode: FakeMode,
    calls: AtomicUsize,
    last: Mutex<(String, String)>,
}

impl FakeBackend {
    /// A leaked backend (backends live for the process), installed as the
    /// process's rewriter until the current [`FakeRuntime`] is dropped.
    pub fn install(mode: FakeMode) -> &'static FakeBackend {
        let backend: &'static FakeBackend = Box::leak(Box::new(FakeBackend {
            mode,
            calls: AtomicUsize::new(0),
            last: Mutex::new((String::new(), String::new())),
        }));
        rewriter::testing_override::set(Some(backend));
        backend
    }

    /// Makes the process have no rewriter until the current runtime is dropped.
    pub fn install_none() {
        rewriter::testing_override::set(None);
    }

    /// Calls so far.
    pub fn calls(&self) -> usize {
        self.calls.load(Ordering::SeqCst)
    }

    /// The last (source, target) ISA pair.
    pub fn last_pair(&self) -> (String, String) {
        self.last.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }
}

impl Backend for FakeBackend {
    fn kind(&self) -> BackendKind {
        BackendKind::Native
    }

    fn describe(&self) -> &str {
        "test backend"
    }

    fn rewrite(
        &self,
        object: &hotswap_code_object::CodeObject<'_>,
        request: &Request<'_>,
    ) -> Result<Rewritten, RetargetError> {
        let code_object = object.bytes();
        self.calls.fetch_add(1, Ordering::SeqCst);
        *self.last.lock().unwrap_or_else(|e| e.into_inner()) =
            (request.source_isa.to_owned(), request.target_isa.to_owned());
        match &self.mode {
            FakeMode::Change => Rewritten::from_fill(code_object.len(), |out| {
                out.copy_from_slice(code_object);
                if let Some(pad) = out.get_mut(9..16) {
                    pad.copy_from_slice(MARKER);
                }
                true
            }),
            FakeMode::Unchanged => Rewritten::copy_of(code_object),
            FakeMode::Fail(e) => Err(e.clone()),
            FakeMode::Garbage => Rewritten::copy_of(&[0x5a; 256]),
            FakeMode::Bytes(bytes) => Rewritten::copy_of(bytes),
        }
    }
}

/// A code object with `e_flags` set to `flags` (the probe object is gfx1250).
pub fn code_object_with_flags(flags: u32) -> Vec<u8> {
    let mut bytes = hotswap_code_object::GFX1250_PROBE.to_vec();
    bytes[48..52].copy_from_slice(&flags.to_le_bytes());
    bytes
}

/// The marker a [`FakeRocrHook`] writes into what it translates (not
/// [`FakeBackend::marker`], so a load shows which tool translated it).
const HOOK_MARKER: &[u8; 7] = b"ROCRHK!";
static HOOK_TRANSLATIONS: AtomicUsize = AtomicUsize::new(0);

/// A fake of ROCr's own hotswap hook, `libhsa_hotswap_rocjitsu.so`, in the load
/// slot of a [`FakeRuntime`]: it decides every load by the hook's own rule
/// ([`crate::coexist::hook_load`], the one the C++ stand-in's double follows),
/// loads a translated copy (carrying its own marker) or an unchanged copy
/// through the runtime's functions, and counts translations. Its address counts
/// as the hook library's ([`crate::coexist::testing`]) while the runtime lives.
#[derive(Debug)]
pub struct FakeRocrHook;

impl FakeRocrHook {
    /// Installs the hook in `core` as ROCr does before `OnLoad` of any
    /// `HSA_TOOLS_LIB` tool (for [`FakeRuntime::start_with`]'s `edit`).
    pub fn install_before_tools(core: &mut CoreApiTable) {
        let hook = fake_hook_load as *const () as usize;
        core.slots[(LOAD_AGENT_CODE_OBJECT.offset - std::mem::size_of::<ApiTableVersion>()) / 8] =
            hook;
        crate::coexist::testing::install(&[hook]);
        HOOK_TRANSLATIONS.store(0, Ordering::SeqCst);
    }

    /// The hook library loaded after the tool (named later in `HSA_TOOLS_LIB`),
    /// its functions not in the table.
    pub fn load_after_tools() {
        crate::coexist::testing::install(&[]);
        HOOK_TRANSLATIONS.store(0, Ordering::SeqCst);
    }

    /// Translations so far.
    pub fn translations() -> usize {
        HOOK_TRANSLATIONS.load(Ordering::SeqCst)
    }

    /// The marker in what the hook translated.
    pub fn marker() -> &'static [u8; 7] {
        HOOK_MARKER
    }
}

/// True when `bytes` carry the fake hook's marker.
pub fn hook_translated(bytes: &[u8]) -> bool {
    bytes.get(9..16) == Some(&HOOK_MARKER[..])
}

unsafe extern "C" fn fake_hook_load(
    executable: hsa_executable_t,
    agent_handle: hsa_agent_t,
    reader: hsa_code_object_reader_t,
    options: *const c_char,
    loaded: *mut hsa_loaded_code_object_t,
) -> hsa_status_t {
    use crate::coexist::{hook_load, HookLoad};
    let Some(a) = agent(agent_handle.handle) else {
        return HSA_STATUS_ERROR;
    };
    let action = if a.gpu {
        let isa = a.isa.clone();
        // The object's MACH, from the bytes the reader holds (the real hook keeps
        // a copy made when the reader was created).
        let bytes: Option<Vec<u8>> = with_state(|s| match s.readers.get(&reader.handle) {
            Some(FakeReader::Memory(addr, len)) => {
                // SAFETY: the application keeps a memory reader's bytes alive.
                let bytes = unsafe { std::slice::from_raw_parts(*addr as *const u8, *len) };
                Some(bytes.to_vec())
            }
            Some(FakeReader::File(bytes)) => Some(bytes.to_vec()),
            None => None,
        });
        let Some(bytes) = bytes else {
            return 0x1021; // HSA_STATUS_ERROR_INVALID_CODE_OBJECT_READER
        };
        let mach = bytes
            .get(48..52)
            .map_or(0, |f| u32::from_le_bytes([f[0], f[1], f[2], f[3]]) & 0xff);
        match hook_load(&isa, a.revision, mach) {
            HookLoad::PassesThrough => None,
            HookLoad::InvalidAgent => return 0x1004, // HSA_STATUS_ERROR_INVALID_AGENT
            HookLoad::LoadsCopyUnchanged => Some(bytes),
            HookLoad::Translates => {
                HOOK_TRANSLATIONS.fetch_add(1, Ordering::SeqCst);
                let mut copy = bytes;
                if let Some(pad) = copy.get_mut(9..16) {
                    pad.copy_from_slice(HOOK_MARKER);
                }
                Some(copy)
            }
        }
    } else {
        None
    };
    match action {
        // SAFETY: the caller's arguments, to the runtime's own load.
        None => unsafe { load(executable, agent_handle, reader, options, loaded) },
        Some(bytes) => {
            // Kept for the process like the hook's per-executable retention.
            let bytes: &'static [u8] = Box::leak(bytes.into_boxed_slice());
            let mut own = hsa_code_object_reader_t { handle: 0 };
            // SAFETY: 'static bytes and a valid out-pointer.
            let status =
                unsafe { create_from_memory(bytes.as_ptr().cast(), bytes.len(), &mut own) };
            if status != HSA_STATUS_SUCCESS {
                return status;
            }
            // SAFETY: our own reader, the caller's other arguments.
            let status = unsafe { load(executable, agent_handle, own, options, loaded) };
            // SAFETY: our own reader.
            unsafe { reader_destroy(own) };
            status
        }
    }
}
