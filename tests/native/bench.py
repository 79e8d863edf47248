#!/usr/bin/env python3
"""Native rewrite throughput, printed (never fails on timing).

Usage: bench.py --driver NATIVE_REWRITE --mc LLVM_MC --lld LD_LLD --work DIR OBJECT...
       bench.py --wheels --driver NATIVE_REWRITE --work DIR

Measurements, each by `native_rewrite bench` (rewrite, analysis alone and a
plain copy, best of several interleaved rounds, in one process):
  1. the test objects given (small: what the tool meets per kernel file);
  2. a large object (about 2 MB of .text, 20000 functions, a same-size site every
     ~55 bytes: the densest case), generated here and assembled by llvm-mc-22;
  3. with --wheels (the ctest native.bench.wheels) only: the gfx1250 objects of
     the real ROCm wheels, when the analyzer tests have downloaded them into the
     cache (HOTSWAP_DOWNLOAD_CACHE, else ~/.cache/hotswap/wheels); nothing is
     downloaded here. Without them it prints "SKIP: ..." (a ctest skip).
"""
import argparse
import os
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "common"))
import wheel_files  # noqa: E402

FUNCTION = """  .p2align 4
  .type f{i},@function
f{i}:
  s_clause 0x1
  cluster_load_b32 v0, v[2:3], off
  global_load_b128 v[4:7], v[2:3], off offset:64
  v_add_nc_u32 v0, v0, v1
  v_fma_f32 v3, v4, v5, 0x3f800000
  v_dual_mov_b32 v0, s2 :: v_dual_mov_b32 v1, s3
  s_mov_b64 s[0:1], 0x123456789
  s_barrier_signal_isfirst -1
  s_barrier_wait -1
  v_wmma_f32_16x16x64_fp8_fp8 v[0:7], v[8:15], v[16:23], v[40:47]
  s_setpc_b64 s[30:31]
.Lf{i}_end:
  .size f{i}, .Lf{i}_end-f{i}
"""


def large_object(args, work):
    out = work / "large.co"
    if out.exists():
        return out
    source = work / "large.s"
    with source.open("w") as f:
        f.write('  .amdgcn_target "amdgcn-amd-amdhsa--gfx1250"\n  .text\n')
        for i in range(20000):
            f.write(FUNCTION.format(i=i))
    subprocess.run([args.mc, "-triple=amdgcn-amd-amdhsa", "-mcpu=gfx1250", "-filetype=obj",
                    "-o", str(work / "large.o"), str(source)], check=True)
    subprocess.run([args.lld, "-shared", "-o", str(out), str(work / "large.o")], check=True)
    return out


def wheel_libraries(work):
    cache = Path(os.environ.get("HOTSWAP_DOWNLOAD_CACHE") or Path.home() / ".cache" / "hotswap") / "wheels"
    wheels = sorted(cache.glob("*.whl"))
    # Extracted once per download cache, beside the wheels (tests/common/wheel_files.py).
    libs = [lib for wheel in wheels for lib in wheel_files.shared_libraries(wheel)]
    return cache, libs


def bench(args, title, files, rounds):
    print(f"== {title}", flush=True)
    subprocess.run([args.driver, "bench", str(rounds), *map(str, files)], check=True)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--driver", required=True)
    p.add_argument("--mc")
    p.add_argument("--lld")
    p.add_argument("--wheels", action="store_true", help="measure the cached wheels' objects only")
    p.add_argument("--work", required=True)
    p.add_argument("objects", nargs="*")
    args = p.parse_args()
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    if args.wheels:
        cache, libs = wheel_libraries(work)
        if not libs:
            print(f"SKIP: no real ROCm wheels in {cache} (the analyzer tests download them)")
            return 0
        # The driver prints "SKIP: ..." itself when the wheels hold no gfx1250 object.
        bench(args, f"real ROCm wheels from {cache} ({len(libs)} shared libraries)", libs, 5)
        return 0
    if not (args.mc and args.lld):
        p.error("--mc and --lld are required without --wheels")
    if args.objects:
        bench(args, f"test objects ({len(args.objects)} files)", args.objects, 200)
    bench(args, "a large generated object (20000 functions)", [large_object(args, work)], 10)
    return 0


if __name__ == "__main__":
    sys.exit(main())
