//! The fake ROCr against the rule set it shares with the C++ stand-in
//! (`tests/common/rocr_rules.txt`, whose runner there is the ctest
//! `standin.rocr_rules`): every rule marked `both` is performed on the fake's
//! own functions (the slots as the runtime filled them, before any tool) and
//! its outcome compared with the rule's.

use std::ffi::c_void;
use std::io::Write;
use std::os::fd::AsRawFd;

use super::{fake_slots, FakeAgent, FakeRuntime, FAILING_EXECUTABLE};
use crate::hooks::{CreateFromFileFn, CreateFromMemoryFn, LoadAgentCodeObjectFn, ReaderDestroyFn};
use crate::hsa::api::{
    fn_from_slot, hsa_agent_t, hsa_code_object_reader_t, hsa_executable_t, hsa_isa_t, hsa_status_t,
    AgentGetInfoFn, AgentIterateIsasFn, IsaGetInfoAltFn, IterateAgentsFn, HSA_AGENT_INFO_DEVICE,
    HSA_ISA_INFO_NAME, HSA_ISA_INFO_NAME_LENGTH,
};
use crate::hsa::table::{
    Slot, AGENT_GET_INFO, AGENT_ITERATE_ISAS, ISA_GET_INFO_ALT, ITERATE_AGENTS,
    LOAD_AGENT_CODE_OBJECT, READER_CREATE_FROM_FILE, READER_CREATE_FROM_MEMORY, READER_DESTROY,
};

/// `hsa_status_t` values of the real `hsa.h` for the names the rules use.
const STATUSES: [(&str, hsa_status_t); 10] = [
    ("HSA_STATUS_SUCCESS", 0),
    ("HSA_STATUS_ERROR", 0x1000),
    ("HSA_STATUS_ERROR_INVALID_ARGUMENT", 0x1001),
    ("HSA_STATUS_ERROR_INVALID_AGENT", 0x1004),
    ("HSA_STATUS_ERROR_NOT_INITIALIZED", 0x100B),
    ("HSA_STATUS_ERROR_INVALID_ISA", 0x100F),
    ("HSA_STATUS_ERROR_INVALID_CODE_OBJECT", 0x1010),
    ("HSA_STATUS_ERROR_INVALID_EXECUTABLE", 0x1011),
    ("HSA_STATUS_ERROR_INVALID_FILE", 0x1020),
    ("HSA_STATUS_ERROR_INVALID_CODE_OBJECT_READER", 0x1021),
];

fn status_name(status: hsa_status_t) -> String {
    STATUSES
        .iter()
        .find(|&&(_, v)| v == status)
        .map_or_else(|| format!("{status:#x}"), |&(n, _)| n.to_owned())
}

/// `(rule, expected, doubles)` of every rule line.
fn rules() -> Vec<(String, String, String)> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/common/rocr_rules.txt"
    );
    let text = std::fs::read_to_string(path).expect("the shared rule set");
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            assert_eq!(f.len(), 3, "a rule line has three fields: {l:?}");
            assert!(["both", "standin"].contains(&f[2]), "{l:?}");
            (f[0].to_owned(), f[1].to_owned(), f[2].to_owned())
        })
        .collect()
}

/// The fake's own function in `slot`.
fn fake<F: Copy>(slot: Slot) -> F {
    let value = fake_slots()
        .into_iter()
        .find(|(s, _)| s.offset == slot.offset)
        .map(|(_, v)| v)
        .expect("a faked slot");
    // SAFETY: fake_slots pairs each slot with a fake of the header's signature,
    // which the caller's F mirrors.
    unsafe { fn_from_slot(value) }.expect("non-null")
}

struct Fakes {
    memory: CreateFromMemoryFn,
    file: CreateFromFileFn,
    destroy: ReaderDestroyFn,
    load: LoadAgentCodeObjectFn,
    iterate_agents: IterateAgentsFn,
    agent_info: AgentGetInfoFn,
    iterate_isas: AgentIterateIsasFn,
    isa_info: IsaGetInfoAltFn,
}

const GPU: u64 = 0x10;
/// A file descriptor above any open one (the stand-in uses the same).
const CLOSED_FD: i32 = 1_000_000;
const ISA: &str = "amdgcn-amd-amdhsa--gfx1250";

fn object() -> Vec<u8> {
    std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../hotswap-code-object/data/gfx1250-probe.co"
    ))
    .unwrap()
}

impl Fakes {
    fn new() -> Self {
        Self {
            memory: fake(READER_CREATE_FROM_MEMORY),
            file: fake(READER_CREATE_FROM_FILE),
            destroy: fake(READER_DESTROY),
            load: fake(LOAD_AGENT_CODE_OBJECT),
            iterate_agents: fake(ITERATE_AGENTS),
            agent_info: fake(AGENT_GET_INFO),
            iterate_isas: fake(AGENT_ITERATE_ISAS),
            isa_info: fake(ISA_GET_INFO_ALT),
        }
    }

    fn memory_reader(&self, bytes: &[u8]) -> (hsa_status_t, hsa_code_object_reader_t) {
        let mut r = hsa_code_object_reader_t { handle: 0 };
        // SAFETY: live bytes and out-pointer.
        let s = unsafe { (self.memory)(bytes.as_ptr().cast(), bytes.len(), &mut r) };
        (s, r)
    }

    fn file_reader(&self, fd: i32) -> hsa_status_t {
        let mut r = hsa_code_object_reader_t { handle: 0 };
        // SAFETY: a live out-pointer; a bad fd only fails.
        let s = unsafe { (self.file)(fd, &mut r) };
        if s == 0 {
            // SAFETY: a reader the fake just made.
            unsafe { (self.destroy)(r) };
        }
        s
    }

    fn load(&self, executable: u64, reader: hsa_code_object_reader_t) -> hsa_status_t {
        // SAFETY: plain handles; a null options string and out-pointer are allowed.
        unsafe {
            (self.load)(
                hsa_executable_t { handle: executable },
                hsa_agent_t { handle: GPU },
                reader,
                std::ptr::null(),
                std::ptr::null_mut(),
            )
        }
    }

    fn isa(&self) -> hsa_isa_t {
        unsafe extern "C" fn first(isa: hsa_isa_t, data: *mut c_void) -> hsa_status_t {
            // SAFETY: `data` is the caller's hsa_isa_t.
            unsafe { data.cast::<hsa_isa_t>().write(isa) };
            0
        }
        let mut isa = hsa_isa_t { handle: 0 };
        // SAFETY: the callback writes one hsa_isa_t into `isa`.
        let s = unsafe {
            (self.iterate_isas)(
                hsa_agent_t { handle: GPU },
                Some(first),
                (&raw mut isa).cast(),
            )
        };
        assert_eq!(s, 0);
        isa
    }

    fn temp_file(name: &str, bytes: &[u8]) -> std::fs::File {
        let path =
            std::env::temp_dir().join(format!("hotswap-rules-{}-{name}", std::process::id()));
        let mut f = std::fs::File::options()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(&path)
            .unwrap();
        f.write_all(bytes).unwrap();
        let _ = std::fs::remove_file(&path);
        f
    }

    /// The outcome of `rule`, in the rule file's terms; `None` for an unknown rule.
    fn perform(&self, rule: &str) -> Option<String> {
        let bytes = object();
        let status = |s: hsa_status_t| Some(status_name(s));
        match rule {
            "table.root" | "table.core" => {
                let mut rt = FakeRuntime::start(Vec::new());
                let v = if rule == "table.root" {
                    // SAFETY: the runtime's live root table.
                    unsafe { (*rt.root()).version }
                } else {
                    rt.core.version
                };
                Some(format!("{}.{}.{}", v.major_id, v.minor_id, v.step_id))
            }
            "memory.valid" => {
                let (s, r) = self.memory_reader(&bytes);
                // SAFETY: the reader just made.
                unsafe { (self.destroy)(r) };
                status(s)
            }
            "memory.null_bytes" => status(
                // SAFETY: a null pointer the fake must refuse; a live out-pointer.
                unsafe {
                    (self.memory)(
                        std::ptr::null(),
                        64,
                        &mut hsa_code_object_reader_t { handle: 0 },
                    )
                },
            ),
            "memory.zero_size" => status(
                // SAFETY: live bytes (none read: size 0) and out-pointer.
                unsafe {
                    (self.memory)(
                        bytes.as_ptr().cast(),
                        0,
                        &mut hsa_code_object_reader_t { handle: 0 },
                    )
                },
            ),
            "memory.null_out" => status(
                // SAFETY: live bytes; the null out-pointer the fake must refuse.
                unsafe { (self.memory)(bytes.as_ptr().cast(), bytes.len(), std::ptr::null_mut()) },
            ),
            "file.valid" => {
                let f = Self::temp_file("valid", &bytes);
                status(self.file_reader(f.as_raw_fd()))
            }
            "file.fd_minus_one" => status(self.file_reader(-1)),
            // A descriptor no process has open (a just-closed one could be reused
            // by a concurrent test).
            "file.closed_fd" => status(self.file_reader(CLOSED_FD)),
            "file.empty" => {
                let f = Self::temp_file("empty", &[]);
                status(self.file_reader(f.as_raw_fd()))
            }
            "file.offset_after_create" => {
                use std::io::Seek;
                let mut f = Self::temp_file("offset", &bytes);
                f.rewind().unwrap();
                assert_eq!(self.file_reader(f.as_raw_fd()), 0);
                let at = f.stream_position().unwrap();
                Some(if at == bytes.len() as u64 {
                    "END".into()
                } else {
                    format!("OFFSET_{at}")
                })
            }
            "destroy.valid" | "destroy.twice" => {
                let (s, r) = self.memory_reader(&bytes);
                assert_eq!(s, 0);
                // SAFETY: a reader the fake made (then, for twice, one it destroyed).
                let mut d = unsafe { (self.destroy)(r) };
                if rule == "destroy.twice" {
                    // SAFETY: a plain handle the fake has forgotten.
                    d = unsafe { (self.destroy)(r) };
                }
                status(d)
            }
            // SAFETY: an arbitrary handle the fake never gave.
            "destroy.unknown" => status(unsafe {
                (self.destroy)(hsa_code_object_reader_t {
                    handle: 0x5EED_0000,
                })
            }),
            "load.valid" | "load.not_elf" | "load.failing_executable" => {
                let not_elf = vec![b'x'; 4096];
                let input = if rule == "load.not_elf" {
                    &not_elf
                } else {
                    &bytes
                };
                let (s, r) = self.memory_reader(input);
                assert_eq!(s, 0);
                let executable = if rule == "load.failing_executable" {
                    FAILING_EXECUTABLE
                } else {
                    1
                };
                let l = self.load(executable, r);
                // SAFETY: the reader just made.
                unsafe { (self.destroy)(r) };
                status(l)
            }
            "load.unknown_reader" => {
                status(self.load(1, hsa_code_object_reader_t { handle: 0x5EED }))
            }
            "agents.order" => {
                unsafe extern "C" fn push(agent: hsa_agent_t, data: *mut c_void) -> hsa_status_t {
                    // SAFETY: `data` is the caller's Vec<u64>.
                    unsafe { (*data.cast::<Vec<u64>>()).push(agent.handle) };
                    0
                }
                let mut seen: Vec<u64> = Vec::new();
                // SAFETY: the callback pushes into `seen`.
                let s = unsafe { (self.iterate_agents)(Some(push), (&raw mut seen).cast()) };
                assert_eq!(s, 0);
                let is_gpu = |h: u64| {
                    let mut device = 0u32;
                    // SAFETY: a u32 out-value for HSA_AGENT_INFO_DEVICE.
                    let s = unsafe {
                        (self.agent_info)(
                            hsa_agent_t { handle: h },
                            HSA_AGENT_INFO_DEVICE,
                            (&raw mut device).cast(),
                        )
                    };
                    assert_eq!(s, 0);
                    device == 1
                };
                let kinds: Vec<bool> = seen.iter().map(|&h| is_gpu(h)).collect();
                let cpu_first = kinds.windows(2).all(|w| !w[0] || w[1]);
                Some(if cpu_first {
                    "CPU_FIRST".into()
                } else {
                    format!("ORDER_{kinds:?}")
                })
            }
            "isa.name_length" => {
                let mut len = 0u32;
                // SAFETY: a u32 out-value for NAME_LENGTH.
                let s = unsafe {
                    (self.isa_info)(self.isa(), HSA_ISA_INFO_NAME_LENGTH, (&raw mut len).cast())
                };
                assert_eq!(s, 0);
                Some(if len as usize == ISA.len() + 1 {
                    "NAME_PLUS_NUL".into()
                } else {
                    format!("LENGTH_{len}")
                })
            }
            "isa.name" => {
                let mut buf = [0xAAu8; 64];
                // SAFETY: 64 bytes, more than the name and its NUL.
                let s = unsafe {
                    (self.isa_info)(self.isa(), HSA_ISA_INFO_NAME, buf.as_mut_ptr().cast())
                };
                assert_eq!(s, 0);
                Some(
                    if &buf[..ISA.len()] == ISA.as_bytes() && buf[ISA.len()] == 0 {
                        "NUL_TERMINATED".into()
                    } else {
                        format!("NAME_{:?}", String::from_utf8_lossy(&buf[..ISA.len() + 1]))
                    },
                )
            }
            _ => None,
        }
    }
}

#[test]
fn the_fake_follows_the_shared_rules() {
    let rules = rules();
    assert!(
        rules.iter().filter(|r| r.2 == "both").count() >= 20,
        "{rules:?}"
    );
    for (_, expected, _) in &rules {
        assert!(
            !expected.starts_with("HSA_STATUS") || STATUSES.iter().any(|(n, _)| n == expected),
            "{expected}: add its hsa.h value to STATUSES"
        );
    }
    let fakes = Fakes::new();
    let mut failures = Vec::new();
    for (rule, expected, doubles) in &rules {
        if doubles != "both" {
            continue;
        }
        // The agents as ROCr lists them would put the CPU first; they are given
        // GPU first here so that the fake has to order them itself.
        let outcome = if rule.starts_with("table.") {
            fakes.perform(rule)
        } else {
            let _rt =
                FakeRuntime::start(vec![FakeAgent::gpu(GPU, ISA, Some(0)), FakeAgent::cpu(0x1)]);
            fakes.perform(rule)
        };
        match outcome {
            None => failures.push(format!("{rule}: no runner here")),
            Some(got) if &got != expected => {
                failures.push(format!("{rule}: expected {expected}, got {got}"))
            }
            Some(_) => {}
        }
    }
    assert!(
        failures.is_empty(),
        "the Rust fake ROCr breaks the shared rules:\n{}",
        failures.join("\n")
    );
}
