#!/usr/bin/env bash
# Takes a Debian 12 machine (root, Rust toolchain present) from nothing to a
# working result. Usage:
#   bash tests/run.sh demo   # install prerequisites, build, install, show the tool at work
#   bash tests/run.sh test   # install prerequisites, build, run the whole test suite
# Environment: HOTSWAP_BUILD_DIR (default: build), HOTSWAP_SKIP_SETUP=1 to skip apt/cargo installs.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$here"
mode=${1:-}
cbindgen_version=0.29.4

apt_packages=(
  cmake make gcc g++ file
  libhsa-runtime-dev libamd-comgr-dev
  clang-22 llvm-22 lld-22
  valgrind rpm lintian dpkg-dev python3
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
    ;;
  test)
    setup
    log "configure and build (preset ci)"
    cmake --preset ci
    cmake --build --preset ci -j "$(nproc)"
    log "ctest (preset ci)"
    ctest --preset ci -j "$(nproc)"
    ;;
  *)
    echo "usage: bash tests/run.sh demo|test" >&2
    exit 2
    ;;
esac
