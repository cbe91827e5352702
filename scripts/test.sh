#!/usr/bin/env bash
# Sets up, builds and runs every test: lit + FileCheck over the IR tests and the
# GoogleTest binaries (run through lit as well). Ends with one summary line.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh
build_dir=${BUILD_DIR:-build}
log="$build_dir/check.log"
status=0
ninja -C "$build_dir" check 2>&1 | tee "$log" || status=$?
count() { { grep -E "^\s*$1\s*:" "$log" || true; } | tail -1 | sed -E 's/.*:\s*([0-9]+).*/\1/'; }
passed=$(count Passed); failed=$(count Failed)
echo "tests: ${passed:-0} passed, ${failed:-0} failed"
exit $status
