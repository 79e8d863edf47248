#!/usr/bin/env bash
# Takes a Debian 12 machine (root, Rust toolchain present) from nothing to a
# working result. Usage:
#   bash tests/run.sh demo   # install prerequisites, build, install, show the tool at work
#   bash tests/run.sh test   # install prerequisites, build, run the whole test suite
# Builds in ./build (CMake presets default and ci). Environment: HOTSWAP_SKIP_SETUP=1 skips
# the apt and cargo installs.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$here"
mode=${1:-}
cbindgen_version=0.29.4

apt_packages=(
  cmake make gcc g++ file
  libhsa-runtime-dev libamd-comgr-dev libhsakmt-dev
  clang-22 clang-tools-22 llvm-22 lld-22
  valgrind rpm lintian rpmlint dpkg-dev python3 python3-pip
)

log() { printf '\n==> %s\n' "$*"; }

setup() {
  [[ "${HOTSWAP_SKIP_SETUP:-0}" == 1 ]] && return
  local missing=()
  for p in "${apt_packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
  done
  if ((${#missing[@]})); then
    log "apt-get install ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  fi
  if [[ "$mode" == test ]] && ! cbindgen --version 2>/dev/null | grep -qx "cbindgen $cbindgen_version"; then
    log "cargo install cbindgen $cbindgen_version (pinned header generator)"
    cargo install --locked --quiet cbindgen --version "$cbindgen_version"
  fi
  for c in cargo rustc; do
    command -v "$c" >/dev/null || { echo "error: $c not found; install the Rust toolchain (rustup)" >&2; exit 1; }
  done
}

# The installed tool at work end to end, with no AMD GPU: tests/standin is a ROCr
# stand-in that loads the tool exactly as ROCr does (HSA_TOOLS_LIB, OnLoad with
# its API table, OnUnload at exit) and loads real clang-22 code objects on fake
# agents through the patched table.
demo_tool() {
  local tool rewriter standin=build/tests/standin/hotswap-standin
  tool=$(find "$1" -name libhsa-hotswap.so -print -quit)
  rewriter=$(find "$here/build/tests" -name libtest-rewriter-change.so -print -quit)
  local -a env=(HSA_TOOLS_LIB="$tool" STANDIN_CODE_OBJECTS=build/tests/standin/code-objects)
  log "the tool at work: the installed $tool, loaded by a ROCr stand-in; real clang-22 code objects; 8 agents"
  cat <<'TEXT'
Rewriter: the "change" TEST DOUBLE (tests/rewriters), because COMGR's real
amd_comgr_hotswap_rewrite is a deprecated stub that always fails and Debian's
COMGR 2.4 has none. The double implements COMGR's data-object ABI and marks its
output, so the stand-in's loader can tell a rewritten code object apart.
Expected: only the gfx1250 code object on the gfx1250 A0 agent (ASIC revision 0)
is rewritten; every other agent gets the application's own bytes.
TEXT
  env "${env[@]}" HSA_HOTSWAP_REWRITER="$rewriter" HSA_HOTSWAP_LOG_LEVEL=info "$standin" demo
  log "the tool's own account of the A0 agent's loads (HSA_HOTSWAP_VERBOSE=1: every decision, at debug level)"
  env "${env[@]}" HSA_HOTSWAP_REWRITER="$rewriter" HSA_HOTSWAP_VERBOSE=1 STANDIN_AGENTS=gfx1250-A0 \
    STANDIN_QUIET=1 "$standin" demo 2>&1 | grep '^hotswap:'
  log "the same with no rewriter library named: Debian's COMGR has none, so the native rewriter is used; this kernel needs no A0 change, so every original is loaded (the info log says so)"
  env "${env[@]}" HSA_HOTSWAP_LOG_LEVEL=info "$standin" demo
}

# The command line, installed as bin/hotswap: what would happen on this machine,
# then the A0 findings in clang-22 objects and one native rewrite.
demo_cli() {
  local hotswap="$1/bin/hotswap" objects=build/tests/cli/objects
  log "hotswap doctor: what would happen if an application started now (HSA_TOOLS_LIB=$2)"
  env HSA_TOOLS_LIB="$2" "$hotswap" doctor
  log "hotswap inspect: a clang-22 HIP offload bundle (gfx1250 + gfx942) and a gfx1250 object with A0 sites"
  "$hotswap" inspect "$objects/kernels.bundle" "$objects/same_size.co" --sites
  log "hotswap rewrite: the native B0->A0 rewrite of that object"
  local status=0
  "$hotswap" rewrite "$objects/same_size.co" -o build/demo-same_size-a0.co || status=$?
  echo "exit status $status"
  log "hotswap rewrite of an object with a DS two-address site: its function moves into an appended segment"
  status=0
  "$hotswap" rewrite "$objects/growth.co" -o build/demo-growth-a0.co || status=$?
  echo "exit status $status"
  log "hotswap inspect of the rewritten object: what moved, and nothing reachable left to fix"
  "$hotswap" inspect build/demo-growth-a0.co --sites
}

case "$mode" in
  demo)
    setup
    log "configure and build (preset default)"
    cmake --preset default
    cmake --build --preset default -j "$(nproc)"
    prefix="$here/build/install"
    log "install into $prefix"
    cmake --install build --prefix "$prefix"
    log "find_package(hotswap) from a separate project, then load the installed tool as ROCr does"
    cmake -S tests/consumer -B build/demo-consumer -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
    cmake --build build/demo-consumer >/dev/null
    build/demo-consumer/consumer_c
    build/demo-consumer/consumer_dlopen
    demo_tool "$prefix"
    demo_cli "$prefix" "$(find "$prefix" -name libhsa-hotswap.so -print -quit)"
    ;;
  test)
    setup
    log "configure and build (preset ci)"
    cmake --preset ci
    cmake --build --preset ci -j "$(nproc)"
    log "ctest (preset ci); disk before: $(df -h --output=avail . | tail -1 | tr -d ' ') free"
    status=0
    ctest --preset ci -j "$(nproc)" || status=$?
    log "disk after ctest: $(df -h --output=avail . | tail -1 | tr -d ' ') free, build tree $(du -sh build | cut -f1)"
    exit "$status"
    ;;
  *)
    echo "usage: bash tests/run.sh demo|test" >&2
    exit 2
    ;;
esac
