#!/usr/bin/env python3
"""The growth rewrite's speed and memory (label bench: prints figures, never
fails on them; fails only when a rewrite itself fails).

  bench.py --hotswap HOTSWAP --driver GROWTH_BENCH --scan A0_SCAN --work DIR
           [--corpus DIR]... [--synthetic-mb N] [--gemm-synthetic-mb N]

1. The 45 gfx1250 objects of the pinned jax-rocm10-pjrt wheel rewritten in one
   process (the library's driver, examples/growth_bench.rs): MB/s of input,
   analysis included, from the process's CPU time, and its peak memory.
2. Peak memory of `hotswap rewrite` per object (the child's maximum resident
   set, from wait4), minus that of the smallest object: extra memory against
   the object's size.
3. A synthetic object of real kernels (synth.py, default 200 MB of code,
   RCCL's size) rewritten by `hotswap rewrite`: seconds and peak memory, and
   the ratio to rocjitsu's reported figures (a 212 MB RCCL object about 40 s
   per GPU, rocm-systems #8274; one RCCL translation 197 s and 15.9 GB).
4. The WMMA corpus (the clang-22 objects of tests/wmma and tests/a0classes,
   each --corpus DIR) in one process, with the options `wmma.rewrite` uses
   (--allow-partial: a site whose emitter finds no scratch register is left):
   MB/s of input over repeated passes, the bytes one rewrite holds at once
   against its object, sites fixed and left.
5. A synthetic object of the corpus's GEMM kernels (those holding WMMA sites,
   synth.gemm_site; --gemm-synthetic-mb of code, 200 by default), built like
   3 with a metadata note and rewritten by `hotswap rewrite --allow-partial`:
   the same figures, sites fixed and left.

Each synthetic output is checked to be a valid object (llvm-readelf-22
clean); a rewrite that fails (refused, crashed, unreadable output) fails the
benchmark. Everything written under --work (the wheel's objects, the
synthetic objects and outputs) is deleted at the end, pass or fail.
"""
import argparse
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import oracle  # noqa: E402
import synth  # noqa: E402

ROCJITSU_S_PER_212MB = 40.0
ROCJITSU_TRANSLATION_S, ROCJITSU_TRANSLATION_GB = 197.0, 15.9
# Passes over the WMMA corpus in one process (~0.14 MB: one pass is too short
# to time).
CORPUS_PASSES = 200


# Linux keeps a process's pre-exec peak in its maximum RSS, and a child forked
# from this (large) process starts with its resident set: each command is run
# by a small launcher, so the figure is the command's own peak (or the
# launcher's ~10 MB, whichever is larger). With --count, the command's
# standard output (`hotswap rewrite`'s human report) is read through a pipe
# and its "fixed" and "REMAINS" lines counted, never stored.
LAUNCHER = """
import os, sys, time
count = sys.argv[1] == "--count"
cmd = sys.argv[2:]
start = time.perf_counter()
r, w = os.pipe()
pid = os.fork()
if pid == 0:
    fd = os.open(os.devnull, os.O_WRONLY)
    os.dup2(w if count else fd, 1)
    os.dup2(fd, 2)
    os.execv(cmd[0], cmd)
os.close(w)
fixed = left = 0
with os.fdopen(r, "rb", buffering=1 << 20) as f:
    for line in f:
        if line.startswith(b"  fixed "):
            fixed += 1
        elif line.startswith(b"  REMAINS "):
            left += 1
_, status, usage = os.wait4(pid, 0)
print(time.perf_counter() - start, usage.ru_maxrss * 1024, os.waitstatus_to_exitcode(status),
      usage.ru_utime + usage.ru_stime, fixed, left)
"""


CPU = {}


def run_measured(cmd, count=False):
    """(seconds, peak RSS bytes, exit status) of one command; its CPU seconds
    (user + system: the figure a loaded shared machine distorts least) are
    kept in CPU[last]; with `count`, the "fixed" and "REMAINS" lines of its
    output in CPU[fixed], CPU[left]."""
    r = subprocess.run([sys.executable, "-S", "-c", LAUNCHER, "--count" if count else "--quiet"] + cmd,
                       capture_output=True, text=True, check=True)
    t, rss, rc, cpu, fixed, left = r.stdout.split()
    CPU["last"], CPU["fixed"], CPU["left"] = float(cpu), int(fixed), int(left)
    return float(t), int(rss), int(rc)


STATUS = {0: "complete", 3: "refused", 4: "partial"}


def times(ratio, what):
    """`ratio` as "N.Nx <what>", or its inverse as "N.Nx <opposite>"."""
    opposite = {"faster": "slower", "less memory": "more memory"}[what]
    return f"{ratio:.1f}x {what}" if ratio >= 1 else f"{1 / ratio:.1f}x {opposite}"


def rocjitsu_ratios(size, rss):
    """The ratios to rocjitsu's reported figures of the last command: its CPU
    time scaled to 212 MB; its peak RSS as is for an object of 200 MB or more,
    else scaled to 212 MB too."""
    scaled = CPU["last"] * 212e6 / size
    mem = rss if size >= 200e6 else rss * 212e6 / size
    print(f"bench:   ratio to rocjitsu (CPU time, user + system): 212 MB in {scaled:.2f} s here vs "
          f"~{ROCJITSU_S_PER_212MB:.0f} s (#8274): {times(ROCJITSU_S_PER_212MB / scaled, 'faster')}; vs one RCCL "
          f"translation ({ROCJITSU_TRANSLATION_S:.0f} s, {ROCJITSU_TRANSLATION_GB} GB): "
          f"{times(ROCJITSU_TRANSLATION_S / scaled, 'faster')}, "
          f"{times(ROCJITSU_TRANSLATION_GB * 1e9 / mem, 'less memory')}")
    if size < 200e6:
        print(f"bench:   (time and memory scaled linearly from {size / 1e6:.0f} MB to 212 MB: where the "
              f"rewrite's cost grows faster than the object, as on the GEMM objects, the ratios at 212 MB "
              f"are lower)")


def synthetic(args, what, pieces, extra, fails, mb, note=False):
    """Builds the synthetic object of `pieces` (synth.build, with a metadata
    note if `note`), rewrites it by
    `hotswap rewrite` (+ `extra` options), prints the figures and checks the
    output; appends to `fails` what went wrong. Deletes both files."""
    work = Path(args.work)
    big, out = work / f"synthetic-{what}.co", work / f"synthetic-{what}.out.co"
    if not pieces:
        fails.append(f"synthetic {what} object: no self-contained kernel with sites found")
        return
    try:
        data, copies = synth.build(pieces, mb * 1_000_000, note=note)
        big.write_bytes(data)
        del data
        size = big.stat().st_size
        t, rss, rc = run_measured([args.hotswap, "rewrite", *extra, "-o", str(out), str(big)], count=True)
        allowed = (0, 4) if "--allow-partial" in extra else (0,)
        print(f"bench: synthetic {what} object: {size / 1e6:.1f} MB, {copies} copies of {len(pieces)} real kernels: "
              f"`{' '.join(['hotswap rewrite'] + extra)}` {STATUS.get(rc, f'exit {rc}')} in {t:.2f} s "
              f"({size / 1e6 / t:.0f} MB/s; CPU {CPU['last']:.2f} s, {size / 1e6 / max(CPU['last'], 1e-9):.0f} MB/s), "
              f"peak RSS {rss / 1e6:.0f} MB ({rss / size:.2f}x the object); "
              f"{CPU['fixed']} site(s) fixed, {CPU['left']} left")
        if rc not in allowed:
            fails.append(f"synthetic {what} object: `hotswap rewrite` exit {rc} ({STATUS.get(rc, 'failed')})")
            return
        if not out.exists() or out.stat().st_size < size:
            fails.append(f"synthetic {what} object: no output, or an output smaller than the input")
            return
        problems = oracle.readelf_problems(args, out)
        print(f"bench:   output {out.stat().st_size / 1e6:.1f} MB, llvm-readelf-22 "
              f"{'clean' if not problems else 'REJECTS it'}")
        fails.extend(f"synthetic {what} output: {p}" for p in problems)
        rocjitsu_ratios(size, rss)
    finally:
        for f in (big, out):
            f.unlink(missing_ok=True)


def jax_set(args, wheel, fails):
    """Parts 1-3: the wheel's 45 objects and the synthetic object of their
    kernels."""
    objects = oracle.extract_objects(args, wheel)
    total = sum(o.stat().st_size for o in objects)
    # In one process: the library's growth driver (examples/growth_bench.rs:
    # every object rewritten, growth included; MB/s and peak memory).
    t, rss, rc = run_measured([args.driver, "--quiet", str(Path(args.work) / "objects")])
    r = subprocess.run([args.driver, "--quiet", str(Path(args.work) / "objects")], capture_output=True, text=True)
    print(f"bench: one process, {len(objects)} objects ({total / 1e6:.1f} MB), `growth_bench` (exit {rc}): "
          f"{t:.2f} s wall, CPU {CPU['last']:.2f} s = {total / 1e6 / max(CPU['last'], 1e-9):.0f} MB/s of input "
          f"(analysis included), peak RSS {rss / 1e6:.0f} MB")
    for line in (r.stdout + r.stderr).splitlines()[-6:]:
        print("bench:   " + line.strip())
    if rc != 0:
        fails.append(f"`growth_bench` on the jax set: exit {rc} (an object not rewritten complete)")
    out = Path(args.work) / "out.co"
    rows = []
    for o in sorted(objects, key=lambda o: o.stat().st_size):
        t, rss, rc = run_measured([args.hotswap, "rewrite", "-o", str(out), str(o)])
        rows.append((o, o.stat().st_size, t, rss, rc))
    out.unlink(missing_ok=True)
    base = rows[0][3]
    print(f"bench: `hotswap rewrite` per object, peak RSS minus {base / 1e6:.1f} MB (the smallest object's):")
    big_rows = [(max(0, rss - base) / size, o, size, t, rss, rc) for o, size, t, rss, rc in rows if size > 1_000_000]
    for ratio, o, size, t, rss, rc in sorted(big_rows, key=lambda r: r[2])[-4:] + [max(big_rows)]:
        print(f"bench:   {o.name}: {size / 1e6:6.2f} MB, exit {rc}, {t * 1e3:7.1f} ms, peak RSS "
              f"{rss / 1e6:6.1f} MB, extra {(rss - base) / 1e6:6.1f} MB = {ratio:.2f}x the object")
    print(f"bench: worst extra memory over the {len(big_rows)} objects > 1 MB: {max(big_rows)[0]:.2f}x the "
          f"object ({max(big_rows)[1].name}; the command's own input and output buffers included)")
    print(f"bench: `hotswap rewrite` over all {len(rows)} objects, one process each: "
          f"{sum(r[2] for r in rows):.2f} s, {total / 1e6 / sum(r[2] for r in rows):.0f} MB/s")
    fails.extend(f"`hotswap rewrite {o.name}`: exit {rc}" for o, _, _, _, rc in rows if rc != 0)
    # The synthetic object of the wheel's kernels with DS2 sites.
    pieces = synth.kernels(oracle.tool(args, "llvm-objdump-22"),
                           [o for o in objects if 100_000 < o.stat().st_size < 1_500_000], limit=24)
    synthetic(args, "jax", pieces, [], fails, args.synthetic_mb)


def wmma_corpus(args, fails):
    """Parts 4-5: the WMMA corpus in one process, and the synthetic object of
    its GEMM kernels."""
    objects = sorted(p for d in args.corpus for p in Path(d).glob("*.co"))
    if not objects:
        print(f"bench: WMMA corpus: no objects in {args.corpus} (not built: clang-22/llvm-mc-22/ld.lld-22 "
              f"missing?): not measured")
        return False
    total = sum(o.stat().st_size for o in objects)
    cmd = [args.driver, "--allow-partial"] + [str(o) for o in objects]
    t, rss, rc = run_measured(cmd[:1] + ["--quiet", "--repeat", str(CORPUS_PASSES)] + cmd[1:])
    cpu = CPU["last"]
    r = subprocess.run(cmd, capture_output=True, text=True)
    names = ", ".join(f"{o.parent.parent.name}/{o.name}" for o in objects)
    print(f"bench: WMMA corpus, {len(objects)} objects ({total / 1e3:.1f} KB: {names}), one process, `growth_bench --allow-partial` (the options of wmma.rewrite) "
          f"(exit {rc}), {CORPUS_PASSES} passes: {t:.2f} s wall, CPU {cpu:.2f} s = "
          f"{total * CORPUS_PASSES / 1e6 / max(cpu, 1e-9):.0f} MB/s of input (analysis included), "
          f"peak RSS {rss / 1e6:.0f} MB")
    for line in (r.stdout + r.stderr).splitlines():
        print("bench:   " + line.strip().replace(str(Path(objects[0]).parent.parent.parent) + "/", ""))
    if rc != 0 or r.returncode != 0:
        fails.append(f"`growth_bench --allow-partial` on the WMMA corpus: exit {rc}/{r.returncode} "
                     f"(an object refused)")
    pieces = synth.kernels(oracle.tool(args, "llvm-objdump-22"), objects, limit=64, site=synth.gemm_site,
                           with_metadata=True)
    print(f"bench: GEMM kernels of the corpus with WMMA sites, self-contained: {len(pieces)} "
          f"({', '.join(sorted({p[0] for p in pieces}))})")
    synthetic(args, "gemm", pieces, ["--allow-partial"], fails, args.gemm_synthetic_mb, note=True)
    return True


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--hotswap", required=True)
    p.add_argument("--driver", required=True)
    p.add_argument("--scan", required=True)
    p.add_argument("--work", required=True)
    p.add_argument("--tools", default=None)
    p.add_argument("--corpus", action="append", default=[])
    p.add_argument("--synthetic-mb", type=int, default=200)
    p.add_argument("--gemm-synthetic-mb", type=int, default=200)
    p.add_argument("--cache", default=os.environ.get("HOTSWAP_DOWNLOAD_CACHE")
                   or str(Path.home() / ".cache" / "hotswap"))
    args = p.parse_args()
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    fails = []
    try:
        wheel, why = oracle.fetch(Path(args.cache) / "wheels")
        if wheel is None:
            print(f"bench: jax set not measured: {why}")
        else:
            jax_set(args, wheel, fails)
        measured = wmma_corpus(args, fails)
        if wheel is None and not measured:
            print("SKIP: neither the jax wheel nor the WMMA corpus is available")
    finally:
        # Disk is scarce on CI: the wheel's 96 MB of objects, the synthetic
        # objects and their outputs go, pass or fail.
        shutil.rmtree(work / "objects", ignore_errors=True)
        for f in work.glob("*.co"):
            f.unlink(missing_ok=True)
    for f in fails:
        print(f"FAIL: {f}")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
