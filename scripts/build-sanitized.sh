#!/usr/bin/env bash
# Configures (once) and builds the sanitizer build into $BUILD_DIR (default:
# build-asan/): clang-22, AddressSanitizer + UndefinedBehaviorSanitizer
# (undefined behaviour aborts), coverage instrumentation and the libFuzzer
# targets of fuzz/. The test suite (scripts/test.sh) and the fuzzers
# (scripts/fuzz.sh) share it. CUDA is off: its kernels cannot be
# instrumented and its tests need a GPU.
#   scripts/build-sanitized.sh              # everything
#   scripts/build-sanitized.sh npy-fuzzer   # some ninja targets
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${BUILD_DIR:-build-asan}
if [ ! -f "$build_dir/build.ninja" ]; then
  # -O1 as ASan recommends; line tables for symbolized reports.
  flags="-O1 -gline-tables-only -DNDEBUG"
  cmake -G Ninja -S . -B "$build_dir" \
    -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 \
    "-DCMAKE_C_FLAGS_RELEASE=$flags" "-DCMAKE_CXX_FLAGS_RELEASE=$flags" \
    -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir \
    -DPARTITION_ENABLE_CUDA=OFF \
    "-DPARTITION_SANITIZERS=address;undefined" \
    -DPARTITION_BUILD_FUZZERS=ON \
    >"$build_dir.configure.log" 2>&1 || {
      cat "$build_dir.configure.log" >&2; exit 1; }
fi
ninja -C "$build_dir" "$@"
