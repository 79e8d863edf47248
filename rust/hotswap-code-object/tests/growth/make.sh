#!/usr/bin/env bash
# Rebuilds the growth test objects of this directory with LLVM 22 (committed:
# the Rust tests embed them; rerun after changing a source):
# - table.co, nonleaf.co: table.hip, nonleaf.hip (clang-22 -O2 for gfx1250, then llvm-mc-22 and
#   ld.lld-22 -shared, as tests/analyzer/build_corpus.sh builds HIP);
# - abs.co: abs.ll (llc-22 for gfx1250, ld.lld-22 -shared);
# - stub.co: stub.s (llvm-mc-22, ld.lld-22 -shared).
set -euo pipefail
cd "$(dirname "$0")"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for k in ${1:-table nonleaf}; do
  clang-22 -x hip --offload-arch=gfx1250 --cuda-device-only -nogpuinc -nogpulib -O2 -S \
    -o "$tmp/$k.s" "$k.hip"
  llvm-mc-22 -triple=amdgcn-amd-amdhsa -mcpu=gfx1250 -filetype=obj -o "$tmp/$k.o" "$tmp/$k.s"
  ld.lld-22 -shared -o "$k.co" "$tmp/$k.o"
done
llc-22 -mtriple=amdgcn-amd-amdhsa -mcpu=gfx1250 -filetype=obj -o "$tmp/abs.o" abs.ll
ld.lld-22 -shared -o abs.co "$tmp/abs.o"
llvm-mc-22 -triple=amdgcn-amd-amdhsa -mcpu=gfx1250 -filetype=obj -o "$tmp/stub.o" stub.s
ld.lld-22 -shared -o stub.co "$tmp/stub.o"
chmod -x ./*.co
