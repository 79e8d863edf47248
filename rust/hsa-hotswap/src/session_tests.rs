//! The session and the hooks against a fake ROCr ([`crate::testing`]): the
//! decision table, fallbacks with rewriter call counts, file readers, the
//! table restored and left, the costs that must not grow with size, and a
//! panic injected at every decision point.

use std::io::{Seek, SeekFrom, Write};
use std::os::fd::AsRawFd;

use crate::config::LoadConfig;
use crate::fault;
use crate::hsa::api::{hsa_executable_t, HSA_STATUS_SUCCESS};
use crate::hsa::table::{
    LOAD_AGENT_CODE_OBJECT, READER_CREATE_FROM_FILE, READER_CREATE_FROM_MEMORY, READER_DESTROY,
};
use crate::rewriter::RetargetError;
use crate::stats::STATS;
use crate::testing::{code_object_with_flags, FakeAgent, FakeBackend, FakeMode, FakeRuntime};

const FAILING_EXECUTABLE: hsa_executable_t = hsa_executable_t { handle: 0xBAD };
const HSA_STATUS_ERROR_INVALID_EXECUTABLE: u32 = 0x1011;

const A0: u64 = 0x5100;
const STRICT_A0: u64 = 0x5180;
const B0: u64 = 0x5200;
const REV_UNKNOWN: u64 = 0x5300;
const GFX1251: u64 = 0x5400;
const GENERIC: u64 = 0x5500;
const GFX942: u64 = 0x5600;
const CPU: u64 = 0x5700;

fn all_agents() -> Vec<FakeAgent> {
    vec![
        FakeAgent::gpu(A0, "amdgcn-amd-amdhsa--gfx1250", Some(0)),
        FakeAgent::gpu(STRICT_A0, "amdgcn-amd-amdhsa--gfx1250-strict", Some(0)),
        FakeAgent::gpu(B0, "amdgcn-amd-amdhsa--gfx1250", Some(1)),
        FakeAgent::gpu(REV_UNKNOWN, "amdgcn-amd-amdhsa--gfx1250", None),
        FakeAgent::gpu(GFX1251, "amdgcn-amd-amdhsa--gfx1251", Some(0)),
        FakeAgent::gpu(GENERIC, "amdgcn-amd-amdhsa--gfx12-5-generic", Some(0)),
        FakeAgent::gpu(GFX942, "amdgcn-amd-amdhsa--gfx942:sramecc+:xnack-", Some(0)),
        FakeAgent::cpu(CPU),
    ]
}

/// (name, code object): the probe object with each processor's `e_flags`.
fn objects() -> Vec<(&'static str, Vec<u8>)> {
    vec![
        ("gfx1250", code_object_with_flags(0x549)),
        ("gfx1251", code_object_with_flags(0x55a)),
        ("gfx12-5-generic", code_object_with_flags(0x100_005b)),
        ("gfx1250-strict", code_object_with_flags(0x0eb)),
        ("gfx942", code_object_with_flags(0xe4c)),
    ]
}

fn opt_in(on: bool) -> LoadConfig {
    LoadConfig {
        entry_trampolines: on,
        ..LoadConfig::default()
    }
}

fn is_a0(agent: u64) -> bool {
    agent == A0 || agent == STRICT_A0
}

#[test]
fn the_fakes_constants_are_the_tests() {
    assert_eq!(
        FakeRuntime::failing_executable().handle,
        FAILING_EXECUTABLE.handle
    );
    assert_eq!(
        FakeRuntime::invalid_executable(),
        HSA_STATUS_ERROR_INVALID_EXECUTABLE
    );
    assert_eq!(FakeBackend::marker(), b"HOTSWAP");
}

#[test]
fn decision_table_through_the_hooks() {
    for on in [false, true] {
        let runtime = FakeRuntime::start_configured(all_agents(), &opt_in(on));
        assert!(runtime.on_load);
        let backend = FakeBackend::install(FakeMode::Change);
        for agent in all_agents() {
            for (name, bytes) in objects() {
                let gfx12_5_agent = agent.handle != GFX942 && agent.handle != CPU;
                let gfx12_5_object = name != "gfx942" && name != "gfx1250-strict";
                let expect = (is_a0(agent.handle) && name == "gfx1250")
                    || (on && gfx12_5_agent && gfx12_5_object);
                let calls = backend.calls();
                let (status, load) = runtime.load_memory(&bytes, agent.handle);
                let load = load.unwrap();
                assert_eq!(status, HSA_STATUS_SUCCESS, "{name} on {:#x}", agent.handle);
                assert_eq!(
                    load.marked, expect,
                    "{name} on {:#x} (opt-in {on})",
                    agent.handle
                );
                assert_eq!(
                    load.bytes.0 == bytes.as_ptr() as usize,
                    !expect,
                    "the caller's own bytes unless rewritten"
                );
                if backend.calls() > calls && is_a0(agent.handle) && name == "gfx1250" {
                    assert_eq!(
                        backend.last_pair(),
                        (
                            "amdgcn-amd-amdhsa--gfx1250:gfx1250-b0-specific+".to_owned(),
                            "amdgcn-amd-amdhsa--gfx1250:gfx1250-b0-specific-".to_owned()
                        ),
                        "one pair for both kinds of A0 agent"
                    );
                }
            }
        }
        // Content-keyed: one call per (object, ISA pair), whatever the agents.
        let expected_calls = if on { 1 + 3 } else { 1 };
        assert_eq!(backend.calls(), expected_calls, "opt-in {on}");
        assert_eq!(runtime.live_readers(), 0);
    }
}

#[test]
fn fallbacks_load_the_original_and_count_rewriter_calls() {
    let gfx1250 = code_object_with_flags(0x549);
    let cases = [
        (FakeMode::Unchanged, 1),
        (
            FakeMode::Fail(RetargetError::Refused("needs growth".into())),
            1,
        ),
        (FakeMode::Fail(RetargetError::Unsupported), 1),
        (FakeMode::Fail(RetargetError::Failed), 3),
        (FakeMode::Fail(RetargetError::OutOfMemory), 3),
        (FakeMode::Garbage, 3),
    ];
    for (mode, calls) in cases {
        let runtime = FakeRuntime::start_configured(all_agents(), &opt_in(false));
        let backend = FakeBackend::install(mode.clone());
        for _ in 0..3 {
            let (status, load) = runtime.load_memory(&gfx1250, A0);
            let load = load.unwrap();
            assert_eq!(status, HSA_STATUS_SUCCESS, "{mode:?}");
            assert!(
                !load.marked && load.bytes.0 == gfx1250.as_ptr() as usize,
                "{mode:?}"
            );
        }
        // Deterministic answers are asked once; failures that may be
        // environmental are asked again on the next load.
        assert_eq!(backend.calls(), calls, "{mode:?}");
    }
    // No rewriter at all: the tool leaves the table on the first call.
    let runtime = FakeRuntime::start_configured(all_agents(), &opt_in(false));
    FakeBackend::install_none();
    let (status, load) = runtime.load_memory(&gfx1250, A0);
    assert_eq!(status, HSA_STATUS_SUCCESS);
    assert!(!load.unwrap().marked);
    assert_eq!(
        runtime.slot(LOAD_AGENT_CODE_OBJECT),
        FakeRuntime::fake(LOAD_AGENT_CODE_OBJECT)
    );
}

#[test]
fn the_runtimes_own_status_is_returned() {
    let runtime = FakeRuntime::start_configured(all_agents(), &opt_in(false));
    let backend = FakeBackend::install(FakeMode::Change);
    for agent in [A0, STRICT_A0, B0, GFX942] {
        for (name, bytes) in objects() {
            let (status, load) = runtime.load_memory_into(FAILING_EXECUTABLE, &bytes, agent);
            assert_eq!(
                status, HSA_STATUS_ERROR_INVALID_EXECUTABLE,
                "{name} on {agent:#x}"
            );
            // The rewritten object failed too, then the caller's own was loaded
            // (and its status returned).
            assert_eq!(load.unwrap().bytes.0, bytes.as_ptr() as usize);
        }
    }
    // One rewrite per candidate agent: no executable loaded the rewritten
    // object, so it was freed with its reader, and the cache (which holds no
    // rewritten object alive) rewrote it for the next reader.
    assert_eq!(backend.calls(), 2);
    // A code object ROCr rejects: its status, whatever the tool thought.
    let (status, _) = runtime.load_memory(&[0u8; 100], A0);
    assert_eq!(status, FakeRuntime::invalid_code_object());
}

fn temp_file(bytes: &[u8], offset: u64) -> std::fs::File {
    let path = std::env::temp_dir().join(format!(
        "hotswap-session-{}-{}",
        std::process::id(),
        bytes.len() ^ bytes[48] as usize
    ));
    let mut file = std::fs::File::create(&path).unwrap();
    file.write_all(bytes).unwrap();
    drop(file);
    let mut file = std::fs::File::open(&path).unwrap();
    std::fs::remove_file(&path).unwrap();
    file.seek(SeekFrom::Start(offset)).unwrap();
    file
}

#[test]
fn file_readers_are_read_only_when_they_could_be_rewritten() {
    for candidates in [true, false] {
        let agents = if candidates {
            all_agents()
        } else {
            vec![
                FakeAgent::gpu(B0, "amdgcn-amd-amdhsa--gfx1250", Some(1)),
                FakeAgent::gpu(GFX942, "amdgcn-amd-amdhsa--gfx942", Some(0)),
            ]
        };
        let runtime = FakeRuntime::start_configured(agents, &opt_in(false));
        FakeBackend::install(FakeMode::Change);
        let copied_before = STATS.copied_bytes.load(std::sync::atomic::Ordering::SeqCst);
        for (name, bytes) in objects() {
            let mut file = temp_file(&bytes, 123);
            let creates = runtime.creates_from_file();
            let reader = runtime.create_from_file(file.as_raw_fd()).unwrap();
            let converted = candidates && name == "gfx1250";
            assert_eq!(
                runtime.creates_from_file() - creates,
                usize::from(!converted),
                "{name}: the runtime's own create-from-file unless converted"
            );
            let agent = if candidates { A0 } else { B0 };
            let (status, load) = runtime.load(hsa_executable_t { handle: 1 }, agent, reader);
            let load = load.unwrap();
            assert_eq!(status, HSA_STATUS_SUCCESS);
            assert_eq!(load.from_file, !converted, "{name}: file provenance kept");
            assert_eq!(load.marked, converted, "{name}");
            assert_eq!(runtime.destroy(reader), HSA_STATUS_SUCCESS);
            // Where ROCr's own create-from-file leaves it: the end of the file.
            assert_eq!(
                file.stream_position().unwrap(),
                bytes.len() as u64,
                "{name}: offset as ROCr leaves it"
            );
        }
        let copied = STATS.copied_bytes.load(std::sync::atomic::Ordering::SeqCst) - copied_before;
        let gfx1250_len = objects()[0].1.len() as u64;
        assert_eq!(copied, if candidates { gfx1250_len } else { 0 });
    }
}

#[test]
fn a_processor_the_table_lacks_has_one_answer_for_memory_and_file_readers() {
    let runtime = FakeRuntime::start_configured(all_agents(), &opt_in(true));
    FakeBackend::install(FakeMode::Change);
    let mut unknown = objects()[0].1.clone();
    unknown[48] = 0x27; // EF_AMDGPU_MACH: reserved, and no COMGR here names it
    let (status, load) = runtime.load_memory(&unknown, A0);
    assert_eq!(status, HSA_STATUS_SUCCESS);
    assert!(!load.unwrap().marked, "memory reader: loaded as it is");
    let file = temp_file(&unknown, 0);
    let creates = runtime.creates_from_file();
    let reader = runtime.create_from_file(file.as_raw_fd()).unwrap();
    assert_eq!(
        runtime.creates_from_file() - creates,
        1,
        "file reader: the runtime's own create-from-file, as for the memory reader"
    );
    let (status, load) = runtime.load(hsa_executable_t { handle: 1 }, A0, reader);
    assert_eq!(status, HSA_STATUS_SUCCESS);
    let load = load.unwrap();
    assert!(load.from_file && !load.marked);
    assert_eq!(runtime.destroy(reader), HSA_STATUS_SUCCESS);
}

#[test]
fn the_table_is_restored_and_left() {
    let fakes = [
        READER_CREATE_FROM_MEMORY,
        READER_CREATE_FROM_FILE,
        READER_DESTROY,
        LOAD_AGENT_CODE_OBJECT,
    ];
    // Patched while a rewrite is possible; restored by OnUnload.
    let runtime = FakeRuntime::start_configured(all_agents(), &opt_in(false));
    FakeBackend::install(FakeMode::Change);
    for slot in fakes {
        assert_ne!(runtime.slot(slot), FakeRuntime::fake(slot), "{}", slot.name);
    }
    let _ = runtime.load_memory(&code_object_with_flags(0x549), A0);
    for slot in fakes {
        assert_ne!(
            runtime.slot(slot),
            FakeRuntime::fake(slot),
            "stays: {}",
            slot.name
        );
    }
    crate::tool::OnUnload();
    for slot in fakes {
        assert_eq!(
            runtime.slot(slot),
            FakeRuntime::fake(slot),
            "restored: {}",
            slot.name
        );
    }
    drop(runtime);
    // No candidate agent: the first call makes the tool leave the table.
    let runtime = FakeRuntime::start_configured(
        vec![FakeAgent::gpu(GFX942, "amdgcn-amd-amdhsa--gfx942", Some(0))],
        &opt_in(false),
    );
    let backend = FakeBackend::install(FakeMode::Change);
    let (status, _) = runtime.load_memory(&code_object_with_flags(0x549), GFX942);
    assert_eq!(status, HSA_STATUS_SUCCESS);
    for slot in fakes {
        assert_eq!(
            runtime.slot(slot),
            FakeRuntime::fake(slot),
            "left: {}",
            slot.name
        );
    }
    assert_eq!(backend.calls(), 0);
}

#[test]
fn a_refused_table_is_unchanged() {
    let runtime = FakeRuntime::start_with(all_agents(), Some(&opt_in(false)), |core| {
        core.version.minor_id = LOAD_AGENT_CODE_OBJECT.offset as u32;
    });
    assert!(!runtime.on_load);
    for (slot, value) in crate::testing::fake_slots() {
        if slot.end() <= LOAD_AGENT_CODE_OBJECT.offset {
            assert_eq!(runtime.slot(slot), value, "{}", slot.name);
        }
    }
}

#[test]
fn switched_off_patches_nothing() {
    let config = LoadConfig {
        disable: true,
        ..LoadConfig::default()
    };
    let runtime = FakeRuntime::start_configured(all_agents(), &config);
    assert!(runtime.on_load);
    for (slot, value) in crate::testing::fake_slots() {
        assert_eq!(runtime.slot(slot), value, "{}", slot.name);
    }
}

#[test]
fn repeated_loads_of_a_rewritten_reader_read_none_of_its_bytes() {
    let runtime = FakeRuntime::start_configured(all_agents(), &opt_in(false));
    let backend = FakeBackend::install(FakeMode::Change);
    let gfx1250 = code_object_with_flags(0x549);
    let reader = runtime.create_from_memory(&gfx1250).unwrap();
    // Passes on this thread: other tests hash in parallel (the process's
    // counter, STATS.hashed_bytes, sees theirs too).
    let hashed = crate::digest::testing::hashed_here;
    let (_, first) = runtime.load(hsa_executable_t { handle: 1 }, A0, reader);
    assert!(first.unwrap().marked);
    let after_first = hashed();
    for agent in [A0, STRICT_A0, A0, B0, GFX942] {
        let (status, load) = runtime.load(hsa_executable_t { handle: 1 }, agent, reader);
        assert_eq!(status, HSA_STATUS_SUCCESS);
        assert_eq!(load.unwrap().marked, is_a0(agent));
    }
    assert_eq!(
        hashed(),
        after_first,
        "no pass over the bytes after the first rewrite"
    );
    assert_eq!(backend.calls(), 1);
    assert_eq!(runtime.destroy(reader), HSA_STATUS_SUCCESS);
    // Identical bytes behind another reader: hashed once, not rewritten again.
    let copy = gfx1250.clone();
    let (_, load) = runtime.load_memory(&copy, A0);
    assert!(load.unwrap().marked);
    assert_eq!(hashed() - after_first, copy.len() as u64);
    assert_eq!(backend.calls(), 1);
}

/// A panic at each decision point: the application's own reader is loaded
/// and the runtime's own status returned, for memory and file readers, for a
/// load that succeeds and one that fails; afterwards the tool works again.
#[test]
fn a_panic_at_every_decision_point_falls_back() {
    let gfx1250 = code_object_with_flags(0x549);
    for &point in fault::POINTS {
        let runtime = FakeRuntime::start_configured(all_agents(), &opt_in(false));
        FakeBackend::install(FakeMode::Change);
        let mut fired = false;
        for executable in [hsa_executable_t { handle: 1 }, FAILING_EXECUTABLE] {
            let expected = if executable.handle == 1 {
                HSA_STATUS_SUCCESS
            } else {
                HSA_STATUS_ERROR_INVALID_EXECUTABLE
            };
            // Memory reader.
            fault::arm(point);
            let (status, load) = runtime.load_memory_into(executable, &gfx1250, A0);
            assert_eq!(status, expected, "{point}: memory reader");
            let load = load.unwrap();
            let after_load = ["load.keep", "load.pin", "reader_destroy.forget"];
            if fault::fired(point) && !after_load.contains(&point) {
                assert!(!load.marked, "{point}: the caller's own bytes");
            }
            // File reader.
            fired |= fault::fired(point);
            fault::disarm_all();
            fault::arm(point);
            let file = temp_file(&gfx1250, 7);
            let reader = runtime.create_from_file(file.as_raw_fd()).unwrap();
            for agent in [A0, B0] {
                let (status, _) = runtime.load(executable, agent, reader);
                assert_eq!(status, expected, "{point}: file reader on {agent:#x}");
            }
            assert_eq!(runtime.destroy(reader), HSA_STATUS_SUCCESS);
            assert_eq!(
                runtime.destroy_executable(executable),
                if executable.handle == 1 {
                    HSA_STATUS_SUCCESS
                } else {
                    HSA_STATUS_ERROR_INVALID_EXECUTABLE
                },
                "{point}: executable destroy"
            );
            fired |= fault::fired(point);
            fault::disarm_all();
        }
        assert!(fired, "{point} was never reached");
        // The tool still works after the panic.
        let copy = gfx1250.clone();
        let (status, load) = runtime.load_memory(&copy, A0);
        assert_eq!(status, HSA_STATUS_SUCCESS, "{point}: after");
        assert!(
            load.unwrap().marked,
            "{point}: rewriting again after the panic"
        );
        assert_eq!(runtime.live_readers(), 0, "{point}: readers leaked");
    }
}

#[test]
fn the_native_backend_through_the_tool() {
    use crate::rewriter::native::test_objects::{
        probe_with, CLUSTER_LOAD, DS_LOAD_2ADDR, FP8_CLAMP,
    };
    use crate::rewriter::native::Native;
    use hotswap_code_object::rewrite::{rewrite_b0_to_a0, Options};

    let runtime = FakeRuntime::start_configured(all_agents(), &opt_in(false));
    let native: &'static Native = Box::leak(Box::new(Native::new(Options::default())));
    crate::rewriter::testing_override::set(Some(native));
    let fixable = probe_with(&CLUSTER_LOAD);
    let expected = rewrite_b0_to_a0(&fixable, &Options::default())
        .unwrap()
        .bytes;
    assert_ne!(expected, fixable);
    for agent in [A0, STRICT_A0] {
        let (status, load) = runtime.load_memory(&fixable, agent);
        let load = load.unwrap();
        assert_eq!(status, HSA_STATUS_SUCCESS);
        assert_ne!(
            load.bytes.0,
            fixable.as_ptr() as usize,
            "rewritten on {agent:#x}"
        );
        let loaded = load.loaded();
        assert_eq!(loaded, expected.as_slice());
    }
    // Other agents get the caller's bytes.
    for agent in [B0, GFX942] {
        let (_, load) = runtime.load_memory(&fixable, agent);
        assert_eq!(load.unwrap().bytes.0, fixable.as_ptr() as usize);
    }
    // A DS two-address site: rewritten by moving code (the object grows).
    let ds2 = probe_with(&DS_LOAD_2ADDR);
    let expected = rewrite_b0_to_a0(&ds2, &Options::default()).unwrap().bytes;
    assert!(expected.len() > ds2.len());
    let (status, load) = runtime.load_memory(&ds2, A0);
    assert_eq!(status, HSA_STATUS_SUCCESS);
    let load = load.unwrap();
    assert_eq!(load.loaded(), expected.as_slice());
    // A site of a growth class the native rewriter does not fix: refused, the
    // original is loaded.
    let growth = probe_with(&FP8_CLAMP);
    for _ in 0..2 {
        let (status, load) = runtime.load_memory(&growth, A0);
        assert_eq!(status, HSA_STATUS_SUCCESS);
        assert_eq!(load.unwrap().bytes.0, growth.as_ptr() as usize);
    }
    // Nothing to fix: the original is loaded.
    let clean = code_object_with_flags(0x549);
    let (_, load) = runtime.load_memory(&clean, A0);
    assert_eq!(load.unwrap().bytes.0, clean.as_ptr() as usize);
}

fn released() -> (u64, u64) {
    use std::sync::atomic::Ordering::Relaxed;
    (
        STATS.retained_buffers.load(Relaxed),
        STATS.released_buffers.load(Relaxed),
    )
}

/// A rewritten object lives while its reader or an executable that loaded it
/// lives, and is freed when the last of them goes; a failed destroy keeps it;
/// what a runtime instance kept is freed by the next `OnLoad`.
#[test]
fn rewritten_bytes_live_while_a_reader_or_executable_holds_them() {
    let gfx1250 = code_object_with_flags(0x549);
    let runtime = FakeRuntime::start_configured(all_agents(), &opt_in(false));
    FakeBackend::install(FakeMode::Change);
    let executable = hsa_executable_t { handle: 0x42 };
    let (made, freed) = released();
    let reader = runtime.create_from_memory(&gfx1250).unwrap();
    let (status, load) = runtime.load(executable, A0, reader);
    let load = load.unwrap();
    assert!(status == HSA_STATUS_SUCCESS && load.marked);
    assert_eq!(released(), (made + 1, freed));
    let copy = load.loaded().to_vec();
    // The reader goes: the executable still holds the bytes.
    assert_eq!(runtime.destroy(reader), HSA_STATUS_SUCCESS);
    assert_eq!(released(), (made + 1, freed), "held by the executable");
    assert_eq!(load.loaded(), &copy[..]);
    // A destroy ROCr refuses changes nothing.
    assert_eq!(
        runtime.destroy_executable(FAILING_EXECUTABLE),
        HSA_STATUS_ERROR_INVALID_EXECUTABLE
    );
    assert_eq!(released(), (made + 1, freed));
    assert_eq!(runtime.destroy_executable(executable), HSA_STATUS_SUCCESS);
    assert_eq!(
        released(),
        (made + 1, freed + 1),
        "freed with its executable"
    );

    // The executable goes first: the reader still holds the bytes, and a second
    // load through it needs no rewrite.
    let reader = runtime.create_from_memory(&gfx1250).unwrap();
    let (_, first) = runtime.load(executable, A0, reader);
    assert!(first.unwrap().marked);
    assert_eq!(runtime.destroy_executable(executable), HSA_STATUS_SUCCESS);
    assert_eq!(released(), (made + 2, freed + 1), "held by the reader");
    let (_, again) = runtime.load(executable, A0, reader);
    assert!(again.unwrap().marked);
    assert_eq!(released(), (made + 2, freed + 1), "no new rewrite");
    assert_eq!(runtime.destroy(reader), HSA_STATUS_SUCCESS);
    assert_eq!(released(), (made + 2, freed + 1), "held by the executable");
    // hsa_shut_down with the executable alive: OnUnload frees nothing (ROCr
    // destroys its loader after it), the next OnLoad frees it.
    drop(runtime);
    assert_eq!(released(), (made + 2, freed + 1), "not freed by OnUnload");
    let runtime = FakeRuntime::start_configured(all_agents(), &opt_in(false));
    assert_eq!(
        released(),
        (made + 2, freed + 2),
        "freed by the next OnLoad"
    );

    // A file reader's bytes loaded unmodified (on B0) stay while the executable lives.
    FakeBackend::install(FakeMode::Change);
    let file = temp_file(&gfx1250, 0);
    let reader = runtime.create_from_file(file.as_raw_fd()).unwrap();
    let (status, load) = runtime.load(executable, B0, reader);
    let load = load.unwrap();
    assert!(status == HSA_STATUS_SUCCESS && !load.marked && !load.from_file);
    assert_eq!(runtime.destroy(reader), HSA_STATUS_SUCCESS);
    assert_eq!(load.loaded(), &gfx1250[..], "kept for the executable");
    assert_eq!(runtime.destroy_executable(executable), HSA_STATUS_SUCCESS);
    assert_eq!(
        runtime.executables_destroyed(),
        1,
        "this runtime's one destroy"
    );
}
