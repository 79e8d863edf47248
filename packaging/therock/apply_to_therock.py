#!/usr/bin/env python3
"""Apply the hotswap fragment (this directory) to a TheRock checkout.

    python3 apply_to_therock.py THEROCK_DIR --hotswap-commit SHA [--enable]

Edits, in THEROCK_DIR:
  BUILD_TOPOLOGY.toml   the tables of BUILD_TOPOLOGY.entry.toml, `commit` set to
                        SHA, and "hsa-hotswap" in [build_stages.compiler-runtime]
  FLAGS.cmake           the flag INCLUDE_HSA_HOTSWAP (FLAGS.entry.cmake)
  emulation/            the block of emulation.entry.cmake in CMakeLists.txt,
                        artifact-hsa-hotswap.toml beside it
  build_tools/packaging/linux/package.json   the entries of package.entry.json
With --enable, also what a branch that builds the component commits:
  BRANCH_CONFIG.json    flag and optional source set (BRANCH_CONFIG.entry.json)
  test_tools/therock_consumer_graph.json, build_tools/artifact_subprojects.json
                        the entries a configure of such a branch emits
                        (generated-entries.json): TheRock's drift checks compare
                        these files with what a THEROCK_ENABLE_ALL configure emits,
                        which includes hsa-hotswap only where the flag is on.

SHA is the hotswap commit the entry pins, the release being proposed (40 hex
digits, not the all-zero placeholder). Each edit is anchored on an existing
declaration and fails, naming it, if the anchor is missing or the entry is
already there. Run `git diff` in THEROCK_DIR afterwards for the patch.
"""

import argparse
import json
import re
import shutil
import sys
import tomllib
from pathlib import Path

HERE = Path(__file__).resolve().parent
PLACEHOLDER = "0" * 40


class ApplyError(Exception):
    pass


def read(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def fragment_body(path: Path) -> str:
    """A CMake entry without its first paragraph (where it goes in TheRock)."""
    text = read(path)
    head, sep, body = text.partition("\n\n")
    if not sep or not head.startswith("# hotswap's fragment for TheRock"):
        raise ApplyError(f"{path.name}: the placement paragraph is missing")
    return body


def insert_after_table(text: str, table: str, block: str) -> str:
    """Insert block after the TOML table `[table]` (up to the next blank line)."""
    lines = text.splitlines(keepends=True)
    header = f"[{table}]"
    try:
        start = next(i for i, line in enumerate(lines) if line.strip() == header)
    except StopIteration:
        raise ApplyError(f"anchor table {header} not found") from None
    end = start + 1
    while end < len(lines) and lines[end].strip():
        end += 1
    return "".join(lines[:end]) + "\n" + block.rstrip("\n") + "\n" + "".join(lines[end:])


def entry_tables(entry_text: str) -> dict[str, str]:
    """The entry file's tables, each with the comment above it (paragraphs
    separated by blank lines; the file's own header paragraph has no table)."""
    tables: dict[str, str] = {}
    for chunk in re.split(r"\n\s*\n", entry_text):
        m = re.search(r"^\[([a-z_]+\.[a-z0-9-]+)\]$", chunk, re.M)
        if m:
            tables[m.group(1)] = chunk.strip("\n") + "\n"
    return tables


def apply_topology(therock: Path, commit: str) -> None:
    path = therock / "BUILD_TOPOLOGY.toml"
    text = read(path)
    if "[artifacts.hsa-hotswap]" in text:
        raise ApplyError("BUILD_TOPOLOGY.toml already declares hsa-hotswap")
    tables = entry_tables(read(HERE / "BUILD_TOPOLOGY.entry.toml"))
    source_set = tables["source_sets.optional-hotswap"].replace(PLACEHOLDER, commit)
    text = insert_after_table(text, "source_sets.optional-hrx", source_set)
    text = insert_after_table(text, "artifact_groups.rocjitsu", tables["artifact_groups.hsa-hotswap"])
    text = insert_after_table(text, "artifacts.mirage", tables["artifacts.hsa-hotswap"])
    # The compiler-runtime stage builds the group.
    m = re.search(r'(\[build_stages\.compiler-runtime\][^\[]*?artifact_groups = \[)(.*?)(\n\])', text, re.S)
    if not m or '"rocjitsu"' not in m.group(2):
        raise ApplyError("[build_stages.compiler-runtime] artifact_groups (with \"rocjitsu\") not found")
    groups = m.group(2).rstrip()
    groups += ',\n    "hsa-hotswap"'
    text = text[: m.start(2)] + groups + text[m.end(2):]
    data = tomllib.loads(text)  # still TOML, and the entries are where they belong
    assert data["artifacts"]["hsa-hotswap"]["feature_name"] == "HSA_HOTSWAP"
    assert "hsa-hotswap" in data["build_stages"]["compiler-runtime"]["artifact_groups"]
    path.write_text(text, encoding="utf-8")


def apply_flags(therock: Path) -> None:
    path = therock / "FLAGS.cmake"
    text = read(path)
    if "INCLUDE_HSA_HOTSWAP" in text:
        raise ApplyError("FLAGS.cmake already declares INCLUDE_HSA_HOTSWAP")
    m = re.search(r"therock_declare_flag\(\s*NAME INCLUDE_HRX\b.*?\n\)\n", text, re.S)
    if not m:
        raise ApplyError("FLAGS.cmake: the INCLUDE_HRX declaration (anchor) not found")
    block = fragment_body(HERE / "FLAGS.entry.cmake")
    path.write_text(text[: m.end()] + "\n" + block + text[m.end():], encoding="utf-8")


def apply_emulation(therock: Path) -> None:
    path = therock / "emulation" / "CMakeLists.txt"
    text = read(path)
    if "hsa-hotswap" in text:
        raise ApplyError("emulation/CMakeLists.txt already declares hsa-hotswap")
    m = re.search(r"^if\(THEROCK_ENABLE_ROCJITSU_HOTSWAP\)\n.*?^endif\(\)\n", text, re.S | re.M)
    if not m:
        raise ApplyError("emulation/CMakeLists.txt: the rocjitsu-hotswap block (anchor) not found")
    block = fragment_body(HERE / "emulation.entry.cmake")
    path.write_text(text[: m.end()] + "\n" + block + text[m.end():], encoding="utf-8")
    shutil.copyfile(HERE / "artifact-hsa-hotswap.toml", therock / "emulation" / "artifact-hsa-hotswap.toml")


def indent_json(value, indent: int) -> str:
    pad = " " * indent
    return "\n".join(pad + line for line in json.dumps(value, indent=2).splitlines())


def apply_packages(therock: Path) -> None:
    path = therock / "build_tools" / "packaging" / "linux" / "package.json"
    text = read(path)
    entries = json.loads(read(HERE / "package.entry.json"))["packages"]
    for entry in entries:
        m = re.search(r'"Package": "%s",.*?"Artifactory": \[\n' % re.escape(entry["Package"]), text, re.S)
        if not m:
            raise ApplyError(f"package.json: package {entry['Package']} (anchor) not found")
        items = ",\n".join(indent_json(item, 6) for item in entry["Artifactory"])
        text = text[: m.end()] + items + ",\n" + text[m.end():]
    data = json.loads(text)
    for entry in entries:
        pkg = next(p for p in data if p["Package"] == entry["Package"])
        assert entry["Artifactory"][0] in pkg["Artifactory"]
    path.write_text(text, encoding="utf-8")


def apply_branch(therock: Path) -> None:
    """What a branch that enables the component commits."""
    path = therock / "BRANCH_CONFIG.json"
    config = json.loads(read(path)) if path.exists() else {}
    entry = json.loads(read(HERE / "BRANCH_CONFIG.entry.json"))
    config.setdefault("flags", {}).update(entry["flags"])
    config["source_sets"] = list(dict.fromkeys(config.get("source_sets", []) + entry["source_sets"]))
    groups = config.setdefault("artifact_groups", {})
    for name, group in entry["artifact_groups"].items():
        sets = groups.setdefault(name, {}).setdefault("source_sets", [])
        sets.extend(s for s in group["source_sets"] if s not in sets)
    path.write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")

    generated = json.loads(read(HERE / "generated-entries.json"))
    graph_path = therock / "test_tools" / "therock_consumer_graph.json"
    graph = json.loads(read(graph_path))
    for producer, consumers in generated["therock_consumer_graph.json"].items():
        if producer == "comment":
            continue
        node = graph.setdefault(producer, {"consumers": []})
        node["consumers"] = sorted(set(node["consumers"]) | set(consumers))
    # The drift check's normal form: sorted keys and lists, 2-space indent.
    graph_path.write_text(json.dumps(graph, indent=2, sort_keys=True) + "\n", encoding="utf-8")

    manifest_path = therock / "build_tools" / "artifact_subprojects.json"
    manifest = json.loads(read(manifest_path))
    for artifact, subprojects in generated["artifact_subprojects.json"].items():
        if artifact in manifest:
            raise ApplyError(f"artifact_subprojects.json already lists {artifact}")
        # Before the first name that sorts after it; the others keep their order.
        items = list(manifest.items())
        at = next((i for i, (name, _) in enumerate(items) if name > artifact), len(items))
        items.insert(at, (artifact, subprojects))
        manifest = dict(items)
    manifest_path.write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("therock", type=Path, help="TheRock checkout to edit")
    parser.add_argument("--hotswap-commit", required=True,
                        help="the hotswap commit the source set pins (40 hex digits)")
    parser.add_argument("--enable", action="store_true",
                        help="also write BRANCH_CONFIG.json and the generated files' entries")
    args = parser.parse_args()
    commit = args.hotswap_commit.lower()
    if not re.fullmatch(r"[0-9a-f]{40}", commit) or commit == PLACEHOLDER:
        print(f"error: --hotswap-commit must be a full commit id, not {args.hotswap_commit!r}", file=sys.stderr)
        return 2
    if not (args.therock / "BUILD_TOPOLOGY.toml").is_file():
        print(f"error: {args.therock} is not a TheRock checkout (no BUILD_TOPOLOGY.toml)", file=sys.stderr)
        return 2
    try:
        apply_topology(args.therock, commit)
        apply_flags(args.therock)
        apply_emulation(args.therock)
        apply_packages(args.therock)
        if args.enable:
            apply_branch(args.therock)
    except ApplyError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    print(f"applied the hotswap fragment to {args.therock} (hotswap {commit}{', enabled' if args.enable else ''})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
