#!/usr/bin/env python3
"""Licence information for everything hotswap ships, generated from Cargo.lock.

What we ship statically contains, besides hotswap's own code, the Rust crates
that Cargo.lock locks and Rust's standard library. Their licences require their
notices to be reproduced, so the packages carry them. This script derives them
at build time, so that a crate added to Cargo.lock is covered without anyone
editing a list, and checks them, so that a notice cannot go missing.

  generate --cargo CARGO --manifest Cargo.toml --rustc RUSTC --project-licence LICENSE
           [--member CRATE]... [--archive libhsa_hotswap.a] [--subject TEXT]
           [--package NAME] [--cmake-prefix PREFIX] --out DIR
      DIR/THIRD-PARTY-NOTICES   every linked crate's licence files, verbatim,
                                then Rust's standard library notice
      DIR/copyright             machine-readable Debian copyright (DEP-5) of
                                the package NAME, which ships TEXT
      DIR/licenses.cmake        <PREFIX>_RPM_LICENSE (SPDX expression of the
                                whole binary), <PREFIX>_DEB_STATIC_BUILT_USING
      DIR/crates.json           what was generated from (for `check`)
  check --cargo CARGO --manifest Cargo.toml --rustc RUSTC [--member CRATE]...
        [--archive A] --notices FILE [--copyright FILE] [--rpm-license EXPR]
        [--static-built-using VALUE]
      Fails unless every crate Cargo.lock links into the artifact (and, with
      --archive, every crate the archive's objects come from) has its notice in
      FILE, its paragraph in the copyright file, its licence in the RPM
      expression and its entry in Static-Built-Using.

The artifact is what the workspace members given with --member build (all of
them without it): libhsa-hotswap.so is hsa-hotswap, the `hotswap` program
hotswap-cli. Linked crates: the normal (not dev-, not build-) dependencies, for
the host platform, of those members, transitively, without proc-macro crates
(they run in the compiler and are not part of any binary). Workspace members
are hotswap's own code (licence: the project's LICENSE). Rust's standard
library: the notice the toolchain ships (share/doc/rust/COPYRIGHT-library.html,
as text); of its out-of-tree crates, those whose objects are in the archive.

Licence policy (the project's rule): each crate must be available under MIT,
i.e. every AND-term of its SPDX expression offers MIT.
"""
import argparse
import html
import json
import re
import subprocess
import sys
import textwrap
from pathlib import Path

LICENCE_FILE = re.compile(r"^(licen[cs]e|copying|notice|copyright|unlicense)([-._].*)?$", re.I)
NOTICE_HEADER = "=" * 78
# DEP-5 short names for SPDX identifiers (Debian calls MIT "Expat").
DEP5_NAMES = {"MIT": "Expat"}
# Standalone licence paragraphs: Debian ships these in /usr/share/common-licenses.
COMMON_LICENSES = {"Apache-2.0", "GPL-2", "GPL-3", "LGPL-2.1", "MPL-2.0"}
EXPAT_TEXT = """Permission is hereby granted, free of charge, to any person obtaining a copy
of this software and associated documentation files (the "Software"), to deal
in the Software without restriction, including without limitation the rights
to use, copy, modify, merge, publish, distribute, sublicense, and/or sell
copies of the Software, and to permit persons to whom the Software is
furnished to do so, subject to the following conditions:

The above copyright notice and this permission notice shall be included in all
copies or substantial portions of the Software.

THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR
IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY,
FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE
AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER
LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM,
OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN THE
SOFTWARE."""


class Failure(Exception):
    pass


# --- SPDX expressions ------------------------------------------------------------
def normalise(expression: str) -> str:
    """Old crates.io style 'MIT/Apache-2.0' is 'MIT OR Apache-2.0'; the
    alternatives of a plain OR list are sorted, so that equal choices compare equal."""
    out = re.sub(r"\s*/\s*", " OR ", expression.strip())
    if not re.search(r"[()]| AND | WITH ", out):
        out = " OR ".join(sorted(a.strip() for a in out.split(" OR ")))
    return out


def identifiers(expression: str):
    return sorted(set(re.findall(r"[A-Za-z0-9][A-Za-z0-9.+-]*", expression)) - {"AND", "OR", "WITH"})


def offers_mit(expression: str) -> bool:
    terms = [t.strip().strip("()") for t in normalise(expression).split(" AND ")]
    return all("MIT" in [a.strip().strip("()") for a in t.split(" OR ")] for t in terms)


assert offers_mit("MIT") and offers_mit("Apache-2.0 OR MIT") and offers_mit("MIT/Apache-2.0")
assert not offers_mit("(MIT OR Apache-2.0) AND Unicode-3.0") and not offers_mit("GPL-2.0")


def parenthesised(expression: str) -> str:
    return f"({expression})" if " OR " in expression or " AND " in expression else expression


def dep5_licence(expression: str) -> str:
    out = normalise(expression)
    for spdx, name in DEP5_NAMES.items():
        out = re.sub(rf"(?<![\w.-]){re.escape(spdx)}(?![\w.-])", name, out)
    return out.replace(" OR ", " or ").replace(" AND ", " and ")


# --- Inputs ------------------------------------------------------------------------
def run(*cmd) -> str:
    return subprocess.run(cmd, check=True, capture_output=True, text=True).stdout


def host_triple(rustc: str) -> str:
    return re.search(r"^host: (\S+)$", run(rustc, "-vV"), re.M).group(1)


def linked_crates(cargo: str, manifest: str, triple: str, roots=None):
    """(workspace members, linked third-party crates) of the artifact built by
    the workspace members named in `roots` (all of them if empty), from cargo
    metadata."""
    meta = json.loads(run(cargo, "metadata", "--locked", "--format-version", "1",
                          "--manifest-path", manifest, "--filter-platform", triple))
    packages = {p["id"]: p for p in meta["packages"]}
    nodes = {n["id"]: n for n in meta["resolve"]["nodes"]}
    members = set(meta["workspace_members"])
    start = list(members)
    if roots:
        by_name = {packages[i]["name"]: i for i in members}
        unknown = sorted(set(roots) - set(by_name))
        if unknown:
            raise Failure(f"not workspace members: {', '.join(unknown)} (members: {', '.join(sorted(by_name))})")
        start = [by_name[name] for name in roots]

    def is_proc_macro(pkg):
        return any("proc-macro" in t["kind"] for t in pkg["targets"])

    seen, todo = set(), start
    while todo:
        current = todo.pop()
        if current in seen:
            continue
        seen.add(current)
        for dep in nodes[current]["deps"]:
            normal = any(k["kind"] is None for k in dep["dep_kinds"])
            if normal and not is_proc_macro(packages[dep["pkg"]]):
                todo.append(dep["pkg"])
    crates = sorted((packages[i] for i in seen - members), key=lambda p: (p["name"], p["version"]))
    return [packages[i] for i in sorted(seen & members)], crates


def licence_files(pkg) -> list:
    """The crate's licence files, and those of sources it vendors in
    subdirectories (a -sys crate's bundled C library, e.g. zstd/LICENSE)."""
    root = Path(pkg["manifest_path"]).parent
    files = sorted(p for p in root.iterdir() if p.is_file() and LICENCE_FILE.match(p.name))
    for path in sorted(root.glob("*/**/*")):
        rel = path.relative_to(root)
        if (path.is_file() and LICENCE_FILE.match(path.name) and len(rel.parts) <= 4
                and not {"tests", "test", "examples", "benches", "target", "doc", "docs"} & set(rel.parts)):
            files.append(path)
    if pkg.get("license_file"):
        extra = root / pkg["license_file"]
        if extra.is_file() and extra not in files:
            files.append(extra)
    return files


def copyright_lines(texts, pkg) -> list:
    lines = []
    for text in texts:
        for line in text.splitlines():
            m = re.match(r"^\s*Copyright\s*(?:\([cC]\)|©)?\s*(.+?)\s*$", line)
            if m and re.search(r"\d{4}|[A-Za-z]{3}", m.group(1)) and "notice" not in line.lower() \
                    and "[yyyy]" not in line and "{yyyy}" not in line and "owner]" not in line:
                holder = m.group(1).rstrip(".")
                if holder not in lines:
                    lines.append(holder)
    if not lines:
        authors = [re.sub(r"\s*<[^>]*>", "", a).strip() for a in pkg.get("authors") or []]
        lines = [a for a in authors if a] or [f"the {pkg['name']} authors"]
    return lines


def html_to_text(path: Path) -> str:
    text = path.read_text(encoding="utf-8")
    text = re.sub(r"(?is)<(script|style).*?</\1>", "", text)
    text = re.sub(r"(?i)<br\s*/?>|</(p|div|li|h[1-6]|tr|pre)>", "\n", text)
    text = html.unescape(re.sub(r"<[^>]+>", "", text))
    lines = [line.rstrip() for line in text.splitlines()]
    out, blank = [], False
    for line in lines:
        if not line.strip():
            if not blank and out:
                out.append("")
            blank = True
        else:
            out.append(line)
            blank = False
    return "\n".join(out).strip() + "\n"


def rust_std(rustc: str, archive_crates):
    """Rust's standard library: its notice and licence expressions."""
    sysroot = Path(run(rustc, "--print", "sysroot").strip())
    version = run(rustc, "--version").split()[1]
    notice = sysroot / "share" / "doc" / "rust" / "COPYRIGHT-library.html"
    if not notice.is_file():
        raise Failure(f"Rust's standard library notice {notice} is missing (install the toolchain's docs)")
    text = html_to_text(notice)
    in_tree = text.rsplit("Out-of-tree dependencies", 1)[0]
    expressions = set(normalise(e) for e in re.findall(r"^\s*License: (.+)$", in_tree, re.M))
    out_of_tree = re.findall(r"📦 (\S+?)-(\d[^\s]*)\s+URL: \S+\s+Authors: [^\n]*\s+License: ([^\n]*)", text)
    linked = set()
    for name, _version, expression in out_of_tree:
        if archive_crates is None or name.replace("-", "_") in archive_crates:
            expressions.add(normalise(expression))
            linked.add(name.replace("-", "_"))
    sysroot_crates = set()
    lib = sysroot / "lib" / "rustlib" / host_triple(rustc) / "lib"
    for rlib in lib.glob("lib*.rlib"):
        sysroot_crates.add(re.sub(r"-[0-9a-f]{16}$", "", rlib.stem[3:]))
    return {"version": version, "text": text, "expressions": sorted(expressions),
            "crates": sorted(sysroot_crates), "out_of_tree_linked": sorted(linked)}


def archive_crate_names(archive):
    """Crate names of the Rust objects in a staticlib (ar member names)."""
    if not archive:
        return None
    names = set()
    for member in run("ar", "t", archive).split():
        m = re.match(r"^([A-Za-z0-9_]+)-[0-9a-f]{16}\.", member)
        if m:
            names.add(m.group(1))
    return names


def static_built_using(crates, std) -> str:
    """Debian's Rust packages are source packages rust-<crate> (and rustc for std)."""
    entries = [f"rust-{c['name'].replace('_', '-').lower()} (= {c['version']})" for c in crates]
    entries.append(f"rustc (= {std['version']})")
    return ", ".join(entries)


def rpm_licence(project_expr, crates, std) -> str:
    terms = [project_expr]
    for expression in [normalise(c["license"] or "") for c in crates] + std["expressions"]:
        if expression and expression not in terms:
            terms.append(expression)
    return " AND ".join(parenthesised(t) for t in terms)


# --- generate ------------------------------------------------------------------------
def collect(args):
    triple = host_triple(args.rustc)
    members, crates = linked_crates(args.cargo, args.manifest, triple, args.member)
    archive_crates = archive_crate_names(args.archive)
    std = rust_std(args.rustc, archive_crates)
    records = []
    for pkg in crates:
        files = licence_files(pkg)
        licence = normalise(pkg.get("license") or "")
        if not files:
            raise Failure(f"crate {pkg['name']} {pkg['version']} ships no licence file in "
                          f"{Path(pkg['manifest_path']).parent}: its notice cannot be reproduced")
        if not licence:
            raise Failure(f"crate {pkg['name']} {pkg['version']} declares no SPDX licence")
        texts = [f.read_text(encoding="utf-8", errors="replace") for f in files]
        root = Path(pkg["manifest_path"]).parent
        records.append({"name": pkg["name"], "version": pkg["version"], "license": licence,
                        "files": [{"name": f.relative_to(root).as_posix(), "text": t} for f, t in zip(files, texts)],
                        "copyright": copyright_lines(texts, pkg),
                        "source": pkg.get("source") or "path"})
    return members, records, std, archive_crates


def write_notices(path, project_licence, records, std, subject):
    out = [f"Third-party notices for hotswap: {subject}",
           "",
           f"hotswap is distributed under the MIT licence (below). {subject} statically",
           "contains the following Rust crates, at the versions locked in Cargo.lock, and",
           f"Rust's standard library (rustc {std['version']}). Each is reproduced with its",
           "licence files as its authors publish them.",
           "", NOTICE_HEADER, "hotswap", NOTICE_HEADER, project_licence.strip(), ""]
    for r in records:
        out += [NOTICE_HEADER, f"{r['name']} {r['version']}", f"License: {r['license']}",
                f"Source: {r['source']}", NOTICE_HEADER]
        for f in r["files"]:
            out += [f"--- {f['name']} ---", f["text"].strip(), ""]
    out += [NOTICE_HEADER, f"Rust standard library (rustc {std['version']})",
            "License: " + " AND ".join(parenthesised(e) for e in std["expressions"]),
            "Source: the Rust toolchain's share/doc/rust/COPYRIGHT-library.html", NOTICE_HEADER,
            std["text"].strip(), ""]
    path.write_text("\n".join(out), encoding="utf-8")


def dep5_text(text: str) -> str:
    """A licence text as a DEP-5 continuation: leading space, '.' for blank lines."""
    return "\n".join(" " + line if line.strip() else " ." for line in text.strip().splitlines())


def crate_licence_text(records, name: str):
    """The text of licence `name` as a crate naming it ships it: a top-level
    file LICENSE-<name> or <name> (any case, any extension; memchr's UNLICENSE),
    or None."""
    pattern = re.compile(rf"(?i)^(licen[cs]e[-_.])?{re.escape(name)}(\.[a-z]+)?$")
    for r in records:
        if name not in identifiers(r["license"]):
            continue
        for f in r["files"]:
            if "/" not in f["name"] and pattern.match(f["name"]):
                return f["text"]
    return None


def write_copyright(path, records, std, rust_licence_dir: Path, subject: str, package: str):
    comment = (f"{subject} statically contains, besides hotswap's own code, the Rust crates "
               "locked in Cargo.lock that it links and Rust's standard library. The "
               "cargo-registry/<crate>-<version>/* paragraphs describe those crates as cargo "
               "unpacks them from crates.io; rust-std/* describes the standard library of the "
               "Rust toolchain it was built with. The full notices are in "
               f"/usr/share/doc/{package}/THIRD-PARTY-NOTICES.gz.")
    paras = ["\n".join([
        "Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/",
        "Upstream-Name: hotswap",
        "Source: https://github.com/ROCm/hotswap",
        "Comment: " + "\n ".join(textwrap.wrap(comment, 78, break_on_hyphens=False))]),
        "Files: *\nCopyright: 2026 The hotswap authors\nLicense: Expat"]
    used = {"Expat"}
    for r in records:
        licence = dep5_licence(r["license"])
        used.update(identifiers(licence))
        paras.append("\n".join([f"Files: cargo-registry/{r['name']}-{r['version']}/*",
                                "Copyright: " + "\n ".join(r["copyright"]),
                                f"License: {licence}"]))
    std_licence = " and ".join(parenthesised(dep5_licence(e)) for e in std["expressions"])
    used.update(identifiers(std_licence))
    paras.append("\n".join([
        "Files: rust-std/*",
        "Copyright: The Rust Project Developers (see https://thanks.rust-lang.org)",
        f"License: {std_licence}",
        f"Comment: Rust's standard library (rustc {std['version']}) and the crates it is",
        " built from; per-file details are in THIRD-PARTY-NOTICES.gz."]))
    used -= {"or", "and", "with"}
    for name in sorted(used):
        if name == "Expat":
            paras.append("License: Expat\n" + dep5_text(EXPAT_TEXT))
        elif name in COMMON_LICENSES:
            paras.append(f"License: {name}\n On Debian systems, the complete text of the {name} licence can be"
                         f"\n found in /usr/share/common-licenses/{name}.")
        else:
            text = rust_licence_dir / f"{name}.txt"
            if name == "LLVM-exception" or name.endswith("-exception"):
                continue  # an exception to Apache-2.0, not a licence of its own (WITH)
            if text.is_file():
                paras.append(f"License: {name}\n" + dep5_text(text.read_text(encoding="utf-8")))
                continue
            # A licence only crates offer (e.g. 0BSD, Zlib as one alternative of
            # several): its text from the crate that ships it as LICENSE-<name>.
            shipped = crate_licence_text(records, name)
            if shipped is None:
                raise Failure(f"no text for licence {name} (looked for {text} and for a "
                              f"LICENSE-{name} file in the crates that name it)")
            paras.append(f"License: {name}\n" + dep5_text(shipped))
    path.write_text("\n\n".join(paras) + "\n", encoding="utf-8")


def cmake_quote(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def generate(args):
    members, records, std, archive_crates = collect(args)
    check_policy(records)
    check_archive(records, members, std, archive_crates)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    project_licence = Path(args.project_licence).read_text(encoding="utf-8")
    write_notices(out / "THIRD-PARTY-NOTICES", project_licence, records, std, args.subject)
    sysroot = Path(run(args.rustc, "--print", "sysroot").strip())
    write_copyright(out / "copyright", records, std, sysroot / "share" / "doc" / "rust" / "licenses",
                    args.subject, args.package)
    project_expr = "MIT"
    rpm = rpm_licence(project_expr, records, std)
    sbu = static_built_using(records, std)
    prefix = args.cmake_prefix
    (out / "licenses.cmake").write_text(
        "# Generated by packaging/licenses/hotswap_licenses.py from Cargo.lock; do not edit.\n"
        f"set({prefix}_RPM_LICENSE {cmake_quote(rpm)})\n"
        f"set({prefix}_DEB_STATIC_BUILT_USING {cmake_quote(sbu)})\n", encoding="utf-8")
    (out / "crates.json").write_text(json.dumps(
        {"crates": [{k: r[k] for k in ("name", "version", "license")} for r in records],
         "members": [m["name"] for m in members],
         "rust": std["version"], "rpm_license": rpm, "static_built_using": sbu}, indent=1) + "\n")
    print(f"licence notices of {args.subject} ({', '.join(m['name'] for m in members)}): "
          f"{len(records)} crates and Rust {std['version']} in {out}")
    return 0


# --- check -------------------------------------------------------------------------------
def check_policy(records):
    bad = [f"{r['name']} {r['version']} ({r['license']})" for r in records if not offers_mit(r["license"])]
    if bad:
        raise Failure("linked crates not available under MIT (the project's licence policy): " + ", ".join(bad))


def check_archive(records, members, std, archive_crates):
    if archive_crates is None:
        return
    known = {r["name"].replace("-", "_") for r in records}
    known |= {m["name"].replace("-", "_") for m in members}
    for m in members:
        known |= {t["name"].replace("-", "_") for t in m["targets"]}
    unknown = sorted(archive_crates - known - set(std["crates"]))
    if unknown:
        raise Failure("the archive contains objects of crates with no notice: " + ", ".join(unknown))


def notice_body(notices: str, title: str):
    """The text of the section titled `title` (between its header's closing rule
    and the next section's rule), or None."""
    rule = NOTICE_HEADER + "\n"
    start = notices.find(rule + title + "\n")
    if start < 0:
        return None
    body = notices.find(rule, start + len(rule))
    if body < 0:
        return None
    body += len(rule)
    end = notices.find(rule, body)
    return notices[body:] if end < 0 else notices[body:end]


def check(args):
    members, records, std, archive_crates = collect(args)
    check_policy(records)
    check_archive(records, members, std, archive_crates)
    problems = []
    notices = Path(args.notices).read_text(encoding="utf-8", errors="replace")
    for r in records:
        body = notice_body(notices, f"{r['name']} {r['version']}")
        if body is None:
            problems.append(f"{args.notices}: no notice for {r['name']} {r['version']}")
        elif len(body.strip()) < 100:
            problems.append(f"{args.notices}: the notice of {r['name']} {r['version']} has no licence text")
    if f"Rust standard library (rustc {std['version']})" not in notices:
        problems.append(f"{args.notices}: no notice for Rust's standard library {std['version']}")
    if args.copyright:
        text = Path(args.copyright).read_text(encoding="utf-8")
        for r in records:
            if f"Files: cargo-registry/{r['name']}-{r['version']}/*" not in text:
                problems.append(f"{args.copyright}: no paragraph for {r['name']} {r['version']}")
        if "Files: rust-std/*" not in text:
            problems.append(f"{args.copyright}: no paragraph for Rust's standard library")
    if args.rpm_license is not None:
        for r in records:
            if parenthesised(r["license"]) not in args.rpm_license:
                problems.append(f"RPM License '{args.rpm_license}' lacks {r['name']}'s {r['license']}")
    if args.static_built_using is not None:
        for r in records:
            entry = f"rust-{r['name'].replace('_', '-').lower()} (= {r['version']})"
            if entry not in args.static_built_using:
                problems.append(f"Static-Built-Using lacks {entry}: {args.static_built_using}")
    for p in problems:
        print("FAIL: " + p)
    if problems:
        return 1
    print(f"notices complete: {len(records)} crates from Cargo.lock "
          f"({', '.join(r['name'] + ' ' + r['version'] for r in records)}) and Rust {std['version']}")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    for name in ("generate", "check"):
        p = sub.add_parser(name)
        p.add_argument("--cargo", required=True)
        p.add_argument("--manifest", required=True)
        p.add_argument("--rustc", required=True)
        p.add_argument("--archive")
        p.add_argument("--member", action="append", default=[],
                       help="a workspace member whose artifact this is (repeatable; default: all)")
        if name == "generate":
            p.add_argument("--project-licence", required=True)
            p.add_argument("--out", required=True)
            p.add_argument("--subject", default="libhsa-hotswap.so",
                           help="what the artifact is, for the notices and the copyright file")
            p.add_argument("--package", default="hsa-hotswap",
                           help="the package whose /usr/share/doc the copyright file names")
            p.add_argument("--cmake-prefix", default="HOTSWAP",
                           help="prefix of the variables in licenses.cmake")
        else:
            p.add_argument("--notices", required=True)
            p.add_argument("--copyright")
            p.add_argument("--rpm-license")
            p.add_argument("--static-built-using")
    args = parser.parse_args()
    try:
        return generate(args) if args.command == "generate" else check(args)
    except Failure as e:
        print(f"FAIL: {e}")
        return 1


if __name__ == "__main__":
    sys.exit(main())
