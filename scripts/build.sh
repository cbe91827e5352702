#!/usr/bin/env bash
# Configures (once) and builds partition into $BUILD_DIR (default: build/).
# Extra arguments go to the first CMake configure, e.g.
#   scripts/build.sh -DPARTITION_ENABLE_CUDA=OFF
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${BUILD_DIR:-build}
if [ ! -f "$build_dir/build.ninja" ]; then
  cmake -G Ninja -S . -B "$build_dir" \
    -DCMAKE_BUILD_TYPE=${CMAKE_BUILD_TYPE:-Release} \
    -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir \
    "$@" >"$build_dir.configure.log" 2>&1 || {
      cat "$build_dir.configure.log" >&2; exit 1; }
fi
# Two cores and 24 GiB here: the default job count is fine.
ninja -C "$build_dir"
