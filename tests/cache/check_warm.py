#!/usr/bin/env python3
"""`hotswap cache warm` over real containers (label cache; the benchmark: cache;bench).

Usage: check_warm.py MODE --hotswap HOTSWAP --tool LIB --work DIR [--cache DIR] TREE-PART...

The tree warmed is WORK/tree: the jax-rocm10-pjrt wheel's plugin library (a
host ELF whose .hip_fatbin holds offload bundles; the wheel is downloaded,
sha256-checked and cached as tests/growth/oracle.py does, in CACHE/wheels)
and a copy of each TREE-PART (the analyzer's clang-22 corpus, the stand-in's
objects).

MODEs:
  counts  `warm --json` finds exactly the code objects `hotswap inspect`
          lists for the same files, and as candidates exactly its gfx1250
          ones (45 of them in the plugin); every candidate gets an answer
          (none failed); a second warm makes no rewrite and finds every
          answer cached; `--into DIR` fills a store directory laid out as a
          cache (`rewrites/v2`) with the same keys;
  bench   prints warm MB/s over the plugin's 45 gfx1250 objects (extracted:
          cold, --jobs 1, again: checks only) and the ratio to the same
          rewrites made by one `hotswap rewrite` process per object, and warm
          over the plugin library itself (its 459 MB read and its bundles
          decompressed included), all measured in the same run. Figures
          only.
SKIP (77) when the wheel cannot be downloaded and CI is not set.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "growth"))
import oracle  # noqa: E402  (the pinned wheel and its download)

SKIP = 77
failures = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what, flush=True)
    if not ok:
        failures.append(what)


def tree(args):
    wheel, why = oracle.fetch(Path(args.cache) / "wheels")
    if wheel is None:
        if oracle.is_ci():
            raise SystemExit(f"FAIL: {why}")
        print(f"SKIP: {why} (not on CI)")
        sys.exit(SKIP)
    root = Path(args.work) / "tree"
    if root.exists():
        shutil.rmtree(root)
    (root / "plugin").mkdir(parents=True)
    oracle.wheel_files.place(oracle.wheel_files.extracted(wheel, oracle.LIBRARY),
                             root / "plugin" / "xla_rocm_plugin.so")
    for i, part in enumerate(args.parts):
        shutil.copytree(part, root / f"part{i}-{Path(part).name}")
    (root / "README").write_text("not a code object\n")
    return root


def container_files(root):
    """The files `hotswap inspect` can read (an ELF, a bundle, a compressed bundle)."""
    out = []
    for p in sorted(root.rglob("*")):
        if p.is_file() and not p.is_symlink():
            head = p.read_bytes()[:24]
            if head.startswith((b"\x7fELF", b"__CLANG_OFFLOAD_BUNDLE__", b"CCOB")):
                out.append(p)
    return out


def run_json(cmd, env, ok=(0,)):
    r = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if r.returncode not in ok:
        print(r.stdout[-2000:] + r.stderr[-2000:])
        raise SystemExit(f"FAIL: {' '.join(map(str, cmd[:3]))} exited {r.returncode}")
    return json.loads(r.stdout)


def env_for(args, cache_dir):
    e = dict(os.environ, HSA_HOTSWAP_CACHE="on", HSA_HOTSWAP_CACHE_DIR=str(cache_dir),
             HSA_TOOLS_LIB=args.tool)
    e.pop("HSA_HOTSWAP_REWRITER", None)
    return e


def counts(args):
    root = tree(args)
    files = container_files(root)
    # Exit 1: some file is not a container (the corpus holds a host tool): listed in "errors".
    inspected = run_json([args.hotswap, "inspect", "--json"] + [str(f) for f in files], dict(os.environ),
                         ok=(0, 1))
    objects = inspected["code_objects"]
    gfx1250 = [o for o in objects if (o.get("isa") or "").endswith("--gfx1250")]
    plugin = [o for o in gfx1250 if o["file"].endswith("xla_rocm_plugin.so")]
    check(len(plugin) == oracle.EXPECTED_OBJECTS,
          f"inspect: {len(plugin)} gfx1250 objects in the plugin (expected {oracle.EXPECTED_OBJECTS})")
    cache = Path(args.work) / "cache"
    if cache.exists():
        shutil.rmtree(cache)
    env = env_for(args, cache)
    warm = [args.hotswap, "cache", "warm", "--json", "--backend", "native", str(root)]
    first = run_json(warm, env)
    print(f"first warm: {json.dumps({k: v for k, v in first.items() if k not in ('refusals', 'errors')})}")
    check(first["objects"] == len(objects), f"warm found {first['objects']} code objects, inspect {len(objects)}")
    check(first["candidates"] == len(gfx1250),
          f"warm: {first['candidates']} candidates, inspect: {len(gfx1250)} gfx1250 objects")
    answered = first["rewritten"] + first["unchanged"] + first["refused"] + first["unsupported"]
    check(first["failed"] == 0 and answered == first["candidates"], "warm: every candidate answered, none failed")
    check(first["rewriter_calls"] + first["already_cached"] == first["candidates"],
          "first warm: each candidate rewritten or found (identical objects are rewritten once)")
    check(len(first["refusals"]) == first["refused"] and all(r["reason"] for r in first["refusals"]),
          "first warm: every refusal has its reason")
    check(first["rewritten"] > 0, f"first warm: rewritten objects ({first['rewritten']})")
    entries = list((cache / "rewrites" / "v2").glob("*.entry"))
    check(len(entries) == first["rewriter_calls"],
          f"{len(entries)} entries for {first['rewriter_calls']} rewrites of {first['candidates']} candidates")
    second = run_json(warm, env)
    check(second["rewriter_calls"] == 0, f"second warm: no rewrite (got {second['rewriter_calls']})")
    check(second["already_cached"] == first["candidates"], "second warm: every answer found in the cache")
    check((second["rewritten"], second["unchanged"], second["refused"]) ==
          (first["rewritten"], first["unchanged"], first["refused"]), "second warm: the same answers")
    store = Path(args.work) / "store"
    if store.exists():
        shutil.rmtree(store)
    into = run_json(warm + ["--into", str(store)], env)
    check(into["rewriter_calls"] == first["rewriter_calls"], "--into: the store is filled by rewriting")
    stored = sorted(p.name for p in (store / "rewrites" / "v2").glob("*.entry"))
    check(stored == sorted(p.name for p in entries), "--into: the store holds the cache's keys")


def bench(args):
    root = tree(args)
    plugin = root / "plugin"
    wheel, _ = oracle.fetch(Path(args.cache) / "wheels")
    # The 45 gfx1250 objects alone, as tests/growth extracts them (WORK/objects).
    ours = oracle.extract_objects(args, wheel)
    ours_dir = ours[0].parent
    total = sum(p.stat().st_size for p in ours)
    mb = total / 1e6
    cache = Path(args.work) / "bench-cache"
    env = env_for(args, cache)

    def timed(cmd, fresh_cache):
        if fresh_cache and cache.exists():
            shutil.rmtree(cache)
        t = time.perf_counter()
        out = run_json(cmd, env)
        return time.perf_counter() - t, out

    warm = [args.hotswap, "cache", "warm", "--json", "--backend", "native"]
    objs_cold, cold = timed(warm + [str(ours_dir)], True)
    objs_hot, hot = timed(warm + [str(ours_dir)], False)
    objs_one, _ = timed(warm + ["--jobs", "1", str(ours_dir)], True)
    lib_cold, lib = timed(warm + [str(plugin)], True)
    lib_hot, _ = timed(warm + [str(plugin)], False)
    t = time.perf_counter()
    outs = Path(args.work) / "rewritten"
    outs.mkdir(exist_ok=True)
    for p in ours:
        subprocess.run([args.hotswap, "rewrite", "--json", str(p), "-o", str(outs / p.name)],
                       capture_output=True, check=False)
    per_process = time.perf_counter() - t
    print(f"hotswap cache warm, native backend, {os.cpu_count()} cores (a shared machine: compare the ratios):")
    print(f"  the plugin's {len(ours)} gfx1250 objects, extracted ({mb:.1f} MB):")
    print(f"    cold ({cold['rewriter_calls']} rewrites):  {objs_cold:7.2f} s  {mb / objs_cold:7.1f} MB/s")
    print(f"    cold, --jobs 1:         {objs_one:7.2f} s  {mb / objs_one:7.1f} MB/s")
    print(f"    again (checks only, {hot['rewriter_calls']} rewrites): {objs_hot:7.2f} s  {mb / objs_hot:7.1f} MB/s")
    print(f"    one `hotswap rewrite` process per object: {per_process:7.2f} s  {mb / per_process:7.1f} MB/s")
    print(f"    ratios: warm vs one process per object {per_process / objs_cold:.2f}x; "
          f"vs --jobs 1 {objs_one / objs_cold:.2f}x; cold vs check {objs_cold / objs_hot:.1f}x")
    size = (plugin / "xla_rocm_plugin.so").stat().st_size / 1e6
    print(f"  the plugin library itself ({size:.0f} MB, {lib['objects']} code objects, "
          f"{lib['candidates']} for gfx1250 A0):")
    print(f"    cold: {lib_cold:7.2f} s ({mb / lib_cold:.1f} MB/s of gfx1250 objects); "
          f"again (checks only): {lib_hot:7.2f} s")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("mode", choices=("counts", "bench"))
    p.add_argument("--hotswap", required=True)
    p.add_argument("--tool", required=True)
    p.add_argument("--scan", help="a0_scan (bench: extracts the gfx1250 objects as tests/growth does)")
    p.add_argument("--work", required=True)
    p.add_argument("--cache", default=os.environ.get("HOTSWAP_DOWNLOAD_CACHE")
                   or str(Path.home() / ".cache" / "hotswap"))
    p.add_argument("parts", nargs="*")
    args = p.parse_intermixed_args()
    Path(args.work).mkdir(parents=True, exist_ok=True)
    {"counts": counts, "bench": bench}[args.mode](args)
    if failures:
        print(f"FAILED: {len(failures)} check(s): " + "; ".join(failures))
        return 1
    print(f"PASS warm {args.mode}")
    # A pass leaves nothing behind: the tree and caches run to GBs.
    shutil.rmtree(args.work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
