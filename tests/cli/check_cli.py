#!/usr/bin/env python3
"""End-to-end checks of the `hotswap` command line (the built binary).

Usage:
  check_cli.py inspect HOTSWAP OBJECTS
  check_cli.py rewrite HOTSWAP OBJECTS SCRATCH
  check_cli.py doctor-fake HOTSWAP SCRATCH TOOL_DIR TEST_REWRITER
  check_cli.py doctor-rocjitsu HOTSWAP SCRATCH ROCJITSU_DOUBLE
  check_cli.py doctor-machine HOTSWAP TOOL_DIR
  check_cli.py help HOTSWAP
  check_cli.py man-page HOTSWAP PAGE MAN SCRATCH

OBJECTS: the directory tests/cli/CMakeLists.txt fills with clang-22 objects.
Every check prints what it checked; the first failure ends the run (exit 1).
"""
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "common"))
import a0_classes  # noqa: E402  (the class table's text side)

# The stable names, in the order of the JSON output (the order itself is pinned
# by the crate's class_names_are_stable test and documented in docs/cli.md).
CLASSES = a0_classes.NAMES


def fail(msg):
    print(f"FAIL: {msg}")
    sys.exit(1)


def check(cond, msg):
    if not cond:
        fail(msg)
    print(f"ok: {msg}")


def run(cmd, env=None, expect=None):
    r = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, env=env)
    if expect is not None and r.returncode != expect:
        fail(f"{' '.join(map(str, cmd))}: exit {r.returncode}, expected {expect}\n"
             f"stdout:\n{r.stdout[-3000:]}\nstderr:\n{r.stderr[-3000:]}")
    return r


def run_json(cmd, env=None, expect=0):
    r = run(cmd, env, expect)
    try:
        return json.loads(r.stdout)
    except json.JSONDecodeError as e:
        fail(f"{' '.join(map(str, cmd))}: not JSON ({e}):\n{r.stdout[:2000]}")


# --- the documented shape of `inspect --json` -------------------------------------------

def shape(value, spec, where):
    """spec: a type, a tuple of types, ('list', spec), ('dict', {key: spec}, {optional
    key: spec}), ('map', keys, spec) or ('enum', values)."""
    if isinstance(spec, tuple) and spec and spec[0] == "list":
        if not isinstance(value, list):
            fail(f"{where}: expected a list, got {value!r:.80}")
        for i, v in enumerate(value):
            shape(v, spec[1], f"{where}[{i}]")
    elif isinstance(spec, tuple) and spec and spec[0] == "dict":
        required, optional = spec[1], spec[2]
        if not isinstance(value, dict):
            fail(f"{where}: expected an object, got {value!r:.80}")
        missing = set(required) - set(value)
        extra = set(value) - set(required) - set(optional)
        if missing or extra:
            fail(f"{where}: keys missing {sorted(missing)}, unexpected {sorted(extra)}")
        for k, v in value.items():
            shape(v, required.get(k, optional.get(k)), f"{where}.{k}")
    elif isinstance(spec, tuple) and spec and spec[0] == "map":
        if not isinstance(value, dict) or list(value) != spec[1]:
            fail(f"{where}: expected exactly the keys {spec[1]} in order, got {list(value)}")
        for k, v in value.items():
            shape(v, spec[2], f"{where}.{k}")
    elif isinstance(spec, tuple) and spec and spec[0] == "enum":
        if value not in spec[1]:
            fail(f"{where}: {value!r} is not one of {spec[1]}")
    else:
        types = spec if isinstance(spec, tuple) else (spec,)
        # bool is an int in Python: never accept one for the other.
        if isinstance(value, bool) != (bool in types) or not isinstance(value, types):
            fail(f"{where}: {value!r:.80} is not {types}")


UINT = int
SITE = ("dict", {"offset": UINT, "class": ("enum", CLASSES), "mnemonic": str,
                 "fix": ("enum", ["same-size", "growth"])},
        {"length": UINT, "needs_change": bool})
FUNCTION = ("dict", {"name": str, "offset": UINT, "size": UINT, "instructions": UINT,
                     "a0": ("map", CLASSES, UINT), "sites": ("list", SITE)},
            {"kind": ("enum", ["symbol", "kernel-entry"])})
UNKNOWN = ("dict", {"function": str, "offset": UINT, "first_dword": (int, type(None))}, {})
CODE_OBJECT = ("dict", {"file": str, "bundle_id": (str, type(None)), "isa": (str, type(None)),
                        "size": UINT},
               {"container": ("enum", ["bare", "bundle", "compressed-bundle"]),
                "in_host_elf": bool, "code_object_version": (int, type(None)),
                "kernels": ("list", str), "functions": ("list", FUNCTION), "complete": bool,
                "unknown": ("list", UNKNOWN), "note": str, "extracted": str})
REPORT = ("dict", {"code_objects": ("list", CODE_OBJECT)},
          {"errors": ("list", ("dict", {"file": str, "error": str}, {}))})


def inspect(hotswap, objects):
    o = Path(objects)
    inputs = [o / n for n in ["gfx1250.co", "gfx942.co", "same_size.co", "growth.co",
                              "kernels.bundle", "kernels.ccob", "kernels.o", "libkernels.so",
                              "same_size.bundle"]]
    report = run_json([hotswap, "inspect", "--json", *inputs])
    shape(report, REPORT, "inspect")
    print(f"ok: inspect --json over {len(inputs)} files has the documented shape")
    objs = report["code_objects"]
    by = {}
    for c in objs:
        by.setdefault(Path(c["file"]).name, []).append(c)
        analysed = "functions" in c
        check(analysed == (c["isa"] is not None and "gfx1250" in c["isa"]),
              f"{c['file']} {c['bundle_id']}: functions listed exactly for gfx1250 objects")
        check(analysed or "note" in c, f"{c['file']} {c['bundle_id']}: a note says why it is not analysed")
        for f in c.get("functions", []):
            for s in f["sites"]:
                if not f["offset"] <= s["offset"] < f["offset"] + f["size"]:
                    fail(f"{f['name']}: site {s['offset']:#x} outside [{f['offset']:#x}, +{f['size']})")
                if s["fix"] not in a0_classes.fixes(s["class"]):
                    fail(f"{f['name']}: site {s['offset']:#x}: a {s['class']} site cannot be {s['fix']}")
            counts = {k: sum(1 for s in f["sites"] if s["class"] == k) for k in CLASSES}
            if counts != f["a0"]:
                fail(f"{f['name']}: a0 counts {f['a0']} differ from its sites {counts}")
            if f["size"] and not f["instructions"]:
                fail(f"{f['name']}: {f['size']} bytes but no instruction")
    check(report["errors"] == [], "no errors")

    bare = by["gfx1250.co"][0]
    check(bare["bundle_id"] is None and bare["container"] == "bare"
          and bare["isa"] == "amdgcn-amd-amdhsa--gfx1250" and bare["code_object_version"] == 5,
          "bare gfx1250 object: no bundle id, ISA and code object v5")
    check(bare["kernels"] == ["hotswap_kernel"]
          and any(f["name"] == "hotswap_kernel" for f in bare["functions"]),
          "bare gfx1250 object: its kernel is listed and walked")
    g942 = by["gfx942.co"][0]
    check(g942["isa"] == "amdgcn-amd-amdhsa--gfx942" and "functions" not in g942
          and "gfx942" in g942["note"], "gfx942 object: listed with its ISA, not analysed")

    ss = by["same_size.co"][0]["functions"]
    check([f["name"] for f in ss] == ["same_size"], "same_size.co: one function")
    want = dict.fromkeys(CLASSES, 0) | {"cluster_load": 1, "barrier_signal_isfirst": 1,
                                        "s_clause": 1, "s_sethalt": 1}
    check(ss[0]["a0"] == want and all(s["fix"] == "same-size" for s in ss[0]["sites"]),
          "same_size.co: one same-size site of each assembled class")
    check(ss[0]["instructions"] == 6, "same_size.co: 6 instructions")
    gr = by["growth.co"][0]["functions"][0]
    check(gr["a0"]["ds_2addr"] == 1 and gr["a0"]["cluster_load"] == 1
          and [s["fix"] for s in gr["sites"]] == ["same-size", "growth"],
          "growth.co: a same-size cluster load, then a growth ds_load_2addr")

    for name, container, host in [("kernels.bundle", "bundle", False),
                                  ("kernels.ccob", "compressed-bundle", False),
                                  ("kernels.o", "bundle", True), ("libkernels.so", "bundle", True)]:
        entries = by.get(name, [])
        ids = sorted(c["bundle_id"] for c in entries)
        check(ids == ["hipv4-amdgcn-amd-amdhsa--gfx1250", "hipv4-amdgcn-amd-amdhsa--gfx942"],
              f"{name}: the gfx1250 and gfx942 entries ({ids})")
        check(all(c["in_host_elf"] == host for c in entries)
              and (host or all(c["container"] == container for c in entries)),
              f"{name}: container {container}, in a host ELF: {host}")
        g = next(c for c in entries if "gfx1250" in c["bundle_id"])
        names = sorted(f["name"] for f in g["functions"])
        check(names == ["add_one", "lds_swap", "sum4"] and sorted(g["kernels"]) == names,
              f"{name}: the three kernels walked")
    sizes = {tuple(sorted((c["bundle_id"], c["size"]) for c in by[n])) for n in
             ["kernels.bundle", "kernels.ccob", "kernels.o", "libkernels.so"]}
    check(len(sizes) == 1, "the same device code in every container")

    # Exit statuses: a missing file and a non-container fail, the rest is still reported.
    r = run([hotswap, "inspect", "--json", inputs[0], o / "missing.co", Path(__file__)], expect=1)
    report = json.loads(r.stdout)
    check(len(report["code_objects"]) == 1 and len(report["errors"]) == 2,
          "inspect with a missing file and a non-container: exit 1, both listed, the object still reported")
    run([hotswap, "inspect"], expect=2)
    print("ok: inspect without a file: exit 2 (usage)")
    human = run([hotswap, "inspect", "--sites", *inputs], expect=0).stdout
    check("ds_load_2addr_b32" in human and "only gfx125x is analysed" in human
          and "code objects" in human.splitlines()[-1], "human report: sites, notes, a summary line")
    extract = o / "extracted"
    shutil.rmtree(extract, ignore_errors=True)
    report = run_json([hotswap, "inspect", "--json", "--extract", extract, o / "libkernels.so"])
    files = [Path(c["extracted"]) for c in report["code_objects"]]
    check(len(files) == 2 and all(f.is_file() for f in files)
          and sorted(f.stat().st_size for f in files) == sorted(c["size"] for c in report["code_objects"]),
          "--extract writes each code object")
    again = run_json([hotswap, "inspect", "--json", *files])
    check([c["functions"] for c in again["code_objects"] if "functions" in c]
          == [c["functions"] for c in report["code_objects"] if "functions" in c],
          "an extracted object inspects like the original")


# --- rewrite --------------------------------------------------------------------------------

def rewrite(hotswap, objects, scratch):
    o, s = Path(objects), Path(scratch)
    shutil.rmtree(s, ignore_errors=True)
    s.mkdir(parents=True)
    src = o / "same_size.co"
    out = s / "same_size.out"
    res = run_json([hotswap, "rewrite", "--json", src, "-o", out], expect=0)
    check(res["status"] == "complete" and res["output"] == str(out), "same_size.co: complete, exit 0")
    obj = res["code_objects"][0]
    check(sorted(x["class"] for x in obj["fixed"]) == ["barrier_signal_isfirst", "cluster_load", "s_sethalt"]
          and [x["class"] for x in obj["kept"]] == ["s_clause"] and obj["remaining"] == [],
          "same_size.co: three sites fixed, the clause kept")
    a, b = src.read_bytes(), out.read_bytes()
    diff = [i for i in range(len(a)) if a[i] != b[i]]
    check(len(a) == len(b) and 0 < len(diff) <= 16,
          f"same_size.co: same size, only code bytes differ ({len(diff)} bytes)")
    after = run_json([hotswap, "inspect", "--json", out])["code_objects"][0]["functions"][0]
    check(after["a0"]["cluster_load"] == 0 and after["a0"]["barrier_signal_isfirst"] == 0
          and after["a0"]["s_sethalt"] == 0 and after["a0"]["s_clause"] == 1
          and after["instructions"] == 6, "the output inspects clean, with the same instruction count")
    again = s / "again.out"
    run([hotswap, "rewrite", out, "-o", again], expect=0)
    check(again.read_bytes() == b, "rewriting the output again changes nothing")

    grow = o / "growth.co"
    grown = s / "growth.out"
    res = run_json([hotswap, "rewrite", "--json", grow, "-o", grown], expect=0)
    obj = res["code_objects"][0]
    moved = res["moved_functions"]
    changes = {c["mnemonic"]: c for c in res["sites"]}
    check(res["status"] == "complete" and grown.exists() and obj["result"] == "rewritten"
          and [m["name"] for m in moved] == ["growth"] and moved[0]["symbol"] == "growth.a0"
          and moved[0]["code_object"] == 0 and moved[0]["new_vaddr"] % 4096 == 0
          and moved[0]["new_size"] == moved[0]["original_size"] + 12
          and set(changes) == {"cluster_load_b64", "ds_load_2addr_b32"},
          "growth.co: rewritten (exit 0), the function moved to growth.a0, both sites reported")
    ds = changes["ds_load_2addr_b32"]
    cl = changes["cluster_load_b64"]
    check(ds["fix"] == "ds2-split" and ds["new_len"] == 20
          and ds["new_vaddr"] == moved[0]["new_vaddr"] + (ds["original_vaddr"] - moved[0]["original_vaddr"])
          and cl["fix"] == "same-size" and cl["new_vaddr"] == moved[0]["new_vaddr"],
          "growth.co: each site's original and new address and length")
    grown_bytes = grow.read_bytes()
    out_bytes = grown.read_bytes()
    check(len(out_bytes) > len(grown_bytes), "growth.co: the output grew")
    after = run_json([hotswap, "inspect", "--json", grown])["code_objects"][0]
    names = {f["name"]: f for f in after["functions"]}
    check("growth.a0" in names and names["growth.a0"]["a0"]["ds_2addr"] == 0
          and names["growth.a0"]["a0"]["cluster_load"] == 0,
          "growth.co: the output's copy inspects clean")
    # The old entry is a gateway to the copy: in the report and in inspect.
    gws = obj.get("gateways") or []
    check(len(gws) == 1 and gws[0]["function"] == "growth"
          and gws[0]["old_entry"] == moved[0]["original_vaddr"] and gws[0]["new_entry"] == moved[0]["new_vaddr"]
          and gws[0]["kind"] == "s_branch" and gws[0]["registers"] == "" and gws[0]["len"] == 12,
          f"growth.co: the old entry is an s_branch gateway to the copy over the 12-byte first instruction (cluster_load_b64): {gws}")
    check(names.get("growth", {}).get("moved_to") == moved[0]["new_vaddr"]
          and names["growth"].get("gateway") == "s_branch" and after.get("pending_sites") == 0,
          "growth.co: inspect of the output: the old copy's entry is a gateway, nothing reachable pending")
    again = s / "growth.again"
    res = run_json([hotswap, "rewrite", "--json", grown, "-o", again], expect=0)
    check(again.read_bytes() == out_bytes and res["moved_functions"] == [],
          "growth.co: rewriting the output again changes nothing (not grown again)")

    res = run_json([hotswap, "rewrite", "--json", o / "gfx942.co", "-o", s / "x"], expect=3)
    check(res["code_objects"][0]["refusal"]["kind"] == "not_gfx1250", "gfx942 object: refused (exit 3)")

    bundle_out = s / "same_size.bundle.out"
    res = run_json([hotswap, "rewrite", "--json", o / "same_size.bundle", "-o", bundle_out], expect=0)
    results = {c["bundle_id"]: c["result"] for c in res["code_objects"]}
    check(results == {"hipv4-amdgcn-amd-amdhsa--gfx1250": "rewritten",
                      "hipv4-amdgcn-amd-amdhsa--gfx942": "skipped"},
          "bundle: the gfx1250 entry rewritten, the gfx942 entry skipped")
    bi, bo = (o / "same_size.bundle").read_bytes(), bundle_out.read_bytes()
    check(len(bi) == len(bo) and bo.count(b) == 1 and bo.replace(b, a) == bi,
          "bundle: same layout; the gfx1250 entry is exactly the rewritten object, the rest unchanged")
    run([hotswap, "rewrite", o / "growth.bundle", "-o", s / "gb"], expect=1)
    check(not (s / "gb").exists(),
          "bundle whose gfx1250 entry grows: not re-assembled (exit 1), nothing written")

    for bad, why in [(o / "kernels.ccob", "compressed bundle"), (o / "libkernels.so", "host binary"),
                     (o / "missing.co", "missing file"), (Path(__file__), "not a code object")]:
        res = run_json([hotswap, "rewrite", "--json", bad, "-o", s / "bad"], expect=1)
        check(res["status"] == "error" and not (s / "bad").exists(), f"{why}: exit 1, nothing written")
    copy = s / "in.co"
    shutil.copy(src, copy)
    run([hotswap, "rewrite", copy, "-o", copy], expect=1)
    check(copy.read_bytes() == a, "output = input: exit 1, the input untouched")
    run([hotswap, "rewrite", src], expect=2)
    print("ok: rewrite without -o: exit 2 (usage)")


# --- doctor ---------------------------------------------------------------------------------

def node(root, n, props, name=None):
    d = Path(root) / "sys/class/kfd/kfd/topology/nodes" / str(n)
    d.mkdir(parents=True)
    (d / "properties").write_text("".join(f"{k} {v}\n" for k, v in props.items()))
    if name:
        (d / "name").write_text(name + "\n")


def machine(root, nodes, dev_kfd=True):
    root = Path(root)
    shutil.rmtree(root, ignore_errors=True)
    (root / "sys/class/kfd/kfd/topology/nodes").mkdir(parents=True)
    (root / "sys/class/kfd/kfd/topology/system_properties").write_text("platform_oem 0\n")
    if dev_kfd:
        (root / "dev").mkdir()
        (root / "dev/kfd").write_text("")
    for n, props in enumerate(nodes):
        node(root, n, props)
    return root


CPU = {"cpu_cores_count": 16, "simd_count": 0, "gfx_target_version": 0, "capability": 0}


def gpu(version, revision, simds=256):
    # capability: unrelated bits (doorbell type, watch points) around the revision field.
    return {"cpu_cores_count": 0, "simd_count": simds, "gfx_target_version": version,
            "capability": 0x28002400 | (revision << 22), "vendor_id": 4098}


def doctor(hotswap, env_extra, root=None):
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("HSA_", "AMD_COMGR_", "ROCR_", "HIP_", "ROCP")) and k != "LD_LIBRARY_PATH"}
    if root is not None:
        env["HOTSWAP_TEST_ROOT"] = str(root)
    env.update(env_extra)
    return run_json([hotswap, "doctor", "--json"], env=env)


def doctor_fake(hotswap, scratch, tool_dir, rewriter):
    s = Path(scratch)
    root = machine(s / "four-nodes", [CPU, gpu(120500, 0), gpu(120500, 1), gpu(90402, 0)])
    r = doctor(hotswap, {}, root)
    nodes = r["gpus"]["nodes"]
    check([(n["node"], n["kind"], n["gfx"], n["asic_revision"], n["stepping"]) for n in nodes]
          == [(0, "cpu", None, 0, None), (1, "gpu", "gfx1250", 0, "A0"),
              (2, "gpu", "gfx1250", 1, "B0 or later"), (3, "gpu", "gfx942", 0, None)],
          "fake topology: CPU, gfx1250 A0, gfx1250 B0, gfx942 read from sysfs")
    check([n["rewrite_candidate"] for n in nodes] == [False, True, False, False]
          and r["gpus"]["rewrite_candidates"] == 1 and r["gpus"]["kfd"] and r["gpus"]["dev_kfd"],
          "only the A0 node is a rewrite candidate")
    r = doctor(hotswap, {"AMD_COMGR_HOTSWAP_ENTRY_TRAMPOLINES": "1"}, root)
    check([n["rewrite_candidate"] for n in r["gpus"]["nodes"]] == [False, True, True, False],
          "AMD_COMGR_HOTSWAP_ENTRY_TRAMPOLINES=1: the B0 gfx1250 too")
    r = doctor(hotswap, {"HSA_OVERRIDE_GFX_VERSION": "9.4.2"}, root)
    check([n["gfx"] for n in r["gpus"]["nodes"]] == [None, "gfx942", "gfx942", "gfx942"]
          and r["gpus"]["rewrite_candidates"] == 0, "HSA_OVERRIDE_GFX_VERSION applies to every GPU")

    # HSA_TOOLS_LIB as ROCr parses it; the tool found through LD_LIBRARY_PATH.
    lib = Path(tool_dir) / "libhsa-hotswap.so"
    check(lib.is_file(), f"the built tool library exists ({lib})")
    base = {"LD_LIBRARY_PATH": str(tool_dir)}
    r = doctor(hotswap, base, root)
    check(r["tools_lib"]["value"] is None and not r["tool"]["would_load"]
          and any("HSA_TOOLS_LIB is unset" in v for v in r["verdict"]),
          "HSA_TOOLS_LIB unset: the tool is not loaded, the verdict says how to load it")
    check(r["tool"]["library"]["found_by"] == "ld-library-path"
          and Path(r["tool"]["library"]["path"]) == lib, "the tool found by name through LD_LIBRARY_PATH")
    r = doctor(hotswap, base | {"HSA_TOOLS_LIB": "libfoo.so libhsa-hotswap.so"}, root)
    t = r["tools_lib"]
    check(t["names_hotswap"] and [e["name"] for e in t["entries"]] == ["libfoo.so", "libhsa-hotswap.so"]
          and t["entries"][0]["found"] is None and t["entries"][1]["found"]["path"] == str(lib),
          "HSA_TOOLS_LIB='libfoo.so libhsa-hotswap.so': two entries, the tool found")
    names = [c["name"] for c in r["rewriters"]["candidates"]]
    check(names == ["linked COMGR", "rocjitsu translator", "native rewriter"]
          and [c["usable"] for c in r["rewriters"]["candidates"]] == [False, False, True]
          and r["rewriters"]["selected"].startswith("native rewriter"),
          "no HSA_HOTSWAP_REWRITER: Debian's COMGR and no rocjitsu, so the native rewriter")
    check(r["tool"]["would_load"] and r["tool"]["would_rewrite"]
          and r["verdict"][0].startswith("B0 code objects are rewritten for the 1 A0"),
          "tool named on the A0 machine: B0 objects are rewritten by the native rewriter")
    r = doctor(hotswap, base | {"HSA_TOOLS_LIB": 'x"libhsa-hotswap.so"'}, root)
    check(r["tools_lib"]["names_hotswap"] and r["tools_lib"]["entries"][0]["name"] == "libhsa-hotswap.so",
          "ROCr drops the text before an opening quote")
    r = doctor(hotswap, base | {"HSA_TOOLS_LIB": "libhsa-hotswap.so\""}, root)
    check(not r["tools_lib"]["names_hotswap"] and r["tools_lib"]["entries"] == [],
          "an unclosed quote after the name: no entry at all")
    r = doctor(hotswap, base | {"HSA_TOOLS_LIB": "libhsa-hotswap.so \\"}, root)
    check(r["tools_lib"]["never_returns"] and not r["tools_lib"]["names_hotswap"]
          and any("never returns" in v for v in r["verdict"]),
          "a trailing lone backslash: ROCr's parser never returns")
    r = doctor(hotswap, {"HSA_TOOLS_LIB": "/nonexistent/libhsa-hotswap.so"}, root)
    check(r["tools_lib"]["names_hotswap"] and not r["tool"]["would_load"]
          and any("does not find it" in v for v in r["verdict"]),
          "a path that does not exist: named, not loadable")

    # The tool's switches and a rewriter (the change test double, COMGR ABI).
    on = base | {"HSA_TOOLS_LIB": "libhsa-hotswap.so", "HSA_HOTSWAP_REWRITER": rewriter}
    r = doctor(hotswap, on, root)
    check(r["rewriters"]["candidates"][0]["name"] == "HSA_HOTSWAP_REWRITER"
          and r["rewriters"]["candidates"][0]["usable"] and r["tool"]["would_rewrite"]
          and r["verdict"][0].startswith("B0 code objects are rewritten for the 1 A0"),
          "A0 machine, tool named, a usable rewriter: B0 objects are rewritten")
    r = doctor(hotswap, on | {"HSA_HOTSWAP_DISABLE": "1"}, root)
    check(r["tool"]["disabled"] and not r["tool"]["would_rewrite"], "HSA_HOTSWAP_DISABLE=1: off")
    r = doctor(hotswap, on | {"HSA_HOTSWAP_DISABLE": "1", "HSA_HOTSWAP_TOOL_ENABLE": "1"}, root)
    check(not r["tool"]["disabled"] and r["tool"]["would_rewrite"],
          "HSA_HOTSWAP_TOOL_ENABLE=1 overrides HSA_HOTSWAP_DISABLE for this tool")
    r = doctor(hotswap, on | {"HSA_HOTSWAP_REWRITER": "relative.so"}, root)
    check(not r["rewriters"]["candidates"][0]["usable"]
          and "absolute path" in r["rewriters"]["candidates"][0]["detail"]
          and not r["tool"]["would_rewrite"], "a relative HSA_HOTSWAP_REWRITER: not usable, says why")
    r = doctor(hotswap, on | {"HSA_HOTSWAP_REWRITER": "native", "HSA_HOTSWAP_NATIVE_ALLOW_PARTIAL": "1"}, root)
    c = r["rewriters"]["candidates"]
    check(len(c) == 1 and c[0]["usable"] and c[0]["detail"].startswith("native rewriter")
          and r["tool"]["variables"]["HSA_HOTSWAP_NATIVE_ALLOW_PARTIAL"] == "1",
          "HSA_HOTSWAP_REWRITER=native: the native rewriter, the partial switch shown")
    r = doctor(hotswap, on | {"HSA_TOOLS_LIB": "libhsa-hotswap.so /x/libhsa_hotswap_rocjitsu.so"}, root)
    check(r["tools_lib"]["entries"][1]["is_rocr_hook"] and r["tools_lib"]["entries"][1]["found"] is None,
          "ROCr's hook named in HSA_TOOLS_LIB is recognised")
    # A loadable library under the hook's name, named in HSA_TOOLS_LIB: ROCr loads it
    # as a tool (Debian's ROCr has no hook of its own, so no gate applies); the tool
    # stands back and doctor says what to set.
    hook_dir = s / "hook"
    hook_dir.mkdir(parents=True, exist_ok=True)
    hook = hook_dir / "libhsa_hotswap_rocjitsu.so"
    shutil.copy(lib, hook)
    r = doctor(hotswap, on | {"HSA_TOOLS_LIB": f"{hook} libhsa-hotswap.so"}, root)
    h = r["rocr_hook"]
    check(h["named_in_tools_lib"] and h["would_load"] and h["readings"] == [] and h["gate"] is None
          and "remove libhsa_hotswap_rocjitsu.so from HSA_TOOLS_LIB" in (h["set"] or "")
          and not r["tool"]["would_rewrite"]
          and any("this tool rewrites nothing" in v and "HSA_HOTSWAP_TOOL_ENABLE=1" in v for v in r["verdict"]),
          "the hook named in HSA_TOOLS_LIB: loaded, the tool stands back, what to set is said")
    check(not r["tools_lib"]["secure"]["this_process"] and "AT_SECURE" in r["tools_lib"]["secure"]["explanation"]
          and any("AT_SECURE" in v for v in r["verdict"]),
          "HSA_TOOLS_LIB is ignored in AT_SECURE processes: said, this process is not one")
    check(r["rocprofiler_register"]["set"] is None and "unverified" not in r["rocprofiler_register"]["explanation"],
          "Debian's ROCr has no rocprofiler-register: nothing to set")
    check(r["rewriters"]["candidates"][0]["summary"] is not None, "each usable candidate has the registry's summary")

    # No /dev/kfd; no KFD at all.
    root2 = machine(s / "no-dev-kfd", [CPU, gpu(120500, 0)], dev_kfd=False)
    r = doctor(hotswap, on, root2)
    check(not r["gpus"]["dev_kfd"] and not r["tool"]["would_load"]
          and any("/dev/kfd" in v for v in r["verdict"]), "no /dev/kfd: ROCr cannot start")
    empty = s / "empty"
    shutil.rmtree(empty, ignore_errors=True)
    empty.mkdir(parents=True)
    r = doctor(hotswap, on, empty)
    check(not r["gpus"]["kfd"] and r["gpus"]["nodes"] == [] and "no KFD topology" in r["verdict"][0],
          "no KFD topology: the first verdict says hsa_init fails")
    human = run([hotswap, "doctor"], env={**os.environ, "HOTSWAP_TEST_ROOT": str(root)}, expect=0).stdout
    check("node 1: gfx1250" in human and "rewrite candidate" in human and "Verdict" in human,
          "the human report names the nodes and gives a verdict")


def doctor_rocjitsu(hotswap, scratch, rocjitsu):
    """A copy of this machine's ROCr found first (LD_LIBRARY_PATH), then with
    the rocjitsu translator double next to it (so also found by name through
    LD_LIBRARY_PATH): doctor vets it as the tool would inside an application
    whose ROCr is that one, and the tool would choose it over the native
    rewriter."""
    s = Path(scratch)
    shutil.rmtree(s, ignore_errors=True)
    s.mkdir(parents=True)
    system = doctor(hotswap, {})["rocr"]["library"]
    check(system is not None, "this machine's ROCr is found")
    shutil.copy(system["real_path"], s / "libhsa-runtime64.so.1")
    r = doctor(hotswap, {"LD_LIBRARY_PATH": str(s)})
    rj = {c["name"]: c for c in r["rewriters"]["candidates"]}["rocjitsu translator"]
    check(r["rocr"]["library"]["found_by"] == "ld-library-path" and not rj["usable"]
          and f"none next to the ROCr found ({s})" in rj["detail"],
          "a ROCr without the translator beside it: rocjitsu not usable, where it looked said")
    shutil.copy(rocjitsu, s / Path(rocjitsu).name)
    r = doctor(hotswap, {"LD_LIBRARY_PATH": str(s)})
    rj = {c["name"]: c for c in r["rewriters"]["candidates"]}["rocjitsu translator"]
    check(rj["usable"] and rj["detail"].startswith("rocjitsu translator")
          and "API shape (c)" in rj["detail"] and r["rewriters"]["selected"] == rj["detail"],
          f"the translator beside that ROCr is vetted and chosen: {rj['detail']}")


def doctor_machine(hotswap, tool_dir):
    r = doctor(hotswap, {"LD_LIBRARY_PATH": str(tool_dir), "HSA_TOOLS_LIB": "libhsa-hotswap.so"})
    print(json.dumps(r, indent=1))
    rocr = r["rocr"]["library"]
    check(rocr is not None and Path(rocr["path"]).name == "libhsa-runtime64.so.1"
          and Path(rocr["real_path"]).name.startswith("libhsa-runtime64.so.1."),
          f"ROCr found: {rocr and rocr['real_path']}")
    check(not r["rocr"]["links_rocprofiler_register"] and not r["rocr"]["knows_hotswap_hook"]
          and r["rocprofiler_register"]["tools_lib"] == "loaded" and not r["rocr_hook"]["would_load"],
          "Debian's ROCr 5.2: no rocprofiler-register, no hotswap hook of its own")
    c = r["comgr"]
    check(c["soname"] == "libamd_comgr.so.2" and c["soname_from"] == "tool" and c["library"] is not None,
          f"COMGR: the tool's libamd_comgr.so.2, found at {c['library'] and c['library']['real_path']}")
    cands = {x["name"]: x for x in r["rewriters"]["candidates"]}
    check(not cands["linked COMGR"]["usable"]
          and "no amd_comgr_hotswap_rewrite" in cands["linked COMGR"]["detail"],
          "Debian's COMGR has no rewriter (said why)")
    check(not cands["rocjitsu translator"]["usable"] and cands["native rewriter"]["usable"]
          and r["rewriters"]["selected"].startswith("native rewriter")
          and any(v.startswith("the tool would rewrite with: native rewriter") for v in r["verdict"]),
          "no COMGR or rocjitsu rewriter here: the tool would use the native rewriter")
    kfd = Path("/sys/class/kfd/kfd/topology").is_dir()
    check(r["gpus"]["kfd"] == kfd, f"KFD topology present: {kfd}")
    if not kfd:
        check(r["gpus"]["nodes"] == [] and "no KFD topology" in r["verdict"][0]
              and not r["tool"]["would_load"], "no GPU here: hsa_init would fail before any tool")
    check(r["tools_lib"]["entries"][0]["found"]["found_by"] == "ld-library-path",
          "HSA_TOOLS_LIB=libhsa-hotswap.so: found by the loader through LD_LIBRARY_PATH")
    human = run([hotswap, "doctor"], expect=0).stdout
    print(human)
    check("libhsa-runtime64.so.1" in human and "Verdict" in human, "the human report")


def help_(hotswap):
    for sub in [[], ["inspect"], ["rewrite"], ["doctor"]]:
        out = run([hotswap, *sub, "--help"], expect=0).stdout
        check(all(f"  {n}  " in out for n in "0123") and "Exit status" in out,
              f"hotswap {' '.join(sub)} --help lists the exit statuses")
    run([hotswap, "frobnicate"], expect=2)
    print("ok: an unknown subcommand: exit 2")


def help_sections(text):
    """{heading: [first words of its entries]} of a clap --help text."""
    sections, current = {}, None
    for line in text.splitlines():
        if line and not line[0].isspace() and line.endswith(":"):
            current = sections.setdefault(line[:-1], [])
        elif current is not None and line.startswith("  ") and line.strip():
            current.append(line.split()[0].rstrip(","))
        elif not line.strip():
            current = None
    return sections


def man_page(hotswap, page, man, scratch):
    """The build's hotswap.1 (and .gz) is what the program renders, man renders
    it without a warning, and it has what --help has: every command, every
    option, every exit status."""
    scratch = Path(scratch)
    shutil.rmtree(scratch, ignore_errors=True)
    scratch.mkdir(parents=True)
    rendered = run([hotswap, "man-page"], expect=0).stdout
    check(Path(page).read_text() == rendered, f"{page} is what `hotswap man-page` renders now")
    unzipped = subprocess.run(["gzip", "-dc", f"{page}.gz"], capture_output=True, text=True, check=True).stdout
    check(unzipped == rendered, f"{page}.gz holds the same page")
    run([hotswap, "man-page", scratch / "hotswap.1"], expect=0)
    check((scratch / "hotswap.1").read_text() == rendered, "`hotswap man-page OUT` writes the same page")
    run([hotswap, "man-page", scratch / "no-such-dir" / "hotswap.1"], expect=1)
    print("ok: an unwritable OUT: exit 1")

    # lintian's own check (groff-message): man --warnings on the file.
    env = dict(os.environ, LC_ALL="C.UTF-8", MANROFFSEQ="", MANWIDTH="80", MANPAGER="cat")
    r = subprocess.run([man, "--warnings", "-E", "UTF-8", "-l", "-Tutf8", "-Z", page],
                       capture_output=True, text=True, env=env)
    check(r.returncode == 0 and not r.stderr.strip(), f"man --warnings renders it without a warning: {r.stderr!r}")
    text = subprocess.run([man, "-l", page], capture_output=True, text=True, env=env, check=True).stdout
    print(text)

    top = run([hotswap, "--help"], expect=0).stdout
    check("man-page" not in top, "--help does not list the hidden man-page subcommand")
    commands = [c for c in help_sections(top)["Commands"] if c != "help"]
    check(commands == ["inspect", "rewrite", "doctor", "cache"], f"--help lists the commands {commands}")
    for command in commands:
        check(f"   hotswap {command}\n" in text, f"the page has a section for hotswap {command}")
        sub = help_sections(run([hotswap, command, "--help"], expect=0).stdout)
        options = [o for o in sub.get("Options", []) if o not in ("-h", "--help")]
        arguments = [a.strip("<>.") for a in sub.get("Arguments", [])]
        section = text.split(f"   hotswap {command}\n", 1)[1].split("\n   hotswap ", 1)[0].split("\nOPTIONS", 1)[0]
        for option in options + arguments:
            check(option in section, f"hotswap {command}: {option} is on the page")
    for status in sorted(set(help_sections(top)["Exit status"])):
        check(re.search(rf"^EXIT STATUS$.*^ +{status} ", text, re.M | re.S) is not None,
              f"exit status {status} is on the page")


def main():
    mode, args = sys.argv[1], sys.argv[2:]
    {"inspect": inspect, "rewrite": rewrite, "doctor-fake": doctor_fake,
     "doctor-rocjitsu": doctor_rocjitsu, "doctor-machine": doctor_machine, "help": help_,
     "man-page": man_page}[mode](*args)
    print("PASS")


if __name__ == "__main__":
    main()
