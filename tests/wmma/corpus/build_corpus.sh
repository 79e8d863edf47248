#!/usr/bin/env bash
# Builds the WMMA corpus with LLVM 22: the OpenCL GEMM kernels (gemm.cl) at
# -O1/-O2/-O3 by clang-22 (linked by ld.lld-22), and the assembly edge cases
# (edge.s) and the register-pressure kernel (pressure.s) by llvm-mc-22 and
# ld.lld-22 -shared. Every output is a gfx1250 code
# object in OUT_DIR.
#
# Usage: build_corpus.sh CLANG LLVM_MC LLD SOURCE_DIR OUT_DIR
# Missing tools: exit 0 with "SKIP: ..." off CI, exit 1 in CI (CI=true).
set -euo pipefail
clang=$1 mc=$2 lld=$3 src=$4 out=$5

is_ci() { case "${CI:-}" in ""|0|[Ff]alse|[Nn]o|[Oo]ff|[Nn]|[Ff]) return 1 ;; *) return 0 ;; esac; }
for tool in "$clang" "$mc" "$lld"; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    if is_ci; then echo "error: $tool not found (CI must install clang-22, llvm-22, lld-22)" >&2; exit 1; fi
    echo "SKIP: $tool not found; install clang-22 llvm-22 lld-22"; exit 0
  fi
done
rm -rf "$out" && mkdir -p "$out/tmp"
# ld.lld-22 is what clang-22 runs as ld.lld: put it first on PATH under that name.
ln -sf "$(command -v "$lld")" "$out/tmp/ld.lld"
export PATH="$out/tmp:$PATH"

for o in 1 2 3; do
  "$clang" -x cl -cl-std=CL2.0 --target=amdgcn-amd-amdhsa -mcpu=gfx1250 -nogpulib -O$o \
    -o "$out/gemm.O$o.co" "$src/gemm.cl"
done
for k in edge pressure; do
  "$mc" -triple=amdgcn-amd-amdhsa -mcpu=gfx1250 -filetype=obj -o "$out/tmp/$k.o" "$src/$k.s"
  "$lld" -shared -o "$out/$k.co" "$out/tmp/$k.o"
done
echo "corpus: $(ls "$out"/*.co | wc -l) code objects in $out"
