#!/usr/bin/env python3
"""The project's licence policy: what we ship (libhsa-hotswap.so, and every
other artifact of the workspace) statically contains, besides hotswap itself and
Rust's standard library, only crates available under the MIT licence. Check
that for every crate linked into any workspace member. (The notices themselves
are generated and checked by packaging/licenses/hotswap_licenses.py.)

Usage: check_crate_licences.py CARGO MANIFEST
(the target is rustc's host, as the build uses; rustc is taken from cargo's directory)

Linked crates: those reachable from the workspace members through normal dependencies
for the target platform; proc-macro crates and build dependencies run only at
build time and are not part of the binary, so they and their dependencies are
left out. A licence expression qualifies when each of its AND-terms offers MIT.
"""
import json
import re
import subprocess
import sys
from pathlib import Path


def offers_mit(expression: str) -> bool:
    terms = [t.strip().strip("()") for t in expression.split(" AND ")]
    return all("MIT" in [alt.strip().strip("()") for alt in t.split(" OR ")] for t in terms)


assert offers_mit("MIT") and offers_mit("Apache-2.0 OR MIT")
assert not offers_mit("(MIT OR Apache-2.0) AND Unicode-3.0") and not offers_mit("GPL-2.0")


def main() -> int:
    cargo, manifest = sys.argv[1:]
    rustc = Path(cargo).with_name("rustc")
    version = subprocess.run([str(rustc) if rustc.exists() else "rustc", "-vV"],
                             check=True, capture_output=True, text=True).stdout
    triple = re.search(r"^host: (\S+)$", version, re.M).group(1)
    meta = json.loads(subprocess.run(
        [cargo, "metadata", "--locked", "--offline", "--format-version", "1",
         "--manifest-path", manifest, "--filter-platform", triple],
        check=True, capture_output=True, text=True).stdout)
    packages = {p["id"]: p for p in meta["packages"]}
    nodes = {n["id"]: n for n in meta["resolve"]["nodes"]}
    members = set(meta["workspace_members"])

    def is_proc_macro(pkg):
        return any("proc-macro" in t["kind"] for t in pkg["targets"])

    linked, todo = set(), list(members)
    while todo:
        current = todo.pop()
        if current in linked:
            continue
        linked.add(current)
        for dep in nodes[current]["deps"]:
            normal = any(k["kind"] is None for k in dep["dep_kinds"])
            if normal and not is_proc_macro(packages[dep["pkg"]]):
                todo.append(dep["pkg"])

    failures = []
    linked -= members  # hotswap's own crates: the project's licence
    for pid in sorted(linked, key=lambda i: packages[i]["name"]):
        pkg = packages[pid]
        licence = pkg.get("license") or ""
        ok = offers_mit(licence)
        print(f"{'ok  ' if ok else 'FAIL'} {pkg['name']} {pkg['version']}: {licence or '(none)'}")
        if not ok:
            failures.append(pkg["name"])
    if failures:
        print("FAIL: these linked crates are not available under MIT; update "
              "the licence policy (README) before shipping them: "
              + ", ".join(failures))
        return 1
    print(f"all {len(linked)} linked crates are available under MIT")
    return 0


if __name__ == "__main__":
    sys.exit(main())
