//! The cache against a real directory: hits, every corruption, unsafe
//! directories, injected I/O errors, concurrency, eviction.

use super::*;
use crate::config::Config;
use crate::rewriter::identity::library_identity;
use crate::rewriter::RewriteFlags;
use std::os::unix::fs::PermissionsExt;
use std::sync::atomic::AtomicUsize;

/// A fresh directory under the target's temporary space.
fn scratch(name: &str) -> PathBuf {
    let dir =
        std::env::temp_dir().join(format!("hotswap-cache-test-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

fn settings(dir: &Path) -> Settings {
    let dir = dir.to_str().unwrap().to_owned();
    let config = Config::from_lookup(|name| (name == HSA_HOTSWAP_CACHE_DIR).then(|| dir.clone()));
    Settings::from_config(&config, false)
}

const SRC: &str = "amdgcn-amd-amdhsa--gfx1250:gfx1250-b0-specific+";
const TGT: &str = "amdgcn-amd-amdhsa--gfx1250:gfx1250-b0-specific-";

fn request() -> Request<'static> {
    Request {
        source_isa: SRC,
        target_isa: TGT,
        flags: RewriteFlags::default(),
    }
}

fn input() -> Vec<u8> {
    hotswap_code_object::GFX1250_PROBE.to_vec()
}

/// The input with a marker byte changed: what a rewriter returns.
fn changed(input: &[u8]) -> Rewritten {
    let mut out = input.to_vec();
    out[9] ^= 0x5a;
    Rewritten::copy_of(&out).unwrap()
}

/// Runs one lookup through `store`, counting rewriter calls; returns the
/// output bytes (or the error) and whether the rewriter ran.
fn run(store: &Store, code: &[u8]) -> (Result<Vec<u8>, RetargetError>, bool) {
    let called = std::cell::Cell::new(false);
    let r = store.through("test backend", code, None, &request(), || {
        called.set(true);
        Ok(Retargeted::Changed(changed(code)))
    });
    let r = r.map(|r| match r {
        Retargeted::Changed(b) => b.bytes().to_vec(),
        Retargeted::Unchanged => code.to_vec(),
    });
    (r, called.get())
}

fn only_entry(store: &Store) -> PathBuf {
    let list = store.list().unwrap();
    assert_eq!(list.len(), 1, "{list:?}");
    store.path().join(&list[0].name)
}

#[test]
fn a_second_lookup_is_a_hit_with_identical_bytes() {
    let dir = scratch("hit");
    let store = Store::open(&settings(&dir)).unwrap();
    let code = input();
    let (first, called) = run(&store, &code);
    assert!(called);
    let (second, called) = run(&store, &code);
    assert!(!called, "the second lookup must not call the rewriter");
    assert_eq!(first.unwrap(), second.unwrap());
    // A new Store (another process) sees the same entry.
    let again = Store::open(&settings(&dir)).unwrap();
    let (third, called) = run(&again, &code);
    assert!(!called);
    assert_eq!(third.unwrap(), changed(&code).bytes());
    // Directories are 0700.
    for d in [dir.clone(), dir.join("rewrites"), dir.join("rewrites/v2")] {
        let mode = std::fs::metadata(&d).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o700, "{}", d.display());
    }
    let t = store.totals().unwrap();
    assert_eq!((t.entries, t.rewritten), (1, 1));
    assert_eq!(store.clear().unwrap().0, 1);
    assert_eq!(store.totals().unwrap().entries, 0);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn refusals_and_unchanged_are_cached_failures_are_not() {
    let dir = scratch("outcomes");
    let store = Store::open(&settings(&dir)).unwrap();
    let code = input();
    let calls = AtomicUsize::new(0);
    let ask = |answer: fn() -> Result<Retargeted, RetargetError>, flags: u64| {
        let req = Request {
            flags: RewriteFlags {
                entry_trampolines: flags & 1 != 0,
                strict_mode: flags & 2 != 0,
            },
            ..request()
        };
        store.through("b", &code, None, &req, || {
            calls.fetch_add(1, Ordering::SeqCst);
            answer()
        })
    };
    let refused = || Err(RetargetError::Refused("needs growth at f+0x40".into()));
    assert_eq!(
        ask(refused, 0).unwrap_err(),
        RetargetError::Refused("needs growth at f+0x40".into())
    );
    assert_eq!(
        ask(|| panic!("cached"), 0).unwrap_err(),
        RetargetError::Refused("needs growth at f+0x40".into())
    );
    assert!(matches!(
        ask(|| Ok(Retargeted::Unchanged), 1),
        Ok(Retargeted::Unchanged)
    ));
    assert!(matches!(
        ask(|| panic!("cached"), 1),
        Ok(Retargeted::Unchanged)
    ));
    assert_eq!(
        ask(|| Err(RetargetError::Unsupported), 2).unwrap_err(),
        RetargetError::Unsupported
    );
    assert_eq!(
        ask(|| panic!("cached"), 2).unwrap_err(),
        RetargetError::Unsupported
    );
    // An environmental failure is not kept: the next call asks again.
    assert_eq!(
        ask(|| Err(RetargetError::Failed), 3).unwrap_err(),
        RetargetError::Failed
    );
    assert!(matches!(
        ask(|| Ok(Retargeted::Unchanged), 3),
        Ok(Retargeted::Unchanged)
    ));
    assert_eq!(calls.load(Ordering::SeqCst), 5);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn every_corruption_leads_to_a_fresh_rewrite_with_identical_output() {
    let dir = scratch("corrupt");
    let store = Store::open(&settings(&dir)).unwrap();
    let code = input();
    let (good, _) = run(&store, &code);
    let good = good.unwrap();
    let path = only_entry(&store);
    let pristine = std::fs::read(&path).unwrap();
    type Damage = Box<dyn Fn(&Path)>;
    let other_code = {
        let mut c = code.clone();
        c[10] ^= 1;
        c
    };
    let cases: Vec<(&str, Damage)> = vec![
        (
            "truncated",
            Box::new(|p| {
                let b = std::fs::read(p).unwrap();
                std::fs::write(p, &b[..b.len() / 2]).unwrap();
            }),
        ),
        ("empty", Box::new(|p| std::fs::write(p, b"").unwrap())),
        (
            "a flipped byte in the output",
            Box::new(|p| {
                let mut b = std::fs::read(p).unwrap();
                let last = b.len() - 1;
                b[last] ^= 0xff;
                std::fs::write(p, b).unwrap();
            }),
        ),
        (
            "a flipped byte in the header",
            Box::new(|p| {
                let mut b = std::fs::read(p).unwrap();
                b[60] ^= 0x01;
                std::fs::write(p, b).unwrap();
            }),
        ),
        (
            "a symbolic link in its place",
            Box::new(|p| {
                let target = p.with_extension("elsewhere");
                std::fs::rename(p, &target).unwrap();
                std::os::unix::fs::symlink(&target, p).unwrap();
            }),
        ),
        (
            "a directory in its place",
            Box::new(|p| {
                std::fs::remove_file(p).unwrap();
                std::fs::create_dir(p).unwrap();
            }),
        ),
        (
            "group-writable",
            Box::new(|p| {
                std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o660)).unwrap();
            }),
        ),
    ];
    for (what, damage) in cases {
        std::fs::write(&path, &pristine).ok();
        damage(&path);
        let refused = COUNTERS.refused.load(Ordering::Relaxed);
        let (out, called) = run(&store, &code);
        assert!(called, "{what}: must rewrite afresh");
        assert_eq!(out.unwrap(), good, "{what}: identical output");
        assert!(
            COUNTERS.refused.load(Ordering::Relaxed) > refused,
            "{what}: logged as refused"
        );
        let (_, called) = run(&store, &code);
        assert!(!called, "{what}: the entry was replaced by a good one");
        let _ = std::fs::remove_file(path.with_extension("elsewhere"));
        if path.is_dir() {
            let _ = std::fs::remove_dir(&path);
        }
    }
    // An entry of another key (two entries swapped).
    let (other_out, _) = run(&store, &other_code);
    let other_out = other_out.unwrap();
    let names: Vec<PathBuf> = store
        .list()
        .unwrap()
        .iter()
        .map(|e| store.path().join(&e.name))
        .collect();
    assert_eq!(names.len(), 2);
    let (a, b) = (
        std::fs::read(&names[0]).unwrap(),
        std::fs::read(&names[1]).unwrap(),
    );
    std::fs::write(&names[0], &b).unwrap();
    std::fs::write(&names[1], &a).unwrap();
    let (out, called) = run(&store, &code);
    assert!(called, "swapped entries are foreign");
    assert_eq!(out.unwrap(), good);
    let (out, called) = run(&store, &other_code);
    assert!(called);
    assert_eq!(out.unwrap(), other_out);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn unsafe_directories_mean_no_cache() {
    // A symbolic link in place of the directory.
    let dir = scratch("symlink-dir");
    let real = scratch("symlink-real");
    std::fs::create_dir_all(&real).unwrap();
    std::os::unix::fs::symlink(&real, &dir).unwrap();
    let why = Store::open(&settings(&dir)).unwrap_err();
    assert!(why.contains("symbolic link"), "{why}");
    // A symbolic link in place of rewrites/.
    let dir2 = scratch("symlink-sub");
    std::fs::create_dir_all(&dir2).unwrap();
    std::fs::set_permissions(&dir2, std::fs::Permissions::from_mode(0o700)).unwrap();
    std::os::unix::fs::symlink(&real, dir2.join("rewrites")).unwrap();
    let why = Store::open(&settings(&dir2)).unwrap_err();
    assert!(why.contains("not a directory"), "{why}");
    // Group- or other-writable.
    for mode in [0o770, 0o707, 0o777] {
        let d = scratch("mode");
        std::fs::create_dir_all(&d).unwrap();
        std::fs::set_permissions(&d, std::fs::Permissions::from_mode(mode)).unwrap();
        let why = Store::open(&settings(&d)).unwrap_err();
        assert!(
            why.contains("writable by group or others"),
            "{mode:o}: {why}"
        );
        let _ = std::fs::remove_dir_all(&d);
    }
    // Another owner (needs root to make one).
    if sys::euid() == 0 {
        let d = scratch("owner");
        std::fs::create_dir_all(&d).unwrap();
        std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o700)).unwrap();
        std::os::unix::fs::chown(&d, Some(65534), Some(65534)).unwrap();
        let why = Store::open(&settings(&d)).unwrap_err();
        assert!(why.contains("not by this user"), "{why}");
        let _ = std::fs::remove_dir_all(&d);
    }
    // Relative, off, AT_SECURE.
    let relative = Config::from_lookup(|n| (n == HSA_HOTSWAP_CACHE_DIR).then(|| "rel".into()));
    assert!(Settings::from_config(&relative, false)
        .dir
        .unwrap_err()
        .contains("absolute"));
    let off = Config::from_lookup(|n| match n {
        HSA_HOTSWAP_CACHE => Some("off".into()),
        HSA_HOTSWAP_CACHE_DIR => Some("/x".into()),
        _ => None,
    });
    assert!(Settings::from_config(&off, false).dir.is_err());
    let home = Config::from_lookup(|n| (n == "HOME").then(|| "/home/u".into()));
    assert_eq!(
        Settings::from_config(&home, false).dir,
        Ok(PathBuf::from("/home/u/.cache/hotswap"))
    );
    assert!(Settings::from_config(&home, true)
        .dir
        .unwrap_err()
        .contains("AT_SECURE"));
    let xdg = Config::from_lookup(|n| match n {
        "HOME" => Some("/home/u".into()),
        "XDG_CACHE_HOME" => Some("/xdg".into()),
        _ => None,
    });
    assert_eq!(
        Settings::from_config(&xdg, false).entries_dir(),
        Some(PathBuf::from("/xdg/hotswap/rewrites/v2"))
    );
    for d in [dir, real, dir2] {
        let _ = std::fs::remove_file(&d);
        let _ = std::fs::remove_dir_all(&d);
    }
}

#[test]
fn io_errors_mean_a_rewrite_as_without_a_cache() {
    let dir = scratch("io");
    let store = Store::open(&settings(&dir)).unwrap();
    let code = input();
    for (point, errno) in [
        ("cache.create", libc::EROFS),
        ("cache.write", libc::ENOSPC),
        ("cache.rename", libc::EIO),
    ] {
        testing::inject(point, errno);
        let (out, called) = run(&store, &code);
        assert!(called);
        assert_eq!(out.unwrap(), changed(&code).bytes(), "{point}");
        assert!(store.list().unwrap().is_empty(), "{point}: nothing stored");
        let names = store.dir.names().unwrap();
        assert!(
            !names.iter().any(|n| n.starts_with(TEMP_PREFIX)),
            "{point}: {names:?}"
        );
        testing::clear();
    }
    let (_, called) = run(&store, &code);
    assert!(called);
    let (_, called) = run(&store, &code);
    assert!(!called);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn concurrent_misses_rewrite_once() {
    let dir = scratch("threads");
    let code = input();
    let calls = AtomicUsize::new(0);
    std::thread::scope(|scope| {
        for _ in 0..8 {
            scope.spawn(|| {
                // One Store per thread: its own descriptors, like a process.
                let store = Store::open(&settings(&dir)).unwrap();
                store
                    .through("b", &code, None, &request(), || {
                        calls.fetch_add(1, Ordering::SeqCst);
                        std::thread::sleep(Duration::from_millis(50));
                        Ok(Retargeted::Changed(changed(&code)))
                    })
                    .unwrap()
            });
        }
    });
    assert_eq!(calls.load(Ordering::SeqCst), 1);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_lock_wait_is_bounded() {
    let dir = scratch("timeout");
    let mut s = settings(&dir);
    s.lock_timeout = Duration::from_millis(100);
    let holder = Store::open(&s).unwrap();
    let waiter = Store::open(&s).unwrap();
    let code = input();
    let key = key::of("b", &request(), &code).unwrap();
    let held = holder.lock(&key).expect("first lock");
    let start = Instant::now();
    let (out, called) = {
        let called = std::cell::Cell::new(false);
        let r = waiter.through("b", &code, None, &request(), || {
            called.set(true);
            Ok(Retargeted::Unchanged)
        });
        (r, called.get())
    };
    assert!(called && matches!(out, Ok(Retargeted::Unchanged)));
    assert!(start.elapsed() >= Duration::from_millis(100));
    assert!(start.elapsed() < Duration::from_secs(5));
    drop(held);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn least_recently_used_entries_are_evicted() {
    let dir = scratch("evict");
    let code = input();
    let entry_size = (HEADER_LEN + code.len()) as u64;
    let mut s = settings(&dir);
    s.max_bytes = entry_size * 2 + entry_size / 2;
    let store = Store::open(&s).unwrap();
    let variant = |i: u8| {
        let mut c = code.clone();
        c[10] = i;
        c
    };
    for i in 0..2 {
        let _ = run(&store, &variant(i));
    }
    // Make entry 0 the most recently used, then add a third.
    std::thread::sleep(Duration::from_millis(20));
    let (_, called) = run(&store, &variant(0));
    assert!(!called);
    let _ = run(&store, &variant(2));
    assert_eq!(store.list().unwrap().len(), 2);
    assert!(!run(&store, &variant(0)).1, "recently used entry kept");
    assert!(!run(&store, &variant(2)).1, "new entry kept");
    assert!(
        run(&store, &variant(1)).1,
        "least recently used entry evicted"
    );
    // An entry larger than the bound is never written.
    s.max_bytes = 10;
    let tiny = Store::open(&s).unwrap();
    tiny.clear().unwrap();
    let _ = run(&tiny, &code);
    assert!(tiny.list().unwrap().is_empty());
    let _ = std::fs::remove_dir_all(&dir);
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[test]
fn input_digest_is_sha256_and_the_key_derivation_is_pinned() {
    // FIPS 180-4 examples: the empty message and "abc".
    let empty = InputDigest::of(&[]);
    assert_eq!(
        hex(&empty.sha256),
        "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    );
    assert_eq!(empty.len, 0);
    let abc = InputDigest::of(b"abc");
    assert_eq!(
        hex(&abc.sha256),
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    );
    assert_eq!(abc.len, 3);
    // A key computed by this derivation, pinned: entries on disk and in
    // read-only stores outlive the build, so a change here must come with a
    // new entry format (entry::VERSION, key::DOMAIN), never silently. The
    // value was computed independently, with Python's hashlib over the
    // fields as key.rs documents them (each u64-length-prefixed: domain,
    // tool, backend, source, target; then the flag word, the size and the
    // input's SHA-256, little endian).
    let pinned = key::of_digest("0.1.0\0build-id 00", "b", &request(), &abc);
    assert_eq!(
        hex(&pinned),
        "6f7b3ae30a5e211fe8ab676dd000f575df9d8c8c998689e5245740b2a27fc2f0"
    );
}

#[test]
fn keys_differ_in_every_input() {
    let code = input();
    let base = key::of("b", &request(), &code);
    assert!(base.is_some());
    assert_eq!(base, key::of("b", &request(), &code));
    // The tool's build is part of the key.
    let digest = InputDigest::of(&code);
    let tool = key::tool_identity().unwrap();
    assert_eq!(base, Some(key::of_digest(tool, "b", &request(), &digest)));
    assert_ne!(
        base,
        Some(key::of_digest(
            "0.1.0\0build-id 00",
            "b",
            &request(),
            &digest
        ))
    );
    assert_ne!(base, key::of("c", &request(), &code));
    let mut other = code.clone();
    other[100] ^= 1;
    assert_ne!(base, key::of("b", &request(), &other));
    let flags = Request {
        flags: RewriteFlags {
            strict_mode: true,
            ..RewriteFlags::default()
        },
        ..request()
    };
    assert_ne!(base, key::of("b", &flags, &code));
    let pair = Request {
        target_isa: "amdgcn-amd-amdhsa--gfx1250-strict",
        ..request()
    };
    assert_ne!(base, key::of("b", &pair, &code));
}

#[test]
fn sizes_parse() {
    assert_eq!(parse_size("4096"), Some(4096));
    assert_eq!(parse_size("64K"), Some(64 << 10));
    assert_eq!(parse_size("512m"), Some(512 << 20));
    assert_eq!(parse_size("4G"), Some(4 << 30));
    assert_eq!(parse_size("4GiB"), Some(4 << 30));
    assert_eq!(parse_size("1T"), Some(1 << 40));
    assert_eq!(parse_size(""), None);
    assert_eq!(parse_size("big"), None);
    assert_eq!(parse_size("99999999999T"), None);
    let bad = Config::from_lookup(|n| (n == HSA_HOTSWAP_CACHE_MAX).then(|| "lots".into()));
    let s = Settings::from_config(&bad, false);
    assert_eq!(s.max_bytes, DEFAULT_MAX);
    assert_eq!(s.warnings.len(), 1);
}

#[test]
fn backends_name_themselves_persistently() {
    use crate::rewriter::native::Native;
    use hotswap_code_object::rewrite::Options;
    let strict = Native::new(Options::default()).cache_identity().unwrap();
    let partial = Native::new(Options {
        allow_partial: true,
        ..Options::default()
    })
    .cache_identity()
    .unwrap();
    assert_ne!(strict, partial, "allow_partial changes the output");
    assert_eq!(
        strict,
        Native::new(Options::default()).cache_identity().unwrap()
    );
    // A library backend: its ABI and the build of the file holding one of
    // its functions, never the file's path.
    let strlen = libc::strlen as *const () as usize;
    let id = library_identity("COMGR-ABI", strlen).unwrap();
    let libc_path = crate::dl::object_of(strlen).unwrap();
    let build = crate::rewriter::identity::file_build_identity(&libc_path).unwrap();
    assert_eq!(id, format!("COMGR-ABI\0{build}"));
    assert!(!id.contains('/'), "{id:?}");
    assert!(library_identity("x", 0).is_none());
    // The tool's build: its version and build identity, no path.
    let tool = key::tool_identity().unwrap();
    let version = concat!(env!("CARGO_PKG_VERSION"), "\0");
    assert!(tool.starts_with(version) && !tool.contains('/'), "{tool:?}");
    assert!(
        tool.contains("\0build-id ") || tool.contains("\0sha256 "),
        "{tool:?}"
    );
}

#[test]
fn an_entry_larger_than_the_bound_is_not_read() {
    let dir = scratch("oversize");
    let code = input();
    let store = Store::open(&settings(&dir)).unwrap();
    assert!(run(&store, &code).1);
    let mut s = settings(&dir);
    s.max_bytes = 100;
    let small = Store::open(&s).unwrap();
    let refused = COUNTERS.refused.load(Ordering::Relaxed);
    assert!(run(&small, &code).1, "rewritten, not read");
    assert!(COUNTERS.refused.load(Ordering::Relaxed) > refused);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn entries_of_the_older_format_are_removed_on_open() {
    let dir = scratch("old-format");
    let old = dir.join("rewrites/v1");
    std::fs::create_dir_all(&old).unwrap();
    for name in ["ab.entry", "lock.ab", "tmp.1.2.ab"] {
        std::fs::write(old.join(name), b"old").unwrap();
    }
    let store = Store::open(&settings(&dir)).unwrap();
    assert!(!old.exists(), "the v1 directory is removed");
    assert!(store.path().ends_with("rewrites/v2"));
    // Something this cache never writes keeps the old directory.
    std::fs::create_dir_all(&old).unwrap();
    std::fs::write(old.join("notes.txt"), b"mine").unwrap();
    std::fs::write(old.join("cd.entry"), b"old").unwrap();
    drop(Store::open(&settings(&dir)).unwrap());
    assert!(old.join("notes.txt").exists() && !old.join("cd.entry").exists());
    let _ = std::fs::remove_dir_all(&dir);
}

/// One lookup through the layers `cache` and `store`; as [`run`].
fn run_layers(
    cache: Option<&Store>,
    store: Option<&Store>,
    code: &[u8],
) -> (Result<Vec<u8>, RetargetError>, bool) {
    let called = std::cell::Cell::new(false);
    let tool = key::tool_identity().unwrap();
    let digest = InputDigest::of(code);
    let r = through_layers(
        cache,
        store,
        tool,
        "test backend",
        &digest,
        &request(),
        || {
            called.set(true);
            Ok(Retargeted::Changed(changed(code)))
        },
    );
    let r = r.map(|r| match r {
        Retargeted::Changed(b) => b.bytes().to_vec(),
        Retargeted::Unchanged => code.to_vec(),
    });
    (r, called.get())
}

/// Every file under `dir` with its size and modification time.
fn snapshot(dir: &Path) -> Vec<(PathBuf, u64, SystemTime)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let m = std::fs::symlink_metadata(e.path()).unwrap();
            if m.is_dir() {
                stack.push(e.path());
            }
            out.push((e.path(), m.len(), m.modified().unwrap()));
        }
    }
    out.sort();
    out
}

#[test]
fn a_read_only_store_answers_after_the_cache_and_is_never_written() {
    let root = scratch("ro-store");
    let code = input();
    // Fill the store as `hotswap cache warm --into` does: a cache directory.
    let filler = Store::open(&settings(&root)).unwrap();
    let (made, called) = run(&filler, &code);
    assert!(called);
    drop(filler);
    let before = snapshot(&root);
    std::thread::sleep(Duration::from_millis(20));
    let store = Store::open_read_only(&root).unwrap();
    assert!(store.is_read_only());
    // Store only: a hit, nothing written.
    let hits = COUNTERS.store_hits.load(Ordering::Relaxed);
    let (r, called) = run_layers(None, Some(&store), &code);
    assert!(!called, "a store hit calls no rewriter");
    assert_eq!(r.unwrap(), made.clone().unwrap());
    assert!(COUNTERS.store_hits.load(Ordering::Relaxed) > hits);
    // With a user cache first: the store answers, the cache gets no copy.
    let user = scratch("ro-user");
    let cache = Store::open(&settings(&user)).unwrap();
    let (r, called) = run_layers(Some(&cache), Some(&store), &code);
    assert!(!called);
    assert_eq!(r.unwrap(), made.unwrap());
    assert!(
        cache.list().unwrap().is_empty(),
        "a store hit is not copied"
    );
    assert_eq!(
        snapshot(&root),
        before,
        "the store is not touched (not even times)"
    );
    // A miss in both: rewritten and stored in the cache only.
    let mut other = code.clone();
    other[10] ^= 1;
    let (_, called) = run_layers(Some(&cache), Some(&store), &other);
    assert!(called);
    assert_eq!(cache.list().unwrap().len(), 1);
    assert_eq!(snapshot(&root), before);
    // A corrupted entry of the store: ignored (a rewrite), left in place.
    let entry = store.path().join(&store.list().unwrap()[0].name);
    let mut bytes = std::fs::read(&entry).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 0xff;
    std::fs::write(&entry, &bytes).unwrap();
    let (_, called) = run_layers(None, Some(&store), &code);
    assert!(called, "a corrupted store entry is not used");
    assert!(entry.exists(), "nor removed");
    let _ = std::fs::remove_dir_all(&root);
    let _ = std::fs::remove_dir_all(&user);
}

#[test]
fn an_untrusted_read_only_store_is_refused() {
    let root = scratch("ro-untrusted");
    drop(Store::open(&settings(&root)).unwrap());
    assert!(Store::open_read_only(&root).is_ok());
    let v2 = root.join("rewrites/v2");
    for (dir, mode) in [(&root, 0o770), (&root, 0o702), (&v2, 0o720)] {
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(mode)).unwrap();
        let why = Store::open_read_only(&root).unwrap_err();
        assert!(why.contains("writable by group or others"), "{why}");
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700)).unwrap();
    }
    // Symbolic links: to the store, and in place of a subdirectory.
    let link = scratch("ro-link");
    std::os::unix::fs::symlink(&root, &link).unwrap();
    let why = Store::open_read_only(&link).unwrap_err();
    assert!(why.contains("symbolic link"), "{why}");
    let moved = root.join("rewrites-real");
    std::fs::rename(root.join("rewrites"), &moved).unwrap();
    std::os::unix::fs::symlink(&moved, root.join("rewrites")).unwrap();
    let why = Store::open_read_only(&root).unwrap_err();
    assert!(why.contains("symbolic link"), "{why}");
    std::fs::remove_file(root.join("rewrites")).unwrap();
    std::fs::rename(&moved, root.join("rewrites")).unwrap();
    // Another owner (root can make one): refused; root's own is trusted.
    if sys::euid() == 0 {
        use std::os::unix::fs::chown;
        chown(&root, Some(65534), Some(65534)).unwrap();
        let why = Store::open_read_only(&root).unwrap_err();
        assert!(why.contains("owned by uid 65534"), "{why}");
        chown(&root, Some(0), Some(0)).unwrap();
    }
    assert!(Store::open_read_only(Path::new("relative/store")).is_err());
    assert!(Store::open_read_only(&scratch("ro-missing")).is_err());
    let _ = std::fs::remove_file(&link);
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn the_store_directory_comes_from_the_variable_or_the_prefix() {
    let with = |v: Option<&str>| {
        let v = v.map(str::to_owned);
        Config::from_lookup(move |n| (n == HSA_HOTSWAP_CACHE_STORE).then(|| v.clone()).flatten())
    };
    let lib = Path::new("/opt/hotswap/lib/libhsa-hotswap.so");
    let store = PathBuf::from("/opt/hotswap/share/hotswap/store");
    assert_eq!(store_dir(&with(None), Some(lib)), Ok(store.clone()));
    let multiarch = Path::new("/opt/hotswap/lib/x86_64-linux-gnu/libhsa-hotswap.so");
    assert_eq!(store_dir(&with(None), Some(multiarch)), Ok(store.clone()));
    let cli = Path::new("/opt/hotswap/bin/hotswap");
    assert_eq!(store_dir(&with(None), Some(cli)), Ok(store));
    assert!(store_dir(&with(None), Some(Path::new("/tmp/x/libhsa-hotswap.so"))).is_err());
    assert!(store_dir(&with(None), None).is_err());
    assert_eq!(
        store_dir(&with(Some("/srv/store")), Some(lib)),
        Ok(PathBuf::from("/srv/store"))
    );
    assert!(store_dir(&with(Some("off")), Some(lib))
        .unwrap_err()
        .contains("switched off"));
    assert!(store_dir(&with(Some("store")), Some(lib))
        .unwrap_err()
        .contains("not an absolute path"));
}

#[test]
fn export_then_import_is_byte_identical_and_a_corrupted_archive_is_refused() {
    let from = scratch("export");
    let cache = Store::open(&settings(&from)).unwrap();
    let code = input();
    for i in 0..3u8 {
        let mut c = code.clone();
        c[10] = i;
        let _ = run(&cache, &c);
    }
    // A damaged entry is left out of the archive, not exported.
    let mut bad = code.clone();
    bad[10] = 9;
    let _ = run(&cache, &bad);
    let names: Vec<String> = cache.list().unwrap().into_iter().map(|e| e.name).collect();
    let damaged = cache.path().join(&names[0]);
    let mut bytes = std::fs::read(&damaged).unwrap();
    bytes[HEADER_LEN] ^= 1;
    std::fs::write(&damaged, &bytes).unwrap();
    let mut archive = Vec::new();
    let (n, _, skipped) = cache.export(&mut archive).unwrap();
    assert_eq!((n, skipped.len()), (3, 1), "{skipped:?}");
    let to = scratch("import");
    let store = Store::open_store_for_writing(&to).unwrap();
    assert_eq!(store.import(&archive).unwrap().0, 3);
    for name in &names[1..] {
        assert_eq!(
            std::fs::read(cache.path().join(name)).unwrap(),
            std::fs::read(store.path().join(name)).unwrap(),
            "{name}"
        );
        let mode = std::fs::metadata(store.path().join(name))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o644, "a store's entries are readable by all");
    }
    assert!(!store.path().join(&names[0]).exists());
    // The imported store serves loads as a read-only store.
    let ro = Store::open_read_only(&to).unwrap();
    let mut c = code.clone();
    c[10] = 1;
    assert!(!run_layers(None, Some(&ro), &c).1);
    // A corrupted archive: refused whole, nothing written.
    let empty = scratch("import-bad");
    let target = Store::open_store_for_writing(&empty).unwrap();
    let mut corrupted = archive.clone();
    let mid = corrupted.len() / 2;
    corrupted[mid] ^= 0x40;
    assert!(target.import(&corrupted).unwrap_err().contains("refused"));
    assert!(target.import(&archive[..archive.len() - 1]).is_err());
    assert!(target.list().unwrap().is_empty());
    assert!(
        ro.import(&archive).is_err(),
        "a read-only store is never written"
    );
    for d in [from, to, empty] {
        let _ = std::fs::remove_dir_all(d);
    }
}

/// A first load with the cache on reads its input once (the memo's XXH3-128
/// and the cache's SHA-256 in one fused pass, the digest handed down); a
/// repeated load once more (XXH3-128 only, the memo answers); another input
/// of a size the memo holds takes the two-pass path (XXH3-128, then the
/// cache's SHA-256 after the memo missed). The key is the one a separate
/// SHA-256 pass gives, so entries written that way are found.
#[test]
fn a_first_load_with_the_cache_on_hashes_its_input_once() {
    use crate::digest::{testing::hashed_here, Digests};
    use crate::policy::Decision;
    use crate::retained::{forget_cache, rewrite_once, Outcome};
    use crate::stats::STATS;
    use std::sync::Arc;

    let _exclusive = crate::testing::exclusive();
    forget_cache();
    let dir = scratch("one-pass");
    let store = Store::open(&settings(&dir)).unwrap();
    let code = input();
    let n = code.len() as u64;
    let decision = Decision {
        source: SRC.into(),
        target: TGT.into(),
    };
    // The same key from the fused pass's digest as from a pass of its own.
    let tool = key::tool_identity().unwrap();
    let fused = Digests::fused(&code).input_digest().unwrap();
    let separate = InputDigest::of(&code);
    assert_eq!(fused, separate);
    assert_eq!(
        key::of_digest(tool, "test backend", &request(), &fused),
        key::of_digest(tool, "test backend", &request(), &separate)
    );
    // An entry written by a lookup that hashed the input by itself.
    let (written, called) = run(&store, &code);
    assert!(called);
    let rewrites = AtomicUsize::new(0);
    let through = |bytes: &[u8], digest: Option<&InputDigest>| {
        store.through("test backend", bytes, digest, &request(), || {
            rewrites.fetch_add(1, Ordering::SeqCst);
            Ok(Retargeted::Changed(changed(bytes)))
        })
    };

    // First load: one pass, its SHA-256 handed to the cache, which finds the
    // entry written above.
    let (here, process) = (hashed_here(), STATS.hashed_bytes.load(Ordering::SeqCst));
    let mut handed = None;
    let (first, from_memo) = rewrite_once(
        &code,
        &decision,
        || true,
        |digest| {
            handed = digest.copied();
            through(&code, digest)
        },
    )
    .unwrap();
    assert_eq!(hashed_here() - here, n, "one pass over the input");
    assert!(STATS.hashed_bytes.load(Ordering::SeqCst) - process >= n);
    assert_eq!(
        handed,
        Some(separate),
        "the fused pass's digest, handed down"
    );
    assert_eq!(rewrites.load(Ordering::SeqCst), 0, "the entry was found");
    let Outcome::Changed(first) = first else {
        panic!("a rewritten object")
    };
    assert!(!from_memo);
    assert_eq!(&first[..], &written.unwrap()[..]);

    // Repeated load: the memo answers after one XXH3-128 pass.
    let here = hashed_here();
    let not_asked = || panic!("not asked: an entry of this size is in the memo");
    let (again, from_memo) = rewrite_once(&code, &decision, not_asked, |_| panic!("memo")).unwrap();
    assert!(from_memo && matches!(&again, Outcome::Changed(b) if Arc::ptr_eq(b, &first)));
    assert_eq!(hashed_here() - here, n, "XXH3-128 only");

    // Other bytes of a size the memo holds: XXH3-128 first (the memo could
    // have answered), then, on the miss, the cache's own SHA-256 pass.
    let mut other = code.clone();
    other[200] ^= 1;
    let here = hashed_here();
    let (_, from_memo) = rewrite_once(&other, &decision, not_asked, |digest| {
        assert!(digest.is_none(), "no SHA-256 computed by the memo");
        through(&other, digest)
    })
    .unwrap();
    assert!(!from_memo);
    assert_eq!(hashed_here() - here, 2 * n, "two passes");
    assert_eq!(rewrites.load(Ordering::SeqCst), 1);

    // Without a persistent cache: XXH3-128 only, whatever the memo holds.
    let short = &code[..code.len() - 1];
    let here = hashed_here();
    let (o, _) = rewrite_once(
        short,
        &decision,
        || false,
        |digest| {
            assert!(digest.is_none());
            Ok(Retargeted::Unchanged)
        },
    )
    .unwrap();
    assert!(matches!(o, Outcome::Unchanged));
    assert_eq!(hashed_here() - here, n - 1);

    drop((first, again));
    forget_cache();
    let _ = std::fs::remove_dir_all(&dir);
}
