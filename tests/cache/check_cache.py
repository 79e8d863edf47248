#!/usr/bin/env python3
"""The persistent rewrite cache across processes (label cache).

Usage: check_cache.py CHECK KIND SCRATCH [--cli HOTSWAP] -- CHILD...

KIND says how CHILD loads one gfx1250 object on an A0 GPU and where the
loaded bytes go:
  standin  CHILD is `hotswap-standin cache-load`; the variant (a size to pad
           the object to) is appended, the bytes go to $STANDIN_CACHE_OUT;
  capi     CHILD is `cache_capi OBJECT`; the variant is a padded copy of
           OBJECT, the bytes go to the path appended last.
Both print "cache-load: rewriter calls N (probe P), load NS ns, SIZE bytes".

CHECKs (each in a fresh directory under SCRATCH; HSA_HOTSWAP_CACHE=on and
HSA_HOTSWAP_CACHE_DIR set for the children):
  basic       a second process makes no rewriter call and loads identical
              bytes; the directories are 0700; `hotswap cache stats|list|clear
              --json` agree; after clear the next process rewrites again;
              (standin) each of the two processes hashes its input in one
              pass (the tool's "bytes hashed" statistic: the memo's XXH3-128
              and the cache's SHA-256 fused);
  concurrent  8 processes started together make one rewriter call and load
              identical bytes (the rewriter takes 300 ms per call);
  corrupt     every corruption (truncated, a flipped byte, two entries
              swapped, an entry of another key, a symbolic link in place of an
              entry or of the directory, a group/other-writable directory, a
              directory of another owner when run as root) leads to a fresh
              rewrite with identical bytes and a log line;
  mounts      a full file system (ENOSPC) and a read-only one (EROFS), made in
              a private mount namespace (`unshare -rm`): loads as without a
              cache; SKIP (exit 77) where no namespace can be made;
  secure      a setgid copy of CHILD (AT_SECURE) does not use a warm cache;
              SKIP (exit 77) unless root;
  portable    two installations of the same build (the tool library and the
              rewriter copied to two prefixes: other paths, inodes and
              times) share entries: the second makes no rewriter call and
              loads identical bytes, also when `hotswap cache warm` with the
              first one's library and rewriter filled the cache; a tool or a rewriter whose build-id
              differs (a copy with one byte of its build-id note changed)
              misses; entries of the older format are removed (standin only:
              the capi child links the library, it does not dlopen it);
  warmed      `hotswap cache warm` of the child's object, with the same tool
              library and rewriter, stores what a load then hits: no rewriter
              call, identical bytes; a second warm rewrites nothing (standin
              only: the capi child asks for its own ISA pair);
  store       a read-only store (HSA_HOTSWAP_CACHE_STORE) filled by `hotswap
              cache warm --into`: a load with an empty cache hits it without
              writing it or copying into the cache; a group-writable, a
              symbolically linked and (as root) another user's store are each
              refused with one warning; `cache export --from` then `cache
              import --into` gives byte-identical entries that loads hit; a
              corrupted archive is refused and writes nothing; `cache stats`
              reports the store apart from the cache (standin only);
  nolock      flock fails everywhere (LD_PRELOAD of a shim whose flock()
              returns ENOLCK, as on NFS without a lock manager): 8 processes
              started together all finish with identical, correct bytes, the
              fallback is logged once in each, the cache keeps one whole
              entry that the next process hits;
  bench       prints cold (miss) and warm (hit) loads of a 4 KB, a 4 MB and a
              100 MB object, and the same without a cache (a benchmark: figures,
              no timing assertions).
"""
import json
import os
import re
import shutil
import stat
import subprocess
import sys
import tempfile
import time

SKIP = 77
LINE = re.compile(r"cache-load: rewriter calls (\d+) \(probe (\d+)\), load (\d+) ns, (\d+) bytes")
failures = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what, flush=True)
    if not ok:
        failures.append(what)


class Child:
    def __init__(self, kind, argv, scratch):
        self.kind, self.argv, self.scratch = kind, argv, scratch
        self.serial = 0
        self.padded = {}

    def object_for(self, variant):
        """The capi child's input for `variant`: the object itself, or a copy
        padded to that size, written on first use (the 100 MB one only by the
        checks that load it)."""
        obj = self.argv[-1]
        if not variant:
            return obj
        if variant not in self.padded:
            with open(obj, "rb") as f:
                data = f.read()
            if int(variant) <= len(data):
                return obj
            path = os.path.join(self.scratch, f"object-{variant}.co")
            with open(path, "wb") as f:
                f.write(data + bytes(int(variant) - len(data)))
            self.padded[variant] = path
        return self.padded[variant]

    def command(self, variant, out):
        if self.kind == "standin":
            return self.argv + ([variant] if variant else []), {"STANDIN_CACHE_OUT": out}
        return self.argv[:-1] + [self.object_for(variant), out], {}

    def run(self, cache_dir, variant="", env=None, argv0=None, background=False):
        self.serial += 1
        out = os.path.join(self.scratch, f"out-{self.serial}.bin")
        argv, extra = self.command(variant, out)
        if argv0:
            argv = [argv0] + argv[1:]
        e = dict(os.environ, HSA_HOTSWAP_CACHE="on", HSA_HOTSWAP_LOG_LEVEL="debug", **extra)
        if cache_dir is not None:
            e["HSA_HOTSWAP_CACHE_DIR"] = cache_dir
        e.update(env or {})
        p = subprocess.Popen(argv, env=e, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        result = lambda: self.finish(p, out)
        return result if background else result()

    @staticmethod
    def finish(p, out):
        stdout, stderr = p.communicate(timeout=600)
        m = LINE.search(stdout)
        if p.returncode != 0 or not m:
            print(stdout + stderr)
            raise SystemExit(f"FAIL: child exited {p.returncode}")
        with open(out, "rb") as f:
            data = f.read()
        os.unlink(out)
        return {"calls": int(m.group(1)), "ns": int(m.group(3)), "size": int(m.group(4)),
                "bytes": data, "log": stderr}


def fresh(scratch, name):
    d = os.path.join(scratch, name)
    if os.path.lexists(d):
        if os.path.islink(d):
            os.unlink(d)
        else:
            subprocess.run(["chmod", "-R", "u+rwx", d], check=False)
            shutil.rmtree(d)
    return d


def entries(cache_dir):
    d = os.path.join(cache_dir, "rewrites", "v2")
    return sorted(os.path.join(d, n) for n in os.listdir(d) if n.endswith(".entry"))


def basic(child, scratch, cli):
    d = fresh(scratch, "basic")
    first = child.run(d)
    check(first["calls"] == 1, f"first process: one rewriter call (got {first['calls']})")
    second = child.run(d)
    check(second["calls"] == 0, f"second process: no rewriter call (got {second['calls']})")
    check(second["bytes"] == first["bytes"], "second process: identical bytes")
    check("rewrite cache: hit" in second["log"], "the hit is logged at debug level")
    if child.kind == "standin":
        # One pass over the input per process, miss or hit: the in-process memo's XXH3-128 and the
        # cache's SHA-256 fused (OnUnload's statistics; the test rewriter keeps the input's size).
        for label, r in (("first process (miss)", first), ("second process (hit)", second)):
            m = re.search(r"bytes hashed (\d+)", r["log"])
            hashed = int(m.group(1)) if m else None
            check(hashed == len(first["bytes"]),
                  f"{label}: its input hashed in one pass ({hashed} bytes, input {len(first['bytes'])})")
    for sub in ("", "rewrites", "rewrites/v2"):
        mode = stat.S_IMODE(os.stat(os.path.join(d, sub)).st_mode)
        check(mode == 0o700, f"{sub or 'the cache directory'} is 0700 (got {mode:o})")
    check(len(entries(d)) == 1, "one entry")
    if cli:
        env = dict(os.environ, HSA_HOTSWAP_CACHE_DIR=d, HSA_HOTSWAP_CACHE="on")
        stats = json.loads(subprocess.run([cli, "cache", "stats", "--json"], env=env, check=True,
                                          capture_output=True, text=True).stdout)
        check(stats["usable"] and stats["totals"]["entries"] == 1 and stats["totals"]["rewritten"] == 1,
              f"hotswap cache stats: one rewritten entry ({stats['totals']})")
        listed = json.loads(subprocess.run([cli, "cache", "list", "--json"], env=env, check=True,
                                           capture_output=True, text=True).stdout)
        check(len(listed) == 1 and listed[0]["outcome"] == "rewritten"
              and listed[0]["output_size"] == len(first["bytes"]), f"hotswap cache list: {listed}")
        path = subprocess.run([cli, "cache", "path"], env=env, check=True, capture_output=True,
                              text=True).stdout.strip()
        check(path == os.path.join(d, "rewrites", "v2"), f"hotswap cache path: {path}")
        cleared = json.loads(subprocess.run([cli, "cache", "clear", "--json"], env=env, check=True,
                                            capture_output=True, text=True).stdout)
        check(cleared["removed_entries"] == 1, f"hotswap cache clear: {cleared}")
        third = child.run(d)
        check(third["calls"] == 1 and third["bytes"] == first["bytes"], "after clear: rewritten again")
    off = child.run(d, env={"HSA_HOTSWAP_CACHE": "off"})
    check(off["calls"] == 1 and off["bytes"] == first["bytes"], "HSA_HOTSWAP_CACHE=off: rewritten, same bytes")


def concurrent(child, scratch, _cli):
    d = fresh(scratch, "concurrent")
    waits = [child.run(d, env={"TEST_REWRITER_DELAY_MS": "300"}, background=True) for _ in range(8)]
    results = [w() for w in waits]
    calls = sum(r["calls"] for r in results)
    check(calls == 1, f"8 processes at once: one rewriter call in total (got {calls})")
    check(all(r["bytes"] == results[0]["bytes"] for r in results), "8 processes: identical bytes")


def corrupt(child, scratch, _cli):
    ref = child.run(fresh(scratch, "reference"), env={"HSA_HOTSWAP_CACHE": "off"})["bytes"]
    ref_b = child.run(fresh(scratch, "reference"), "8192", env={"HSA_HOTSWAP_CACHE": "off"})["bytes"]

    def warm(name, both=False):
        d = fresh(scratch, name)
        child.run(d)
        if both:
            child.run(d, "8192")
        return d

    def entry_of(d, variant=""):
        # The entry a load of `variant` reads: the one whose input size matches.
        size = len(ref) if not variant else int(variant)
        for e in entries(d):
            with open(e, "rb") as f:
                head = f.read(88)
            if int.from_bytes(head[48:56], "little") == size:
                return e
        raise SystemExit(f"FAIL: no entry for {variant or 'the object'} in {d}")

    def expect(d, what, pattern, replaced=True):
        r = child.run(d)
        check(r["calls"] == 1, f"{what}: a fresh rewrite (calls {r['calls']})")
        check(r["bytes"] == ref, f"{what}: identical bytes")
        check(re.search(pattern, r["log"]) is not None, f"{what}: log line /{pattern}/")
        if replaced:
            again = child.run(d)
            check(again["calls"] == 0 and again["bytes"] == ref, f"{what}: the entry was replaced")

    def rewrite_file(path, fn):
        with open(path, "rb") as f:
            data = f.read()
        with open(path, "wb") as f:
            f.write(fn(data))

    d = warm("truncated")
    rewrite_file(entry_of(d), lambda b: b[: len(b) // 2])
    expect(d, "truncated entry", r"rewrite cache: entry .* ignored: its size")
    d = warm("flipped")
    rewrite_file(entry_of(d), lambda b: b[:-1] + bytes([b[-1] ^ 0xFF]))
    expect(d, "a flipped byte", r"ignored: its checksum does not match")
    d = warm("swapped", both=True)
    a, b = entry_of(d), entry_of(d, "8192")
    tmp = a + ".swap"
    os.rename(a, tmp)
    os.rename(b, a)
    os.rename(tmp, b)
    expect(d, "two entries swapped", r"ignored: it answers another key")
    r = child.run(d, "8192")
    check(r["calls"] == 1 and r["bytes"] == ref_b, "two entries swapped: the other object too")
    d = warm("foreign", both=True)
    shutil.copyfile(entry_of(d, "8192"), entry_of(d))
    expect(d, "an entry of another key", r"ignored: it answers another key")
    d = warm("symlink-entry")
    e = entry_of(d)
    os.rename(e, e + ".real")
    os.symlink(e + ".real", e)
    expect(d, "a symbolic link in place of an entry", r"ignored: it is a symbolic link")
    d = fresh(scratch, "symlink-dir")
    real = warm("symlink-dir-real")
    os.symlink(real, d)
    expect(d, "a symbolic link in place of the directory", r"rewrite cache not used: .* symbolic link",
           replaced=False)
    d = warm("writable")
    os.chmod(d, 0o777)
    expect(d, "a group/other-writable directory", r"rewrite cache not used: .*writable by group or others",
           replaced=False)
    d = warm("writable-sub")
    os.chmod(os.path.join(d, "rewrites", "v2"), 0o770)
    expect(d, "a group-writable entries directory", r"rewrite cache not used: .*writable by group or others",
           replaced=False)
    if os.geteuid() == 0:
        d = warm("owner")
        os.chown(d, 65534, 65534)
        expect(d, "a directory of another owner", r"rewrite cache not used: .*owned by uid 65534", replaced=False)
    else:
        print("skip another owner's directory: needs root to make one")


def mounts(child, scratch, _cli):
    if os.environ.get("HOTSWAP_CACHE_IN_NAMESPACE") != "1":
        probe = subprocess.run(["unshare", "-rm", "true"], capture_output=True)
        if probe.returncode != 0:
            print(f"SKIP: no private mount namespace (unshare -rm: {probe.stderr.decode().strip()})")
            sys.exit(SKIP)
        env = dict(os.environ, HOTSWAP_CACHE_IN_NAMESPACE="1")
        sys.exit(subprocess.run(["unshare", "-rm", sys.executable] + sys.argv, env=env).returncode)
    ref = child.run(None, env={"HSA_HOTSWAP_CACHE": "off"})["bytes"]
    for name, errno_pattern, prepare in (
        ("full", r"No space left on device", "fill"),
        ("readonly", r"Read-only file system", "remount"),
    ):
        m = fresh(scratch, "mount-" + name)
        os.makedirs(m)
        subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k,mode=0700", "tmpfs", m], check=True)
        os.makedirs(os.path.join(m, "rewrites", "v2"), mode=0o700)
        if prepare == "fill":
            try:
                with open(os.path.join(m, "filler"), "wb") as f:
                    while True:
                        f.write(bytes(4096))
                        f.flush()
            except OSError:
                pass  # full
        else:
            subprocess.run(["mount", "-o", "remount,ro", m], check=True)
        for i in range(2):
            r = child.run(m)
            check(r["calls"] == 1 and r["bytes"] == ref, f"{name} file system, process {i + 1}: loaded as without a cache")
            check(re.search(errno_pattern, r["log"]) is not None, f"{name}: the error is logged ({errno_pattern})")
        subprocess.run(["umount", m], check=False)


def secure(child, scratch, _cli):
    if os.geteuid() != 0:
        print("SKIP: a setgid process of another group needs root to make")
        sys.exit(SKIP)
    d = fresh(scratch, "secure")
    first = child.run(d)
    again = child.run(d)
    check(first["calls"] == 1 and again["calls"] == 0, "the cache is warm for a normal process")
    copy = os.path.join(scratch, "setgid-" + os.path.basename(child.argv[0]))
    shutil.copy2(child.argv[0], copy)
    os.chown(copy, 0, 65534)
    os.chmod(copy, 0o2755)
    r = child.run(d, argv0=copy)
    if r["calls"] == 0 and "AT_SECURE" not in r["log"]:
        # Mounted nosuid: the bit has no effect and the process is not secure.
        print("SKIP: the setgid bit had no effect here (nosuid?)")
        sys.exit(SKIP)
    check(r["calls"] == 1 and r["bytes"] == first["bytes"], f"setgid (AT_SECURE): no cache, rewritten (calls {r['calls']})")
    check("AT_SECURE" in r["log"], "AT_SECURE: logged at debug level")


def build_id_offset(data):
    """Offset and size of the GNU build-id descriptor of an ELF64 file, from its PT_NOTE headers."""
    phoff = int.from_bytes(data[0x20:0x28], "little")
    phentsize = int.from_bytes(data[0x36:0x38], "little")
    for i in range(int.from_bytes(data[0x38:0x3a], "little")):
        h = phoff + i * phentsize
        if int.from_bytes(data[h:h + 4], "little") != 4:  # PT_NOTE
            continue
        at = int.from_bytes(data[h + 8:h + 16], "little")
        end = at + int.from_bytes(data[h + 32:h + 40], "little")
        while at + 12 <= end:
            namesz, descsz, kind = (int.from_bytes(data[at + k:at + k + 4], "little") for k in (0, 4, 8))
            name_at = at + 12
            desc_at = name_at + ((namesz + 3) & ~3)
            if kind == 3 and data[name_at:name_at + namesz] == b"GNU\0":
                return desc_at, descsz
            at = desc_at + ((descsz + 3) & ~3)
    return None


def install(src, prefix, name, rebuilt=False):
    """A copy of `src` at prefix/lib/name; `rebuilt`: one byte of its build-id changed."""
    os.makedirs(os.path.join(prefix, "lib"), exist_ok=True)
    dst = os.path.join(prefix, "lib", name)
    with open(src, "rb") as f:
        data = bytearray(f.read())
    found = build_id_offset(data)
    check(found is not None, f"{name} carries a GNU build-id note")
    if rebuilt and found:
        data[found[0]] ^= 0xFF
    with open(dst, "wb") as f:
        f.write(data)
    os.chmod(dst, 0o755)
    return dst


def portable(child, scratch, cli):
    if child.kind != "standin":
        print("SKIP: the capi child links the tool library; the stand-in dlopens HSA_TOOLS_LIB")
        sys.exit(SKIP)
    tool, rewriter = os.environ["HSA_TOOLS_LIB"], os.environ["HSA_HOTSWAP_REWRITER"]
    d = fresh(scratch, "portable")
    old = os.path.join(d, "rewrites", "v1")
    os.makedirs(old, mode=0o700)
    os.chmod(d, 0o700)
    os.chmod(os.path.join(d, "rewrites"), 0o700)
    with open(os.path.join(old, "00" * 32 + ".entry"), "wb") as f:
        f.write(b"an entry of the older format")

    def prefix(name, rebuilt_tool=False, rebuilt_rewriter=False):
        p = fresh(scratch, name)
        return {"HSA_TOOLS_LIB": install(tool, p, "libhsa-hotswap.so", rebuilt_tool),
                "HSA_HOTSWAP_REWRITER": install(rewriter, p, "librewriter-change.so", rebuilt_rewriter)}

    a = prefix("prefix-a")
    time.sleep(0.05)
    b = prefix("prefix-b")
    check(os.stat(a["HSA_TOOLS_LIB"]).st_ino != os.stat(b["HSA_TOOLS_LIB"]).st_ino, "two installations: other inodes")
    first = child.run(d, env=a)
    check(first["calls"] == 1, f"installation A: one rewriter call (got {first['calls']})")
    check(not os.path.exists(old), "the older format's entries are removed")
    second = child.run(d, env=b)
    check(second["calls"] == 0, f"installation B: no rewriter call (got {second['calls']})")
    check(second["bytes"] == first["bytes"], "installation B: identical bytes")
    check(len(entries(d)) == 1, "one entry for both installations")
    tool_rebuilt = child.run(d, env=prefix("prefix-tool-rebuilt", rebuilt_tool=True))
    check(tool_rebuilt["calls"] == 1, f"a tool of another build-id misses (calls {tool_rebuilt['calls']})")
    check(tool_rebuilt["bytes"] == first["bytes"], "a tool of another build-id: identical bytes")
    backend = child.run(d, env=prefix("prefix-rewriter-upgraded", rebuilt_rewriter=True))
    check(backend["calls"] == 1, f"a rewriter of another build-id misses (calls {backend['calls']})")
    check(len(entries(d)) == 3, f"one entry per tool and rewriter build (got {len(entries(d))})")
    again = child.run(d, env=prefix("prefix-c"))
    check(again["calls"] == 0 and again["bytes"] == first["bytes"], "a third installation of the first build hits")
    if cli:
        # Warm with installation A's tool and rewriter; load with B's.
        w = fresh(scratch, "portable-warmed")
        obj = os.path.join(os.environ["STANDIN_CODE_OBJECTS"], "gfx1250.co")
        env = dict(os.environ, HSA_HOTSWAP_CACHE="on", HSA_HOTSWAP_CACHE_DIR=w)
        subprocess.run([cli, "cache", "warm", "--tool", a["HSA_TOOLS_LIB"], "--backend",
                        a["HSA_HOTSWAP_REWRITER"], obj], env=env, check=True, capture_output=True)
        loaded = child.run(w, env=b)
        check(loaded["calls"] == 0 and loaded["bytes"] == first["bytes"],
              f"warmed with installation A, loaded with B: a hit, identical bytes (calls {loaded['calls']})")


def warmed(child, scratch, cli):
    if child.kind != "standin" or not cli:
        print("SKIP: needs the stand-in and the hotswap command")
        sys.exit(SKIP)
    ref = child.run(None, env={"HSA_HOTSWAP_CACHE": "off"})["bytes"]
    d = fresh(scratch, "warmed")
    obj = os.path.join(os.environ["STANDIN_CODE_OBJECTS"], "gfx1250.co")
    env = dict(os.environ, HSA_HOTSWAP_CACHE_DIR=d, HSA_HOTSWAP_CACHE="on")
    warm = [cli, "cache", "warm", "--json", "--backend", os.environ["HSA_HOTSWAP_REWRITER"], obj]
    first = json.loads(subprocess.run(warm, env=env, check=True, capture_output=True, text=True).stdout)
    check(first["candidates"] == 1 and first["rewriter_calls"] == 1 and first["rewritten"] == 1,
          f"warm: one object rewritten ({first['candidates']} candidates, {first['rewriter_calls']} calls)")
    r = child.run(d)
    check(r["calls"] == 0, f"a load after warm: no rewriter call (got {r['calls']})")
    check(r["bytes"] == ref, "a load after warm: identical bytes")
    again = json.loads(subprocess.run(warm, env=env, check=True, capture_output=True, text=True).stdout)
    check(again["rewriter_calls"] == 0 and again["already_cached"] == 1, "a second warm rewrites nothing")
    check(len(entries(d)) == 1, "one entry")
    # `hotswap rewrite --cache`: the same cache code, the same key.
    out = os.path.join(scratch, "rewrite-cache.co")
    cmd = [cli, "rewrite", "--cache", "--json", "--backend", os.environ["HSA_HOTSWAP_REWRITER"], obj, "-o", out]
    r = json.loads(subprocess.run(cmd, env=env, check=True, capture_output=True, text=True).stdout)
    check(r["status"] == "rewritten" and r["cached"], f"rewrite --cache: found what warm stored ({r})")
    check(open(out, "rb").read() == ref, "rewrite --cache: the bytes a load gets")
    d2 = fresh(scratch, "rewrite-cache")
    env2 = dict(env, HSA_HOTSWAP_CACHE_DIR=d2)
    r = json.loads(subprocess.run(cmd, env=env2, check=True, capture_output=True, text=True).stdout)
    check(r["status"] == "rewritten" and not r["cached"], "rewrite --cache into an empty cache: rewritten")
    again = child.run(d2)
    check(again["calls"] == 0 and again["bytes"] == ref, "a load after rewrite --cache: a hit")


def tree_state(d):
    out = []
    for root, dirs, files in os.walk(d):
        for n in sorted(dirs + files):
            p = os.path.join(root, n)
            st = os.lstat(p)
            out.append((p, st.st_size, st.st_mtime_ns, stat.S_IMODE(st.st_mode)))
    return sorted(out)


def store(child, scratch, cli):
    if child.kind != "standin" or not cli:
        print("SKIP: needs the stand-in and the hotswap command")
        sys.exit(SKIP)
    ref = child.run(None, env={"HSA_HOTSWAP_CACHE": "off"})["bytes"]
    obj = os.path.join(os.environ["STANDIN_CODE_OBJECTS"], "gfx1250.co")
    st = fresh(scratch, "store")
    env = dict(os.environ, HSA_HOTSWAP_CACHE="on", HSA_HOTSWAP_CACHE_DIR=fresh(scratch, "store-filler-cache"))
    warmed = json.loads(subprocess.run([cli, "cache", "warm", "--json", "--into", st, "--backend",
                                        os.environ["HSA_HOTSWAP_REWRITER"], obj],
                                       env=env, check=True, capture_output=True, text=True).stdout)
    check(warmed["rewritten"] == 1 and warmed["entries_dir"] == os.path.join(st, "rewrites", "v2"),
          f"warm --into: one entry in the store ({warmed['entries_dir']})")
    for sub in ("", "rewrites", "rewrites/v2"):
        mode = stat.S_IMODE(os.stat(os.path.join(st, sub)).st_mode)
        check(mode == 0o755, f"store {sub or 'directory'} is 0755, readable by every user (got {mode:o})")
    before = tree_state(st)
    time.sleep(0.02)

    def load(store_dir, name):
        cache = fresh(scratch, name)
        r = child.run(cache, env={"HSA_HOTSWAP_CACHE_STORE": store_dir})
        return r, cache

    r, cache = load(st, "store-user-1")
    check(r["calls"] == 0, f"a load with an empty cache hits the store (calls {r['calls']})")
    check(r["bytes"] == ref, "a store hit: identical bytes")
    check("hit in the read-only store" in r["log"], "the store hit is logged at debug level")
    check(not entries(cache), "a store hit is not copied into the cache")
    check(tree_state(st) == before, "the store is not written (names, sizes, times, modes)")
    stats = json.loads(subprocess.run([cli, "cache", "stats", "--json"], check=True, capture_output=True,
                                      text=True, env=dict(env, HSA_HOTSWAP_CACHE_DIR=cache,
                                                          HSA_HOTSWAP_CACHE_STORE=st)).stdout)
    check(stats["store"]["usable"] and stats["store"]["totals"]["entries"] == 1
          and stats["totals"]["entries"] == 0, f"cache stats: the store apart from the cache ({stats['store']})")

    def refused(store_dir, name, pattern):
        r, _ = load(store_dir, name)
        check(r["calls"] == 1 and r["bytes"] == ref, f"{name}: rewritten as without the store")
        n = len(re.findall(r"read-only store not used: " + pattern, r["log"]))
        check(n == 1, f"{name}: one warning /{pattern}/ (got {n})")

    os.chmod(st, 0o775)
    refused(st, "store-group-writable", r".*writable by group or others")
    os.chmod(st, 0o755)
    os.chmod(os.path.join(st, "rewrites", "v2"), 0o757)
    refused(st, "store-other-writable", r".*writable by group or others")
    os.chmod(os.path.join(st, "rewrites", "v2"), 0o755)
    link = fresh(scratch, "store-link")
    os.symlink(st, link)
    refused(link, "store-symlink", r".*symbolic link")
    if os.geteuid() == 0:
        os.chown(st, 65534, 65534)
        refused(st, "store-foreign", r".*owned by uid 65534")
        os.chown(st, 0, 0)
    else:
        print("skip another owner's store: needs root to make one")
    # export -> import
    archive = os.path.join(scratch, "store.hswparc")
    exported = json.loads(subprocess.run([cli, "cache", "export", archive, "--from", st, "--json"], env=env,
                                         check=True, capture_output=True, text=True).stdout)
    check(exported["entries"] == 1 and not exported["skipped"], f"export: one entry ({exported})")
    st2 = fresh(scratch, "store-imported")
    imported = json.loads(subprocess.run([cli, "cache", "import", archive, "--into", st2, "--json"], env=env,
                                         check=True, capture_output=True, text=True).stdout)
    check(imported["entries"] == 1, f"import: one entry ({imported})")
    a = entries(st)
    b = entries(st2)
    check([os.path.basename(x) for x in a] == [os.path.basename(x) for x in b]
          and all(open(x, "rb").read() == open(y, "rb").read() for x, y in zip(a, b)),
          "export -> import: byte-identical entries")
    r, _ = load(st2, "store-user-2")
    check(r["calls"] == 0 and r["bytes"] == ref, "the imported store serves loads")
    with open(archive, "rb") as f:
        data = bytearray(f.read())
    data[len(data) // 2] ^= 0x01
    bad = os.path.join(scratch, "corrupted.hswparc")
    with open(bad, "wb") as f:
        f.write(data)
    st3 = fresh(scratch, "store-corrupted")
    p = subprocess.run([cli, "cache", "import", bad, "--into", st3], env=env, capture_output=True, text=True)
    check(p.returncode == 1 and "refused" in p.stderr, f"a corrupted archive is refused ({p.stderr.strip()})")
    check(not entries(st3), "a corrupted archive writes nothing")


def nolock(child, scratch, _cli):
    shim = os.environ.get("CACHE_FLOCK_FAILS")
    ref = child.run(None, env={"HSA_HOTSWAP_CACHE": "off"})["bytes"]
    d = fresh(scratch, "nolock")
    env = {"TEST_REWRITER_DELAY_MS": "300", "LD_PRELOAD": shim}
    start = time.monotonic()
    waits = [child.run(d, env=env, background=True) for _ in range(8)]
    results = [w() for w in waits]
    took = time.monotonic() - start
    check(len(results) == 8, f"8 processes finished without locks ({took:.1f} s)")
    check(all(r["bytes"] == ref for r in results), "8 processes: every load correct (identical to no cache)")
    calls = sum(r["calls"] for r in results)
    check(1 <= calls <= 8, f"8 processes: {calls} rewriter calls (each may rewrite; none waits on a lock)")
    logged = [len(re.findall(r"cannot lock in .*going on without locks", r["log"])) for r in results]
    check(all(n <= 1 for n in logged) and sum(logged) >= 1, f"the fallback is logged once per process ({logged})")
    check(len(entries(d)) == 1, "one whole entry")
    after = child.run(d, env={"LD_PRELOAD": shim})
    check(after["calls"] == 0 and after["bytes"] == ref, "the next process hits the entry")


def bench(child, scratch, _cli):
    print("persistent rewrite cache: one load on the A0 agent per process (test rewriter `change`,"
          " which copies its input: the real backends take seconds to minutes per object)")
    print(f"  {'size':>8} {'no cache':>12} {'cold (miss)':>12} {'warm (hit)':>12} {'store hit':>12}"
          f" {'hit - none':>12} {'warm GB/s':>10}")
    for label, size in (("4 KB", 4 << 10), ("4 MB", 4 << 20), ("100 MB", 100 << 20)):
        d = fresh(scratch, "bench")
        best = lambda runs: min(r["ns"] for r in runs)
        off = best([child.run(d, str(size), env={"HSA_HOTSWAP_CACHE": "off"}) for _ in range(3)])
        cold = []
        for _ in range(3):
            shutil.rmtree(d, ignore_errors=True)
            cold.append(child.run(d, str(size)))
        warm = [child.run(d, str(size)) for _ in range(3)]
        check(all(r["calls"] == 0 for r in warm), f"{label}: every warm load is a hit")
        # The same entry as a read-only store, with an empty cache in front.
        st = fresh(scratch, "bench-store")
        shutil.copytree(d, st)
        for root, dirs, _files in os.walk(st):
            os.chmod(root, 0o755)
        stored = []
        for _ in range(3):
            stored.append(child.run(fresh(scratch, "bench-empty"), str(size),
                                    env={"HSA_HOTSWAP_CACHE_STORE": st}))
        check(all(r["calls"] == 0 for r in stored), f"{label}: every store load is a hit")
        w, s_ = best(warm), best(stored)
        print(f"  {label:>8} {off / 1e6:>10.2f}ms {best(cold) / 1e6:>10.2f}ms {w / 1e6:>10.2f}ms "
              f"{s_ / 1e6:>10.2f}ms {(w - off) / 1e6:>+10.2f}ms {size / w:>10.2f}")
    if child.kind == "standin":
        print("  (a hit: one pass over the input for both keys, the in-process memo's XXH3-128 and the cache's")
        print("   SHA-256, one read of the entry, one XXH3-128 pass over it;")
    else:
        print("  (a hit: one SHA-256 pass over the input for the key, one read of the entry, one XXH3-128 pass over it;")
    print("   'no cache' rewrites with the copying test rewriter, so 'hit - none' is what a hit adds over a load")
    print("   that rewrites nothing but copies; a store hit adds the store's lookup after the cache's miss)")


def main():
    args = sys.argv[1:]
    sep = args.index("--")
    opts, argv = args[:sep], args[sep + 1:]
    cli = None
    if "--cli" in opts:
        i = opts.index("--cli")
        cli = opts[i + 1]
        del opts[i:i + 2]
    what, kind, scratch = opts
    os.makedirs(scratch, exist_ok=True)
    child = Child(kind, argv, scratch)
    {"basic": basic, "concurrent": concurrent, "corrupt": corrupt, "mounts": mounts,
     "secure": secure, "portable": portable, "warmed": warmed, "store": store, "nolock": nolock, "bench": bench}[what](child, scratch, cli)
    if failures:
        print(f"FAILED: {len(failures)} check(s): " + "; ".join(failures))
        return 1
    print(f"PASS cache {what} ({kind})")
    # A pass leaves nothing behind (the padded objects and caches run to
    # hundreds of MB per check); a failure keeps the scratch to look at.
    shutil.rmtree(scratch, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
