#!/usr/bin/env python3
"""The growth oracle: the native rewriter's code-growing rewrite (the DS
two-address split by moving code) checked by tools that did not produce it.

Usage:
  oracle.py corpus   --hotswap HOTSWAP --scan A0_SCAN --work DIR [--cache DIR] [--tools DIR]
  oracle.py pair     --work DIR [--report JSON] IN OUT
  oracle.py selftest --work DIR [--tools DIR] [OBJECT|DIR...]
  oracle.py edges    --hotswap HOTSWAP --work DIR [--tools DIR]

corpus: downloads the pinned jax-rocm10-pjrt wheel (sha256-checked, cached
  with the analyzer's wheels), extracts its 45 gfx1250 objects with the
  crate's container reader (a0_scan dump), rewrites each with `hotswap rewrite
  --json`, and checks every answer:
  - "complete": the output passes compare.py (objdump decodes every byte of
    code; each moved function equals the original instruction for
    instruction except each DS2 -> the llvm-mc-22 bytes of the expected split
    and `s_wait_dscnt 0`, s_clause -> s_nop 0 where allowed, branches and
    PC-relative literals -> the image of their targets; input bytes identical
    outside the allowed edits; kernel descriptors point into the moved
    copies; structure and llvm-readelf-22 clean), and the DS model
    (ds2.py) shows each emitted sequence computes what B0's DS2 computes;
  - "refused": the refusal must name a reason the oracle confirms on the
    input (a DS2 whose split the rules reject, for the reason given; a branch
    the DS2s between it and its target push out of s_branch reach; for the
    same-size rewriter, the object's DS2 count). Confirmed refusals pass
    (--require-complete: they fail).
  Off CI an unreachable index prints "SKIP: ..." (exit 77); on CI it fails.
pair: the same checks for one input/output pair.
edges: synthetic objects (edge.py, llvm-mc-22 + ld.lld-22): DS2s of all 12
  mnemonics in VGPR-MSB bank modes must be rewritten complete and pass the
  oracle (banked sites through the model); each refusal case (scaled offset,
  cyclic exchange, exchange swap at one address) refused naming its site;
  the clang-22 function-pointer-table objects of
  rust/hotswap-code-object/tests/growth (pointer tables; stub kernels
  falling through into a moved function, one out of s_branch reach)
  rewritten complete, a gateway per moved function, their table relocations
  re-aimed at the images; each far gateway's register pair dead at its entry
  in the input, by the liveness checker of tests/liveness (which must refuse
  a pair there that the input reads).
selftest: the split rules against the model on random DS2 instructions (all
  12 mnemonics, overlaps, stride64, b64, banked VGPRs), every split line
  assembling with llvm-mc-22, and the comparison of each corpus object with
  itself (nothing moved: must pass) — runs without the wheel on the
  analyzer's corpus objects given as files.
"""
import argparse
import hashlib
import json
import os
import random
import re
import shutil
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import compare  # noqa: E402
import edge  # noqa: E402
import ds2  # noqa: E402
import elf64  # noqa: E402
import listing  # noqa: E402
import mover  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "common"))
import wheel_files  # noqa: E402  (the wheel's library, extracted once per download cache)

WHEEL = ("jax-rocm10-pjrt", "0.12.0", "manylinux_2_27_x86_64",
         "jax_rocm10_pjrt-0.12.0-py3-none-manylinux_2_27_x86_64.whl",
         "45ee7b471b71a582ce165dd63069b10d1d8923d849b61b6fa8783f1d13294edb")
LIBRARY = "jax_plugins/xla_rocm10/xla_rocm_plugin.so"
EXPECTED_OBJECTS = 45
EXPECTED_DS2 = 39472
SKIP = 77


def is_ci():
    return os.environ.get("CI", "").lower() not in ("", "0", "false", "no", "off", "n", "f")


def tool(args, name):
    return str(Path(args.tools) / name) if args.tools else name


def fetch(cache):
    name, version, platform, filename, sha = WHEEL
    cache = Path(cache)
    cache.mkdir(parents=True, exist_ok=True)
    path = cache / filename
    if not path.exists() or hashlib.sha256(path.read_bytes()).hexdigest() != sha:
        r = subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
                            "--python-version", "3.12", "--platform", platform, f"{name}=={version}",
                            "-d", str(cache)], capture_output=True, text=True)
        if r.returncode != 0 or not path.exists():
            return None, f"pip download {name}=={version} failed: {r.stderr.strip()[-300:]}"
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    if digest != sha:
        raise SystemExit(f"error: {filename}: sha256 {digest}, pinned {sha}")
    return path, None


def extract_objects(args, wheel):
    """The wheel's gfx1250 objects, as files under WORK/objects (sorted)."""
    work = Path(args.work)
    lib = wheel_files.extracted(wheel, LIBRARY)
    objects = work / "objects"
    objects.mkdir(parents=True, exist_ok=True)
    for old in objects.glob("*.co"):
        old.unlink()
    r = subprocess.run([args.scan, "dump", str(objects), str(lib)], capture_output=True, text=True, check=True)
    found = [json.loads(x) for x in r.stdout.splitlines()]
    return sorted((Path(x["object"]) for x in found if "object" in x and "gfx1250" in x["isa"]),
                  key=lambda p: int(p.stem))


def readelf_problems(args, path):
    r = subprocess.run([tool(args, "llvm-readelf-22"), "-lSsW", "--notes", str(path)],
                       capture_output=True, text=True)
    if r.returncode != 0 or r.stderr.strip():
        return [f"llvm-readelf-22: rc {r.returncode}: {r.stderr.strip()[:300]}"]
    return []


def moved_from_report(report):
    """{old start: new start} the report claims (`moved_functions`:
    original_vaddr -> new_vaddr); compare.py checks each claim."""
    claims = {}
    entries = list((report or {}).get("moved_functions") or [])
    for obj in (report or {}).get("code_objects") or []:
        entries += obj.get("moved_functions") or []
    for m in entries:
        old, new = m.get("original_vaddr"), m.get("new_vaddr")
        if isinstance(old, int) and isinstance(new, int):
            claims[old] = new
    return claims


def islands_from_report(report):
    """The addresses the report says hold branch islands."""
    out = set()
    for obj in (report or {}).get("code_objects") or []:
        for i in obj.get("islands") or []:
            if isinstance(i.get("vaddr"), int):
                out.add(i["vaddr"])
    return out


def sites_from_report(report):
    """{original address: (new address, length, fix)} of every changed site
    the report lists other than the DS2 splits (compare.py checks them)."""
    out = {}
    for obj in (report or {}).get("code_objects") or []:
        for c in obj.get("sites") or []:
            fix = c.get("fix") or ""
            if fix.startswith("ds2-"):
                continue
            out[c["original_vaddr"]] = (c["new_vaddr"], c["new_len"], fix)
    return out


def definitions_from_report(report):
    """{definition address: site address} of the tensor sites the report
    fixed at their mask's definition (`definition_vaddr`); compare.py checks
    each changed definition against its load."""
    out = {}
    for obj in (report or {}).get("code_objects") or []:
        for c in obj.get("sites") or []:
            d = c.get("definition_vaddr")
            if isinstance(d, int):
                out[d] = c["original_vaddr"]
    return out


def counts_raised(report):
    return any(obj.get("register_counts") for obj in (report or {}).get("code_objects") or [])


def moved_from_symbols(in_data, out_data):
    """{old start: new start} the output's symbols claim: a function `F`
    of the input and a new function symbol `F.a0` (the rewriter names its
    moved copies so); compare.py checks each claim."""
    old = {f["name"]: f["value"] for f in compare.functions(elf64.Elf(in_data))}
    claims = {}
    for f in compare.functions(elf64.Elf(out_data)):
        if f["name"].endswith(".a0") and f["name"][:-3] in old:
            claims[old[f["name"][:-3]]] = f["value"]
    return claims


def expected_lines(in_listing):
    lines, refusals = set(), {}
    for a, x in in_listing.items():
        if ds2.is_ds2(x.mnemonic) and not ds2.banked(x.text):
            try:
                lines.update(ds2.split(x.text))
            except ds2.NoSplit as e:
                refusals[a] = str(e)
    return lines, refusals


def check_pair(args, in_path, out_path, report, rng, in_listing=None):
    """(Result, figures) for one input/output pair."""
    res = compare.Result()
    in_data, out_data = Path(in_path).read_bytes(), Path(out_path).read_bytes()
    with ThreadPoolExecutor(max_workers=2) as pool:
        jobs = [pool.submit(listing.objdump, tool(args, "llvm-objdump-22"), p)
                for p in ((in_path,) if in_listing is None else ()) + (out_path,)]
        got = [j.result() for j in jobs]
    if in_listing is None:
        in_listing, why = got.pop(0)
        if why:
            res.fail(f"input: {why}")
            return res
    out_listing, why = got.pop(0)
    if why:
        res.fail(f"output: {why}")
        return res
    for p in listing.coverage(out_listing, elf64.Elf(out_data), out_data):
        res.fail(f"decode: {p}")
    for p in readelf_problems(args, out_path):
        res.fail(p)
    lines, _ = expected_lines(in_listing)
    encoded = listing.assemble(tool(args, "llvm-mc-22"), lines)
    for line, b in encoded.items():
        if b is None:
            res.fail(f"llvm-mc-22 does not assemble the expected `{line}`")
    claims = moved_from_symbols(in_data, out_data)
    for old, new in moved_from_report(report).items():
        if claims.setdefault(old, new) != new:
            res.fail(f"the report moves {old:#x} to {new:#x}, the symbols to {claims[old]:#x}")
    compare.compare(in_data, out_data, in_listing, out_listing, encoded, claims, res,
                    islands_from_report(report), sites_from_report(report), counts_raised(report),
                    definitions_from_report(report))
    for text, seq, where in res.sites:
        why = ds2.equivalent(text, seq, rng, trials=2)
        if why:
            res.fail(f"model: {where} `{text}` -> {seq}: {why}")
    res.stats["model_sites"] = len(res.sites)
    for why in far_gateway_registers(args, in_path, out_path, res.far_gateways):
        res.fail(why)
    return res


def pair_registers(pair):
    """The two SGPRs of a pair as printed (`s[2:3]`, `vcc`), or None."""
    if pair == "vcc":
        return ["s106", "s107"]
    m = re.fullmatch(r"s\[(\d+):(\d+)\]", pair)
    if m and int(m.group(2)) == int(m.group(1)) + 1:
        return [f"s{m.group(1)}", f"s{m.group(2)}"]
    return None


def dead_claim_violations(args, in_path, claims, scratch_file):
    """The liveness checker of tests/liveness (it reads only llvm-objdump-22's
    listing of the input) on `dead` claims: one line per violation."""
    path = Path(scratch_file)
    path.write_text(json.dumps(claims))
    checker = Path(__file__).resolve().parents[1] / "liveness" / "check_scratch.py"
    tools = args.tools or str(Path(shutil.which("llvm-objdump-22") or "llvm-objdump-22").parent)
    r = subprocess.run([sys.executable, str(checker), "--tools", tools, str(in_path), str(path)],
                       capture_output=True, text=True)
    path.unlink()
    if r.returncode == 0:
        return []
    return r.stdout.strip().splitlines() or [r.stderr.strip()[-300:]]


def far_gateway_registers(args, in_path, out_path, gateways):
    """A far-jump gateway overwrites its register pair before the moved code
    runs: the pair must be dead at the function's entry in the input, on every
    path, with a return reading whatever a calling convention may preserve or
    return. One message per violation."""
    claims, problems = [], []
    for entry, pair in gateways:
        regs = pair_registers(pair)
        if regs is None:
            problems.append(f"far gateway at {entry:#x}: unexpected register pair `{pair}`")
        else:
            claims.append({"site": entry, "end": entry, "kind": "dead", "scratch": regs})
    if claims:
        problems += [f"far gateway register not dead at its entry in the input: {x}"
                     for x in dead_claim_violations(args, in_path, claims, str(out_path) + ".claims.json")]
    return problems


def island_corruption_caught(args, obj, out, report, rng, in_listing):
    """The first failure the oracle reports on `out` with its first branch
    island's s_branch aimed four bytes further (None: not caught)."""
    va = min(islands_from_report(report))
    data = bytearray(Path(out).read_bytes())
    e = elf64.Elf(bytes(data))
    for sec in e.exec_sections():
        if sec["addr"] <= va < sec["addr"] + sec["size"]:
            at = sec["offset"] + va - sec["addr"]
            imm = int.from_bytes(data[at:at + 2], "little", signed=True) + 1
            data[at:at + 2] = imm.to_bytes(2, "little", signed=True)
            break
    else:
        return "the island is in no executable section"
    bad = Path(args.work) / f"{Path(obj).stem}.island-corrupted.co"
    bad.write_bytes(bytes(data))
    r = check_pair(args, obj, bad, report, rng, in_listing)
    bad.unlink()
    return r.failures[0] if r.failures else None


def reason_matches(reason, message):
    """Whether a refusal message states the reason ds2.split gives."""
    words = {"scaled": ("0xffff", "65535", "16 bits", "16-bit"),
             "cyclic": ("cyclic", "both orders"),
             "exchange": ("one address", "same address", "equal", "reorder")}[reason.split()[0]]
    return any(w in message.lower() for w in words)


def confirm_far_branch(in_listing, at, target):
    """None when the branch at `at` to `target` no longer fits s_branch's
    signed 16-bit dword offset once every DS2 between them grows by its split:
    an 8-byte DS2 becomes two 8-byte single ops and a 4-byte wait (ds2.py),
    12 bytes more (a lower bound: brackets of banked sites add to it)."""
    b = in_listing.get(at)
    if b is None or not b.mnemonic.startswith(compare.BRANCH_PREFIXES) or compare.branch_target(b) != target:
        return f"no branch to {target:#x} at {at:#x}"
    lo, hi = sorted((at + 4, target))
    grow = 12 * sum(1 for a, x in in_listing.items() if lo <= a < hi and ds2.is_ds2(x.mnemonic))
    dwords = (hi - lo + grow) // 4
    limit = 32767 if target > at else 32768
    return None if dwords > limit else f"grown distance {dwords} dwords fits"


def verify_refusal(report, in_listing):
    """None when the refusal names a reason the input shows, else why not."""
    objs = report.get("code_objects") or []
    refusal = (objs[0].get("refusal") if objs else None) or {}
    message = refusal.get("message") or report.get("message") or ""
    _, refusals = expected_lines(in_listing)
    for a, why in refusals.items():
        if f"{a:#x}" in message and reason_matches(why, message):
            return None
    far = re.search(r"at vaddr (0x[0-9a-f]+): the branch target (0x[0-9a-f]+) is out of s_branch reach", message)
    if refusal.get("kind") == "growth_refused" and far:
        why = confirm_far_branch(in_listing, int(far.group(1), 16), int(far.group(2), 16))
        return None if why is None else f"far-branch refusal not confirmed: {why}"
    ds2_sites = [a for a, x in in_listing.items() if ds2.is_ds2(x.mnemonic)]
    m = re.search(r"(\d+) site\(s\) need code growth.*\(vaddr (0x[0-9a-f]+)\)", message)
    if refusal.get("kind") == "needs_growth" and m:
        # The same-size rewriter: the count is the object's DS2 sites (the
        # only growth class in this code) and the first named is one.
        first = in_listing.get(int(m.group(2), 16))
        if int(m.group(1)) == len(ds2_sites) and first is not None and ds2.is_ds2(first.mnemonic):
            return None
    return f"refusal `{refusal.get('kind')}: {message}` not confirmed by the input"


def corpus(args):
    wheel, why = fetch(Path(args.cache) / "wheels")
    if wheel is None:
        if is_ci():
            print(f"error: {why}")
            return 1
        print(f"SKIP: {why} (not on CI)")
        return SKIP
    start = time.perf_counter()
    objects = extract_objects(args, wheel)
    print(f"corpus: {len(objects)} gfx1250 objects ({sum(p.stat().st_size for p in objects) / 1e6:.1f} MB) "
          f"from {WHEEL[3]}")
    failures = []
    if len(objects) != EXPECTED_OBJECTS:
        failures.append(f"expected {EXPECTED_OBJECTS} gfx1250 objects, found {len(objects)}")
    out_dir = Path(args.work) / "rewritten"
    out_dir.mkdir(parents=True, exist_ok=True)
    totals, answers, ds2_total = {}, {}, 0

    def one(obj):
        """(lines to print, failures, status, DS2 count, stats) of one object."""
        rng = random.Random(f"1250:{obj.name}")
        out = out_dir / obj.name
        if out.exists():
            out.unlink()
        r = subprocess.run([args.hotswap, "rewrite", "--json", "-o", str(out), str(obj)],
                           capture_output=True, text=True)
        try:
            report = json.loads(r.stdout)
        except json.JSONDecodeError:
            return [], [f"{obj.name}: no JSON (rc {r.returncode}): {r.stderr.strip()[:200]}"], None, 0, {}
        status = report.get("status")
        in_listing, why = listing.objdump(tool(args, "llvm-objdump-22"), obj)
        if why:
            return [], [f"{obj.name}: input: {why}"], status, 0, {}
        n_ds2 = sum(ds2.is_ds2(x.mnemonic) for x in in_listing.values())
        if status == "complete":
            res = check_pair(args, obj, out, report, rng, in_listing)
            line = (f"{obj.name}: complete, {res.stats['moved_functions']} functions moved, "
                    f"{res.stats['ds2_replaced']} DS2 replaced, {res.stats['branch_islands']} branch islands, "
                    f"{len(res.failures)} failures")
            fails = [f"{obj.name}: {f}" for f in res.failures[:5]]
            if res.stats["branch_islands"] and not res.failures:
                # The oracle must catch an island aimed one instruction off.
                caught = island_corruption_caught(args, obj, out, report, rng, in_listing)
                line += f"; a corrupted island {'caught: ' + caught[:90] if caught else 'NOT CAUGHT'}"
                if not caught:
                    fails.append(f"{obj.name}: a corrupted branch island was not caught")
            if not fails:
                out.unlink()  # checked: only a failing output stays to look at
            return [line], fails, status, n_ds2, res.stats
        if status == "refused":
            why = verify_refusal(report, in_listing)
            line = f"{obj.name}: refused: {(report.get('message') or '')[:160]}" + (
                f" -- NOT CONFIRMED: {why}" if why else " (reason confirmed)")
            return [line], [f"{obj.name}: {why}"] if why else [], status, n_ds2, {}
        return [], [f"{obj.name}: status {status}: {report.get('message')}"], status, n_ds2, {}

    # Two objects at a time: one's llvm-objdump runs while the other is compared.
    with ThreadPoolExecutor(max_workers=2) as pool:
        for lines, fails, status, n_ds2, stats in pool.map(one, objects):
            for line in lines:
                print(line, flush=True)
            failures += fails
            answers[status] = answers.get(status, 0) + 1
            ds2_total += n_ds2
            for k, v in stats.items():
                totals[k] = totals.get(k, 0) + v
    print(f"corpus: answers {answers}; DS2 sites in the input {ds2_total} (expected {EXPECTED_DS2})")
    print("corpus: " + ", ".join(f"{k} {v}" for k, v in sorted(totals.items())))
    print(f"corpus: {time.perf_counter() - start:.1f} s")
    if ds2_total != EXPECTED_DS2:
        failures.append(f"{ds2_total} DS2 sites, expected {EXPECTED_DS2}")
    if answers.get("complete", 0) != len(objects):
        # The bar: complete, or a refusal whose reason the input shows
        # (checked above); --require-complete makes every refusal a failure.
        print(f"corpus: NOTE {len(objects) - answers.get('complete', 0)} of {len(objects)} objects refused "
              f"(each reason confirmed on the input)")
        if args.require_complete:
            failures.append(f"only {answers.get('complete', 0)} of {len(objects)} objects rewritten complete")
    for f in failures[:40]:
        print("FAIL:", f)
    return 1 if failures else 0


def moved_selftest(args, f, rng):
    """The oracle on the reference mover's output of `f` (must pass) and on
    each of its corruptions (each must fail)."""
    in_data = Path(f).read_bytes()
    lst, why = listing.objdump(tool(args, "llvm-objdump-22"), f)
    lines, _ = expected_lines(lst)
    encoded = listing.assemble(tool(args, "llvm-mc-22"), lines)
    try:
        out, moved, base_va, amap = mover.move(in_data, lst, encoded)
    except mover.Unsupported as e:
        print(f"selftest: {f.name}: the reference mover does not handle it ({e})")
        return []
    work = Path(args.work)
    good = work / f"{f.stem}.moved.co"
    good.write_bytes(out)
    res = check_pair(args, f, good, None, rng, lst)
    print(f"selftest: {f.name} moved by the reference mover: {len(res.failures)} failures, "
          f"{res.stats['moved_functions']} functions, {res.stats['ds2_replaced']} DS2, "
          f"{res.stats['model_sites']} model sites, {res.stats['branches_retargeted']} branches re-aimed")
    failures = [f"{f.name} (reference mover): {x}" for x in res.failures[:5]]
    for name, bad in mover.mutations(out, base_va, None, moved, amap, lst):
        path = work / f"{f.stem}.mutated.co"
        path.write_bytes(bad)
        r = check_pair(args, f, path, None, rng, lst)
        print(f"selftest: {f.name} corrupted ({name}): "
              f"{'caught: ' + r.failures[0][:100] if r.failures else 'NOT CAUGHT'}")
        if not r.failures:
            failures.append(f"{f.name}: corruption `{name}` passed the oracle")
    return failures


def selftest(args):
    failures, refused = ds2.self_test(args.rounds)
    print(f"selftest: {args.rounds} random DS2 instructions against the model: "
          f"{len(failures)} failures, expected refusals {refused}")
    rng = random.Random(7)
    lines, originals = set(), set()
    for _ in range(400):
        t = ds2.random_ds2(rng)
        if ds2.banked(t):
            continue
        originals.add(t)
        try:
            lines.update(ds2.split(t))
        except ds2.NoSplit:
            pass
    enc = listing.assemble(tool(args, "llvm-mc-22"), sorted(lines | originals))
    bad = [line for line, b in enc.items() if b is None]
    print(f"selftest: {len(enc)} split and original lines through llvm-mc-22, {len(bad)} rejected")
    failures += [f"llvm-mc-22 rejects `{b}`" for b in bad]
    files = []
    for f in args.files:
        files += sorted(Path(f).glob("*.co")) if Path(f).is_dir() else [Path(f)]
    for f in files:
        # An object against itself: nothing moved. It passes unless it holds a
        # DS2, and then the oracle must say exactly that (it can fail).
        own = listing.objdump(tool(args, "llvm-objdump-22"), f)[0]
        if any(x.mnemonic == ".long" for x in own.values()):
            # B0 encodings LLVM 22 does not decode (a0_sites: the flat
            # scratch base selector): not an object objdump can check.
            print(f"selftest: {f.name}: llvm-objdump-22 does not decode all of it, not compared")
            continue
        res = check_pair(args, f, f, None, rng, own)
        has_ds2 = any(ds2.is_ds2(x.mnemonic) for x in own.values())
        unexpected = [x for x in res.failures if not (has_ds2 and "was not moved" in x)]
        if has_ds2 and len(unexpected) == len(res.failures):
            unexpected.append("holds a DS2 but the identity passed the oracle")
        print(f"selftest: {f.name} against itself: {'DS2 not moved, detected' if has_ds2 and not unexpected else 'ok' if not unexpected else 'FAILED'}")
        failures += [f"{f}: {x}" for x in unexpected[:5]]
        if has_ds2:
            failures += moved_selftest(args, f, rng)
    if not files:
        failures.append("no object to compare")
    # The banked edge cases (edge.py) through the reference mover: the
    # oracle's VGPR-MSB path and the model on registers above v255.
    fixable = edge.objects(tool(args, "llvm-mc-22"), tool(args, "ld.lld-22"), Path(args.work) / "edge")["fixable"][0]
    failures += moved_selftest(args, fixable, rng)
    for f in failures[:40]:
        print("FAIL:", f)
    return 1 if failures else 0


def edges(args):
    """The synthetic edge cases (edge.py): the fixable object (DS2s of all 12
    mnemonics in VGPR-MSB bank modes) must be rewritten complete and pass the
    oracle, the DS model checking every banked sequence; each refusal object
    must be refused naming its site and reason."""
    failures = []
    rng = random.Random(16)
    for name, (path, reason) in edge.objects(tool(args, "llvm-mc-22"), tool(args, "ld.lld-22"),
                                            Path(args.work) / "edge").items():
        out = path.with_suffix(".out.co")
        if out.exists():
            out.unlink()
        r = subprocess.run([args.hotswap, "rewrite", "--json", "-o", str(out), str(path)],
                           capture_output=True, text=True)
        report = json.loads(r.stdout)
        status, message = report.get("status"), report.get("message") or ""
        lst, _ = listing.objdump(tool(args, "llvm-objdump-22"), path)
        if reason is None:
            if status != "complete":
                failures.append(f"edge {name}: {status}: {message[:200]}")
                print(f"edge: {name}: {status} (expected complete)")
                continue
            res = check_pair(args, path, out, report, rng, lst)
            print(f"edge: {name}: complete, {res.stats['ds2_replaced']} DS2 ({res.stats['banked_sites']} banked), "
                  f"{res.stats['model_sites']} model sites, {len(res.failures)} failures")
            failures += [f"edge {name}: {x}" for x in res.failures[:10]]
        else:
            site = next(a for a, x in lst.items() if ds2.is_ds2(x.mnemonic))
            ok = status == "refused" and f"{site:#x}" in message and reason_matches(reason, message)
            print(f"edge: {name}: {status}: {message[:160]} ({'confirmed' if ok else 'NOT the expected refusal'})")
            if not ok:
                failures.append(f"edge {name}: expected a refusal at {site:#x} ({reason}), got {status}: "
                                f"{message[:200]}")
    # clang-22 objects whose moved functions are called through
    # function-pointer tables (rust/hotswap-code-object/tests/growth): each
    # rewritten complete, every old entry a gateway to its image and every
    # table relocation re-aimed at it (compare.py checks both).
    tables = Path(__file__).resolve().parents[2] / "rust" / "hotswap-code-object" / "tests" / "growth"
    for path in sorted(tables.glob("*.co")):
        out = Path(args.work) / (path.stem + ".out.co")
        if out.exists():
            out.unlink()
        r = subprocess.run([args.hotswap, "rewrite", "--json", "-o", str(out), str(path)],
                           capture_output=True, text=True)
        report = json.loads(r.stdout)
        if report.get("status") != "complete":
            failures.append(f"{path.name}: {report.get('status')}: {(report.get('message') or '')[:200]}")
            continue
        res = check_pair(args, path, out, report, rng)
        st = res.stats
        gateways = st["gateways_branch"] + st["gateways_far"]
        print(f"tables: {path.name}: {st['moved_functions']} moved, {gateways} gateways, "
              f"{st['relocations_reaimed']} relocations re-aimed, {len(res.failures)} failures")
        failures += [f"{path.name}: {x}" for x in res.failures[:10]]
        # (far gateways, relocations re-aimed) each object is built to need.
        want = {"table": (0, 2), "abs": (0, 3), "stub": (1, 0), "nonleaf": (0, 0)}.get(path.stem)
        if gateways != st["moved_functions"] or want != (st["gateways_far"], st["relocations_reaimed"]):
            failures.append(f"{path.name}: expected a gateway per moved function, (far gateways, relocations "
                            f"re-aimed) = {want}, got ({st['gateways_far']}, {st['relocations_reaimed']})")
        # The far gateways' register check must be able to fail: claiming
        # every SGPR pair dead at every old entry must be refused somewhere.
        if res.far_gateways:
            entries = [g["old_entry"] for o in report.get("code_objects", []) for g in o.get("gateways", [])]
            probe = [{"site": e, "end": e, "kind": "dead", "scratch": [f"s{n}", f"s{n + 1}"]}
                     for e in entries for n in range(0, 106, 2)]
            refused = len(dead_claim_violations(args, path, probe, str(out) + ".probe.json"))
            print(f"tables: {path.name}: far gateways {res.far_gateways}: each pair dead at its entry "
                  f"(checked); the same check refuses {refused} of {len(probe)} pairs at the old entries")
            if refused == 0:
                failures.append(f"{path.name}: the gateway register check refuses no pair at any old entry")
        if path.stem == "nonleaf" and st["literal_edits_in_place"] == 0:
            failures.append("nonleaf.co: the kernel's computed call target was not re-aimed where it is built")
    for f in failures[:40]:
        print("FAIL:", f)
    return 1 if failures else 0


def main():
    p = argparse.ArgumentParser()
    p.add_argument("mode", choices=["corpus", "pair", "selftest", "edges"])
    p.add_argument("--hotswap")
    p.add_argument("--scan")
    p.add_argument("--tools", default=None, help="directory of llvm-objdump-22, llvm-mc-22, llvm-readelf-22")
    p.add_argument("--work", required=True)
    p.add_argument("--report")
    p.add_argument("--rounds", type=int, default=3000)
    p.add_argument("--require-complete", action="store_true",
                   help="fail on any refusal, even one whose reason the input confirms")
    p.add_argument("--cache", default=os.environ.get("HOTSWAP_DOWNLOAD_CACHE")
                   or str(Path.home() / ".cache" / "hotswap"))
    p.add_argument("files", nargs="*")
    args = p.parse_intermixed_args()
    Path(args.work).mkdir(parents=True, exist_ok=True)
    if args.mode == "corpus":
        return corpus(args)
    if args.mode == "selftest":
        return selftest(args)
    if args.mode == "edges":
        return edges(args)
    report = json.loads(Path(args.report).read_text()) if args.report else None
    res = check_pair(args, args.files[0], args.files[1], report, random.Random(1250))
    print(json.dumps(res.stats))
    for f in res.failures[:40]:
        print("FAIL:", f)
    return 1 if res.failures else 0


if __name__ == "__main__":
    sys.exit(main())
