#!/usr/bin/env python3
"""The gfx1250 walker and A0 classifier against llvm-objdump-22.

Usage:
  oracle.py check  --scan A0_SCAN --objdump OBJDUMP --work DIR FILE...
  oracle.py wheels --scan A0_SCAN --objdump OBJDUMP --work DIR --cache DIR [--bench-rounds N]
  oracle.py bench  --scan A0_SCAN --objdump OBJDUMP --work DIR FILE...

check: finds every gfx125x code object in FILE... (bare, bundles, CCOB, host
ELF) with the crate's container code, then, per function the walker reports:
  - its instruction start addresses equal llvm-objdump-22's (`// ADDR:` comments)
    for the addresses in [offset, offset + size);
  - its per-class site counts equal a mnemonic count of llvm-objdump-22's text
    (the class definitions, in text terms, are CLASS_RULES below);
  - each site's mnemonic equals objdump's at its address;
  - no function is incomplete.
wheels: downloads the pinned wheels (sha256-checked, cached outside the build
tree), extracts their shared libraries, checks the number of code objects per
processor the containers find, then runs `check` on them. Off CI, an unreachable
index prints "SKIP: ..." and passes; on CI (CI=true) it fails.
wheels-mutate: bit flips, truncations and bogus offsets over the wheels' host
binaries, bundles and CCOBs, over their code objects and over FILE...: the
container reader, the analysis and same_size_fix must never panic.
bench: the analyzer over FILE... against llvm-objdump-22 -d over the same
objects, in one run; prints figures and the ratio (never fails on timing).
"""
import argparse
import bisect
import hashlib
import json
import os
import re
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "common"))
import a0_classes  # noqa: E402  (the class table's text side)
import wheel_files  # noqa: E402  (wheel members, extracted once per download cache)

# name, version, platform tag, file name, sha256, {processor: code objects found}
WHEELS = [
    ("torch-spline-conv-rocm", "1.2.2.post7", "manylinux_2_32_x86_64",
     "torch_spline_conv_rocm-1.2.2.post7-cp312-cp312-manylinux_2_32_x86_64.whl",
     "b3712455797dd9dffe39049c1af3d7ed6989e6c3fa9d0763f1b6225cd729944f",
     {"gfx1250": 2, "gfx1251": 2}),
    ("torch-cluster-rocm", "1.6.3.post7", "manylinux_2_32_x86_64",
     "torch_cluster_rocm-1.6.3.post7-cp312-cp312-manylinux_2_32_x86_64.whl",
     "de4b259663f0c9c56ad0638dafd8d66eb3156d34a8ff1e8933ae10529073fb9e",
     {"gfx1250": 7, "gfx1251": 7}),
    ("torch-scatter-rocm", "2.1.2.post7", "manylinux_2_32_x86_64",
     "torch_scatter_rocm-2.1.2.post7-cp312-cp312-manylinux_2_32_x86_64.whl",
     "6d7d09c22eac2b6e5dd798cca3803595cbcfa967e41873271c923f24fbe7b718",
     {"gfx1250": 3, "gfx1251": 3}),
    # Compressed bundles (CCOB v3, zstd) of ROCm 7: no gfx1250 object in this
    # version, but 24 objects for 6 other processors behind 4 compressed bundles.
    ("jax-rocm7-plugin", "0.10.0", "manylinux_2_28_x86_64",
     "jax_rocm7_plugin-0.10.0-cp312-cp312-manylinux_2_28_x86_64.whl",
     "f00e5664a380bef3657b412e4ea3895a5a29656155074e2667e68194eabb5329",
     {"gfx1250": 0, "gfx908": 4, "gfx90a": 4, "gfx9-4-generic": 4, "gfx10-3-generic": 4,
      "gfx11-generic": 4, "gfx12-generic": 4}),
    # The large real set for code growth (README "Proof of the growth rewrite"):
    # 45 gfx1250 objects (96 MB, 15,377 functions, 39,472 DS two-address sites)
    # in CCOB v3 zstd bundles inside one 459 MB host library, for 27 processors.
    ("jax-rocm10-pjrt", "0.12.0", "manylinux_2_27_x86_64",
     "jax_rocm10_pjrt-0.12.0-py3-none-manylinux_2_27_x86_64.whl",
     "45ee7b471b71a582ce165dd63069b10d1d8923d849b61b6fa8783f1d13294edb",
     {p: 45 for p in ("gfx1250", "gfx1201", "gfx1200", "gfx1153", "gfx1152", "gfx1151",
                      "gfx1150", "gfx1103", "gfx1102", "gfx1101", "gfx1100", "gfx1036",
                      "gfx1035", "gfx1034", "gfx1033", "gfx1032", "gfx1031", "gfx1030",
                      "gfx1012", "gfx1011", "gfx1010", "gfx950", "gfx942", "gfx90a",
                      "gfx908", "gfx906", "gfx900")}),
]
# Wheels too large for the mutation rounds (each round copies the host binary)
# and kept out of the analyzer benchmark (its figures stay comparable; the
# growth benchmark, tests/growth, times this set).
LARGE_WHEELS = {"jax-rocm10-pjrt"}

CLASSES = a0_classes.NAMES

# Control transfers that end the integer-WMMA spacing scan.
CONTROL = {"s_endpgm", "s_endpgm_saved", "s_branch", "s_code_end", "s_set_pc_i64",
           "s_setpc_b64", "s_swap_pc_i64", "s_swappc_b64", "s_rfe_i64", "s_call_i64"}
WIDE = re.compile(r"_(b64|u64|i64|f64)$")


def base(mnemonic):
    return re.sub(r"_dpp$", "", mnemonic)


def flat_scratch_base_64(m, text):
    """A 64-bit source naming the flat scratch base: a scalar op of 64-bit type
    with the _hi selector (the _lo one is A0's canonical form), or a vector op
    of 64-bit type (or v_pk_*_f32) with either."""
    if "src_flat_scratch_base_" not in text:
        return False
    stem = re.sub(r"_(e32|e64|dpp)$", "", re.sub(r"_dpp$", "", m))
    if m.startswith("s_"):
        return bool(WIDE.search(stem)) and "src_flat_scratch_base_hi" in text
    return bool(WIDE.search(stem)) or stem in {"v_pk_fma_f32", "v_pk_add_f32", "v_pk_mul_f32"}


def fewer_than_8_v_nops(insns, addrs, i):
    """Fewer than 8 v_nops after addrs[i] before another VALU, an addtid DS
    access (its A0 form is VALU code), a control transfer or the function's
    end."""
    nops = 0
    for b in addrs[i + 1:]:
        n = insns[b][0]
        if n.startswith("v_nop"):
            nops += 1
            if nops >= 8:
                return False
        elif (n.startswith("v_") or n in CONTROL or n.startswith("s_cbranch_")
              or n in ("ds_load_addtid_b32", "ds_store_addtid_b32")):
            return True
    return True


# The table's conditions in llvm-objdump-22's text, written here from LLVM's
# output (not from the classifier): (mnemonic, text, insns, addrs, index) -> bool.
CONDITIONS = {
    "always": lambda m, t, insns, addrs, i: True,
    # LLVM has cluster loads of the global segment only.
    "global_segment": lambda m, t, insns, addrs, i: True,
    # The WMMA's matrix format is in the mnemonic.
    "matrix_f8f6f4": lambda m, t, insns, addrs, i: True,
    "matrix_f4": lambda m, t, insns, addrs, i: True,
    "clamp": lambda m, t, insns, addrs, i: re.search(r"\bclamp\b", t) is not None,
    "fewer_than_8_v_nops": lambda m, t, insns, addrs, i: fewer_than_8_v_nops(insns, addrs, i),
    "flat_scratch_base_64_source": lambda m, t, insns, addrs, i: flat_scratch_base_64(m, t),
}


def class_rule(name):
    """The class in text terms: its pattern (every mnemonic when it has none)
    and any of its encodings' conditions."""
    pat = a0_classes.pattern(name)
    conds = a0_classes.conditions(name)
    unknown = [c for c in conds if c not in CONDITIONS]
    if unknown:
        raise SystemExit(f"error: oracle.py has no text-side check for condition(s) {unknown} "
                         f"of class {name}: add them to CONDITIONS")
    preds = [CONDITIONS[c] for c in conds]

    def rule(m, t, insns, addrs, i):
        if pat is not None and not pat.match(base(m)):
            return False
        return any(p(m, t, insns, addrs, i) for p in preds)
    return rule


CLASS_RULES = {name: class_rule(name) for name in CLASSES}


def is_ci():
    return os.environ.get("CI", "").lower() not in ("", "0", "false", "no", "off", "n", "f")


LINE = re.compile(r"^\t(\S+)(.*?)\s*// ([0-9A-F]+): ((?:[0-9A-F]{8} ?)+)")


def objdump(tool, path, processor):
    """{address: (mnemonic, text)} of llvm-objdump's disassembly, or an error string."""
    r = subprocess.run([tool, "-d", f"--mcpu={processor}", "--mattr=+real-true16", path],
                       capture_output=True, text=True)
    if r.returncode != 0:
        return f"llvm-objdump exited {r.returncode}: {r.stderr.strip()[:300]}"
    out = {}
    for line in r.stdout.splitlines():
        m = LINE.match(line)
        if m:
            words = "".join(int(w, 16).to_bytes(4, "little").hex() for w in m.group(4).split())
            out[int(m.group(3), 16)] = (m.group(1), m.group(1) + m.group(2), words)
    return out


def selector_231_in_64bit_source(words):
    """The raw words of an instruction LLVM 22 prints as .long: a scalar op with
    src_flat_scratch_base_hi (231) in ssrc0/ssrc1, or a VOP3 with 231 in a
    source field of its second dword: the B0 form LLVM 22 rejects."""
    w0 = words[0]
    if w0 >> 30 == 0b10:
        return (w0 & 0xFF) == 231 or ((w0 >> 8) & 0xFF) == 231
    if w0 >> 26 == 0x35 and len(words) > 1:
        return any(((words[1] >> s) & 0x1FF) == 231 for s in (0, 9, 18))
    return False


def reconcile(ref, insns, f, unknown_at):
    """objdump's boundaries where LLVM 22 decodes less than the walker:
    - at a .long where the walker stopped (an encoding it does not size either),
      the reference ends there and the walker must report it: 'stopped';
    - at a .long the walker sizes as a flat_scratch_base_64 site whose raw words
      name selector 231 in a 64-bit source (LLVM 22's disassembler rejects that
      B0 form), the site is one instruction: the number of such sites."""
    sites = {s["offset"]: s for s in f["sites"] if s["class"] == "flat_scratch_base_64"}
    out, skip_to, fsb = [], None, 0
    for a in ref:
        if skip_to is not None and a < skip_to:
            continue
        skip_to = None
        m = insns[a][0]
        if m == ".long":
            site = sites.get(a)
            if site is not None:
                words = [int(insns[b][1].split()[1], 16) for b in (a, a + 4) if b in insns
                         and insns[b][0] == ".long" and b < a + site["len"]]
                if selector_231_in_64bit_source(words):
                    out.append(a)
                    skip_to = a + site["len"]
                    fsb += 1
                    continue
            if a in unknown_at and f["incomplete"]:
                return out, "stopped"
        out.append(a)
    return out, fsb


def oracle_counts(insns, addrs, f):
    counts = {c: 0 for c in CLASSES}
    fsb_long = {s["offset"] for s in f["sites"] if s["class"] == "flat_scratch_base_64"}
    for i, a in enumerate(addrs):
        m, t = insns[a][0], insns[a][1]
        if m == ".long" and a in fsb_long:
            # Verified from the raw words in reconcile().
            counts["flat_scratch_base_64"] += 1
            continue
        for c, rule in CLASS_RULES.items():
            if rule(m, t, insns, addrs, i):
                counts[c] += 1
    return counts


def fix_encoding(cls, mnemonic):
    """The class's same-size encoding whose sites have `mnemonic` (the
    family's name for a class defined by an operand)."""
    for e in a0_classes.same_size(cls):
        if e["mnemonic"] == mnemonic:
            return e
    return None


def check_fixes(mc, fixes):
    """Each distinct same-size replacement, disassembled by llvm-mc-22, is the
    documented A0 form with the same operands where the form keeps them."""
    failures = []
    for cls, mnemonic, before, after in sorted(fixes):
        texts = []
        for hexbytes in (before, after):
            data = " ".join(f"0x{hexbytes[i:i + 2]}" for i in range(0, len(hexbytes), 2))
            r = subprocess.run([mc, "--disassemble", "-triple=amdgcn-amd-amdhsa", "-mcpu=gfx1250",
                                "-mattr=+real-true16"], input=data, capture_output=True, text=True)
            lines = [l.strip() for l in r.stdout.splitlines() if l.strip() and not l.strip().startswith(".")]
            texts.append(lines[0] if lines and "invalid" not in r.stderr else "<invalid>")
        old, new = texts
        e = fix_encoding(cls, mnemonic)
        rule = e["rule"] if e else None
        ok = e is not None and new != "<invalid>" and len(after) == len(before)
        if rule == "flat_scratch_base_lo":
            # LLVM 22 cannot disassemble the B0 form (selector 231 in a 64-bit
            # source): the A0 form names src_flat_scratch_base_lo instead.
            ok = ok and "src_flat_scratch_base_lo" in new and "_hi" not in new
        elif rule == "scale_src2_vgpr0":
            # Only an unprinted field changes: the same instruction.
            ok = ok and new == old and new.split()[0] == e["replacement"]
        elif rule in ("opcode", "s_nop_0"):
            ok = ok and new.split()[0] == e["replacement"]
            if rule == "opcode":
                # Only the opcode changes: the operands stay.
                ok = ok and new.split(None, 1)[1:] == old.split(None, 1)[1:]
        elif rule is not None:
            raise SystemExit(f"error: oracle.py has no text-side check for rule {rule} ({cls})")
        print(f"fix: {cls}: {old} -> {new}")
        if not ok:
            failures.append(f"same-size fix of {cls}: {old} -> {new}")
    return failures


def scan(a0_scan, work, files):
    objects = Path(work) / "objects"
    objects.mkdir(parents=True, exist_ok=True)
    for old in objects.glob("*.co"):
        old.unlink()
    r = subprocess.run([a0_scan, "dump", str(objects)] + [str(f) for f in files],
                       capture_output=True, text=True, check=True)
    return [json.loads(l) for l in r.stdout.splitlines()]


def check(args, files, expected_processors=None):
    records = scan(args.scan, args.work, files)
    analysed = [r for r in records if "functions" in r]
    failures = []
    for wheel, expected in (expected_processors or {}).items():
        found = {}
        for r in records:
            if f"/{wheel}/" not in r["file"]:
                continue
            proc = (r.get("isa") or "").split("--")[-1].split(":")[0]
            if not proc and "skipped" in r:
                proc = r["skipped"].split()[0]
            if proc:
                found[proc] = found.get(proc, 0) + 1
        for proc, n in expected.items():
            print(f"containers: {wheel}: {found.get(proc, 0)} {proc} code objects (expected {n})")
            if found.get(proc, 0) != n:
                failures.append(f"{wheel}: expected {n} {proc} code objects, found {found.get(proc, 0)}")
    for r in records:
        if "error" in r and "without a .hip_fatbin" not in r["error"]:
            failures.append(f"{r['file']}: {r['error']}")

    def disassemble(r):
        return objdump(args.objdump, r["object"], r["isa"].split("--")[-1].split(":")[0])

    with ThreadPoolExecutor(max_workers=2) as pool:
        listings = list(pool.map(disassemble, analysed))
    totals = {"objects": 0, "functions": 0, "instructions": 0, "boundary_mismatches": 0,
              "count_mismatches": 0, "crashes": 0, "stopped_where_llvm_fails": 0,
              "fsb_hi_sites_llvm_rejects": 0}
    class_totals = {c: 0 for c in CLASSES}
    fixes = set()
    for r, insns in zip(analysed, listings):
        totals["objects"] += 1
        if isinstance(insns, str):
            totals["crashes"] += 1
            failures.append(f"{r['object']} ({r['file']}): {insns}")
            continue
        unknown_at = {u["vaddr"] for u in r["unknown"]}
        keys = sorted(insns)
        for f in r["functions"]:
            totals["functions"] += 1
            lo, hi = f["offset"], f["offset"] + f["size"]
            ref = sorted(a for a in insns if lo <= a < hi)
            ref, note = reconcile(ref, insns, f, unknown_at)
            if note == "stopped":
                totals["stopped_where_llvm_fails"] += 1
            elif note:
                totals["fsb_hi_sites_llvm_rejects"] += note
            totals["instructions"] += len(ref)
            if f["boundaries"] != ref or f["instructions"] != len(ref):
                totals["boundary_mismatches"] += 1
                first = next((i for i, (x, y) in enumerate(zip(f["boundaries"], ref)) if x != y),
                             min(len(ref), len(f["boundaries"])))
                near = ref[first] if first < len(ref) else None
                failures.append(f"{r['object']} {f['name']}: boundaries differ at #{first} "
                                f"(objdump {near and hex(near)}: {near and insns[near][1]})")
                continue
            want = oracle_counts(insns, ref, f)
            if want != f["a0"]:
                totals["count_mismatches"] += 1
                diff = {c: (f["a0"][c], want[c]) for c in CLASSES if f["a0"][c] != want[c]}
                failures.append(f"{r['object']} {f['name']}: class counts (walker, objdump) {diff}")
            for site in f["sites"]:
                class_totals[site["class"]] += 1
                # The site's file bytes are the bytes objdump shows at its address.
                lo_i = bisect.bisect_left(keys, site["offset"])
                hi_i = bisect.bisect_left(keys, site["offset"] + site["len"])
                shown = "".join(insns[b][2] for b in keys[lo_i:hi_i])
                if shown != site["bytes"]:
                    failures.append(f"{r['object']} {f['name']}: site at {site['offset']:#x}: file "
                                    f"offset {site['file_offset']:#x} holds {site['bytes']}, objdump "
                                    f"shows {shown}")
                if site["fixed"] and site["fix"] == "same-size":
                    fixes.add((site["class"], site["mnemonic"], site["bytes"], site["fixed"]))
                elif site["fix"] == "same-size":
                    failures.append(f"{r['object']}: same-size site without a fix: {site}")
                if site["class"] == "flat_scratch_base_64":
                    continue
                m = insns.get(site["offset"], ("?",))[0]
                if m != site["mnemonic"]:
                    failures.append(f"{r['object']} {f['name']}: site at {site['offset']:#x} is "
                                    f"{site['mnemonic']}, objdump says {m}")
    totals["same_size_fixes_checked"] = len(fixes)
    failures += check_fixes(args.mc, fixes)
    print("analyzer vs llvm-objdump-22: " + ", ".join(f"{k} {v}" for k, v in totals.items()))
    print("sites: " + ", ".join(f"{c} {n}" for c, n in class_totals.items()))
    for f in failures[:40]:
        print("MISMATCH:", f)
    return failures, analysed


def fetch_wheels(cache, large=True):
    """The pinned wheels (all, or without LARGE_WHEELS), downloaded once into
    the cache and sha256-checked: (paths, None) or (None, why)."""
    cache = Path(cache)
    cache.mkdir(parents=True, exist_ok=True)
    paths = []
    for name, version, platform, filename, sha, _ in WHEELS:
        if not large and name in LARGE_WHEELS:
            continue
        path = cache / filename
        if not path.exists() or hashlib.sha256(path.read_bytes()).hexdigest() != sha:
            r = subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps",
                                "--only-binary=:all:", "--python-version", "3.12", "--platform",
                                platform, f"{name}=={version}", "-d", str(cache)],
                               capture_output=True, text=True)
            if r.returncode != 0 or not path.exists():
                return None, f"pip download {name}=={version} failed: {r.stderr.strip()[-300:]}"
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
        if digest != sha:
            raise SystemExit(f"error: {filename}: sha256 {digest}, pinned {sha}")
        paths.append(path)
    return paths, None


def extract(wheels, work):
    """Every shared library of the wheels, extracted once per download cache
    (tests/common/wheel_files.py; the jax library is 459 MB)."""
    return sorted(p for wheel in wheels for p in wheel_files.shared_libraries(wheel))


def bench(args, files):
    rounds = args.bench_rounds
    r = subprocess.run([args.scan, "bench", str(rounds)] + [str(f) for f in files],
                       capture_output=True, text=True, check=True)
    ours = json.loads(r.stdout)
    records = scan(args.scan, args.work, files)
    analysed = [x for x in records if "functions" in x]
    start = time.perf_counter()
    for x in analysed:
        subprocess.run([args.objdump, "-d", "--mcpu=" + x["isa"].split("--")[-1].split(":")[0],
                        x["object"]], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    theirs = time.perf_counter() - start
    mb = ours["object_bytes"] / 1e6
    print(f"bench: {len(files)} files ({ours['input_bytes'] / 1e6:.1f} MB), {ours['objects']} gfx125x "
          f"code objects ({mb:.2f} MB), {ours['instructions']} instructions")
    print(f"bench: analyzer (containers + walk + classify, mean of {rounds} rounds): "
          f"{ours['seconds'] * 1e3:.2f} ms, {mb / ours['seconds']:.1f} MB/s of code objects, "
          f"{ours['instructions'] / ours['seconds'] / 1e6:.1f} M instructions/s")
    print(f"bench: llvm-objdump-22 -d over the same objects (one process each): "
          f"{theirs * 1e3:.1f} ms, {mb / theirs:.2f} MB/s")
    print(f"bench: ratio llvm-objdump / analyzer = {theirs / ours['seconds']:.0f}x")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("mode", choices=["check", "wheels", "bench", "wheels-bench", "wheels-mutate"])
    p.add_argument("--scan", required=True)
    p.add_argument("--objdump", required=True)
    p.add_argument("--mc", default=None, help="llvm-mc-22 (default: beside --objdump)")
    p.add_argument("--work", required=True)
    p.add_argument("--cache", default=os.environ.get("HOTSWAP_DOWNLOAD_CACHE")
                   or str(Path.home() / ".cache" / "hotswap"))
    p.add_argument("--bench-rounds", type=int, default=20)
    p.add_argument("--mutation-rounds", type=int, default=2000)
    p.add_argument("--require-all-classes", action="store_true",
                   help="fail unless every A0 class has at least one site")
    p.add_argument("files", nargs="*")
    args = p.parse_intermixed_args()
    if args.mc is None:
        args.mc = str(Path(args.objdump).with_name(Path(args.objdump).name.replace("objdump", "mc")))
    Path(args.work).mkdir(parents=True, exist_ok=True)
    files = list(args.files)
    if args.mode == "wheels-mutate":
        wheels, why = fetch_wheels(Path(args.cache) / "wheels", large=False)
        if wheels is None:
            if is_ci():
                print(f"error: {why}")
                return 1
            print(f"note: {why}: mutating the corpus only")
            wheels = []
        files = extract(wheels, args.work) + files
        r = subprocess.run([args.scan, "mutate", str(args.mutation_rounds)] + [str(f) for f in files])
        return r.returncode
    if args.mode in ("wheels", "wheels-bench"):
        wheels, why = fetch_wheels(Path(args.cache) / "wheels", large=args.mode == "wheels")
        if wheels is None:
            if is_ci():
                print(f"error: {why}")
                return 1
            print(f"SKIP: {why} (not on CI)")
            return 0
        used = [w for w in WHEELS if args.mode == "wheels" or w[0] not in LARGE_WHEELS]
        for w, (_, _, _, _, sha, _) in zip(wheels, used):
            print(f"wheel: {w.name} {w.stat().st_size} bytes sha256 {sha}")
        sofiles = extract(wheels, args.work)
        files = sofiles + files
        if args.mode == "wheels-bench":
            bench(args, files)
            return 0
        expected = {filename[:-len(".whl")]: counts for *_, filename, _, counts in used}
        failures, _ = check(args, files, expected)
        return 1 if failures else 0
    if args.mode == "bench":
        bench(args, files)
        return 0
    failures, analysed = check(args, files)
    if args.require_all_classes:
        seen = {s["class"] for r in analysed for f in r["functions"] for s in f["sites"]}
        missing = [c for c in CLASSES if c not in seen]
        if missing:
            failures.append(f"no site of {missing} in the corpus")
            print(f"MISMATCH: the corpus has no site of {missing}")
    if not analysed:
        print("error: no gfx125x code object found")
        return 1
    return 1 if failures else 0


sys.exit(main())
