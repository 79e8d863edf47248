#!/usr/bin/env python3
"""The native rewriter's invariants on real code objects, with LLVM 22 as the oracle.

Usage: invariants.py --driver NATIVE_REWRITE --objdump LLVM_OBJDUMP --readelf LLVM_READELF
                     --work DIR OBJECT_OR_DIRECTORY...

A directory stands for the *.co files in it (none is fine: a corpus a missing
tool could not build).

For each object (named by its file stem), `native_rewrite rewrite` runs with the
default options. Its outcome must match EXPECTED (every object named there must
be given; others only need to be rewritten or refused by a property of theirs).
Every output (the complete rewrite, the rewrite with `--clauses=nop`, and for an
object refused for code growth its `--allow-partial` rewrite) must keep:
  - the size, and `llvm-readelf -h -S -l -s --dyn-syms` output (headers, sections,
    segments, symbols) identical;
  - llvm-objdump's instruction boundaries identical, except that an encoding
    LLVM 22 prints as `.long` (a B0 form it does not decode) may become the one
    instruction the fix makes of it;
  - the mnemonic diff exactly the allowed pairs, each at a reported site:
    cluster_load* -> global_load* (same operands), s_barrier_signal_isfirst ->
    s_barrier_signal (same operand), s_sethalt -> s_nop, s_clause -> s_nop (only
    with --clauses=nop), `.long` -> v_wmma_scale_* (scale_src2 made 0x100) or a
    scalar op with src_flat_scratch_base_lo; every reported site changed, no
    byte changed outside the reported sites and the metadata note's patch;
  - a tensor_load_to_lds fixed at its mask's definition (tensor_def.s): the load
    unchanged, reading the definition's SGPR as its mask; the definition
    (s_mov_b32 / s_movk_i32 / s_and_b32) the same instruction with its constant's
    low 16 bits zero and its high 16 bits as before;
  - the metadata note readable by our reader and by llvm-readelf --notes, whose
    text differs only in `.gfx1250_revision` lines, each now A0;
  - rewriting the output again gives the same bytes.
Prints one line per object; exits 1 on any violation.
"""
import argparse
import json
import re
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "common"))
import a0_classes  # noqa: E402  (the class table's text side)

# Pinned outcomes: status "ok" with per-class fixed counts, kept clauses and the
# retag; or a refusal kind with its message (a full match; addresses depend on
# the linker's layout, so they are matched as hex numbers).
HEX = r"0x[0-9a-f]+"
EXPECTED = {
    "fixable": ("ok", {"cluster_load": 7, "barrier_signal_isfirst": 2, "s_sethalt": 1,
                       "wmma_scale": 1, "flat_scratch_base_64": 1}, 1, "retagged:1"),
}
# Two tensor loads whose masks are cleared at their only definitions, in
# place (no growth: status "ok"; checked by check_definition).
EXPECTED["tensor_def"] = ("ok", {"tensor_lds": 2}, 0, "no_note")
for level, kept in (("O1", 2), ("O3", 4)):
    EXPECTED[f"fixable_clang.{level}"] = ("ok", {"cluster_load": 6, "barrier_signal_isfirst": 2}, kept,
                                          "no_revision")
GROWTH = {  # refusal fixtures (refusals.s): fixture, class, mnemonic
    "ds_load_addtid": ("ds_addtid", "ds_load_addtid_b32"),
    "ds_addtid": ("ds_addtid", "ds_store_addtid_b32"),
    "wmma_k128": ("wmma_k128", "v_wmma_f16_16x16x128_bf8_fp8"),
    "wmma_f4": ("wmma_f4", "v_wmma_f32_32x16x128_f4"),
    "wmma_scale": ("wmma_scale", "v_wmma_scale16_f32_16x16x128_f8f6f4"),
    "fp8_clamp": ("fp8_clamp", "v_cvt_sr_fp8_f32"),
    "wmma_int_spacing": ("wmma_int_spacing", "v_wmma_i32_16x16x64_iu8"),
    "flat_scratch_base_64": ("flat_scratch_base_64", "vop2"),
}
for fixture, (cls, mnemonic) in GROWTH.items():
    EXPECTED[f"refused.{fixture}"] = (
        "needs_growth",
        rf"1 site\(s\) need code growth; the first: {cls} \({mnemonic}\) in k at offset 0xc \(vaddr {HEX}\)")
# Fixed by growth since issue 30/31 (the fixtures keep their names): the
# growth proof is tests/wmma (wmma.rewrite); refused.wmma_scale is refused by
# its emitter, for the reason pinned here. refused.tensor_lds is grown (its
# mask SGPR, live to s_endpgm while the load is in flight, saved in a dead
# SGPR and restored after s_wait_tensorcnt 0; proof: tests/a0classes).
EXPECTED["refused.wmma_scale"] = (
    "growth_refused",
    rf"code growth refused: wmma_scale \(v_wmma_scale16_f32_16x16x128_f8f6f4\) in k at offset 0xc "
    rf"\(vaddr {HEX}\): vdst \(D\) overlaps A, B or a scale operand, which the second pass reads again")
EXPECTED["refused.incomplete"] = (
    "incomplete",
    rf"incomplete analysis: an encoding the walker cannot size in k at vaddr {HEX} \(first dword 0xe4000000\)")
EXPECTED["refused.uncovered_code"] = (
    "uncovered_code",
    rf"executable bytes outside every function at file offset {HEX} \(not padding\): they cannot be analysed")
EXPECTED["refused.overlapping_functions"] = (
    "overlapping_functions", r"functions k and k_inside overlap with different instruction boundaries")

LINE = re.compile(r"^\t(\S+)(.*?)\s*// ([0-9A-F]+):((?: [0-9A-F]{8})+)")


def run(cmd):
    return subprocess.run([str(c) for c in cmd], capture_output=True, text=True)


def objdump(tool, path):
    """{vaddr: (mnemonic, operands)} of llvm-objdump-22's disassembly."""
    r = run([tool, "-d", "--mcpu=gfx1250", path])
    if r.returncode != 0:
        raise RuntimeError(f"llvm-objdump: {r.stderr.strip()[:300]}")
    out = {}
    for line in r.stdout.splitlines():
        m = LINE.match(line)
        if m:
            out[int(m.group(3), 16)] = (m.group(1), m.group(2).strip())
    return out


def readelf(tool, path, *flags):
    r = run([tool, "-W", *flags, path])
    if r.returncode != 0:
        raise RuntimeError(f"llvm-readelf {' '.join(flags)}: {r.stderr.strip()[:300]}")
    return [l for l in r.stdout.splitlines() if not l.startswith("File:")]


def exec_sections(tool, path):
    """[(file offset, vaddr, size)] of the executable sections."""
    out = []
    for line in readelf(tool, path, "-S"):
        m = re.match(r"\s*\[\s*\d+\]\s+(\S*)\s+\S+\s+([0-9a-f]+)\s+([0-9a-f]+)\s+([0-9a-f]+)\s+\S+\s+(\S*)", line)
        if m and "X" in m.group(5):
            out.append((int(m.group(3), 16), int(m.group(2), 16), int(m.group(4), 16)))
    return out


def to_vaddr(sections, offset):
    for off, addr, size in sections:
        if off <= offset < off + size:
            return addr + offset - off
    return None


def allowed_pair(cls, before, after, clauses_nop):
    """Whether `before` -> `after` (mnemonic, operands) is a same-size fix of
    the class, by the rule and the A0 mnemonic its table row names."""
    (bm, bo), (am, ao) = before, after
    if cls == "s_clause" and not clauses_nop:
        return False  # the rewriter's policy: clauses are kept by default
    for e in a0_classes.same_size(cls):
        rule = e["rule"]
        if rule == "opcode":
            # Only the opcode changes: the operands stay.
            ok = bm == e["mnemonic"] and am == e["replacement"] and bo == ao
        elif rule == "s_nop_0":
            ok = bm == e["mnemonic"] and am == e["replacement"]
        elif rule == "scale_src2_vgpr0":
            # Decodable before (only bytes of an unprinted field change) or a
            # `.long` LLVM 22 does not decode.
            ok = am == e["replacement"] and bm in (am, ".long")
        elif rule == "flat_scratch_base_lo":
            ok = bm == ".long" and am.startswith("s_") and "src_flat_scratch_base_lo" in ao
        else:
            raise SystemExit(f"error: invariants.py has no text-side check for rule {rule} ({cls})")
        if ok:
            return True
    return False


# Classes whose fix may leave the printed instruction as it was (an unprinted
# field changes).
SAME_TEXT = {c for c in a0_classes.NAMES
             if any(e["replacement"] == e["mnemonic"] for e in a0_classes.same_size(c))}


MASK_DEFINITIONS = ("s_mov_b32", "s_movk_i32", "s_and_b32")


def check_definition(sections, da, db, a, b, off, n, site_off):
    """Problems of a tensor mask's definition changed in place (offset `off`,
    `n` bytes) for the tensor_load_to_lds at `site_off`, read in LLVM 22's
    text: the load unchanged and reading the definition's SGPR as its mask
    (the first SGPR of its second descriptor operand); the definition the
    same instruction with its constant's low 16 bits zero and its high 16 bits
    as before."""
    v, sv = to_vaddr(sections, off), to_vaddr(sections, site_off)
    if v is None or sv is None or v not in da or v not in db or sv not in da:
        return [f"definition at {off:#x}: not an instruction of an executable section"]
    if a[site_off:site_off + 12] != b[site_off:site_off + 12] or da[sv] != db.get(sv):
        return [f"{sv:#x}: the tensor load of a definition-site fix changed"]
    (bm, bo), (am, ao) = da[v], db[v]
    tm, to = da[sv]
    ops = [x.strip() for x in bo.split(",")]
    new_ops = [x.strip() for x in ao.split(",")]
    descriptor = [x.strip() for x in to.split(",")]
    mask = re.match(r"s\[(\d+):\d+\]$", descriptor[1]) if len(descriptor) > 1 else None
    if tm != "tensor_load_to_lds" or not mask or ops[0] != f"s{mask.group(1)}":
        return [f"{v:#x}: {bm} {bo} is not the mask SGPR of the tensor load at {sv:#x} ({tm} {to})"]
    if bm != am or bm not in MASK_DEFINITIONS or len(ops) != len(new_ops) or ops[0] != new_ops[0]:
        return [f"{v:#x}: {bm} {bo} -> {am} {ao} is not a mask definition's in-place change"]
    # The one constant operand (the literal or simm16), the rest the same.
    consts = [k for k in range(1, len(ops)) if ops[k] != new_ops[k]]
    if len(consts) != 1:
        return [f"{v:#x}: {bm} {bo} -> {am} {ao}: not one constant changed"]
    try:
        old, new = int(ops[consts[0]], 0), int(new_ops[consts[0]], 0)
    except ValueError:
        return [f"{v:#x}: {bm} {bo} -> {am} {ao}: not a constant"]
    if bm == "s_movk_i32":
        want = 0 if 0 <= old < 0x8000 else None
    else:
        want = old & 0xFFFF0000
    if new != want:
        return [f"{v:#x}: {bm} {bo} -> {am} {ao}: the constant is not {old:#x} with bits [15:0] zero"]
    return []


def check_output(args, src, out, sites_file, clauses_nop):
    """Problems of one (input, output) pair; [] when every invariant holds."""
    problems = []
    a, b = src.read_bytes(), out.read_bytes()
    if len(a) != len(b):
        return [f"size {len(a)} -> {len(b)}"]
    if readelf(args.readelf, src, "-h", "-S", "-l", "-s", "--dyn-syms") != \
            readelf(args.readelf, out, "-h", "-S", "-l", "-s", "--dyn-syms"):
        problems.append("llvm-readelf -h -S -l -s --dyn-syms differs")
    sections = exec_sections(args.readelf, src)
    sites, notes, definitions = [], [], []
    for line in sites_file.read_text().splitlines():
        kind, off, length, *rest = line.split()
        entry = (int(off, 16), int(length), rest[0] if rest else None)
        {"site": sites, "definition": definitions}.get(kind, notes).append(entry)
    # Bytes: changed exactly inside the sites (each site changed), the tensor
    # mask definitions changed in place, and the note patch.
    changed = [i for i in range(len(a)) if a[i] != b[i]]
    ranges = [(o, o + n) for o, n, _ in sites + notes + definitions]
    stray = [i for i in changed if not any(s <= i < e for s, e in ranges)]
    if stray:
        problems.append(f"{len(stray)} byte(s) changed outside the reported sites, first at {stray[0]:#x}")
    for o, n, cls in sites:
        if a[o:o + n] == b[o:o + n]:
            problems.append(f"site {cls} at {o:#x} unchanged")
    # Boundaries and mnemonics.
    da, db = objdump(args.objdump, src), objdump(args.objdump, out)
    site_at = {}
    for o, n, cls in sites:
        v = to_vaddr(sections, o)
        if v is None:
            problems.append(f"site at {o:#x} outside the executable sections")
        else:
            site_at[v] = (n, cls)
    skip_a, skip_b = set(), set()
    for v, (n, cls) in site_at.items():
        if da.get(v, (None,))[0] == ".long":
            # LLVM 22 does not decode the B0 form: after the fix, one instruction.
            skip_a.update(x for x in da if v < x < v + n)
            inside_b = [x for x in db if v < x < v + n]
            if inside_b:
                problems.append(f"{v:#x}: the fixed {cls} is not one instruction")
            skip_b.update(inside_b)
    ba, bb = set(da) - skip_a, set(db) - skip_b
    if ba != bb:
        diff = sorted(ba ^ bb)
        problems.append(f"instruction boundaries differ at {len(diff)} address(es), first {diff[0]:#x}")
    for v in sorted(ba & bb):
        if da[v] == db[v]:
            continue
        n_cls = site_at.get(v)
        if n_cls is None and any(to_vaddr(sections, o) == v for o, _, _ in definitions):
            continue  # checked by check_definition
        if n_cls is None:
            problems.append(f"{v:#x}: {da[v][0]} -> {db[v][0]} at no reported site")
        elif not allowed_pair(n_cls[1], da[v], db[v], clauses_nop):
            problems.append(f"{v:#x}: {' '.join(da[v])} -> {' '.join(db[v])} is not an allowed {n_cls[1]} fix")
    for o, n, site in definitions:
        problems += check_definition(sections, da, db, a, b, o, n, int(site, 16))
    for v, (n, cls) in site_at.items():
        if v in da and v in db and da[v] == db[v] and cls not in SAME_TEXT:
            problems.append(f"{v:#x}: {cls} site printed the same before and after")
    # The metadata note.
    na, nb = readelf(args.readelf, src, "--notes"), readelf(args.readelf, out, "--notes")
    if any("AMDGPU Metadata" in l for l in na) != any("AMDGPU Metadata" in l for l in nb):
        problems.append("llvm-readelf --notes no longer decodes the metadata")
    if len(na) != len(nb):
        problems.append("llvm-readelf --notes: a different number of lines")
    for la, lb in zip(na, nb):
        if la != lb and not (".gfx1250_revision:" in la and lb.rstrip().endswith(".gfx1250_revision: A0")):
            problems.append(f"note text: {la.strip()!r} -> {lb.strip()!r}")
    # Idempotent.
    again = out.with_suffix(".again.co")
    options = ["--allow-partial"] + (["--clauses=nop"] if clauses_nop else [])
    r = run([args.driver, "rewrite", *options, out, again, out.with_suffix(".again.sites")])
    if r.returncode != 0 or again.read_bytes() != b:
        problems.append(f"rewriting the output again changed it (exit {r.returncode}: {r.stdout.strip()[:200]})")
    return problems


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--driver", required=True)
    p.add_argument("--objdump", required=True)
    p.add_argument("--readelf", required=True)
    p.add_argument("--work", required=True)
    p.add_argument("objects", nargs="+")
    args = p.parse_args()
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    failures, rewritten, refused = 0, 0, 0
    names = set()
    paths = []
    for given in map(Path, args.objects):
        paths += sorted(given.glob("*.co")) if given.is_dir() else [given]
    for path in paths:
        name = path.stem
        names.add(name)
        problems = []
        out, sites = work / f"{name}.a0.co", work / f"{name}.sites"
        for f in (out, sites):
            f.unlink(missing_ok=True)
        r = run([args.driver, "rewrite", path, out, sites])
        try:
            result = json.loads(r.stdout.strip().splitlines()[-1])
        except (ValueError, IndexError):
            print(f"FAIL: {name}: driver exit {r.returncode}: {r.stdout}{r.stderr}")
            failures += 1
            continue
        expected = EXPECTED.get(name)
        checks = []
        if result["status"] == "grown":
            # DS two-address sites split by moving code (the growth proof checks
            # the copies instruction for instruction): here, the output decodes
            # in every executable section and rewriting it again changes nothing.
            rewritten += 1
            if r.returncode != 5 or not result["complete"] or not out.exists():
                problems.append(f"grown: exit {r.returncode}, complete {result['complete']}")
            else:
                dis = run([args.objdump, "-d", "--mcpu=gfx1250", "--mattr=+real-true16", out])
                if dis.returncode != 0 or "<unknown>" in dis.stdout or "\t.long" in dis.stdout:
                    problems.append("grown: llvm-objdump-22 does not decode the output")
                again, again_sites = work / f"{name}.again.co", work / f"{name}.again.sites"
                ra = run([args.driver, "rewrite", out, again, again_sites])
                if ra.returncode != 0 or again.read_bytes() != out.read_bytes():
                    problems.append(f"grown: rewriting the output again: exit {ra.returncode}, "
                                    "or the bytes changed")
            summary = f"grown: {result['split']} DS2 site(s) split, {result['moved']} function(s) moved"
            for x in problems:
                print(f"    {x}")
            print(f"{'FAIL' if problems else 'ok'}: {name}: {summary}")
            failures += bool(problems)
            continue
        if result["status"] == "ok":
            rewritten += 1
            if r.returncode != 0 or not result["complete"]:
                problems.append(f"exit {r.returncode}, complete {result['complete']}")
            if result["note_ok"] is False:
                problems.append("our reader cannot read the output's metadata note")
            if expected and expected[0] != "ok":
                problems.append(f"rewritten, expected {expected[0]}")
            elif expected:
                _, fixed, kept, retag = expected
                got = (result["fixed"], result["kept"], result["retag"])
                if got != (fixed, kept, retag):
                    problems.append(f"fixed/kept/retag {got}, expected {(fixed, kept, retag)}")
            checks.append((out, sites, False))
            nop_out, nop_sites = work / f"{name}.nop.co", work / f"{name}.nop.sites"
            if run([args.driver, "rewrite", "--clauses=nop", path, nop_out, nop_sites]).returncode == 0:
                checks.append((nop_out, nop_sites, True))
            else:
                problems.append("--clauses=nop refused what the default rewrites")
            summary = f"rewritten: {result['fixed']}, kept {result['kept']} s_clause, metadata {result['retag']}"
        else:
            refused += 1
            kind, message = result["kind"], result["message"]
            want_exit = 3 if kind == "needs_growth" else 4
            if r.returncode != want_exit:
                problems.append(f"exit {r.returncode} for {kind}, expected {want_exit}")
            if out.exists():
                problems.append("an output was written for a refused object")
            if expected and (expected[0] != kind or not re.fullmatch(expected[1], message)):
                problems.append(f"refused {kind}: {message!r}; expected {expected[0]}: {expected[1]!r}")
            if kind == "needs_growth":
                part_out, part_sites = work / f"{name}.partial.co", work / f"{name}.partial.sites"
                rp = run([args.driver, "rewrite", "--allow-partial", path, part_out, part_sites])
                if rp.returncode not in (0, 5):
                    problems.append(f"--allow-partial: exit {rp.returncode}")
                elif rp.returncode == 0:
                    checks.append((part_out, part_sites, False))
                # 5: DS two-address sites were split by moving code as well
                # (the output is larger; the growth proof checks it).
            summary = f"refused ({kind}): {message}"
        for o, s, nop in checks:
            problems += [f"{o.name}: {x}" for x in check_output(args, path, o, s, nop)]
        status = "FAIL" if problems else "ok"
        print(f"{status}: {name}: {summary}")
        for x in problems:
            print(f"    {x}")
        failures += bool(problems)
    missing = sorted(set(EXPECTED) - names)
    if missing:
        print(f"FAIL: fixtures not given: {', '.join(missing)}")
        failures += 1
    print(f"{len(names)} object(s): {rewritten} rewritten, {refused} refused, {failures} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
