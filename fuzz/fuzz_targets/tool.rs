//! The whole tool over a fake ROCr (`hsa-hotswap::testing::FakeRuntime`: a
//! real API table, the real `OnLoad` path, the patched slots), with fuzzed
//! agents (ISA names, ASIC revisions, CPUs), fuzzed code objects through memory
//! and file readers, loads on listed and unknown agents into good and failing
//! executables, and a rewriter that answers per the input (fuzzed bytes,
//! mutations of its input, every error, or no rewriter at all).
//!
//! Input: a 64-byte control block, then a code object. Control: byte 0 bit 0
//! the opt-in (`AMD_COMGR_HOTSWAP_ENTRY_TRAMPOLINES`); 1..5 the rewriter's
//! answer (`Answer::decode`; `Fixed` returns the object's second half); 5
//! the number of agents (1 + n % 4); 6..8 the table `OnLoad` gets (kind: as
//! ROCr makes it, a size of 8 * n bytes, or slot n NULL; then n); 8..24 four
//! agents of four bytes (ISA name choice, revision kind, revision); 24..64 ten
//! operations of four bytes (create a memory or file reader over a variant of
//! the object, load, destroy, create-load-destroy, load an unknown reader).
//! Seeds: each line of `seeds/tool.controls` in front of clang-22 objects.
//!
//! Checked for every call the application makes: it gets the runtime's own
//! status (what the fake runtime returns for the caller's reader); a load
//! loads either the caller's own bytes (the same pointer for a memory reader)
//! or exactly the rewriter's output, and the latter exactly when the README's
//! decision table (restated here, independently of the tool's `policy`), the
//! README's rule for recorded readers and the rewriter's answer say so, with
//! the rewriter asked for that ISA pair; a file reader stays a file reader unless
//! a rewrite is possible for it. At the end: no reader of the fake runtime is
//! left (the tool's temporary readers included) and `OnUnload` restores every
//! slot. `OnLoad` accepts the table exactly when its size covers every slot the
//! tool reads or writes and none of them is NULL, and leaves a refused table
//! unchanged (the application then talks to the runtime alone).
#![no_main]

use std::fs::File;
use std::io::{Seek, SeekFrom, Write};
use std::os::fd::{AsRawFd, FromRawFd};

use hotswap_code_object::isa_name::processor_of;
use hotswap_fuzz::{install_rewriter, is_amdgpu_elf, rewriter_calls, Answer, Control};
use hsa_hotswap::internals::code_object::{self, isa};
use hsa_hotswap::internals::hsa::api::{hsa_code_object_reader_t, hsa_executable_t};
use hsa_hotswap::internals::hsa::table::{ApiTableVersion, CoreApiTable};
use hsa_hotswap::internals::{config::LoadConfig, tool};
use hsa_hotswap::testing::{fake_slots, FakeAgent, FakeRuntime, Load};
use libfuzzer_sys::fuzz_target;

const CONTROL: usize = 64;
const SUCCESS: u32 = 0;
/// `HSA_STATUS_ERROR_INVALID_ARGUMENT`: the fake's answer for an empty
/// memory reader.
const INVALID_ARGUMENT: u32 = 0x1001;
/// `HSA_STATUS_ERROR_INVALID_CODE_OBJECT`: the fake's answer for an empty file.
const INVALID_CODE_OBJECT: u32 = 0x1010;
/// `HSA_STATUS_ERROR_INVALID_CODE_OBJECT_READER`: the fake's answer for an
/// unknown reader handle (tests/common/rocr_rules.txt).
const INVALID_CODE_OBJECT_READER: u32 = 0x1021;
/// COMGR's pseudo-features for code built for B0, and for the A0 stepping.
const B0_FEATURE: &str = ":gfx1250-b0-specific+";
const A0_FEATURE: &str = ":gfx1250-b0-specific-";
/// A handle no agent has.
const UNKNOWN_AGENT: u64 = 0xdead;

/// The agents' first ISA names (index `AGENT_ISAS.len()`: a CPU).
const AGENT_ISAS: &[&str] = &[
    "amdgcn-amd-amdhsa--gfx1250",
    "amdgcn-amd-amdhsa--gfx1250-strict",
    "amdgcn-amd-amdhsa--gfx1250:sramecc+",
    "amdgcn-amd-amdhsa--gfx1251",
    "amdgcn-amd-amdhsa--gfx12-5-generic",
    "amdgcn-amd-amdhsa--gfx942:sramecc+:xnack-",
    "amdgcn-amd-amdhsa--gfx1200",
    "amdgcn-amd-amdhsa--gfx12500",
    "gfx1250",
    "",
    "amdgcn-amd-amdhsa--gfx1250:gfx1250-b0-specific-",
    "amdgcn-amd-amdhsa--gfx90a:xnack+",
];

/// `e_flags` a variant of the object may get: gfx1250, gfx1251,
/// gfx12-5-generic, gfx1250-strict, gfx942 (sramecc+ xnack-).
const FLAGS: [u32; 5] = [0x549, 0x55a, 0x100_005b, 0x0eb, 0xe4c];

/// One reader the application created.
struct Reader {
    handle: hsa_code_object_reader_t,
    /// The caller's bytes (a memory reader's live here until the end).
    bytes: Box<[u8]>,
    /// The file behind a file reader.
    file: Option<File>,
}

/// The harness's model of the run: the README's decision table, restated
/// here (not the tool's `policy` module), and what the application knows.
struct Model {
    agents: Vec<FakeAgent>,
    opt_in: bool,
    answer: Option<Answer>,
    /// `OnLoad` accepted the table (else the application talks to the
    /// runtime alone).
    loaded: bool,
}

/// A gfx12.5 code object's processor: `gfx12-5-generic` or `gfx125` and
/// digits (`gfx1250-strict` code is A0 code: never rewritten).
fn gfx12_5_code(processor: &str) -> bool {
    processor == "gfx12-5-generic"
        || processor
            .strip_prefix("gfx125")
            .is_some_and(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()))
}

/// `isa` with COMGR's stepping pseudo-feature when its processor is gfx1250
/// and it has none yet.
fn stepped(isa: &str, feature: &str) -> String {
    if processor_of(isa) == "gfx1250" && !isa.contains("gfx1250-b0-specific") {
        format!("{isa}{feature}")
    } else {
        isa.to_owned()
    }
}

impl Model {
    /// The GPU agent behind `handle` (an unknown handle or a CPU: none).
    fn gpu(&self, handle: u64) -> Option<&FakeAgent> {
        self.agents.iter().find(|a| a.handle == handle && a.gpu)
    }

    /// An A0 agent: gfx1250 (or gfx1250-strict) with a known revision 0.
    fn a0(agent: &FakeAgent) -> bool {
        ["gfx1250", "gfx1250-strict"].contains(&processor_of(&agent.isa))
            && agent.revision == Some(0)
    }

    /// Any gfx12.5 agent (gfx1250-strict included).
    fn gfx12_5_agent(agent: &FakeAgent) -> bool {
        let processor = processor_of(&agent.isa);
        gfx12_5_code(processor) || processor == "gfx1250-strict"
    }

    /// Some code object could be rewritten for this agent.
    fn candidate(&self, handle: u64) -> bool {
        self.gpu(handle)
            .is_some_and(|a| Self::a0(a) || (self.opt_in && Self::gfx12_5_agent(a)))
    }

    /// Some rewrite is possible in this runtime.
    fn possible(&self) -> bool {
        self.loaded && self.answer.is_some() && self.agents.iter().any(|a| self.candidate(a.handle))
    }

    /// The tool records the reader (and turns a file reader into a memory
    /// reader over the file's bytes): a rewrite is possible and the header
    /// (a file's first 64 bytes) names gfx1250, or gfx12.5 with the opt-in.
    fn recorded(&self, bytes: &[u8], file: bool) -> bool {
        let processor = if file {
            bytes
                .get(..64)
                .ok_or(())
                .and_then(|header| isa::processor_of_prefix(header, u64::MAX).map_err(|_| ()))
                .map(str::to_owned)
        } else {
            code_object::CodeObject::parse(bytes)
                .and_then(|o| code_object::processor(&o))
                .map(|p| p.into_owned())
                .map_err(|_| ())
        };
        self.possible()
            && processor.is_ok_and(|p| p == "gfx1250" || (self.opt_in && gfx12_5_code(&p)))
    }

    /// The README's decision table: the ISA pair for a `source` code object
    /// on `agent`, or `None` to load the original.
    fn pair(&self, agent: &FakeAgent, source: &str) -> Option<(String, String)> {
        let source_gfx = processor_of(source);
        if Self::a0(agent) && source_gfx == "gfx1250" {
            let target = if processor_of(&agent.isa) == "gfx1250" {
                &agent.isa
            } else {
                "amdgcn-amd-amdhsa--gfx1250"
            };
            return Some((stepped(source, B0_FEATURE), stepped(target, A0_FEATURE)));
        }
        (self.opt_in && Self::gfx12_5_agent(agent) && gfx12_5_code(source_gfx)).then(|| {
            let source = stepped(source, B0_FEATURE);
            (source.clone(), source)
        })
    }

    /// The rewritten bytes a load of `reader` on `agent` must load, and the
    /// ISA pair the rewriter must have been asked for; `None`: the caller's.
    fn rewrite(&self, reader: &Reader, agent: u64) -> Option<(Vec<u8>, (String, String))> {
        if !self.recorded(&reader.bytes, reader.file.is_some()) || !self.candidate(agent) {
            return None;
        }
        let object = code_object::CodeObject::parse(&reader.bytes).ok()?;
        let source = code_object::isa_name(&object).ok()?;
        let pair = self.pair(self.gpu(agent)?, &source)?;
        let output = self.answer.as_ref()?.output_for(&reader.bytes).ok()?;
        (is_amdgpu_elf(&output) && output[..] != reader.bytes[..]).then_some((output, pair))
    }
}

/// What the fake runtime answers for the caller's own bytes.
fn own_status(bytes: &[u8], executable: hsa_executable_t) -> u32 {
    if executable.handle == FakeRuntime::failing_executable().handle {
        FakeRuntime::invalid_executable()
    } else if !bytes.starts_with(b"\x7fELF") {
        FakeRuntime::invalid_code_object()
    } else {
        SUCCESS
    }
}

/// A variant of the object: all of it, a prefix, or a copy with another
/// processor in `e_flags`. Takes two bytes.
fn variant(control: &mut Control<'_>, object: &[u8]) -> Box<[u8]> {
    let (kind, arg) = (control.pick(3), control.byte());
    let mut bytes = object.to_vec();
    match kind {
        0 => {}
        1 => bytes.truncate(usize::from(arg) * 64 % (object.len() + 1)),
        _ => {
            if let Some(flags) = bytes.get_mut(48..52) {
                flags.copy_from_slice(&FLAGS[usize::from(arg) % FLAGS.len()].to_le_bytes());
            }
        }
    }
    bytes.into_boxed_slice()
}

fn memfd_with(bytes: &[u8], offset: u8) -> File {
    // SAFETY: a NUL-terminated name and valid flags; the result is checked.
    let fd = unsafe { libc::memfd_create(c"hotswap-fuzz".as_ptr(), libc::MFD_CLOEXEC) };
    assert!(fd >= 0, "memfd_create: {}", std::io::Error::last_os_error());
    // SAFETY: a new descriptor owned by nobody else.
    let mut file = unsafe { File::from_raw_fd(fd) };
    file.write_all(bytes).unwrap();
    file.seek(SeekFrom::Start(u64::from(offset))).unwrap();
    file
}

struct Run<'a> {
    runtime: &'a FakeRuntime,
    model: &'a Model,
    readers: Vec<Reader>,
}

impl Run<'_> {
    fn create(&mut self, bytes: Box<[u8]>, offset: Option<u8>) -> Option<usize> {
        let (result, file, expected) = match offset {
            Some(offset) => {
                let file = memfd_with(&bytes, offset);
                (
                    self.runtime.create_from_file(file.as_raw_fd()),
                    Some(file),
                    if bytes.is_empty() {
                        INVALID_CODE_OBJECT
                    } else {
                        SUCCESS
                    },
                )
            }
            None => {
                let expected = if bytes.is_empty() {
                    INVALID_ARGUMENT
                } else {
                    SUCCESS
                };
                (self.runtime.create_from_memory(&bytes), None, expected)
            }
        };
        assert_eq!(
            result.err().unwrap_or(SUCCESS),
            expected,
            "create: the runtime's own status"
        );
        if let Some(mut file) = file.as_ref() {
            // Where the runtime's own create-from-file leaves it: at the end.
            let at = file.stream_position().unwrap();
            assert_eq!(
                at,
                bytes.len() as u64,
                "the caller's file offset, as without the tool"
            );
        }
        let handle = result.ok()?;
        self.readers.push(Reader {
            handle,
            bytes,
            file,
        });
        Some(self.readers.len() - 1)
    }

    fn load(&self, index: usize, agent: u64, executable: hsa_executable_t) {
        let reader = &self.readers[index];
        let calls_before = rewriter_calls();
        let (status, record) = self.runtime.load(executable, agent, reader.handle);
        let record: Load = record.expect("the fake runtime saw the load");
        let what = format!(
            "load of a {} byte {} reader on {agent:#x}",
            reader.bytes.len(),
            if reader.file.is_some() {
                "file"
            } else {
                "memory"
            }
        );
        assert_eq!(
            status,
            own_status(&reader.bytes, executable),
            "{what}: the runtime's own status"
        );
        assert_eq!(record.status, status, "{what}");
        assert_eq!(record.agent, agent, "{what}");
        // SAFETY: the fake runtime's record of the bytes it just loaded: the
        // caller's, the runtime's copy of a live file reader, the tool's file
        // bytes of a live reader, or a rewritten object kept for the process.
        let loaded =
            unsafe { std::slice::from_raw_parts(record.bytes.0 as *const u8, record.bytes.1) };
        let converted = reader.file.is_some() && self.model.recorded(&reader.bytes, true);
        assert_eq!(
            record.from_file,
            reader.file.is_some() && !converted,
            "{what}: file provenance"
        );
        let expected = if executable.handle == 1 {
            self.model.rewrite(reader, agent)
        } else {
            None
        };
        match expected {
            Some((output, pair)) => {
                assert_eq!(loaded, &output[..], "{what}: the rewriter's output");
                assert_ne!(record.bytes.0, reader.bytes.as_ptr() as usize);
                let calls = rewriter_calls();
                assert!(
                    calls.contains(&pair),
                    "{what}: rewritten, but the rewriter was never asked for {pair:?}: {calls:?}"
                );
            }
            None => {
                assert_eq!(loaded, &reader.bytes[..], "{what}: the caller's own bytes");
                if reader.file.is_none() {
                    assert_eq!(
                        record.bytes,
                        (reader.bytes.as_ptr() as usize, reader.bytes.len()),
                        "{what}: the caller's own reader"
                    );
                }
            }
        }
        let new_calls = rewriter_calls().len() - calls_before.len();
        assert!(
            new_calls <= 1,
            "{what}: {new_calls} rewriter calls for one load"
        );
    }

    fn destroy(&mut self, index: usize) {
        let reader = self.readers.swap_remove(index);
        assert_eq!(self.runtime.destroy(reader.handle), SUCCESS, "destroy");
    }
}

fuzz_target!(init: hotswap_fuzz::init(), |data: &[u8]| {
    let (mut control, object) = Control::split(data, CONTROL);
    let opt_in = control.byte() & 1 == 1;
    let answer = Answer::decode(&mut control, object.get(object.len() / 2..).unwrap_or_default());
    let agent_count = 1 + control.pick(4);
    control.seek(8);
    let agents: Vec<FakeAgent> = (0..4)
        .map(|i| {
            let handle = 0x5000 + 0x100 * i as u64;
            let (isa, kind, value) = (control.pick(AGENT_ISAS.len() + 1), control.pick(4), control.u16());
            let revision = [Some(0), Some(1), None, Some(u32::from(value))][kind];
            match AGENT_ISAS.get(isa) {
                Some(isa) => FakeAgent::gpu(handle, isa, revision),
                None => FakeAgent::cpu(handle),
            }
        })
        .take(agent_count)
        .collect();
    // The table OnLoad gets: as ROCr makes it, or with a size that may not
    // cover every slot the tool needs, or one of them NULL.
    control.seek(6);
    let (edit, arg) = (control.pick(4), control.byte());
    let fakes = fake_slots();
    let index = |offset: usize| (offset - std::mem::size_of::<ApiTableVersion>()) / 8;
    let mut size = std::mem::size_of::<CoreApiTable>() as u32;
    let mut nulled = None;
    match edit {
        2 => size = u32::from(arg) * 8,
        3 => nulled = Some(fakes[usize::from(arg) % fakes.len()].0),
        _ => {}
    }
    let accepted = fakes
        .iter()
        .all(|(slot, _)| slot.end() as u32 <= size && Some(*slot) != nulled);

    let config = LoadConfig {
        entry_trampolines: opt_in,
        ..LoadConfig::default()
    };
    let runtime = FakeRuntime::start_with(agents.clone(), Some(&config), |core| {
        core.version.minor_id = size;
        if let Some(slot) = nulled {
            core.slots[index(slot.offset)] = 0;
        }
    });
    let table = |runtime: &FakeRuntime| -> Vec<usize> {
        fakes.iter().map(|(slot, _)| runtime.slot(*slot)).collect()
    };
    let edited: Vec<usize> = fakes
        .iter()
        .map(|(slot, value)| if Some(*slot) == nulled { 0 } else { *value })
        .collect();
    assert_eq!(runtime.on_load, accepted, "OnLoad on a table of {size} bytes, {nulled:?} NULL");
    if !accepted {
        assert_eq!(table(&runtime), edited, "a refused table is left unchanged");
    }
    let model = Model {
        agents,
        opt_in,
        answer: answer.clone(),
        loaded: accepted,
    };
    install_rewriter(answer);
    let mut run = Run { runtime: &runtime, model: &model, readers: Vec::new() };
    let agent_handle = |choice: usize| model.agents.get(choice).map_or(UNKNOWN_AGENT, |a| a.handle);
    let good = hsa_executable_t { handle: 1 };

    control.seek(24);
    // An application never calls a NULL slot: with one, only OnLoad is checked.
    let operations = if nulled.is_some() { 0 } else { 10 };
    for _ in 0..operations {
        let op = control.pick(6);
        match op {
            0 | 1 => {
                let bytes = variant(&mut control, object);
                let offset = control.byte();
                run.create(bytes, (op == 1).then_some(offset));
            }
            2 | 3 if run.readers.is_empty() => {
                control.u16();
                control.byte();
            }
            2 => {
                let index = control.pick(run.readers.len());
                let agent = agent_handle(control.pick(model.agents.len() + 1));
                let executable = if control.byte() & 1 == 1 { FakeRuntime::failing_executable() } else { good };
                run.load(index, agent, executable);
            }
            3 => {
                let index = control.pick(run.readers.len());
                control.u16();
                run.destroy(index);
            }
            4 => {
                let bytes = variant(&mut control, object);
                let agent = agent_handle(control.pick(model.agents.len() + 1));
                if let Some(index) = run.create(bytes, None) {
                    run.load(index, agent, good);
                    run.destroy(index);
                }
            }
            _ => {
                let handle = hsa_code_object_reader_t { handle: 0x7fff_0000 + u64::from(control.byte()) };
                let agent = agent_handle(control.pick(model.agents.len() + 1));
                control.byte();
                let (status, record) = runtime.load(good, agent, handle);
                assert_eq!((status, record), (INVALID_CODE_OBJECT_READER, None), "an unknown reader: the runtime's answer");
            }
        }
    }
    while !run.readers.is_empty() {
        run.destroy(run.readers.len() - 1);
    }
    assert_eq!(runtime.live_readers(), 0, "a reader was left in the runtime");
    tool::OnUnload();
    assert_eq!(table(&runtime), edited, "OnUnload restores every slot");
    drop(runtime);
});
