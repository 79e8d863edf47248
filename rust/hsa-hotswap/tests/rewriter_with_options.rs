//! `retarget_with_flags` against a real COMGR-ABI library: ctest runs this file
//! as `code_object.rust.with_options` (`--ignored`) with `HSA_HOTSWAP_REWRITER`
//! naming the `change` test rewriter; without it the test fails. A plain
//! `cargo test` skips it (ignored), as it has no rewriter to load.
#![allow(unsafe_code)] // reads the test rewriter's counters through dlsym

use std::ffi::{c_void, CString};

use hsa_hotswap::retarget::retarget_with_flags;
use hsa_hotswap::rewriter::{Retargeted, RewriteFlags};

static PROBE: &[u8] = hotswap_code_object::GFX1250_PROBE;
const SOURCE: &str = "amdgcn-amd-amdhsa--gfx1250:gfx1250-b0-specific+";
const TARGET: &str = "amdgcn-amd-amdhsa--gfx1250:gfx1250-b0-specific-";

/// `test_rewriter_last_flags()` of the already-loaded test rewriter.
fn last_flags(path: &str) -> u64 {
    let path = CString::new(path).unwrap();
    // SAFETY: NOLOAD only returns the instance the library already loaded.
    let lib = unsafe { libc::dlopen(path.as_ptr(), libc::RTLD_NOW | libc::RTLD_NOLOAD) };
    assert!(!lib.is_null(), "the rewriter is loaded");
    // SAFETY: valid handle, NUL-terminated name.
    let f: *mut c_void = unsafe { libc::dlsym(lib, c"test_rewriter_last_flags".as_ptr()) };
    assert!(!f.is_null());
    // SAFETY: test_rewriter_last_flags is `uint64_t (void)`.
    let f: extern "C" fn() -> u64 = unsafe { std::mem::transmute(f) };
    f()
}

#[test]
#[ignore = "needs the test rewriter: ctest runs it as code_object.rust.with_options"]
fn flags_go_through_rewrite_with_options() {
    let path = std::env::var("HSA_HOTSWAP_REWRITER")
        .ok()
        .filter(|p| !p.is_empty())
        .expect("HSA_HOTSWAP_REWRITER names the `change` test rewriter");
    let rewritten = |flags| match retarget_with_flags(PROBE, SOURCE, TARGET, flags) {
        Ok(Retargeted::Changed(r)) => r.bytes().to_vec(),
        other => panic!("{flags:?}: {other:?}"),
    };

    let plain = rewritten(RewriteFlags::default());
    assert_eq!(last_flags(&path), u64::MAX, "no flags: the plain rewrite");
    assert_eq!(&plain[9..16], b"HOTSWAP");

    let strict = RewriteFlags {
        strict_mode: true,
        ..RewriteFlags::default()
    };
    assert_eq!(rewritten(strict), plain);
    assert_eq!(last_flags(&path), 0x2);

    let both = RewriteFlags {
        entry_trampolines: true,
        strict_mode: true,
    };
    rewritten(both);
    assert_eq!(last_flags(&path), 0x3);
}
