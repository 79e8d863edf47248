#!/usr/bin/env python3
"""Check a TheRock artifact descriptor against an installed stage directory.

Usage: check_artifact.py DESCRIPTOR BUILD_ROOT STAGE_KEY COMPONENTS EXPECT...

DESCRIPTOR is the artifact TOML; BUILD_ROOT is the directory the descriptor's
"<build-dir-relative>/stage" keys are relative to (TheRock's build directory);
STAGE_KEY is where the subproject's stage directory really is, relative to
BUILD_ROOT (the descriptor must name exactly that); COMPONENTS the artifact's
components as therock_provide_artifact declares them (comma-separated: the
descriptor must describe exactly those). Each EXPECT is
"<component>=<path>[,<path>...]" (paths relative to the stage directory).

Components are matched as TheRock does: ant-style globs (`**` any number of
directories, `*` and `?` within one name), the default patterns of a component
unless default_patterns = false, then include, minus exclude, plus
force_include; the chain lib -> run -> dbg -> dev -> doc -> test gives each file
to the first component that selects it. Fails unless every component selects
exactly the expected files and no installed file is left unselected.
"""
import re
import sys
import tomllib
from pathlib import Path

CHAIN = ["lib", "run", "dbg", "dev", "doc", "test"]
DEFAULT_INCLUDES = {
    "lib": ["**/*.so", "**/*.so.*", "**/*.dll", "**/*.dylib", "**/*.dylib.*"],
    "run": [],
    "dbg": [".build-id/**/*.debug"],
    "dev": ["**/*.a", "**/cmake/**", "**/include/**", "**/pkgconfig/**", "**/share/modulefiles/**"],
    "doc": ["**/share/doc/**"],
    "test": [],
}


def glob_regex(pattern: str) -> re.Pattern:
    """Ant-style glob to a regex over '/'-separated relative paths."""
    out, i = [], 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif pattern[i] == "*":
            out.append("[^/]*")
            i += 1
        elif pattern[i] == "?":
            out.append("[^/]")
            i += 1
        else:
            out.append(re.escape(pattern[i]))
            i += 1
    return re.compile("".join(out) + r"\Z")


def matches(path: str, patterns) -> bool:
    return any(glob_regex(p).match(path) for p in patterns)


def main() -> int:
    descriptor, build_root, real_key, declared, *expects = sys.argv[1:]
    with open(descriptor, "rb") as f:
        toml = tomllib.load(f)
    components = toml.get("components", {})
    unknown = set(components) - set(CHAIN)
    if unknown:
        print(f"FAIL: unknown components {sorted(unknown)}")
        return 1

    stages = {stage for comp in components.values() for stage in comp}
    if len(stages) != 1:
        print(f"FAIL: expected one stage directory, the descriptor names {sorted(stages)}")
        return 1
    stage_key = stages.pop()
    if stage_key != real_key:
        print(f"FAIL: the descriptor names the stage {stage_key!r}, but the subproject stages into {real_key!r}")
        return 1
    if set(components) != set(declared.split(",")):
        print(f"FAIL: the descriptor describes components {sorted(components)}, "
              f"therock_provide_artifact declares {sorted(declared.split(','))}")
        return 1
    stage = Path(build_root) / stage_key
    if not stage.is_dir():
        print(f"FAIL: stage directory {stage} does not exist")
        return 1
    installed = sorted(
        p.relative_to(stage).as_posix() for p in stage.rglob("*") if p.is_file() or p.is_symlink()
    )
    print(f"installed under {stage_key}: {installed}")

    selected, taken = {}, set()
    for name in CHAIN:
        spec = components.get(name, {}).get(stage_key)
        if spec is None:
            continue
        includes = list(spec.get("include", []))
        if spec.get("default_patterns", True):
            includes += DEFAULT_INCLUDES[name]
        if name == "run" and not includes:
            includes = ["**"]  # a listed run component without includes is the catch-all
        excludes = spec.get("exclude", [])
        force = spec.get("force_include", [])
        files = [
            f for f in installed
            if f not in taken
            and ((matches(f, includes) and not matches(f, excludes)) or matches(f, force))
        ]
        selected[name] = set(files)
        taken.update(files)

    failures = []
    expected_components = set()
    for expect in expects:
        name, _, paths = expect.partition("=")
        expected_components.add(name)
        want = set(p for p in paths.split(",") if p)
        got = selected.get(name, set())
        print(f"{name}: {sorted(got)}")
        if got != want:
            failures.append(f"component {name}: selects {sorted(got)}, expected {sorted(want)}")
    for name, got in selected.items():
        if name not in expected_components and got:
            failures.append(f"component {name} selects unexpected files {sorted(got)}")
    unselected = sorted(set(installed) - taken)
    if unselected:
        failures.append(f"installed files in no component: {unselected}")
    for f in failures:
        print("FAIL: " + f)
    if not failures:
        print("artifact descriptor selects exactly the installed files")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
