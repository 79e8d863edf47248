#!/usr/bin/env python3
"""The WMMA and memory/conversion emitters wired into the growth pipeline
(issues 30 and 31), checked end to end on the output of `hotswap rewrite`.

For every object of the corpora (tests/wmma, tests/a0classes):
  1. `hotswap rewrite --allow-partial --json IN -o OUT` (exit 0 or 4);
  2. `hotswap inspect --json OUT`: the sites still needing a change
     (`pending_sites`, outside the moved-away originals) are exactly the
     report's remaining ones (0 for a complete object);
  3. the growth oracle (tests/growth/oracle.py pair: llvm-objdump-22 decodes
     every byte, each moved function equals its original instruction for
     instruction except the reported replacements, which must be
     straight-line at the image of their site, branches re-aimed, descriptors
     redirected, input bytes unchanged outside the allowed edits) accepts it;
  4. every scratch register the report says a replacement took is confirmed
     on the output by tests/liveness/check_scratch.py (dead after the
     replacement on every path and no load in flight into it at its start;
     or, above the allocation, named by no instruction of the input);
  5. over the whole corpus, each wired class has at least one fixed site
     (the test fails if an emitter stops being reached), and pressure.co is
     complete with a scratch VGPR above v255;
  6. each tensor load fixed at its mask's definition (`definition_vaddr`,
     classes.cl's tdm_def): in llvm-objdump-22's text of the input and the
     output, the load is the same and tests/a0classes' tensor model
     (check_tensor_def) runs the input's definition against the output's on
     random SGPR files: the descriptor the load reads has the mask zero and
     every other bit as before.

Usage: check_rewrite.py --hotswap H --tools DIR --work DIR CORPUS_DIR...
"""
import argparse
import json
import random
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ORACLE = HERE.parent / "growth" / "oracle.py"
CHECKER = HERE.parent / "liveness" / "check_scratch.py"
RNG = random.Random(20261206)
sys.path.insert(0, str(HERE.parent / "a0classes"))
import check_a0classes  # noqa: E402  (the tensor model)

# Objects that must be rewritten complete (exit 0, nothing left), with a
# scratch VGPR above v255 taken (pressure.s: a block-16 split's masked A copy
# in bank 1, its scale pair below v256).
MUST_COMPLETE_HIGH = {"wmma_pressure"}

# Each wired fix must be seen at least once on the corpora.
REQUIRED_FIXES = {
    "wmma-k128-split", "wmma-f4-m-split", "wmma-f4-scale16-mk-split", "wmma-scale16-k-split",
    "wmma-int-nops",
    "ds-addtid-alu-address", "flat-scratch-base-sgpr-pair", "tensor-mask-clear-saved",
    "tensor-mask-clear-at-definition",
}


def run(cmd, **kw):
    return subprocess.run([str(c) for c in cmd], capture_output=True, text=True, **kw)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--hotswap", required=True)
    ap.add_argument("--tools", default="")
    ap.add_argument("--work", required=True)
    ap.add_argument("corpora", nargs="+")
    args = ap.parse_args()
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    fails, seen, scratch_claims, remaining_total, model_checked = [], {}, 0, 0, 0
    objects = sorted(p for d in args.corpora for p in Path(d).glob("*.co"))
    if not objects:
        print(f"FAIL: no objects in {args.corpora}")
        return 1
    for obj in objects:
        tag = f"{obj.parent.parent.name}_{obj.stem}"
        out, rep = work / f"{tag}.out.co", work / f"{tag}.json"
        r = run([args.hotswap, "rewrite", "--allow-partial", "--json", obj, "-o", out])
        rep.write_text(r.stdout)
        if r.returncode not in (0, 4):
            fails.append(f"{tag}: hotswap rewrite exit {r.returncode}: {r.stdout[-400:]}{r.stderr[-400:]}")
            continue
        report = json.loads(r.stdout)
        o = report["code_objects"][0]
        if tag in MUST_COMPLETE_HIGH:
            high = [t for c in o["sites"] for t in c.get("scratch") or []
                    if t["class"] == "vgpr" and t["first"] >= 256]
            if r.returncode != 0 or o["remaining"] or not high:
                fails.append(f"{tag}: not complete with a scratch VGPR above v255 (exit "
                             f"{r.returncode}, {len(o['remaining'])} left, {len(high)} high grant(s))")
        for c in o["sites"]:
            seen[c["fix"]] = seen.get(c["fix"], 0) + 1
        remaining_total += len(o["remaining"])
        # 2. inspect of the output.
        ins = run([args.hotswap, "inspect", "--json", out])
        pending = json.loads(ins.stdout)["code_objects"][0].get("pending_sites")
        if pending != len(o["remaining"]):
            fails.append(f"{tag}: inspect of the output: {pending} site(s) pending, "
                         f"the report leaves {len(o['remaining'])}")
        # 3. the growth oracle.
        cmd = ["python3", ORACLE, "pair", "--work", work / "oracle", "--report", rep, obj, out]
        if args.tools:
            cmd[3:3] = ["--tools", args.tools]
        g = run(cmd)
        if g.returncode != 0:
            fails.append(f"{tag}: growth oracle: {g.stdout[-800:]}{g.stderr[-400:]}")
        stats = json.loads(g.stdout.splitlines()[0]) if g.stdout.startswith("{") else {}
        # 4. the scratch claims, on the output.
        claims = []
        for c in o["sites"]:
            for t in c.get("scratch") or []:
                prefix = "v" if t["class"] == "vgpr" else "s"
                claims.append({"site": c["new_vaddr"], "end": c["new_vaddr"] + c["new_len"],
                               "kind": "above" if t["tier"] == "above-allocation" else "dead",
                               "scratch": [f"{prefix}{n}" for n in range(t["first"], t["first"] + t["count"])]})
        if claims:
            cf = work / f"{tag}.claims.json"
            cf.write_text(json.dumps(claims))
            cmd = ["python3", CHECKER, "--tools", args.tools or "/usr/bin", out, cf]
            lv = run(cmd)
            if lv.returncode != 0:
                fails.append(f"{tag}: check_scratch.py rejects a scratch claim: {lv.stdout[-800:]}{lv.stderr[-300:]}")
            scratch_claims += len(claims)
        # 5. each raised count is in the output's metadata (llvm-readelf-22).
        raises = o.get("register_counts") or []
        if raises:
            notes = run([Path(args.tools or "/usr/bin") / "llvm-readelf-22", "--notes", out]).stdout
            counts, name = {}, None
            for line in notes.splitlines():
                m = line.strip().split(":", 1)
                if len(m) == 2 and m[0].strip() == ".name":
                    name = m[1].strip()
                elif len(m) == 2 and m[0].strip() in (".vgpr_count", ".sgpr_count") and name:
                    counts[(name, m[0].strip()[1:5])] = int(m[1])
            for c in raises:
                have = counts.get((c["kernel"], c["class"]))
                if have is None or have < c["new_count"]:
                    fails.append(f"{tag}: kernel {c['kernel']}: .{c['class']}_count {have} in the output, "
                                 f"the report raised it to {c['new_count']}")
        # 6. definitions changed in place, by the tensor model.
        defs = [c for c in o["sites"] if isinstance(c.get("definition_vaddr"), int)]
        if defs:
            objdump = Path(args.tools or "/usr/bin") / "llvm-objdump-22"
            before, after = (
                {a: t for insns in check_a0classes.disassemble(str(objdump), str(p)).values()
                 for a, t, _ in insns if a is not None}
                for p in (obj, out))
            for c in defs:
                d, site = c["definition_vaddr"], c["original_vaddr"]
                old_def, new_def = before.get(d), after.get(d)
                load, load_out = before.get(site), after.get(site)
                if None in (old_def, new_def, load) or load != load_out:
                    fails.append(f"{tag}: definition {d:#x} / load {site:#x}: {old_def} -> {new_def}, "
                                 f"{load} -> {load_out}")
                    continue
                why = []
                rec = {"function": c["function"], "definition": d,
                       # s_and_b32's SCC: changed only when the liveness
                       # analysis finds it dead (liveness.checker's claim).
                       "scc_live": not old_def.startswith("s_and_b32")}
                check_a0classes.check_tensor_def(rec, old_def, [new_def], load, RNG, report=why.append)
                fails.extend(f"{tag}: tensor model: {w}" for w in why)
                model_checked += 1
        print(f"ok: {tag}: {o['result']}, {len(o['sites'])} site(s) changed "
              f"({stats.get('grown_replaced', '?')} by the new emitters per the oracle), "
              f"{len(o['remaining'])} left, {len(claims)} scratch claim(s), "
              f"{len(o.get('register_counts') or [])} count raise(s)")
    tags = {f"{p.parent.parent.name}_{p.stem}" for p in objects}
    if not MUST_COMPLETE_HIGH <= tags:
        fails.append(f"objects missing from the corpora: {sorted(MUST_COMPLETE_HIGH - tags)}")
    missing = sorted(REQUIRED_FIXES - set(seen))
    if missing:
        fails.append(f"no site fixed by {missing} on the corpora")
    print(f"fixes: {json.dumps(dict(sorted(seen.items())))}; {scratch_claims} scratch claim(s) "
          f"confirmed; {model_checked} mask definition(s) checked by the tensor model; "
          f"{remaining_total} site(s) left (refused, with their reasons)")
    for f in fails:
        print(f"FAIL: {f}")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
