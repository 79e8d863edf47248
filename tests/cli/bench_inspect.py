#!/usr/bin/env python3
"""Speed of `hotswap inspect` over real ROCm-built code objects, against
llvm-objdump-22 disassembling the same gfx125x objects, in one run.

Usage: bench_inspect.py HOTSWAP OBJDUMP WORK [--rounds N]

The objects: the HIP fat binaries inside public PyPI wheels (pinned by version
and sha256, downloaded with pip into $HOTSWAP_DOWNLOAD_CACHE/wheels, default
~/.cache/hotswap/wheels; never committed). Their shared libraries are the
input of `hotswap inspect --json` (container reading, the walk and the A0
classification of every gfx125x function, the JSON document), timed over
N rounds in one process each; `--extract` gives the gfx125x objects that
llvm-objdump-22 -d then disassembles, one process per object, as many at once
as there are cores (inspect uses every core too). Two ratios, both measured
in this run: on the same objects (inspect given the extracted gfx125x files
objdump is given), and end to end (inspect given the whole libraries, so it
also finds the objects in their containers and reads the kernel names of
the other (not gfx125x) objects, which objdump never sees). Prints figures and the
ratios; never fails on timing. Off CI, an unreachable index prints "SKIP: ...".
"""
import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "common"))
import wheel_files  # noqa: E402

# name, version, platform tag, file name, sha256
WHEELS = [
    ("torch-scatter-rocm", "2.1.2.post7", "manylinux_2_32_x86_64",
     "torch_scatter_rocm-2.1.2.post7-cp312-cp312-manylinux_2_32_x86_64.whl",
     "6d7d09c22eac2b6e5dd798cca3803595cbcfa967e41873271c923f24fbe7b718"),
    ("torch-cluster-rocm", "1.6.3.post7", "manylinux_2_32_x86_64",
     "torch_cluster_rocm-1.6.3.post7-cp312-cp312-manylinux_2_32_x86_64.whl",
     "de4b259663f0c9c56ad0638dafd8d66eb3156d34a8ff1e8933ae10529073fb9e"),
    ("torch-spline-conv-rocm", "1.2.2.post7", "manylinux_2_32_x86_64",
     "torch_spline_conv_rocm-1.2.2.post7-cp312-cp312-manylinux_2_32_x86_64.whl",
     "b3712455797dd9dffe39049c1af3d7ed6989e6c3fa9d0763f1b6225cd729944f"),
]


def is_ci():
    return os.environ.get("CI", "").lower() not in ("", "0", "false", "no", "off", "n", "f")


def sha256(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


def fetch(cache):
    cache.mkdir(parents=True, exist_ok=True)
    paths = []
    for name, version, platform, filename, sha in WHEELS:
        path = cache / filename
        if not path.exists() or sha256(path) != sha:
            r = subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps",
                                "--only-binary=:all:", "--python-version", "3.12",
                                "--platform", platform, f"{name}=={version}", "-d", str(cache)],
                               capture_output=True, text=True)
            if r.returncode != 0 or not path.exists():
                return None, f"pip download {name}=={version} failed: {r.stderr.strip()[-300:]}"
        digest = sha256(path)
        if digest != sha:
            raise SystemExit(f"error: {filename}: sha256 {digest}, pinned {sha}")
        paths.append(path)
    return paths, None


def main():
    p = argparse.ArgumentParser()
    p.add_argument("hotswap")
    p.add_argument("objdump")
    p.add_argument("work")
    p.add_argument("--rounds", type=int, default=5)
    args = p.parse_args()
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    cache = Path(os.environ.get("HOTSWAP_DOWNLOAD_CACHE") or Path.home() / ".cache/hotswap") / "wheels"
    wheels, why = fetch(cache)
    if wheels is None:
        if is_ci():
            print(f"error: {why}")
            return 1
        print(f"SKIP: {why} (not on CI)")
        return 0
    # Extracted once per download cache, beside the wheels (tests/common/wheel_files.py).
    files = sorted(lib for wheel in wheels for lib in wheel_files.shared_libraries(wheel))
    extract = work / "objects"
    for old in extract.glob("*.co") if extract.exists() else []:
        old.unlink()
    report = json.loads(subprocess.run([args.hotswap, "inspect", "--json", "--extract", str(extract),
                                        *map(str, files)], capture_output=True, text=True).stdout)
    objects = report["code_objects"]
    # Only the libraries that hold code objects (the CPU builds have none).
    files = [f for f in files if any(o["file"] == str(f) for o in objects)]
    analysed = [o for o in objects if "functions" in o]
    functions = sum(len(o["functions"]) for o in analysed)
    instructions = sum(f["instructions"] for o in analysed for f in o["functions"])
    sites = sum(len(f["sites"]) for o in analysed for f in o["functions"])
    input_mb = sum(f.stat().st_size for f in files) / 1e6
    analysed_mb = sum(o["size"] for o in analysed) / 1e6

    def best_of(inputs):
        times = []
        for _ in range(args.rounds):
            start = time.perf_counter()
            subprocess.run([args.hotswap, "inspect", "--json", *map(str, inputs)],
                           stdout=subprocess.DEVNULL, check=True)
            times.append(time.perf_counter() - start)
        return min(times), times

    ours, times = best_of(files)
    same, same_times = best_of([o["extracted"] for o in analysed])

    def disassemble(o):
        processor = o["isa"].split("--")[-1].split(":")[0]
        subprocess.run([args.objdump, "-d", f"--mcpu={processor}", o["extracted"]],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    start = time.perf_counter()
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        list(pool.map(disassemble, analysed))
    theirs = time.perf_counter() - start

    print(f"bench: {len(files)} shared libraries from {len(wheels)} wheels ({input_mb:.1f} MB), "
          f"{len(objects)} code objects, {len(analysed)} gfx125x ({analysed_mb:.2f} MB), "
          f"{functions} functions, {instructions} instructions, {sites} A0 sites")
    print(f"bench: hotswap inspect --json (one process; containers, walk, classification, JSON), "
          f"best of {args.rounds}: {ours * 1e3:.1f} ms "
          f"(rounds: {', '.join(f'{t * 1e3:.0f}' for t in times)} ms), "
          f"{instructions / ours / 1e6:.1f} M instructions/s")
    print(f"bench: hotswap inspect --json over the {len(analysed)} extracted gfx125x objects "
          f"(the files llvm-objdump-22 is given), best of {args.rounds}: {same * 1e3:.1f} ms "
          f"(rounds: {', '.join(f'{t * 1e3:.0f}' for t in same_times)} ms)")
    print(f"bench: llvm-objdump-22 -d over the {len(analysed)} gfx125x objects "
          f"({os.cpu_count()} at a time): {theirs * 1e3:.1f} ms")
    print(f"bench: ratio llvm-objdump-22 / hotswap inspect, same objects = {theirs / same:.1f}x")
    print(f"bench: ratio llvm-objdump-22 / hotswap inspect, whole libraries = {theirs / ours:.1f}x")
    shutil.rmtree(extract, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
