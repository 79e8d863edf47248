#!/usr/bin/env python3
"""Checks the WMMA emitters (rewrite/emit) on every WMMA of gfx1250 objects,
with tools that did not produce their output:

1. sites: the driver's WMMA instructions per kind equal llvm-objdump-22's
   mnemonic counts of each object, and the analysis' class counts;
2. decode: llvm-objdump-22 decodes every byte of every original and every
   replacement (each prefixed by `s_set_vgpr_msb <mode at the site>`, so that
   objdump resolves the real VGPR numbers), with no unknown word;
3. the VGPR-MSB mode: each original decodes to the same real registers as
   llvm-objdump-22 shows at that address in the whole object;
4. encode: llvm-mc-22 assembles the text of every emitted instruction to the
   emitted bytes;
5. model: the original and the emitted sequence, as decoded by objdump, run on
   the exact WMMA model (wmma_model.py) from random register states: in real
   arithmetic the results are identical (and no other register differs); with
   the hardware's rounding, M splits are bit-identical and the K splits'
   differences (the block-16 scaled f4 form is an M and a K split) are
   measured and reported;
6. integer WMMA spacing: the padding equals 8 minus the v_nops llvm-objdump-22
   shows after the WMMA (before the next other VALU, control transfer or the
   function's end), never less;
7. spacing inside each emitted sequence: after a WMMA, an instruction that
   overwrites one of its sources comes after as many VALU slots as LLVM 22
   puts there (4 for 16x16x64 FP8/BF8 and FP4 f8f6f4, 8 for 8-bit f8f6f4,
   measured on clang-22 output), one that reads its result after 4 unless it
   is the next WMMA's chained accumulator; with scratch registers, the
   sequence ends with that many v_nops.
The driver lists each block-16 scaled site twice: with its masked A copy
below v256 and (`"variant": "t_bank1"`) in bank 1; both run every check.

Usage: check_wmma.py --emit BIN --mc LLVM_MC --objdump OBJDUMP --work DIR
                     [--report FILE] [--states N] OBJECT_OR_DIR...
Exit 0 when every check passes (refusals are listed, not failures, when their
reason is one of the documented ones).
"""

import argparse
import json
import os
import random
import re
import subprocess
import sys
from fractions import Fraction

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import wmma_model as wm  # noqa: E402

K128 = re.compile(r"v_wmma_f(16|32)_16x16x128_(fp8|bf8)_(fp8|bf8)$")
F4 = re.compile(r"v_wmma_f32_32x16x128_f4$")
F4_SCALED = re.compile(r"v_wmma_scale(16)?_f32_32x16x128_f4$")
SCALE16 = re.compile(r"v_wmma_scale16_f32_16x16x128_f8f6f4$")
INT = re.compile(r"(v_wmma_i32_16x16x64_iu8|v_swmmac_i32_16x16x128_iu8)$")
CONTROL = re.compile(r"s_(branch|cbranch_\w+|setpc_b64|set_pc_i64|swappc_b64|swap_pc_i64|"
                     r"rfe_\w+|call_\w+|endpgm\w*|code_end)$")
LINE = re.compile(r"^\s+(\S.*?)\s*// ([0-9A-F]+): ((?:[0-9A-F]{8} ?)+)\s*$")
SYMBOL = re.compile(r"^[0-9a-f]+ <(.+)>:$")

# The refusal reasons the emitters document (anything else fails the check).
KNOWN_REFUSALS = ("overlaps", "runs past v1023",
                  "MATRIX_SCALE_ROW1 for the A scale of a 32-row f4 WMMA is not supported",
                  "FP6/BF6 A matrix", "mode at the site is unknown")

failures = []


def fail(msg):
    failures.append(msg)
    print("FAIL:", msg)


def run(cmd, **kw):
    return subprocess.run(cmd, check=True, capture_output=True, text=True, **kw).stdout


def disassemble(objdump, path):
    """{symbol: [(address, text, bytes)]} of an object."""
    out = run([objdump, "-d", "--mcpu=gfx1250", path])
    funcs, cur = {}, None
    for line in out.splitlines():
        s = SYMBOL.match(line)
        if s:
            cur = funcs.setdefault(s.group(1), [])
            continue
        m = LINE.match(line)
        if m and cur is not None:
            raw = b"".join(int(w, 16).to_bytes(4, "little") for w in m.group(3).split())
            cur.append((int(m.group(2), 16), m.group(1).strip(), raw))
        elif cur is not None and line.strip() and not line.startswith("Disassembly"):
            cur.append((None, line.strip(), b""))  # undecodable (.long, <unknown>)
    return funcs


def mnemonic(text):
    return text.split()[0] if text else ""


def msb(mode):
    return bytes([mode, 0, 0x86, 0xBF])


# ---------------------------------------------------------------- random states

SAFE = [b for b in range(256) if (b & 0x7F) <= 0x7B]  # finite as FP8, BF8, f16 and f32 bytes
SMALL = [b for b in range(256) if (b & 0x7F) < 0x38]  # |x| < 1 as FP8 and BF8


def state(seed, pool):
    def init(reg):
        r = random.Random(seed * 7919 + reg)
        return [int.from_bytes(bytes(r.choice(pool) for _ in range(4)), "little") for _ in range(32)]
    return wm.Registers(init)


def run_seq(regs, texts, exact):
    for t in texts:
        wm.execute(regs, t, exact)


def ordered(bits, width):
    sign = 1 << (width - 1)
    return -(bits & (sign - 1)) if bits & sign else bits


def measure(orig_regs, new_regs, mag_regs, d_op, dtype, nregs, stats):
    """Counts differing accumulator elements: in ULPs of the destination, and
    relative to the element's magnitude (|C| + sum |a*b|) in units of the
    destination's unit roundoff u (2**-24 for f32, 2**-11 for f16)."""
    width = 16 if dtype == "f16" else 32
    u = Fraction(1, 1 << (11 if width == 16 else 24))
    for v in range(nregs):
        for lane in range(32):
            a, b = orig_regs.get(d_op[1] + v)[lane], new_regs.get(d_op[1] + v)[lane]
            mag = mag_regs.get(d_op[1] + v)[lane]
            mags = list(mag) if width == 16 else [mag]
            halves = [(a >> 16 * h & 0xFFFF, b >> 16 * h & 0xFFFF) for h in range(2)] if width == 16 else [(a, b)]
            for (x, y), mg in zip(halves, mags):
                stats["elements"] += 1
                if x == y:
                    continue
                vx = wm.f16_value(x) if width == 16 else wm.f32_value(x)
                vy = wm.f16_value(y) if width == 16 else wm.f32_value(y)
                if vx == vy:  # +0 / -0
                    continue
                stats["differ"] += 1
                if isinstance(vx, float) or isinstance(vy, float):
                    stats["inf_mismatch"] += 1
                    continue
                ulps = abs(ordered(x, width) - ordered(y, width))
                stats["max_ulps"] = max(stats["max_ulps"], ulps)
                rel = abs(vx - vy) / max(abs(vx), abs(vy))
                stats["max_rel"] = max(stats["max_rel"], float(rel))
                if mg:
                    stats["max_err_u"] = max(stats["max_err_u"], float(abs(vx - vy) / mg / u))


def scratch_regs(rec):
    """The scratch VGPRs a record's replacement uses: a block (`scratch`,
    `scratch_len`) or a list (`scratch_regs`)."""
    regs = set(range(rec.get("scratch", 0), rec.get("scratch", 0) + rec.get("scratch_len", 0)))
    return regs | set(rec.get("scratch_regs", ()))


def check_model(rec, orig_texts, new_texts, states, report):
    op_text = [t for t in orig_texts if t.startswith("v_")][0]
    scratch = scratch_regs(rec)
    mn, ops, mods = wm.parse(op_text)
    dtype, _, _, _, _, a_regs, b_regs, d_regs = wm.shape(mn, mods)
    d_op = ops[0]
    for seed in range(states):
        base = state(seed + 1, SAFE)
        # Real arithmetic: identical register files.
        o, n = base.copy(), base.copy()
        run_seq(o, orig_texts, True)
        run_seq(n, new_texts, True)
        regs = set(o.r) | set(n.r)
        diff = [r for r in sorted(regs) if r not in scratch and o.get(r) != n.get(r)]
        if diff:
            fail(f"{rec['site']} {rec['function']}@{rec['vaddr']:#x} {mn}: real-arithmetic "
                 f"results differ in v{diff[0]} (seed {seed})")
            return
        # Hardware rounding.
        o, n, mg = base.copy(), base.copy(), base.copy()
        run_seq(o, orig_texts, False)
        run_seq(n, new_texts, False)
        for t in orig_texts:
            wm.execute(mg, t, True, magnitude=True)
        others = [r for r in sorted(set(o.r) | set(n.r))
                  if not d_op[1] <= r < d_op[1] + d_regs and r not in scratch and o.get(r) != n.get(r)]
        if others:
            fail(f"{rec['site']} {rec['function']}@{rec['vaddr']:#x}: v{others[0]} differs")
            return
        stats = report.setdefault(mn, {"sites": set(), "elements": 0, "differ": 0, "inf_mismatch": 0,
                                       "max_ulps": 0, "max_rel": 0.0, "max_err_u": 0.0, "states": {}})
        stats["sites"].add((rec["original"], rec["mode"]))
        # M splits and spacing keep every element's one rounding; the
        # block-16 scaled f4 form is split along K too (rounded between).
        if rec["kind"] in ("f4", "f4_scaled", "int") and not mn.startswith("v_wmma_scale16"):
            if o.get(d_op[1]) != n.get(d_op[1]) or any(o.get(d_op[1] + v) != n.get(d_op[1] + v) for v in range(d_regs)):
                fail(f"{rec['site']} {rec['function']}@{rec['vaddr']:#x} {mn}: rounded results differ")
                return
        measure(o, n, mg, d_op, dtype, d_regs, stats)
    # A K-loop's steady state: small inputs, C = 0 then C = the previous D.
    if rec["kind"] == "k128" and ops[3][0] == "v":
        c = ops[3]
        overl = any(wm_overlap(c, op, cnt) for op, cnt in ((ops[1], a_regs), (ops[2], b_regs)))
        if not overl:
            for seed in range(states):
                regs = state(1000 + seed, SMALL)
                for v in range(d_regs):
                    regs.r[c[1] + v] = [0] * 32
                stats = report[mn]["states"].setdefault("small_inputs_k_loop", {
                    "elements": 0, "differ": 0, "inf_mismatch": 0, "max_ulps": 0, "max_rel": 0.0,
                    "max_err_u": 0.0})
                for _step in range(2):
                    o, n, mg = regs.copy(), regs.copy(), regs.copy()
                    run_seq(o, orig_texts, False)
                    run_seq(n, new_texts, False)
                    for t in orig_texts:
                        wm.execute(mg, t, True, magnitude=True)
                    measure(o, n, mg, d_op, dtype, d_regs, stats)
                    for v in range(d_regs):  # next step accumulates onto the original's D
                        regs.r[c[1] + v] = list(o.get(d_op[1] + v))


# VALU slots LLVM 22 puts between a WMMA and a VALU that overwrites one of its
# sources (measured on clang-22 output): 16x16x64 FP8/BF8 4, f8f6f4 with an
# FP4 A 4, f8f6f4 with an 8-bit A (scaled or not) 8.
def war_slots(mn, mods):
    if "f8f6f4" in mn and mods.get("matrix_a_fmt", "MATRIX_FMT_FP8") not in ("MATRIX_FMT_FP4",):
        return 8
    return 4


def vgprs(op):
    return set(range(op[1], op[1] + op[2])) if op[0] == "v" else set()


def check_spacing(rec, texts):
    """Every emitted WMMA is followed by enough VALU slots before an
    instruction that overwrites one of its sources (write after read) or reads
    its result other than as the chained accumulator of the next WMMA (read
    after write, 4 slots); with scratch registers, enough slots after the last
    WMMA too (the caller may write them right after)."""
    insns = [wm.parse(t) for t in texts if not t.startswith("s_set_vgpr_msb")]
    where = f"{rec['site']} {rec['function']}@{rec['vaddr']:#x}"
    last_wmma = None
    for i, (mn, ops, mods) in enumerate(insns):
        if not mn.startswith("v_wmma"):
            continue
        last_wmma = i
        # A, B and the scales; C apart: the chained accumulator (C = D, the
        # next WMMA writing the same D and reading it as C) is what LLVM 22
        # emits back to back.
        reads = set().union(*(vgprs(o) for o in ops[1:3] + ops[4:]))
        reads_c = vgprs(ops[3])
        writes = vgprs(ops[0])
        need_war = war_slots(mn, mods)
        slots = 0
        for mn2, ops2, mods2 in insns[i + 1:]:
            w2 = vgprs(ops2[0]) if ops2 else set()
            r2 = set().union(*(vgprs(o) for o in ops2[1:])) if ops2 else set()
            chained = mn2.startswith("v_wmma") and len(ops2) > 3 and ops2[3] == ops[0]
            if chained:
                r2 = r2 - vgprs(ops2[3]) | (set().union(*(vgprs(o) for o in ops2[1:3])))
            chain_w = mn2.startswith("v_wmma") and ops2[0] == ops[0] and ops[3] == ops[0]
            if (w2 & reads or (w2 & reads_c and not chain_w)) and slots < need_war:
                fail(f"{where}: '{mn2}' overwrites a source of '{mn}' after {slots} VALU slots, "
                     f"{need_war} needed")
            if r2 & writes and slots < 4:
                fail(f"{where}: '{mn2}' reads the result of '{mn}' after {slots} VALU slots")
            if mn2.startswith("v_"):
                slots += 1
    if scratch_regs(rec) and last_wmma is not None:
        tail = sum(1 for mn, _, _ in insns[last_wmma + 1:] if mn == "v_nop")
        need = war_slots(*[insns[last_wmma][k] for k in (0, 2)])
        if tail < need:
            fail(f"{where}: {tail} v_nops after the last WMMA reading scratch registers, {need} needed")


def wm_overlap(a, b, bn):
    return a[1] < b[1] + bn and b[1] < a[1] + a[2]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--emit", required=True)
    ap.add_argument("--mc", required=True)
    ap.add_argument("--objdump", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--report")
    ap.add_argument("--states", type=int, default=2)
    ap.add_argument("objects", nargs="+")
    args = ap.parse_args()
    wm.self_check()
    os.makedirs(args.work, exist_ok=True)
    paths = []
    for p in args.objects:  # a directory stands for the *.co files in it
        if os.path.isdir(p):
            paths += sorted(os.path.join(p, f) for f in os.listdir(p) if f.endswith(".co"))
        else:
            paths.append(p)
    if not paths:
        fail("no code object to check")
        return 1

    lines = run([args.emit] + paths).splitlines()
    objects = {}
    records = []
    for line in lines:
        j = json.loads(line)
        if "object" in j:
            objects[j["object"]] = j
        else:
            records.append(j)

    # 1. Sites against llvm-objdump-22 and the analysis; 3. and 6. need the
    # whole-object disassembly too.
    whole = {}
    for path, counts in objects.items():
        funcs = disassemble(args.objdump, path)
        whole[path] = funcs
        texts = [t for insns in funcs.values() for _, t, _ in insns]
        mns = [mnemonic(t) for t in texts]
        want = {
            "k128": sum(bool(K128.match(m)) for m in mns),
            "f4": sum(bool(F4.match(m)) for m in mns),
            "f4_scaled": sum(bool(F4_SCALED.match(m)) for m in mns),
            "scale16": sum(bool(SCALE16.match(m)) for m in mns),
            "int": sum(bool(INT.match(m)) for m in mns),
        }
        got = {k: sum(1 for r in records if r["site"] == path and r["kind"] == k and "variant" not in r)
               for k in want}
        # A function's instructions appear once per symbol covering them in
        # objdump; the driver walks functions the same way.
        if got != want:
            fail(f"{path}: WMMA kinds walked {got}, llvm-objdump-22 shows {want}")
        if counts["wmma_k128"] != want["k128"] or counts["wmma_f4"] != want["f4"] + want["f4_scaled"]:
            fail(f"{path}: analysis counts {counts} disagree with llvm-objdump-22 {want}")
        padded = sum(1 for r in records if r["site"] == path and r["kind"] == "int" and r.get("added", 0) > 0)
        if counts["wmma_int_spacing"] != padded:
            fail(f"{path}: {counts['wmma_int_spacing']} integer-spacing sites, {padded} padded")
        print(f"{os.path.basename(path)}: {want}")

    # 2. Decode originals and replacements, one symbol each.
    unique = {}
    for r in records:
        key = (r["original"], r["mode"], r.get("replacement"))
        unique.setdefault(key, r)
    asm = ['.amdgcn_target "amdgcn-amd-amdhsa--gfx1250"', ".text"]
    blobs = {}
    for i, (key, r) in enumerate(unique.items()):
        mode = r["mode"] if r["mode"] is not None else 0
        pairs = [(f"o{i}", msb(mode) + bytes.fromhex(r["original"]))]
        if r.get("replacement") is not None:
            pairs.append((f"n{i}", msb(mode) + bytes.fromhex(r["replacement"])))
        for name, data in pairs:
            blobs[name] = data
            asm += [f".globl {name}", f".type {name},@function", f"{name}:",
                    ".byte " + ",".join(str(b) for b in data), f".size {name}, .-{name}"]
    src = os.path.join(args.work, "sites.s")
    obj = os.path.join(args.work, "sites.o")
    with open(src, "w") as f:
        f.write("\n".join(asm) + "\n")
    run([args.mc, "-triple=amdgcn-amd-amdhsa", "-mcpu=gfx1250", "-filetype=obj", "-o", obj, src])
    dec = disassemble(args.objdump, obj)
    for name, data in blobs.items():
        insns = dec.get(name, [])
        bad = [t for a, t, _ in insns if a is None or t.startswith(".long") or "unknown" in t or "illegal" in t]
        got = b"".join(raw for _, _, raw in insns)
        if bad or got != data:
            fail(f"{name}: llvm-objdump-22 does not decode every byte ({bad[:1]}, {len(got)}/{len(data)} bytes)")

    # 4. llvm-mc-22 assembles every emitted instruction's text to its bytes.
    emitted = [(t, raw) for name in blobs if name.startswith("n") for _, t, raw in dec.get(name, [])]
    enc = run([args.mc, "-triple=amdgcn-amd-amdhsa", "-mcpu=gfx1250", "-show-encoding"],
              input="\n".join(t for t, _ in emitted) + "\n")
    encs = [bytes(int(x, 16) for x in m.group(1).split(","))
            for m in re.finditer(r"encoding: \[([^\]]*)\]", enc)]
    if len(encs) != len(emitted):
        fail(f"llvm-mc-22 encoded {len(encs)} of {len(emitted)} emitted instructions")
    for (t, raw), e in zip(emitted, encs):
        if raw != e:
            fail(f"llvm-mc-22 encodes '{t}' as {e.hex()}, the emitter wrote {raw.hex()}")
    print(f"decode/encode: {len(blobs)} byte sequences, {len(emitted)} emitted instructions")

    # 3. The mode: real registers of each original as objdump shows it in place.
    by_addr = {}
    for path, funcs in whole.items():
        for fname, insns in funcs.items():
            for a, t, raw in insns:
                by_addr[(path, fname, a)] = t
    for r in records:
        if r["mode"] is None:
            continue
        i = list(unique).index((r["original"], r["mode"], r.get("replacement")))
        blob_text = [t for _, t, _ in dec[f"o{i}"]][1]
        here = by_addr.get((r["site"], r["function"], r["vaddr"]))
        if here is None or wm.parse(here)[1] != wm.parse(blob_text)[1]:
            fail(f"{r['site']} {r['function']}@{r['vaddr']:#x}: mode {r['mode']:#x} gives "
                 f"'{blob_text}', llvm-objdump-22 shows '{here}' in place")

    # 6. Integer spacing, counted on the whole object's disassembly.
    for r in records:
        if r["kind"] != "int" or r.get("replacement") is None:
            continue
        insns = whole[r["site"]][r["function"]]
        idx = [a for a, _, _ in insns].index(r["vaddr"])
        nops = 0
        for _, t, _ in insns[idx + 1:]:
            m = mnemonic(t)
            if m == "v_nop":
                nops += 1
                if nops == 8:
                    break
            elif (m.startswith("v_") or CONTROL.match(m)
                  or m in ("ds_load_addtid_b32", "ds_store_addtid_b32")):
                break
        if r["added"] != max(0, 8 - nops) or r["present"] != nops:
            fail(f"{r['site']} {r['function']}@{r['vaddr']:#x}: {nops} v_nops follow, "
                 f"emitter saw {r['present']} and added {r['added']}")

    # 5. The model.
    report = {}
    refused = {}
    for i, (key, r) in enumerate(unique.items()):
        if r.get("replacement") is None:
            reason = r.get("refusal", "")
            refused.setdefault(reason, 0)
            refused[reason] += 1
            if not any(k in reason for k in KNOWN_REFUSALS):
                fail(f"{r['site']} {r['function']}@{r['vaddr']:#x}: undocumented refusal '{reason}'")
            continue
        orig = [t for _, t, _ in dec[f"o{i}"]]
        new = [t for _, t, _ in dec[f"n{i}"]]
        check_spacing(r, new)
        try:
            check_model(r, orig, new, args.states, report)
        except wm.ModelError as e:
            fail(f"{r['site']} {r['function']}@{r['vaddr']:#x}: model: {e}")
    # Negative controls: the same checks must catch a wrong register in an
    # emitted operation (the last WMMA's src0 moved by one register), a
    # dropped source modifier, and (block-16 scaled f4, when the corpus has
    # one) the upper M half's A scales taken from rows 0-15's lanes.
    controls = {"register": 0, "modifier": 0}
    row1 = " matrix_a_scale:MATRIX_SCALE_ROW1"
    for i, (key, r) in enumerate(unique.items()):
        if (r.get("replacement") is None or r["kind"] != "f4_scaled"
                or controls.get("scale_row", 0) >= 2):
            continue
        orig = [t for _, t, _ in dec[f"o{i}"]]
        new = [t for _, t, _ in dec[f"n{i}"]]
        if not any(t.startswith("v_wmma_scale16_f32_32x16x128_f4") for t in orig):
            continue
        controls.setdefault("scale_row", 0)
        bad = [t.replace(row1, "") for t in new]
        base = state(99, SAFE)
        o, n = base.copy(), base.copy()
        run_seq(o, orig, True)
        run_seq(n, bad, True)
        scratch = scratch_regs(r)
        if all(o.get(x) == n.get(x) for x in set(o.r) | set(n.r) if x not in scratch):
            fail(f"negative control: the model did not notice {bad}")
        controls["scale_row"] += 1
    for i, (key, r) in enumerate(unique.items()):
        if r.get("replacement") is None or r["kind"] not in ("k128", "f4"):
            continue
        new = [t for _, t, _ in dec[f"n{i}"]]
        variants = []
        last = max(j for j, t in enumerate(new) if t.startswith("v_wmma"))
        a = wm.parse(new[last])[1][1]
        if "/*" not in new[last] and controls["register"] < 4:
            bad = list(new)
            bad[last] = new[last].replace(f"v[{a[1]}:{a[1] + a[2] - 1}]", f"v[{a[1] + 1}:{a[1] + a[2]}]", 1)
            variants.append(("register", bad))
        for j, t in enumerate(new):
            if "neg_lo:[0,0,1]" in t and controls["modifier"] < 4:
                bad = list(new)
                bad[j] = t.replace("neg_lo:[0,0,1]", "")
                variants.append(("modifier", bad))
                break
        orig = [t for _, t, _ in dec[f"o{i}"]]
        for what, bad in variants:
            base = state(99, SAFE)
            o, n = base.copy(), base.copy()
            run_seq(o, orig, True)
            try:
                run_seq(n, bad, True)
            except wm.ModelError:  # e.g. reads a result as an input: noticed
                controls[what] += 1
                continue
            if all(o.get(x) == n.get(x) for x in set(o.r) | set(n.r)):
                fail(f"negative control: the model did not notice {bad}")
            controls[what] += 1
    if not all(controls.values()):
        fail(f"a negative control did not run: {controls}")
    # The block-16 split's masked A copy may lie in any bank: the driver's
    # bank-1 variant of each site ran through the same checks above.
    high = [r for r in unique.values()
            if r.get("variant") == "t_bank1" and r.get("replacement") is not None
            and any(v >= 256 for v in scratch_regs(r))]
    for kind in ("scale16", "f4_scaled"):
        split = [r for r in records if r["kind"] == kind and r.get("replacement") is not None
                 and "scratch_len" in r]
        if split and not [r for r in high if r["kind"] == kind]:
            fail(f"no {kind} block-16 split with its masked A copy above v255 was checked")
    print(f"block-16 splits with the masked A copy in bank 1: {len(high)} checked "
          f"({sum(r['kind'] == 'f4_scaled' for r in high)} of the 32x16x128 f4 form)")
    print(f"negative controls detected: {controls}")

    for reason, n in sorted(refused.items()):
        print(f"refused ({n} distinct sites): {reason}")
    print("rounding (original vs emitted, hardware rounding, random finite states):")
    for mn, s in sorted(report.items()):
        s["sites"] = len(s["sites"])
        print(f"  {mn}: {s['sites']} distinct sites, {s['differ']}/{s['elements']} elements differ, "
              f"max {s['max_ulps']} ulp, max relative {s['max_rel']:.3g}, "
              f"max {s['max_err_u']:.3g} u of the magnitude, {s['inf_mismatch']} infinity mismatches")
        for name, t in s["states"].items():
            print(f"    {name}: {t['differ']}/{t['elements']} differ, max {t['max_ulps']} ulp, "
                  f"max relative {t['max_rel']:.3g}, max {t['max_err_u']:.3g} u of the magnitude, "
                  f"{t['inf_mismatch']} infinity mismatches")
    if args.report:
        with open(args.report, "w") as f:
            json.dump({"rounding": report, "refused": refused}, f, indent=1, sort_keys=True)
    if failures:
        print(f"{len(failures)} failure(s)")
        return 1
    print(f"OK: {len(records)} WMMA sites, {len(unique)} distinct")
    return 0


if __name__ == "__main__":
    sys.exit(main())
