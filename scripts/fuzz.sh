#!/usr/bin/env bash
# Runs a libFuzzer target of fuzz/ over its corpus for SECONDS seconds, after
# building it into the sanitizer build (scripts/build-sanitized.sh, default
# build-asan/). Prints the executions, the coverage (cov: edges, ft:
# features) and the path of any crashing input.
#   scripts/fuzz.sh TARGET SECONDS [libFuzzer flags...]
#   scripts/fuzz.sh all SECONDS     # every target, one after another
#   scripts/fuzz.sh list
# The seeds in fuzz/corpus/TARGET are read only; inputs that add coverage go
# to $BUILD_DIR/fuzz/corpus/TARGET (kept between runs), crashes to
# $BUILD_DIR/fuzz/crashes/TARGET. Add a crash's input to fuzz/corpus/TARGET
# with its regression test. Exit status 1 when a target crashed.
set -euo pipefail
cd "$(dirname "$0")/.."
targets=(onnx-import ir-spmd plan safetensors npy checkpoint-manifest store cluster plan-fix)
usage() { echo "usage: scripts/fuzz.sh TARGET|all|list SECONDS [libFuzzer flags...]" >&2; exit 2; }
[ $# -ge 1 ] || usage
if [ "$1" = list ]; then printf '%s\n' "${targets[@]}"; exit 0; fi
[ $# -ge 2 ] && [[ "$2" =~ ^[0-9]+$ ]] || usage
what=$1 seconds=$2
shift 2
if [ "$what" = all ]; then
  run=("${targets[@]}")
else
  printf '%s\n' "${targets[@]}" | grep -qx -- "$what" || {
    echo "fuzz: unknown target '$what' (targets: ${targets[*]})" >&2; exit 2; }
  run=("$what")
fi

build_dir=${BUILD_DIR:-build-asan}
export BUILD_DIR=$build_dir
scripts/build-sanitized.sh "${run[@]/%/-fuzzer}" >"$build_dir.fuzz-build.log" 2>&1 || {
  tail -50 "$build_dir.fuzz-build.log" >&2; exit 1; }

# Leaks are reported: the targets free what they allocate, and MLIR's
# registries are reachable from globals, which LeakSanitizer does not count.
export ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=0:detect_stack_use_after_return=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1}
status=0
for t in "${run[@]}"; do
  work="$build_dir/fuzz/corpus/$t" crashes="$build_dir/fuzz/crashes/$t"
  log="$build_dir/fuzz/$t.log"
  mkdir -p "$work" "$crashes"
  flags=(-max_total_time="$seconds" -timeout=10 -rss_limit_mb=4096
         -print_final_stats=1 -artifact_prefix="$crashes/")
  [ -f "fuzz/dict/$t.dict" ] && flags+=(-dict="fuzz/dict/$t.dict")
  rc=0
  "$build_dir/fuzz/$t-fuzzer" "${flags[@]}" "$@" "$work" "fuzz/corpus/$t" >"$log" 2>&1 || rc=$?
  stats=$(grep -E '^#[0-9]+' "$log" | tail -1 | sed -E 's/^#([0-9]+)\s+\S+\s+/\1 execs, /' || true)
  runs=$(sed -nE 's/^Done ([0-9]+) runs in ([0-9]+) second.*/\1 runs in \2 s/p' "$log" | tail -1)
  crash=$(sed -nE 's/.*Test unit written to (\S+).*/\1/p' "$log" | tail -1)
  echo "fuzz $t: ${runs:-$stats}; ${stats#* execs, }; corpus $(ls "$work" | wc -l) files${crash:+; CRASH $crash}"
  if [ $rc -ne 0 ]; then
    status=1
    grep -E '^(==[0-9]+==ERROR|SUMMARY|.*runtime error|.*fuzz invariant failed|.*: error: )' "$log" | head -5 >&2 || true
    echo "fuzz $t: exit status $rc; log $log" >&2
  fi
done
exit $status
