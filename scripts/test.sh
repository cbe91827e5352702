#!/usr/bin/env bash
# Sets up, builds and runs every test: lit + FileCheck over the IR tests and the
# GoogleTest binaries (run through lit as well). Then, unless
# PARTITION_SANITIZE=0, the same suite in the sanitizer build (build-asan/,
# ASan + UBSan, scripts/build-sanitized.sh) and a short run of every fuzz
# target over its corpus (PARTITION_FUZZ_SECONDS each, default 20). Ends with
# one summary line.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh
build_dir=${BUILD_DIR:-build}
log="$build_dir/check.log"
status=0
ninja -C "$build_dir" check 2>&1 | tee "$log" || status=$?
count() { { grep -E "^\s*$1\s*:" "$2" || true; } | tail -1 | sed -E 's/.*:\s*([0-9]+).*/\1/'; }
passed=$(count Passed "$log"); failed=$(count Failed "$log")

if [ "${PARTITION_SANITIZE:-1}" != 0 ]; then
  asan_dir=build-asan
  asan_log="$asan_dir/check.log"
  BUILD_DIR=$asan_dir scripts/build-sanitized.sh
  # LeakSanitizer stays on: the tools free what they allocate.
  ASAN_OPTIONS=${ASAN_OPTIONS:-detect_stack_use_after_return=1} \
  UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1} \
    ninja -C "$asan_dir" check 2>&1 | tee "$asan_log" || status=$?
  asan_passed=$(count Passed "$asan_log"); asan_failed=$(count Failed "$asan_log")
  echo "sanitizers: ${asan_passed:-0} passed, ${asan_failed:-0} failed"
  BUILD_DIR=$asan_dir scripts/fuzz.sh all "${PARTITION_FUZZ_SECONDS:-20}" || status=$?
fi
echo "tests: ${passed:-0} passed, ${failed:-0} failed"
exit $status
