#!/usr/bin/env bash
# Builds one small code object per (processor, code object version, xnack,
# sramecc) that LLVM 22 accepts, for every processor `llc -march=amdgcn
# -mcpu=help` lists, and writes a manifest of what LLVM itself says each object
# is: the amdhsa.target of its metadata note, read with llvm-readelf --notes.
#
# Usage: generate_objects.sh CLANG LLC READELF KERNEL_CL EMPTY_KERNEL_LL OUT_DIR
# Writes OUT_DIR/manifest.tsv: <object path> TAB <expected ISA name or "-"> TAB <what>
# ("-": a CPU name without an EF_AMDGPU_MACH value, `generic`/`generic-hsa`; the
# object's header has EF_AMDGPU_MACH_NONE, so identification must fail).
# Cached: rebuilt only when the tools or the sources change. Parallel: nproc jobs.
# Missing tools: exit 0 with "SKIP: ..." off CI, exit 1 in CI (CI=true).
set -euo pipefail
clang=$1 llc=$2 readelf=$3 kernel=$4 empty=$5 out=$6

is_ci() { case "${CI:-}" in ""|0|[Ff]alse|[Nn]o|[Oo]ff|[Nn]|[Ff]) return 1 ;; *) return 0 ;; esac; }
for tool in "$clang" "$llc" "$readelf"; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    if is_ci; then echo "error: $tool not found (CI must install clang-22, llvm-22, lld-22)" >&2; exit 1; fi
    echo "SKIP: $tool not found; install clang-22 llvm-22 lld-22"; exit 0
  fi
done

mkdir -p "$out/obj"
stamp="$out/stamp"
key=$({ "$clang" --version; "$llc" --version; cat "$kernel" "$empty" "$0"; } | sha256sum | cut -d' ' -f1)
if [[ -f "$out/manifest.tsv" && -f "$stamp" && "$(cat "$stamp")" == "$key" ]]; then
  echo "code objects: cached in $out ($(wc -l <"$out/manifest.tsv") objects)"
  exit 0
fi
rm -f "$out/manifest.tsv" "$stamp" "$out"/obj/*

mapfile -t processors < <("$llc" -march=amdgcn -mcpu=help 2>&1 |
  awk '/Available CPUs/{f=1; next} /Available features/{f=0} f && NF {print $1}')
((${#processors[@]} > 50)) || { echo "error: llc listed only ${#processors[@]} processors" >&2; exit 1; }

# One compile: clang-22, OpenCL kernel, no device libraries, compiled and linked
# by lld into a loadable code object (what ROCr loads).
build_object() { # target-id cov out
  "$clang" -x cl -cl-std=CL2.0 --target=amdgcn-amd-amdhsa -mcpu="$1" -mcode-object-version="$2" \
    -nogpulib -O1 -o "$3" "$kernel"
}
# The same, silent (the parallel jobs): status only.
compile() { build_object "$@" >/dev/null 2>&1; }
export -f build_object compile
export clang kernel

# A job that should have built but left no file: once more, in the foreground
# with clang's messages shown, so that a transient failure (a loaded machine)
# is told apart from LLVM refusing the target.
retry_compile() { # target-id cov out
  echo "note: retrying $1 at code object v$2 after a failed compile" >&2
  build_object "$@"
}

# Which features each processor supports: clang refuses a target ID with a
# feature the processor lacks. Probed at code object v6 (accepted by all), in
# parallel; a probe that builds leaves a file.
mkdir -p "$out/probe"
for p in "${processors[@]}"; do
  for id in "$p" "$p:xnack+" "$p:sramecc+"; do echo "$id 6 $out/probe/$id"; done
done | xargs -P "$(nproc)" -L 1 bash -c 'compile "$0" "$1" "$2" || rm -f "$2"'

jobs="$out/jobs.txt"
: >"$jobs"
no_mach=()
for p in "${processors[@]}"; do
  if [[ ! -f "$out/probe/$p" ]]; then
    no_mach+=("$p")
    continue
  fi
  xnack=("") sramecc=("")
  [[ -f "$out/probe/$p:xnack+" ]] && xnack+=(":xnack+" ":xnack-")
  [[ -f "$out/probe/$p:sramecc+" ]] && sramecc+=(":sramecc+" ":sramecc-")
  for cov in 4 5 6; do
    for s in "${sramecc[@]}"; do
      for x in "${xnack[@]}"; do
        echo "$p$s$x $cov $out/obj/$p$s$x-v$cov.co" >>"$jobs"
      done
    done
  done
done
rm -rf "$out/probe"

# Build everything in parallel; a job LLVM refuses (generic targets before v6)
# leaves no file.
xargs -P "$(nproc)" -L 1 bash -c 'compile "$0" "$1" "$2" || rm -f "$2"' <"$jobs"

# The processor-less CPU names: only llc builds them (clang refuses the ID).
for p in "${no_mach[@]}"; do
  case "$p" in
    generic|generic-hsa)
      "$llc" -mtriple=amdgcn-amd-amdhsa -mcpu="$p" --amdhsa-code-object-version=5 -filetype=obj \
        "$empty" -o "$out/obj/$p-v5.co" ;;
    *)
      retry_compile "$p" 6 "$out/probe-$p.co" || { echo "error: clang-22 refuses processor $p" >&2; exit 1; }
      echo "error: processor $p builds only on a second try; rerun the test" >&2
      exit 1 ;;
  esac
done

# Expected names, from LLVM's own metadata note (one readelf for all files).
manifest="$out/manifest.tsv.tmp"
: >"$manifest"
built=0 refused=0
while read -r id cov file; do
  if [[ -f "$file" ]]; then
    built=$((built + 1))
  elif [[ "$id" == *-generic* && "$cov" != 6 ]]; then
    refused=$((refused + 1))
  elif retry_compile "$id" "$cov" "$file"; then
    built=$((built + 1))
  else
    echo "error: clang-22 refused $id at code object v$cov" >&2
    exit 1
  fi
done <"$jobs"
find "$out/obj" -name '*.co' -print0 | sort -z | xargs -0 "$readelf" --notes |
  awk -v manifest="$manifest" '
    /^File: / { file = $2 }
    /amdhsa.target:/ {
      t = $2; gsub("\047", "", t)
      n = split(file, parts, "/"); base = parts[n]
      if (base ~ /^generic(-hsa)?-v/) t = "-"
      print file "\t" t "\t" base >> manifest
    }'
for p in "${no_mach[@]}"; do built=$((built + 1)); done
lines=$(wc -l <"$manifest")
if ((lines != built)); then
  echo "error: $built objects built but $lines metadata targets read" >&2
  exit 1
fi
mv "$manifest" "$out/manifest.tsv"
echo "$key" >"$stamp"
echo "code objects: ${#processors[@]} processors, $built objects built, $refused combinations refused by LLVM (generic targets need v6)"
