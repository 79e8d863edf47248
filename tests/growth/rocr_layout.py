#!/usr/bin/env python3
"""The rewritten layout under the real ROCr 5.2.3 (ctest rocr.growth_layout).

  rocr_layout.py --app ROCR_SEGMENTS --hotswap HOTSWAP --scan A0_SCAN --work DIR CLANG_OBJECT...

Rewrites three small jax-rocm10-pjrt gfx1250 objects that hold DS two-address
sites, the smallest one whose rewrite needs branch islands, and the given
clang-22 objects with `hotswap rewrite`, re-tags each
output (retag.py: gfx90a, code object v5, for this test only) and runs
rocr_segments on them: ROCr loads, freezes and resolves every kernel
descriptor, and the bytes it placed equal the file's PT_LOAD segments.
The same objects moved by the oracle's reference mover (mover.py) are loaded
too: the layout shape of a code-growing rewrite under the real loader.
Every input must be rewritten complete (with --allow-unrewritten, a refused
one is loaded as it is, to check the harness on the rewriter before growth).
Without the wheel: "SKIP: ..." and exit 77 (on CI: a failure).
"""
import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import ds2  # noqa: E402
import listing  # noqa: E402
import mover  # noqa: E402
import oracle  # noqa: E402
import retag  # noqa: E402

SMALL_WITH_DS2 = 3


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--app", required=True)
    p.add_argument("--hotswap", required=True)
    p.add_argument("--scan", required=True)
    p.add_argument("--work", required=True)
    p.add_argument("--allow-unrewritten", action="store_true")
    p.add_argument("--partial", action="append", default=[],
                   help="an object rewritten with --allow-partial (exit 4 accepted: its "
                        "refused sites stay); its raised register counts are printed")
    p.add_argument("--cache", default=os.environ.get("HOTSWAP_DOWNLOAD_CACHE")
                   or str(Path.home() / ".cache" / "hotswap"))
    p.add_argument("objects", nargs="*")
    args = p.parse_args()
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    wheel, why = oracle.fetch(Path(args.cache) / "wheels")
    if wheel is None:
        if oracle.is_ci():
            print(f"error: {why}")
            return 1
        print(f"SKIP: {why} (not on CI)")
        return oracle.SKIP
    objects = oracle.extract_objects(args, wheel)
    picked = []
    for o in sorted(objects, key=lambda o: o.stat().st_size):
        lst, _ = listing.objdump("llvm-objdump-22", o)
        if lst and any(ds2.is_ds2(x.mnemonic) for x in lst.values()):
            picked.append(o)
        if len(picked) == SMALL_WITH_DS2:
            break
    loadable, failures, islanded = [], [], []
    # The smallest object whose rewrite needs branch islands, loaded too.
    for o in sorted(objects, key=lambda o: o.stat().st_size):
        probe = work / "islands-probe.co"
        r = subprocess.run([args.hotswap, "rewrite", "--json", "-o", str(probe), str(o)],
                           capture_output=True, text=True)
        try:
            rep = json.loads(r.stdout)
        except json.JSONDecodeError:
            continue
        if any(c.get("islands") for c in rep.get("code_objects") or []):
            print(f"layout: {o.name} needs branch islands")
            islanded.append(o)
            break
    else:
        failures.append("no jax object needs a branch island: the island layout is not loaded")
    partial = [Path(x) for x in args.partial]
    inputs = picked + islanded + [Path(x) for x in args.objects] + partial
    raised = 0
    for i, src in enumerate(inputs):
        out = work / f"rewritten-{i}.co"
        extra = ["--allow-partial", "--json"] if src in partial else []
        r = subprocess.run([args.hotswap, "rewrite", *extra, "-o", str(out), str(src)],
                           capture_output=True, text=True)
        if src in partial and r.returncode == 4:
            r.returncode = 0
        if src in partial and r.returncode == 0:
            for c in json.loads(r.stdout)["code_objects"]:
                for k in c.get("register_counts") or []:
                    raised += 1
                    print(f"layout: {src.name}: kernel {k['kernel']}: {k['class']} count "
                          f"{k['old_count']} -> {k['new_count']}")
        if r.returncode != 0:
            msg = f"{src.name}: rewrite exit {r.returncode}: {(r.stdout + r.stderr).strip()[:200]}"
            if not args.allow_unrewritten:
                failures.append(msg)
                continue
            print(f"note: {msg}; loading the input as it is")
            out.write_bytes(src.read_bytes())
        tagged = work / f"rocr-{i}-{src.stem}.co"
        tagged.write_bytes(retag.retag(out.read_bytes()))
        loadable.append(tagged)
        print(f"layout: {src} ({src.stat().st_size} bytes) -> {tagged.name}")
    # The reference mover's layout of the same jax objects (an appended R+X
    # PT_LOAD, new header tables at the end, PT_PHDR nulled): the shape of a
    # code-growing rewrite, loaded too, so the loader side is proven even
    # where the rewriter refused.
    for i, src in enumerate(picked):
        data = src.read_bytes()
        lst, _ = listing.objdump("llvm-objdump-22", src)
        lines, _ = oracle.expected_lines(lst)
        try:
            moved = mover.move(data, lst, listing.assemble("llvm-mc-22", lines))[0]
        except mover.Unsupported as e:
            print(f"layout: {src.name}: reference mover: {e}")
            continue
        tagged = work / f"rocr-reference-{i}-{src.stem}.co"
        tagged.write_bytes(retag.retag(moved))
        loadable.append(tagged)
        print(f"layout: {src} moved by the reference mover -> {tagged.name}")
    if loadable:
        r = subprocess.run([args.app] + [str(x) for x in loadable], capture_output=True, text=True)
        print(r.stdout + r.stderr)
        if r.returncode != 0:
            failures.append(f"rocr_segments exit {r.returncode}")
    if partial and not raised:
        failures.append("no --partial object had its register counts raised")
    for f in failures:
        print("FAIL:", f)
    return 1 if failures or not loadable else 0


if __name__ == "__main__":
    sys.exit(main())
