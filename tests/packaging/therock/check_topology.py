#!/usr/bin/env python3
"""Check packaging/therock's BUILD_TOPOLOGY and package.json entries against
TheRock's rules (build_tools/_therock_utils/build_topology.py, topology_to_cmake.py,
build_tools/packaging/linux/packaging_utils.py) and against what the fragment
declared (the set() file therock_model.cmake writes).

Usage: check_topology.py TOPOLOGY_ENTRY PACKAGE_ENTRY DECLARED SRC_ROOT FRAGMENT
"""
import json
import re
import sys
import tomllib
from pathlib import Path

# Artifacts, artifact groups and packages of TheRock that the entries may name.
THEROCK_ARTIFACTS = {"base", "sysdeps", "amd-llvm", "core-runtime", "core-hip", "core-kpack", "rocjitsu-hotswap"}
THEROCK_GROUPS = {"base", "compiler", "core-runtime", "hip-runtime", "third-party-sysdeps", "rocjitsu"}
# Each flag the entry's artifact needs is declared by the fragment's FLAGS entry.
THEROCK_PACKAGES = {"amdrocm-runtime", "amdrocm-runtime-devel", "amdrocm-base", "amdrocm-llvm"}
ENTITY = re.compile(r"^[a-z][a-z0-9-]*$")


def declared_values(path):
    values = {}
    for m in re.finditer(r'^set\((\w+) "(.*)"\)$', Path(path).read_text(), re.M):
        values[m.group(1)] = m.group(2)
    return values


def main() -> int:
    topology_file, package_file, declared_file, src_root, fragment = sys.argv[1:]
    topo = tomllib.loads(Path(topology_file).read_text())
    branch = json.loads((Path(topology_file).parent / "BRANCH_CONFIG.entry.json").read_text())
    if sorted(branch.get("flags", {})) != ["INCLUDE_HSA_HOTSWAP"]:
        errors_early = ["BRANCH_CONFIG.entry.json must turn on exactly the flag INCLUDE_HSA_HOTSWAP"]
    else:
        errors_early = []
    decl = declared_values(declared_file)
    fragment_text = Path(fragment).read_text()
    errors = errors_early

    # Source sets: external git sources under optional-sources/, pinned by commit.
    sources = {}
    for name, source_set in topo.get("source_sets", {}).items():
        if not ENTITY.match(name):
            errors.append(f"source set {name!r} is not lowercase-with-hyphens")
        for src in source_set.get("external_git_sources", []):
            for key in ("name", "origin", "commit", "path"):
                if not src.get(key):
                    errors.append(f"external git source in {name!r} lacks {key}")
            parts = Path(src.get("path", "")).parts
            if not parts or parts[0] != "optional-sources" or ".." in parts or len(parts) < 2:
                errors.append(f"external git source path {src.get('path')!r} must be under optional-sources/")
            if not re.fullmatch(r"[0-9a-f]{40}", src.get("commit", "")):
                errors.append(f"external git source commit {src.get('commit')!r} is not a commit hash")
            sources[src["path"]] = name
    # The declaration's source directory is one of them.
    rel_source = str(Path(decl["SUBPROJECT_SOURCE_DIR"]).relative_to(Path(src_root)))
    if rel_source not in sources:
        errors.append(f"the declaration builds {rel_source}, which no source set fetches ({sorted(sources)})")

    groups = topo.get("artifact_groups", {})
    for name, group in groups.items():
        for dep in group.get("artifact_group_deps", []):
            if dep not in THEROCK_GROUPS and dep not in groups:
                errors.append(f"artifact group {name!r} depends on unknown group {dep!r}")
        for source_set in group.get("source_sets", []):
            if source_set not in topo.get("source_sets", {}) and source_set not in {"base", "rocm-systems", "compilers"}:
                errors.append(f"artifact group {name!r} names unknown source set {source_set!r}")
        # The optional source set is fetched for the group where a branch asks for
        # it (BRANCH_CONFIG.json), not by every stage build that contains it.
        branch_sets = branch.get("artifact_groups", {}).get(name, {}).get("source_sets", [])
        if rel_source in sources and sources[rel_source] in group.get("source_sets", []):
            errors.append(f"artifact group {name!r} fetches {sources[rel_source]!r} in every stage build")
        if rel_source in sources and sources[rel_source] not in branch_sets:
            errors.append(f"BRANCH_CONFIG.entry.json does not fetch {sources[rel_source]!r} for group {name!r}")

    artifacts = topo.get("artifacts", {})
    artifact = artifacts.get(decl["ARTIFACT"])
    if artifact is None:
        errors.append(f"no [artifacts.{decl['ARTIFACT']}] for the artifact the fragment provides")
    else:
        if artifact.get("type") != ("target-neutral" if decl["ARTIFACT_TARGET_NEUTRAL"] == "TRUE" else "target-specific"):
            errors.append(f"artifact type {artifact.get('type')!r} does not match TARGET_NEUTRAL={decl['ARTIFACT_TARGET_NEUTRAL']}")
        if artifact.get("artifact_group") not in groups and artifact.get("artifact_group") not in THEROCK_GROUPS:
            errors.append(f"artifact group {artifact.get('artifact_group')!r} is not defined")
        for dep in artifact.get("artifact_deps", []):
            if dep not in THEROCK_ARTIFACTS and dep not in artifacts:
                errors.append(f"artifact dep {dep!r} is not a TheRock artifact")
        # topology_to_cmake.py: feature_name (default: the artifact name, upper case).
        feature = artifact.get("feature_name", decl["ARTIFACT"].upper().replace("-", "_"))
        if f"if(THEROCK_ENABLE_{feature})" not in fragment_text:
            errors.append(f"the fragment is not guarded by THEROCK_ENABLE_{feature}")
        # Off by default: disabled on Linux unless the flag is on (hrx's precedent).
        flag = artifact.get("disable_platforms_if_flags_not_set", {}).get("linux")
        flags_text = (Path(topology_file).parent / "FLAGS.entry.cmake").read_text()
        if not flag or not re.search(rf"NAME {flag}\s+DEFAULT_VALUE OFF", flags_text):
            errors.append(f"artifact {decl['ARTIFACT']!r} is not behind a flag that FLAGS.entry.cmake declares OFF")
        # The runtime deps' artifacts are artifact deps.
        for dep, art in {"ROCR-Runtime": "core-runtime", "amd-comgr": "amd-llvm"}.items():
            if dep in decl["SUBPROJECT_RUNTIME_DEPS"].split(";") and art not in artifact.get("artifact_deps", []):
                errors.append(f"runtime dep {dep} is in artifact {art!r}, which artifact_deps lacks")

    # package.json: packaging_utils.py takes a file of <artifact>_<component>_generic
    # when its manifest line (the stage-relative path) contains "<Name>/".
    entry = json.loads(Path(package_file).read_text())
    components = set(decl["ARTIFACT_COMPONENTS"].split(";"))
    shipped = set()
    for package in entry["packages"]:
        if package["Package"] not in THEROCK_PACKAGES:
            errors.append(f"package.json: unknown package {package['Package']!r}")
        for art in package["Artifactory"]:
            if art["Artifact"] != decl["ARTIFACT"]:
                errors.append(f"package.json names artifact {art['Artifact']!r}, the fragment provides {decl['ARTIFACT']!r}")
            for sub in art["Artifact_Subdir"]:
                if (sub["Name"].lower() + "/") not in (decl["SUBPROJECT_REL_STAGE_DIR"] + "/").lower():
                    errors.append(f"package.json subdir {sub['Name']!r} does not match the stage {decl['SUBPROJECT_REL_STAGE_DIR']!r}")
                for comp in sub["Components"]:
                    if comp not in components:
                        errors.append(f"package.json ships component {comp!r}, the artifact has {sorted(components)}")
                    shipped.add(comp)
    for comp in components - {"dbg"} - shipped:
        errors.append(f"component {comp!r} is in no package")

    for e in errors:
        print("FAIL: " + e)
    if not errors:
        print(f"topology and package entries consistent with the declaration "
              f"(source {rel_source}, artifact {decl['ARTIFACT']}, stage {decl['SUBPROJECT_REL_STAGE_DIR']})")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
