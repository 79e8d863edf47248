#!/usr/bin/env bash
# Builds and runs the fuzz targets (README "Fuzzing") with libFuzzer on stable
# Rust, with the sanitizer-coverage flags cargo-fuzz passes.
#
#   fuzz/run.sh list                       the targets
#   fuzz/run.sh build                      build every target
#   fuzz/run.sh lint                       rustfmt and clippy (-D warnings) on fuzz/
#   fuzz/run.sh seeds OUT OBJECT_DIR...    assemble the seed corpora into OUT/<target>
#   fuzz/run.sh smoke TARGET SEEDS WORK    build, then run TARGET for FUZZ_SECONDS
#                                          (default 20) from WORK/corpus/TARGET and
#                                          SEEDS/TARGET; a crash fails, its input is
#                                          printed in hex and kept in WORK/artifacts
#   fuzz/run.sh long SEEDS WORK [TARGET...]
#                                          build, then run each TARGET (default: every
#                                          one) for FUZZ_MINUTES (default 10) with a
#                                          random seed, from WORK/corpus/TARGET (kept,
#                                          so runs build on each other) and
#                                          SEEDS/TARGET; FUZZ_JOBS>1 forks that many
#                                          workers. Every target runs; any crash,
#                                          failed check, timeout (10 s) or 2 GiB RSS
#                                          is a finding: its input is printed in hex
#                                          and kept in WORK/artifacts/long/<start
#                                          time>, and the command fails at the end
#   fuzz/run.sh run TARGET [ARGS...]       build, then run TARGET with libFuzzer's
#                                          own arguments (corpus dirs, -max_total_time,
#                                          -fork, ...), e.g. for long runs
#
# Environment: CARGO_TARGET_DIR (default fuzz/target); FUZZ_ASAN=1 adds
# AddressSanitizer, which needs a nightly toolchain (e.g. RUSTUP_TOOLCHAIN=nightly).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
targets=(elf_header elf_notes metadata container gfx1250 rewrite isa_names tools_lib capi tool cache_entry cache_archive growth)
cargo=${CARGO:-cargo}
rustc=${RUSTC:-$(dirname "$(command -v "$cargo")")/rustc}
[[ -x "$rustc" ]] || rustc=rustc
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$here/target}
triple=$("$rustc" -vV | sed -n 's/^host: //p')

# cargo-fuzz's flags for a libFuzzer build (its `project.rs`): SanitizerCoverage
# with inline 8-bit counters, the PC table, comparison tracing and stack depth,
# no branch folding, dead code kept, `--cfg fuzzing`; plus debug assertions and
# overflow checks in the release profile, and one codegen unit. `--target` keeps
# them away from build scripts. ASan only on request (nightly: -Zsanitizer).
rustflags=(
  -Cpasses=sancov-module
  -Cllvm-args=-sanitizer-coverage-level=4
  -Cllvm-args=-sanitizer-coverage-inline-8bit-counters
  -Cllvm-args=-sanitizer-coverage-pc-table
  -Cllvm-args=-sanitizer-coverage-trace-compares
  -Cllvm-args=-sanitizer-coverage-stack-depth
  -Cllvm-args=-simplifycfg-branch-fold-threshold=0
  --cfg fuzzing
  -Clink-dead-code
  -Cdebug-assertions
  -Coverflow-checks
  -Ccodegen-units=1
)
if [[ "${FUZZ_ASAN:-0}" == 1 ]]; then
  rustflags+=(-Zsanitizer=address)
  # No leak checks: what ROCr may still read is never freed, and a bytes'
  # holder that a caught panic could not record is left allocated on purpose.
  export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_odr_violation=0:detect_leaks=0
fi

build() {
  RUSTFLAGS="${rustflags[*]}" "$cargo" build --locked --release --bins \
    --manifest-path "$here/Cargo.toml" --target "$triple"
}

binary() { echo "$CARGO_TARGET_DIR/$triple/release/$1"; }

# Prints every input kept under the artifact prefix $1 (path, size, hex).
show_findings() {
  local crash
  for crash in "$1"*; do
    [[ -f "$crash" ]] || continue
    echo "crash input $crash ($(wc -c <"$crash") bytes), hex:"
    od -An -v -tx1 "$crash" | tr -d ' \n'
    echo
  done
}

known() {
  local t
  for t in "${targets[@]}"; do [[ "$t" == "$1" ]] && return 0; done
  echo "error: unknown target $1 (fuzz/run.sh list)" >&2
  exit 2
}

case "${1:-}" in
  list)
    printf '%s\n' "${targets[@]}"
    ;;
  build)
    build
    ;;
  lint)
    "$cargo" fmt --check --manifest-path "$here/Cargo.toml"
    CARGO_TARGET_DIR="$CARGO_TARGET_DIR/lint" "$cargo" clippy --locked --all-targets \
      --no-default-features --manifest-path "$here/Cargo.toml" -- -D warnings
    ;;
  seeds)
    shift
    out=$1
    shift
    "${PYTHON:-python3}" "$here/seeds.py" "$here/seeds" "$out" "$@"
    ;;
  smoke)
    target=$2 seeds=$3 work=$4
    known "$target"
    build
    mkdir -p "$work/corpus/$target" "$work/artifacts"
    rm -f "$work/artifacts/$target-"*
    status=0
    # Reproducible in CI: a fixed seed and a fixed number of runs (the time
    # is only a cap); long exploratory runs use `run` (see docs/testing.md).
    "$(binary "$target")" -seed="${FUZZ_SEED:-1}" -runs="${FUZZ_RUNS:-20000}" \
      -max_total_time="${FUZZ_SECONDS:-20}" -timeout=10 -rss_limit_mb=2048 \
      -print_final_stats=1 -artifact_prefix="$work/artifacts/$target-" \
      "$work/corpus/$target" "$seeds/$target" || status=$?
    if ((status != 0)); then
      show_findings "$work/artifacts/$target-"
      echo "FAILED: fuzz target $target (exit $status)"
      exit 1
    fi
    ;;
  long)
    seeds=$2 work=$3
    shift 3
    chosen=("$@")
    ((${#chosen[@]})) || chosen=("${targets[@]}")
    for target in "${chosen[@]}"; do known "$target"; done
    minutes=${FUZZ_MINUTES:-10} jobs=${FUZZ_JOBS:-1}
    [[ "$minutes" =~ ^[1-9][0-9]*$ && "$jobs" =~ ^[1-9][0-9]*$ ]] || {
      echo "error: FUZZ_MINUTES and FUZZ_JOBS must be positive integers" >&2
      exit 2
    }
    fork=()
    ((jobs == 1)) || fork=(-fork="$jobs")
    build
    failed=()
    # Earlier runs' findings are kept: each run has its own directory.
    artifacts="$work/artifacts/long/$(date -u +%Y%m%dT%H%M%SZ)"
    mkdir -p "$artifacts"
    for target in "${chosen[@]}"; do
      mkdir -p "$work/corpus/$target" "$seeds/$target"
      echo "== fuzz $target: $minutes min, $jobs job(s)"
      status=0
      # No -seed and no -runs: a new exploration each time, bounded by time.
      "$(binary "$target")" "${fork[@]}" -max_total_time=$((minutes * 60)) -timeout=10 \
        -rss_limit_mb=2048 -print_final_stats=1 \
        -artifact_prefix="$artifacts/$target-" \
        "$work/corpus/$target" "$seeds/$target" || status=$?
      if ((status != 0)); then
        show_findings "$artifacts/$target-"
        failed+=("$target (exit $status)")
      fi
    done
    if ((${#failed[@]})); then
      printf 'FAILED: fuzz target %s\n' "${failed[@]}"
      exit 1
    fi
    echo "fuzzed ${#chosen[@]} target(s) for $minutes min each: no finding"
    ;;
  run)
    target=$2
    known "$target"
    shift 2
    build
    exec "$(binary "$target")" "$@"
    ;;
  *)
    sed -n '2,/^set /s/^# \{0,1\}//p' "${BASH_SOURCE[0]}"
    exit 2
    ;;
esac
