//! What the fuzz targets share: process setup ([`init`]), the input decoding
//! ([`Control`]), the rewriter the `capi` and `tool` targets drive
//! ([`Answer`], [`install_rewriter`]) and the strings they pick from.
//!
//! Inputs of the structured targets (`capi`, `tool`) are a fixed-size control
//! block followed by a code object, so that a seed is a control block from
//! `seeds/*.controls` in front of a real clang-22 object (`seeds.py`).

use std::sync::{Mutex, Once};

use hsa_hotswap::internals::rewriter::{
    self, Backend, BackendKind, Request, RetargetError, Rewritten,
};

/// Sets the process up once, before the first input:
///
/// - a logger that formats every record of every level (so every log line's
///   arguments are built, as with `HSA_HOTSWAP_LOG_LEVEL=trace`) and prints
///   nothing; `HOTSWAP_FUZZ_LOG=1` prints them to stderr instead (for
///   reproducing a crash). Installed first, so the tool's own logger is never
///   installed;
/// - a panic hook that aborts on every panic, also inside the tool's panic
///   boundary, which would otherwise turn the panic into a fallback: a panic
///   there is a bug all the same, and libFuzzer must see it.
pub fn init() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let print = std::env::var_os("HOTSWAP_FUZZ_LOG").is_some_and(|v| v == "1");
        let logger: &'static Sink = Box::leak(Box::new(Sink { print }));
        log::set_logger(logger).expect("the fuzz harness installs the first logger");
        log::set_max_level(log::LevelFilter::Trace);
        // The tool installs its panic hook when its boundary is first used;
        // make that happen now, so that ours goes on top of it.
        hsa_hotswap::internals::boundary::ffi_boundary("fuzz harness init", (), || ());
        std::panic::set_hook(Box::new(|info| {
            eprintln!(
                "panic (inside the tool's panic boundary too: a bug): {info}\n{}",
                std::backtrace::Backtrace::force_capture()
            );
            std::process::abort();
        }));
    });
}

/// The harness's logger: see [`init`].
struct Sink {
    print: bool,
}

impl log::Log for Sink {
    fn enabled(&self, _: &log::Metadata<'_>) -> bool {
        true
    }

    fn log(&self, record: &log::Record<'_>) {
        let line = format!("hotswap: {}", record.args());
        if self.print {
            eprintln!("{line}");
        }
    }

    fn flush(&self) {}
}

/// A cursor over a control block: each read takes the next byte (0 once the
/// block is used up), so any input decodes, and a seed's bytes say plainly
/// what they choose.
#[derive(Debug)]
pub struct Control<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Control<'a> {
    /// Splits `data` into a control block of `len` bytes (shorter if `data`
    /// is) and the rest, the payload.
    pub fn split(data: &'a [u8], len: usize) -> (Control<'a>, &'a [u8]) {
        let (control, payload) = data.split_at(len.min(data.len()));
        (
            Control {
                bytes: control,
                at: 0,
            },
            payload,
        )
    }

    /// The next byte.
    pub fn byte(&mut self) -> u8 {
        let b = self.bytes.get(self.at).copied().unwrap_or(0);
        self.at += 1;
        b
    }

    /// The next byte modulo `n` (`n` > 0).
    pub fn pick(&mut self, n: usize) -> usize {
        usize::from(self.byte()) % n
    }

    /// The next two bytes, little-endian.
    pub fn u16(&mut self) -> u16 {
        u16::from_le_bytes([self.byte(), self.byte()])
    }

    /// The next four bytes, little-endian.
    pub fn u32(&mut self) -> u32 {
        u32::from_le_bytes([self.byte(), self.byte(), self.byte(), self.byte()])
    }

    /// Skips to byte `at` of the block (fields at fixed offsets).
    pub fn seek(&mut self, at: usize) {
        self.at = at;
    }
}

/// ISA names and other strings the structured targets choose from: real
/// agent and code-object ISA names, the hotswap pseudo-features, near misses,
/// and text that is not UTF-8.
pub const STRINGS: &[&[u8]] = &[
    b"amdgcn-amd-amdhsa--gfx1250",
    b"amdgcn-amd-amdhsa--gfx1250:gfx1250-b0-specific+",
    b"amdgcn-amd-amdhsa--gfx1250:gfx1250-b0-specific-",
    b"amdgcn-amd-amdhsa--gfx1250-strict",
    b"amdgcn-amd-amdhsa--gfx1250:sramecc+:xnack-",
    b"amdgcn-amd-amdhsa--gfx1251",
    b"amdgcn-amd-amdhsa--gfx12-5-generic",
    b"amdgcn-amd-amdhsa--gfx942:sramecc+:xnack-",
    b"amdgcn-amd-amdhsa--gfx12500",
    b"gfx1250",
    b"gfx942",
    b"",
    b"libhsa-hotswap.so",
    b"/opt/rocm/lib/libhsa-hotswap.so librocprofiler64.so",
    b"\"/opt/my tools/libhsa-hotswap.so\"",
    b"amdgcn-amd-amdhsa--gfx1250\xff",
    b"\xff\xfe",
];

/// What the harness's rewriter answers, as a function of the code object it
/// is given (so that one answer serves several different objects).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Answer {
    /// A copy with `HOTSWAP` in `e_ident[9..16)` (a valid AMDGPU ELF when the
    /// input is one, and different from it).
    Marked,
    /// A copy: "unchanged".
    Same,
    /// A copy with the byte at `at % len` XORed with `with` (non-zero).
    Flip {
        /// Where (modulo the length).
        at: u16,
        /// The XOR mask.
        with: u8,
    },
    /// The first `len % (input length + 1)` bytes.
    Truncated(u16),
    /// These bytes, whatever the input.
    Fixed(Vec<u8>),
    /// This error.
    Fail(RetargetError),
}

impl Answer {
    /// Decodes an answer; `None` means "no rewriter in the process". Takes
    /// four bytes; `tail` is what [`Answer::Fixed`] returns.
    pub fn decode(control: &mut Control<'_>, tail: &[u8]) -> Option<Answer> {
        let kind = control.pick(13);
        let (a, b) = (control.u16(), control.byte());
        Some(match kind {
            0 => return None,
            1 => Answer::Marked,
            2 => Answer::Same,
            3 => Answer::Flip { at: a, with: b | 1 },
            4 => Answer::Truncated(a),
            5 => Answer::Fixed(tail.to_vec()),
            6 => Answer::Fixed(vec![0x5a; 256]),
            7 => Answer::Fail(RetargetError::Failed),
            8 => Answer::Fail(RetargetError::Refused("refused by the fuzz harness".into())),
            9 => Answer::Fail(RetargetError::Unsupported),
            10 => Answer::Fail(RetargetError::OutOfMemory),
            11 => Answer::Fail(RetargetError::InvalidArgument),
            _ => Answer::Fail(RetargetError::Unavailable),
        })
    }

    /// The bytes (or error) this answer gives for `input`.
    pub fn output_for(&self, input: &[u8]) -> Result<Vec<u8>, RetargetError> {
        let mut out = input.to_vec();
        match self {
            Answer::Marked => {
                if let Some(pad) = out.get_mut(9..16) {
                    pad.copy_from_slice(b"HOTSWAP");
                }
            }
            Answer::Same => {}
            Answer::Flip { at, with } => {
                if !out.is_empty() {
                    let at = usize::from(*at) % out.len();
                    out[at] ^= with;
                }
            }
            Answer::Truncated(len) => out.truncate(usize::from(*len) % (input.len() + 1)),
            Answer::Fixed(bytes) => out.clone_from(bytes),
            Answer::Fail(e) => return Err(e.clone()),
        }
        Ok(out)
    }
}

/// The rewriter backend of the `capi` and `tool` targets: answers per the
/// current [`Answer`] and records every ISA pair it is asked for. One static
/// instance (the tool keeps `&'static` backends; a new one per input would
/// leak).
#[derive(Debug)]
struct FuzzRewriter {
    answer: Mutex<Option<Answer>>,
    calls: Mutex<Vec<(String, String)>>,
}

static REWRITER: FuzzRewriter = FuzzRewriter {
    answer: Mutex::new(None),
    calls: Mutex::new(Vec::new()),
};

impl Backend for FuzzRewriter {
    fn kind(&self) -> BackendKind {
        BackendKind::Native
    }

    fn describe(&self) -> &str {
        "fuzz harness rewriter"
    }

    fn rewrite(
        &self,
        object: &hsa_hotswap::internals::code_object::CodeObject<'_>,
        request: &Request<'_>,
    ) -> Result<Rewritten, RetargetError> {
        let code_object = object.bytes();
        lock(&self.calls).push((request.source_isa.to_owned(), request.target_isa.to_owned()));
        let answer = lock(&self.answer).clone();
        let bytes = answer
            .expect("the rewriter is installed only with an answer")
            .output_for(code_object)?;
        Rewritten::copy_of(&bytes)
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Makes the process's rewriter answer `answer` (`None`: no rewriter at all)
/// until [`uninstall_rewriter`] or the drop of a `FakeRuntime`, and forgets
/// the calls recorded so far.
pub fn install_rewriter(answer: Option<Answer>) {
    lock(&REWRITER.calls).clear();
    let installed = answer.is_some();
    *lock(&REWRITER.answer) = answer;
    rewriter::testing_override::set(installed.then_some(&REWRITER as &'static dyn Backend));
}

/// Back to the process's own rewriter resolution.
pub fn uninstall_rewriter() {
    rewriter::testing_override::clear();
}

/// The ISA pairs the rewriter was asked for since [`install_rewriter`].
pub fn rewriter_calls() -> Vec<(String, String)> {
    lock(&REWRITER.calls).clone()
}

/// True when `bytes` passes the tool's check of a rewriter's output: an
/// ELF64 little-endian object whose `e_machine` is `EM_AMDGPU`.
pub fn is_amdgpu_elf(bytes: &[u8]) -> bool {
    hotswap_code_object::elf::Header::parse(bytes)
        .is_ok_and(|h| h.machine == hotswap_code_object::EM_AMDGPU)
}

/// True when `part` lies inside `whole` (same allocation, in bounds).
pub fn is_within(part: &[u8], whole: &[u8]) -> bool {
    let (start, end) = (
        whole.as_ptr() as usize,
        whole.as_ptr() as usize + whole.len(),
    );
    let p = part.as_ptr() as usize;
    p >= start && p + part.len() <= end
}

/// True when `needle` occurs in `haystack` (empty needles always do).
pub fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    needle.is_empty() || haystack.windows(needle.len()).any(|w| w == needle)
}
