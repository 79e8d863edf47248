//! Every `hotswap_*` C function with the arguments its contract allows: NULL
//! or valid pointers, sizes from zero to the object's, buffers smaller and
//! larger than needed, strings from the harness's list or from the input, and
//! a rewriter answering per the input.
//!
//! Input: a 48-byte control block, then a code object (the payload). Seeds:
//! each line of `seeds/capi.controls` in front of clang-22 objects.
//! Checked against each function's documented rules, not only "no crash":
//! statuses are the one the contract gives for these arguments (never
//! `INTERNAL_ERROR`); `hotswap_code_object_isa_name` stores the needed size
//! only on success or `BUFFER_TOO_SMALL`, writes nothing to a buffer too small
//! and nothing past the name's NUL; `hotswap_retarget_code_object` leaves
//! `*out == elf`, `*out_size == size` on every failure and on `UNCHANGED`, and
//! on success returns a `free()`-able copy of exactly the rewriter's output;
//! the boolean functions answer what their Rust counterparts answer, and
//! `hotswap_enabled` what the documented rule gives for the environment the
//! process read once.
#![no_main]

use std::ffi::{c_char, c_void, CStr, CString};

use hotswap_fuzz::{
    install_rewriter, is_amdgpu_elf, rewriter_calls, uninstall_rewriter, Answer, Control, STRINGS,
};
use hsa_hotswap::internals::capi::*;
use hsa_hotswap::internals::code_object;
use hsa_hotswap::internals::config::Config;
use hsa_hotswap::internals::status::{hotswap_status_t, UNKNOWN_STATUS_DESCRIPTION};
use hsa_hotswap::internals::tools_lib::names_hotswap;
use libfuzzer_sys::fuzz_target;

const CONTROL: usize = 48;
/// What the harness writes where the function must not.
const UNTOUCHED: u8 = 0xa5;
const UNTOUCHED_SIZE: usize = 0xa5a5_a5a5;

/// A string argument: NULL (`None`), one of [`STRINGS`], or bytes of the
/// payload (`window` = start, length), cut at its first NUL.
fn string(choice: u8, payload: &[u8], window: (usize, usize)) -> Option<CString> {
    let i = usize::from(choice) % (STRINGS.len() + 2);
    let bytes = match i {
        0 => return None,
        i if i <= STRINGS.len() => STRINGS[i - 1],
        _ => {
            let start = window.0.min(payload.len());
            let end = start.saturating_add(window.1).min(payload.len());
            &payload[start..end]
        }
    };
    let bytes = bytes.split(|&b| b == 0).next().unwrap_or_default();
    Some(CString::new(bytes).expect("cut at the first NUL"))
}

fn ptr(s: &Option<CString>) -> *const c_char {
    s.as_ref().map_or(std::ptr::null(), |s| s.as_ptr())
}

/// A code-object argument: NULL or the payload, and a size (0, all of it, a
/// prefix, the 64-byte header). Takes four bytes.
fn code_object<'a>(control: &mut Control<'_>, payload: &'a [u8]) -> (*const c_void, &'a [u8]) {
    let null = control.pick(4) == 0;
    let (choice, prefix) = (control.pick(4), usize::from(control.u16()));
    let size = match choice {
        0 => 0,
        1 => payload.len(),
        2 => prefix % (payload.len() + 1),
        _ => payload.len().min(64),
    };
    let elf = if null {
        std::ptr::null()
    } else {
        payload.as_ptr().cast()
    };
    (elf, &payload[..size])
}

fn version_and_status(control: &mut Control<'_>) {
    let version = hotswap_version();
    assert!(!version.is_null());
    assert_eq!(version, hotswap_version(), "a static string");
    // SAFETY: a static NUL-terminated string (checked non-NULL).
    let text = unsafe { CStr::from_ptr(version) }.to_str().unwrap();
    let parts: Vec<&str> = text.split('.').collect();
    assert!(
        parts.len() == 3 && parts.iter().all(|p| p.parse::<u32>().is_ok()),
        "{text}"
    );

    let raw = control.u32();
    let description = hotswap_status_string(raw);
    assert!(!description.is_null());
    // SAFETY: a static NUL-terminated string (checked non-NULL).
    let description = unsafe { CStr::from_ptr(description) };
    assert!(!description.is_empty());
    match hotswap_status_t::from_raw(raw) {
        Some(status) => {
            assert_eq!(description, status.description());
            assert_ne!(description, UNKNOWN_STATUS_DESCRIPTION);
        }
        None => assert_eq!(description, UNKNOWN_STATUS_DESCRIPTION),
    }
}

fn strings(control: &mut Control<'_>, payload: &[u8], window: (usize, usize)) {
    let tools_lib = string(control.byte(), payload, window);
    // SAFETY: NULL or a NUL-terminated string that outlives the call.
    let answer = unsafe { hotswap_tools_lib_names_hotswap(ptr(&tools_lib)) };
    assert_eq!(
        answer,
        tools_lib
            .as_ref()
            .is_some_and(|v| names_hotswap(v.as_bytes()))
    );

    let (isa, gfx) = (
        string(control.byte(), payload, window),
        string(control.byte(), payload, window),
    );
    // SAFETY: as above.
    let answer = unsafe { hotswap_isa_is_gfx(ptr(&isa), ptr(&gfx)) };
    let expected = match (&isa, &gfx) {
        (Some(isa), Some(gfx)) => {
            hotswap_code_object::isa_name::isa_is_gfx(isa.as_bytes(), gfx.as_bytes())
        }
        _ => false,
    };
    assert_eq!(answer, expected, "{isa:?} {gfx:?}");

    let (source, target) = (
        string(control.byte(), payload, window),
        string(control.byte(), payload, window),
    );
    // SAFETY: as above.
    let answer = unsafe { hotswap_is_supported_pair(ptr(&source), ptr(&target)) };
    let gfx1250 = |s: &Option<CString>| s.as_ref().is_some_and(|s| s.as_bytes() == b"gfx1250");
    assert_eq!(answer, gfx1250(&source) && gfx1250(&target));

    // hotswap_enabled: the environment as read once per process (what the
    // tool's OnLoad reads too), by the documented rule; the same answer on
    // every call.
    let config = Config::process();
    let switched_off = config.disable && !config.tool_enable;
    let expected = config.tools_lib.as_deref().is_some_and(names_hotswap) && !switched_off;
    assert_eq!(hotswap_enabled(), expected, "{config:?}");
}

fn isa_name(control: &mut Control<'_>, payload: &[u8]) {
    let (elf, object) = code_object(control, payload);
    let size_null = control.pick(5) == 0;
    let buffer_null = control.pick(4) == 0;
    let (capacity_choice, capacity_byte) = (control.pick(5), usize::from(control.byte()));

    let expected = if elf.is_null() || object.is_empty() || size_null {
        Err(hotswap_status_t::HOTSWAP_STATUS_INVALID_ARGUMENT)
    } else {
        code_object::CodeObject::parse(object)
            .and_then(|o| code_object::isa_name(&o))
            .map_err(|e| code_object::isa_error_status(&e))
    };
    let needed = expected.as_ref().map_or(32, |name| name.len() + 1);
    let capacity = match capacity_choice {
        0 => 0,
        1 => needed - 1,
        2 => needed,
        3 => needed + capacity_byte % 8,
        _ => capacity_byte,
    };
    let mut buffer = vec![UNTOUCHED; capacity + 16];
    let mut size = capacity;
    let buffer_ptr = if buffer_null {
        std::ptr::null_mut()
    } else {
        buffer.as_mut_ptr().cast::<c_char>()
    };
    let size_ptr = if size_null {
        std::ptr::null_mut()
    } else {
        &mut size as *mut usize
    };
    // SAFETY: `elf` is NULL or `object.len()` readable bytes; the buffer is
    // NULL or `capacity` (+ guard) writable bytes; `size_ptr` NULL or valid.
    let status = unsafe { hotswap_code_object_isa_name(elf, object.len(), buffer_ptr, size_ptr) };
    let untouched = |b: &[u8]| b.iter().all(|&x| x == UNTOUCHED);
    match expected {
        Err(e) => {
            assert_eq!(status, e);
            assert_eq!(size, capacity, "nothing written on {e:?}");
            assert!(untouched(&buffer));
        }
        Ok(name) => {
            assert_eq!(size, needed, "the needed size is stored");
            if buffer_null {
                assert_eq!(status, hotswap_status_t::HOTSWAP_STATUS_SUCCESS);
                assert!(untouched(&buffer));
            } else if capacity < needed {
                assert_eq!(status, hotswap_status_t::HOTSWAP_STATUS_BUFFER_TOO_SMALL);
                assert!(untouched(&buffer), "nothing written to a buffer too small");
            } else {
                assert_eq!(status, hotswap_status_t::HOTSWAP_STATUS_SUCCESS);
                assert_eq!(&buffer[..name.len()], name.as_bytes());
                assert_eq!(buffer[name.len()], 0);
                assert!(untouched(&buffer[needed..]), "nothing written past the NUL");
            }
        }
    }
}

fn retarget(control: &mut Control<'_>, payload: &[u8], window: (usize, usize)) {
    use hotswap_status_t::*;
    let (elf, object) = code_object(control, payload);
    let source = string(control.byte(), payload, window);
    let target = string(control.byte(), payload, window);
    let out_null = control.pick(7) == 0;
    let out_size_null = control.pick(7) == 0;
    let answer = Answer::decode(control, object.get(object.len() / 2..).unwrap_or_default());
    install_rewriter(answer.clone());

    let mut out: *mut c_void = std::ptr::dangling_mut::<u8>().cast();
    let mut out_size = UNTOUCHED_SIZE;
    let out_ptr = if out_null {
        std::ptr::null_mut()
    } else {
        &mut out as *mut *mut c_void
    };
    let out_size_ptr = if out_size_null {
        std::ptr::null_mut()
    } else {
        &mut out_size as *mut usize
    };
    // SAFETY: `elf` is NULL or `object.len()` readable bytes; the strings are
    // NULL or NUL-terminated; `out`/`out_size` NULL or valid for writes.
    let status = unsafe {
        hotswap_retarget_code_object(
            elf,
            object.len(),
            ptr(&source),
            ptr(&target),
            out_ptr,
            out_size_ptr,
        )
    };
    let calls = rewriter_calls();
    uninstall_rewriter();
    if out_null || out_size_null {
        assert_eq!(status, HOTSWAP_STATUS_INVALID_ARGUMENT);
        assert!(calls.is_empty());
        return;
    }

    let utf8 = |s: &Option<CString>| s.as_ref().and_then(|s| s.to_str().ok().map(str::to_owned));
    let (source, target) = (utf8(&source), utf8(&target));
    let (expected, reached) = match (&answer, &source, &target) {
        _ if elf.is_null() || object.is_empty() => (Err(HOTSWAP_STATUS_INVALID_ARGUMENT), false),
        (_, None, _) | (_, _, None) => (Err(HOTSWAP_STATUS_INVALID_ARGUMENT), false),
        (None, _, _) => (Err(HOTSWAP_STATUS_REWRITER_UNAVAILABLE), false),
        // A malformed ELF header is refused before any rewriter sees it.
        _ if code_object::CodeObject::parse(object).is_err() => {
            (Err(HOTSWAP_STATUS_REWRITE_REFUSED), false)
        }
        (Some(answer), _, _) => (
            match answer.output_for(object) {
                Err(e) => Err(e.status()),
                Ok(bytes) if bytes.is_empty() || !is_amdgpu_elf(&bytes) => {
                    Err(HOTSWAP_STATUS_REWRITE_FAILED)
                }
                Ok(bytes) if bytes == object => Err(HOTSWAP_STATUS_UNCHANGED),
                Ok(bytes) => Ok(bytes),
            },
            true,
        ),
    };
    if reached {
        assert_eq!(
            calls,
            [(source.unwrap(), target.unwrap())],
            "one call, with the caller's ISA names"
        );
    } else {
        assert!(calls.is_empty(), "the rewriter is not called: {calls:?}");
    }
    match expected {
        Err(e) => {
            assert_eq!(status, e);
            assert_eq!(
                (out.cast_const(), out_size),
                (elf, object.len()),
                "*out == elf on {e:?}"
            );
        }
        Ok(bytes) => {
            assert_eq!(status, HOTSWAP_STATUS_SUCCESS);
            assert!(!out.is_null() && out.cast_const() != elf);
            // SAFETY: on success `out` is a malloc'd buffer of `out_size` bytes
            // that the caller releases with free().
            unsafe {
                assert_eq!(
                    std::slice::from_raw_parts(out.cast::<u8>(), out_size),
                    &bytes[..]
                );
                libc::free(out);
            }
        }
    }
}

fuzz_target!(init: hotswap_fuzz::init(), |data: &[u8]| {
    let (mut control, payload) = Control::split(data, CONTROL);
    control.seek(32);
    let window = (usize::from(control.u16()), usize::from(control.byte()));
    control.seek(0);
    version_and_status(&mut control);
    strings(&mut control, payload, window);
    control.seek(12);
    isa_name(&mut control, payload);
    control.seek(20);
    retarget(&mut control, payload, window);
});
