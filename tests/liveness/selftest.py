#!/usr/bin/env python3
"""Checks the liveness analysis's scratch claims with check_scratch.py, and
checks that check_scratch.py catches wrong claims.

For each object: the Rust scavenger's claims at every instruction
(`liveness_scan --claims`) must all pass; then, for every claim, a wrong one
naming a register the next instruction reads (or the site itself names) must
be caught; on the hand-written cases (rust/hotswap-code-object/tests/liveness/
cases.co) each targeted wrong claim below must be caught. With --jax DIR, the
analysis also runs over every object there (no panic; counts printed); with
--jax-cache [DIR] --work DIR (default cache: $HOTSWAP_DOWNLOAD_CACHE or
~/.cache/hotswap, as tests/growth), over the pinned jax-rocm10-pjrt wheel's host
library (fetched and sha256-checked by tests/growth/oracle.py; skipped with a
note when it cannot be fetched).

Usage: selftest.py --tools DIR --scan LIVENESS_SCAN --cases DIR [OBJECT...]
                   [--jax DIR | --jax-cache DIR --work DIR]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import check_scratch as cs  # noqa: E402

# (site label, register, why it is not scratch) in cases.co.
TARGETED = [
    ("k_line_site", "scc", "read by s_cbranch_scc1"),
    ("k_line_site", "v1", "read after the site"),
    ("k_exec_site", "v5", "its write covers only the lanes of a changed EXEC"),
    ("k_msb_site", "v257", "read as v1 in src0 bank 1"),
    ("k_flight_site", "v8", "a load may still write it"),
    ("k_loop_site", "v10", "read by the loop's next iteration"),
    ("k_tensor_site", "s0", "read by the tensor load (its first descriptor group)"),
    ("k_tensor_site", "s11", "read by the tensor load (its second descriptor group)"),
    ("k_tensor_late", "s4", "the tensor load may still read it"),
    ("f_callee_site", "s20", "callee-saved and never written: a caller may read it"),
    ("f_callee_site", "v45", "callee-saved VGPR"),
]


# "above" claims in indirect.co (k_ind calls through a loaded pointer), with
# whether the checker must accept them: callable functions may run under
# k_ind, the other kernel's body (k_big, v300) never does.
ABOVE = [
    ("f_cb_site", "v48", True, "no code reachable from k_ind names it"),
    ("f_cb_site", "v300", True, "only k_big names it, a kernel no call enters"),
    ("f_cb_site", "v47", False, "f_other names it, a callable function k_ind's call may reach"),
]


def reset():
    for cache in (cs.GRAPH, cs.RETURN_READS, cs.REACH):
        cache.clear()


def run_checker(tools, obj, claims):
    reset()
    insns, kernels = cs.disassemble(tools, obj)
    return insns, kernels, [cs.check(insns, kernels, c) for c in claims]


def symbols(tools, obj):
    out = subprocess.run([str(Path(tools) / "llvm-readelf-22"), "-sW", str(obj)],
                         capture_output=True, text=True, check=True).stdout
    found = {}
    for f in (l.split() for l in out.splitlines()):
        if len(f) >= 8 and f[0].rstrip(":").isdigit():
            found[f[7]] = int(f[1], 16)
    return found


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tools", required=True)
    ap.add_argument("--scan", required=True)
    ap.add_argument("--cases", required=True)
    ap.add_argument("--jax")
    ap.add_argument("--jax-cache", nargs="?", const=os.environ.get("HOTSWAP_DOWNLOAD_CACHE")
                    or str(Path.home() / ".cache" / "hotswap"))
    ap.add_argument("--work")
    ap.add_argument("objects", nargs="*")
    args = ap.parse_args()
    cases_dir = Path(args.cases)
    objects = [Path(o) for o in args.objects] + sorted(cases_dir.glob("*.co"))
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        for obj in objects:
            out = Path(tmp) / (obj.stem + ".json")
            subprocess.run([args.scan, "--claims", str(out), str(obj)], check=True, capture_output=True)
            claims = json.loads(out.read_text())
            insns, kernels, results = run_checker(args.tools, obj, claims)
            # Paths through bytes llvm-objdump-22 does not decode cannot be checked.
            undecodable = {c["site"] for c, r in zip(claims, results)
                           if any(".long" in p for p in r)}
            bad = [p for c, r in zip(claims, results) if c["site"] not in undecodable for p in r]
            # Wrong claims: a register the first successor reads.
            addrs = sorted(insns)
            index = {a: k for k, a in enumerate(addrs)}
            wrong, caught = 0, 0
            for c in claims:
                if c["site"] in undecodable or c["site"] not in insns or c["kind"] != "dead":
                    continue
                nxt = cs.successors(insns, addrs, index, c["site"])
                reads = sorted(r for r in (insns[nxt[0]].reads if nxt and nxt[0] in insns else ())
                               if r.startswith(("v", "s")) and r != "scc")
                if not reads:
                    continue
                w = dict(c, scratch=[reads[0]])
                wrong += 1
                reset()
                caught += bool(cs.check(insns, kernels, w))
            print(f"{obj.name}: {len(claims)} claims, {len(bad)} violations"
                  f" ({len(undecodable)} sites llvm-objdump-22 does not decode);"
                  f" {caught}/{wrong} wrong claims caught")
            for p in bad[:10]:
                print("  ", p)
            failures += len(bad) + (wrong - caught)
        # Targeted wrong claims on the hand-written cases.
        cases = cases_dir / "cases.co"
        syms = symbols(args.tools, cases)
        reset()
        sized, _ = cs.disassemble(args.tools, cases)
        claims = []
        for label, reg, _ in TARGETED:
            site = syms[label]
            claims.append({"site": site, "end": site + sized[site].size, "kind": "dead", "scratch": [reg]})
        _, _, results = run_checker(args.tools, cases, claims)
        for (label, reg, why), r in zip(TARGETED, results):
            status = "caught" if r else "MISSED"
            print(f"targeted {label} {reg} ({why}): {status}: {r[:1]}")
            failures += not r
        indirect = cases_dir / "indirect.co"
        syms = symbols(args.tools, indirect)
        claims = [{"site": syms[label], "end": syms[label], "kind": "above", "scratch": [reg]}
                  for label, reg, _, _ in ABOVE]
        _, _, results = run_checker(args.tools, indirect, claims)
        for (label, reg, ok, why), r in zip(ABOVE, results):
            right = not r if ok else bool(r)
            print(f"above {label} {reg} ({why}): {'accepted' if not r else 'rejected'}"
                  f"{'' if right else ' WRONGLY'}: {r[:1]}")
            failures += not right
    jax_inputs = sorted(Path(args.jax).glob("*.co")) if args.jax else []
    if args.jax_cache and args.work:
        sys.path.insert(0, str(HERE.parent / "growth"))
        import oracle  # noqa: E402
        wheel, why = oracle.fetch(Path(args.jax_cache) / "wheels")
        if wheel is None:
            print(f"jax: not checked ({why})")
        else:
            jax_inputs = [oracle.wheel_files.extracted(wheel, oracle.LIBRARY)]
    if jax_inputs:
        objs = jax_inputs
        r = subprocess.run([args.scan, "--sites"] + [str(o) for o in objs], capture_output=True, text=True)
        if r.returncode != 0:
            print(f"jax: liveness_scan failed: {r.stderr[-2000:]}")
            failures += 1
        else:
            rows = [json.loads(l) for l in r.stdout.splitlines()]
            failures += len(rows) != 45
            print(f"jax: {len(rows)} gfx1250 objects (45 expected), {sum(x['analysable'] for x in rows)} of "
                  f"{sum(x['functions'] for x in rows)} functions analysable; "
                  f"{r.stderr.strip().splitlines()[-1]}")
    print("FAIL" if failures else "PASS", failures)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
