#!/usr/bin/env bash
# Rebuilds the liveness test objects of this directory with LLVM 22 (committed:
# the Rust tests embed them; rerun after changing a source):
# - cases.co, broken.co, tdef.co, indirect.co: their .s sources (llvm-mc-22,
#   ld.lld-22 -shared);
# - pressure.co: tests/wmma/corpus/pressure.s (as above);
# - calls.co, wide.co: calls.hip, wide.hip (clang-22 -O2 for gfx1250, then
#   llvm-mc-22 and ld.lld-22, as tests/analyzer/build_corpus.sh builds HIP).
set -euo pipefail
cd "$(dirname "$0")"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for k in cases broken tdef indirect; do
  llvm-mc-22 -triple=amdgcn-amd-amdhsa -mcpu=gfx1250 -filetype=obj -o "$tmp/$k.o" "$k.s"
  ld.lld-22 -shared -o "$k.co" "$tmp/$k.o"
done
# pressure.co: the WMMA corpus's register-pressure kernel (tests/wmma/corpus).
llvm-mc-22 -triple=amdgcn-amd-amdhsa -mcpu=gfx1250 -filetype=obj -o "$tmp/pressure.o" \
  ../../../../tests/wmma/corpus/pressure.s
ld.lld-22 -shared -o pressure.co "$tmp/pressure.o"
for k in calls wide; do
  clang-22 -x hip --offload-arch=gfx1250 --cuda-device-only -nogpuinc -nogpulib -O2 -S \
    -o "$tmp/$k.s" "$k.hip"
  llvm-mc-22 -triple=amdgcn-amd-amdhsa -mcpu=gfx1250 -filetype=obj -o "$tmp/$k.o" "$tmp/$k.s"
  ld.lld-22 -shared -o "$k.co" "$tmp/$k.o"
done
chmod -x ./*.co
