#!/usr/bin/env bash
# Sets up, builds and runs every test: lit + FileCheck over the IR tests and the
# GoogleTest binaries (run through lit as well).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh
build_dir=${BUILD_DIR:-build}
ninja -C "$build_dir" check
