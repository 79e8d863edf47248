#!/usr/bin/env python3
"""The growth rewrite's speed and memory (label bench: prints figures, never
fails on them).

  bench.py --hotswap HOTSWAP --driver GROWTH_BENCH --scan A0_SCAN --work DIR [--synthetic-mb N]

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
"""
import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import oracle  # noqa: E402
import synth  # noqa: E402

ROCJITSU_S_PER_212MB = 40.0
ROCJITSU_TRANSLATION_S, ROCJITSU_TRANSLATION_GB = 197.0, 15.9


# Linux keeps a process's pre-exec peak in its maximum RSS, and a child forked
# from this (large) process starts with its resident set: each command is run
# by a small launcher, so the figure is the command's own peak (or the
# launcher's ~10 MB, whichever is larger).
LAUNCHER = """
import os, sys, time
start = time.perf_counter()
pid = os.fork()
if pid == 0:
    fd = os.open(os.devnull, os.O_WRONLY)
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    os.execv(sys.argv[1], sys.argv[1:])
_, status, usage = os.wait4(pid, 0)
print(time.perf_counter() - start, usage.ru_maxrss * 1024, os.waitstatus_to_exitcode(status),
      usage.ru_utime + usage.ru_stime)
"""


CPU = {}


def run_measured(cmd):
    """(seconds, peak RSS bytes, exit status) of one command; its CPU seconds
    (user + system: the figure a loaded shared machine distorts least) are
    kept in CPU[last]."""
    r = subprocess.run([sys.executable, "-S", "-c", LAUNCHER] + cmd, capture_output=True, text=True, check=True)
    t, rss, rc, cpu = r.stdout.split()
    CPU["last"] = float(cpu)
    return float(t), int(rss), int(rc)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--hotswap", required=True)
    p.add_argument("--driver", required=True)
    p.add_argument("--scan", required=True)
    p.add_argument("--work", required=True)
    p.add_argument("--tools", default=None)
    p.add_argument("--synthetic-mb", type=int, default=200)
    p.add_argument("--cache", default=os.environ.get("HOTSWAP_DOWNLOAD_CACHE")
                   or str(Path.home() / ".cache" / "hotswap"))
    args = p.parse_args()
    Path(args.work).mkdir(parents=True, exist_ok=True)
    wheel, why = oracle.fetch(Path(args.cache) / "wheels")
    if wheel is None:
        print(f"SKIP: {why}")
        return 0
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
    out = Path(args.work) / "out.co"
    rows = []
    for o in sorted(objects, key=lambda o: o.stat().st_size):
        t, rss, rc = run_measured([args.hotswap, "rewrite", "-o", str(out), str(o)])
        rows.append((o, o.stat().st_size, t, rss, rc))
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
    # The synthetic object.
    lst_tool = str(Path(args.tools) / "llvm-objdump-22") if args.tools else "llvm-objdump-22"
    pieces = synth.kernels(lst_tool, [o for o in objects if 100_000 < o.stat().st_size < 1_500_000], limit=24)
    data, copies = synth.build(pieces, args.synthetic_mb * 1_000_000)
    big = Path(args.work) / "synthetic.co"
    big.write_bytes(data)
    del data
    size = big.stat().st_size
    t, rss, rc = run_measured([args.hotswap, "rewrite", "--json", "-o", str(out), str(big)])
    status = {0: "complete", 3: "refused", 4: "partial"}.get(rc, f"exit {rc}")
    print(f"bench: synthetic object: {size / 1e6:.1f} MB, {copies} copies of {len(pieces)} real kernels with "
          f"DS2 sites: `hotswap rewrite` {status} in {t:.2f} s ({size / 1e6 / t:.0f} MB/s; CPU "
          f"{CPU['last']:.2f} s, {size / 1e6 / max(CPU['last'], 1e-9):.0f} MB/s), "
          f"peak RSS {rss / 1e6:.0f} MB ({rss / size:.2f}x the object)")
    scaled = CPU["last"] * 212e6 / size
    print("bench: the ratios use CPU time (user + system) of the rewrite")
    print(f"bench: ratio to rocjitsu: 212 MB in {scaled:.2f} s here vs ~{ROCJITSU_S_PER_212MB:.0f} s "
          f"(#8274): {ROCJITSU_S_PER_212MB / scaled:.1f}x faster; vs one RCCL translation "
          f"({ROCJITSU_TRANSLATION_S:.0f} s, {ROCJITSU_TRANSLATION_GB} GB): {ROCJITSU_TRANSLATION_S / scaled:.0f}x "
          f"faster, {ROCJITSU_TRANSLATION_GB * 1e9 / rss:.0f}x less memory")
    big.unlink()
    if out.exists():
        out.unlink()
    return 0


if __name__ == "__main__":
    sys.exit(main())
