#!/usr/bin/env bash
# The check for a machine with one NVIDIA GPU (an H100/H200: sm_90). Sets up
# the runtime's packages, configures a runtime-only CUDA build (no MLIR:
# -DPARTITION_ENABLE_COMPILER=OFF), builds what the CUDA checks need, then runs
#   - RuntimeCudaTests and RuntimeCudaFailureTests (device, kernels, NCCL),
#   - RuntimeKernelTests (the conformance suite, which covers every backend
#     with a usable device, so "cuda" there),
#   - GemmCudaBench (the backend's Matmul against direct cuBLASLt and
#     cublasGemmEx calls, bf16 and f32) and AttentionCudaBench (attention on
#     cuDNN's fused kernels against the decomposition, forward and
#     backward, and their outputs compared), when the build defines them,
#   - with cuDNN's attention built, the conformance suite's attention cases
#     again on the decomposition (PARTITION_CUDNN_ATTENTION=0),
#   - with GPU_CHECK_PLANS=DIR (plans made by scripts/gpu-plans.sh DIR where
#     the compiler is): partition-run trains each plan on the CUDA and the
#     CPU backend and compares every step's loss,
# and ends with a summary. Meant to finish in under 8 minutes on 16 cores.
#
#   scripts/gpu-check.sh            # build in build-gpu/
#   BUILD_DIR=out scripts/gpu-check.sh
#   PARTITION_SETUP=0 scripts/gpu-check.sh
#                                   # a machine with no package archive, where
#                                   # the runtime's packages (FlatBuffers,
#                                   # OpenBLAS, Gloo, GoogleTest) were put in
#                                   # place otherwise; CMAKE_LIBRARY_PATH and
#                                   # CMAKE_INCLUDE_PATH reach CMake as usual
#
# Logs go to <build>/gpu-check/. Exits non-zero when a step fails, a test
# fails, or no GPU is visible (the CUDA tests would only skip).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
build_dir=${BUILD_DIR:-build-gpu}
logs="$build_dir/gpu-check"
mkdir -p "$logs"
jobs=$(nproc)
started=$SECONDS
summary=()
failures=0
tests_passed=0
tests_failed=0
tests_skipped=0

note() { summary+=("$(printf '%-28s %s' "$1" "$2")"); }
elapsed() { echo "$((SECONDS - $1)) s"; }
die() {
  echo "gpu-check: $1" >&2
  note "$2" "FAILED ($1)"
  printf '%s\n' "${summary[@]}"
  echo "gpu-check: 0 passed, 1 failed"
  exit 1
}

# Single machine: NCCL's bootstrap may use the loopback interface.
export NCCL_SOCKET_IFNAME=${NCCL_SOCKET_IFNAME:-lo}
export NCCL_DEBUG=${NCCL_DEBUG:-WARN}

# --- set-up -------------------------------------------------------------------
t=$SECONDS
if [ "${PARTITION_SETUP:-1}" = 0 ]; then
  note setup "skipped (PARTITION_SETUP=0)"
else
  scripts/setup.sh --runtime >"$logs/setup.log" 2>&1 ||
    { tail -20 "$logs/setup.log"; die "scripts/setup.sh failed (see $logs/setup.log)" setup; }
  note setup "ok ($(elapsed $t))"
fi

gpu="none"
if command -v nvidia-smi >/dev/null 2>&1; then
  gpu=$(nvidia-smi --query-gpu=name,driver_version,memory.total \
          --format=csv,noheader 2>/dev/null | head -1)
  [ -n "$gpu" ] || gpu="none"
fi
echo "gpu-check: GPU: $gpu"
if [ "$gpu" = "none" ]; then
  note GPU "NONE VISIBLE: the CUDA tests will skip"
  failures=$((failures + 1))
else
  note GPU "$gpu"
fi

nvcc=${CUDACXX:-/usr/local/cuda/bin/nvcc}
[ -x "$nvcc" ] || nvcc=$(command -v nvcc || true)
[ -n "$nvcc" ] || die "no nvcc: install the CUDA toolkit (/usr/local/cuda)" toolkit

# NCCL: next to the toolkit, or the nvidia-nccl wheel of a Python install.
nccl_args=()
if [ -z "${NCCL_ROOT:-}" ] && [ ! -f "$(dirname "$nvcc")/../include/nccl.h" ] &&
   [ ! -f /usr/include/nccl.h ] && [ ! -f /usr/local/include/nccl.h ]; then
  header=$(find /usr /opt -path '*/nvidia/nccl/include/nccl.h' 2>/dev/null | head -1)
  [ -n "$header" ] && NCCL_ROOT=$(dirname "$(dirname "$header")")
fi
[ -n "${NCCL_ROOT:-}" ] && nccl_args=(-DNCCL_ROOT="$NCCL_ROOT")

# --- configure and build --------------------------------------------------------
t=$SECONDS
if [ ! -f "$build_dir/build.ninja" ]; then
  cmake -G Ninja -S . -B "$build_dir" \
    -DCMAKE_BUILD_TYPE=Release \
    -DPARTITION_ENABLE_COMPILER=OFF \
    -DPARTITION_ENABLE_CUDA=ON \
    -DCMAKE_CUDA_COMPILER="$nvcc" \
    -DCMAKE_CUDA_ARCHITECTURES=90 \
    "${nccl_args[@]}" >"$logs/configure.log" 2>&1 ||
    { tail -30 "$logs/configure.log"; die "configure failed (see $logs/configure.log)" configure; }
fi
ninja -C "$build_dir" -t targets all 2>/dev/null | grep -q '^RuntimeCudaTests:' ||
  die "the build has no CUDA targets: was the toolkit found? (see $logs/configure.log)" configure
note configure "ok ($(elapsed $t))"

# cuDNN's fused attention: built where the configure found cudnn.h and the
# cudnn-frontend headers (scripts/setup.sh unpacks them into .deps/; carry
# that folder to a machine without PyPI).
if grep -qE '^CUDNN_FRONTEND_INCLUDE:PATH=/' "$build_dir/CMakeCache.txt"; then
  note cudnn-attention "built"
  cudnn_attention=1
else
  note cudnn-attention "NOT BUILT: no cudnn.h or no .deps/cudnn-frontend (attention runs as its decomposition)"
  cudnn_attention=0
fi

targets=(RuntimeCudaTests RuntimeCudaFailureTests RuntimeKernelTests partition-run)
have_bench=0
if ninja -C "$build_dir" -t targets all 2>/dev/null | grep -q '^GemmCudaBench:'; then
  targets+=(GemmCudaBench AttentionCudaBench)
  have_bench=1
fi
t=$SECONDS
ninja -C "$build_dir" -j "$jobs" "${targets[@]}" >"$logs/build.log" 2>&1 ||
  { grep -E 'error|FAILED' "$logs/build.log" | head -30; die "build failed (see $logs/build.log)" build; }
note build "ok: ${targets[*]} ($(elapsed $t))"

# --- tests ------------------------------------------------------------------------
# run_tests NAME TIMEOUT: runs <build>/unittests/NAME and adds its counts.
run_tests() {
  local name=$1 limit=$2 log="$logs/$1.log" t=$SECONDS status=0
  timeout "$limit" "$build_dir/unittests/$name" --gtest_color=no >"$log" 2>&1 ||
    status=$?
  local passed failed skipped
  passed=$(grep -E '^\[  PASSED  \] [0-9]+' "$log" | sed -E 's/[^0-9]*([0-9]+).*/\1/' | tail -1)
  failed=$(grep -E '^\[  FAILED  \] [0-9]+ test' "$log" | sed -E 's/[^0-9]*([0-9]+).*/\1/' | tail -1)
  skipped=$(grep -E '^\[  SKIPPED \] [0-9]+ test' "$log" | sed -E 's/[^0-9]*([0-9]+).*/\1/' | tail -1)
  passed=${passed:-0} failed=${failed:-0} skipped=${skipped:-0}
  tests_passed=$((tests_passed + passed))
  tests_failed=$((tests_failed + failed))
  tests_skipped=$((tests_skipped + skipped))
  local what
  what="$passed passed, $failed failed, $skipped skipped ($(elapsed $t))"
  if [ "$status" -eq 124 ]; then
    what="TIMED OUT after $limit s; $what"
  elif [ "$status" -ne 0 ] && [ "$failed" -eq 0 ]; then
    what="EXIT $status; $what"
  fi
  if [ "$status" -ne 0 ]; then
    failures=$((failures + 1))
    echo "--- $name (tail of $log) ---"
    grep -E '^\[  FAILED  \]|Failure|error' "$log" | head -40
    tail -15 "$log"
  fi
  note "$name" "$what"
}

run_tests RuntimeCudaTests 180
run_tests RuntimeCudaFailureTests 180
run_tests RuntimeKernelTests 240
# The conformance suite's attention cases once more on the decomposition,
# which the fused kernels take the 16-bit cases from.
if [ "$cudnn_attention" = 1 ]; then
  t=$SECONDS
  if PARTITION_CUDNN_ATTENTION=0 timeout 120 "$build_dir/unittests/RuntimeKernelTests" \
       --gtest_filter='*Attention*' --gtest_color=no >"$logs/attention-decomposed.log" 2>&1; then
    note "attention decomposed" "ok ($(elapsed $t))"
  else
    failures=$((failures + 1))
    note "attention decomposed" "FAILED (see $logs/attention-decomposed.log)"
    grep -E '^\[  FAILED  \]|Failure' "$logs/attention-decomposed.log" | head -20
  fi
fi

# The kernels once more under compute-sanitizer's memcheck (out-of-bounds and
# misaligned accesses), where the tool works (Firecracker machines; it
# refuses the device under gVisor). GPU_CHECK_SANITIZER=0 skips it.
sanitizer=$(command -v compute-sanitizer || echo "$(dirname "$nvcc")/compute-sanitizer")
if [ "${GPU_CHECK_SANITIZER:-1}" != 0 ] && [ -x "$sanitizer" ] && [ "$gpu" != none ]; then
  t=$SECONDS
  status=0
  timeout 200 "$sanitizer" --tool memcheck --report-api-errors no \
    --error-exitcode 99 "$build_dir/unittests/RuntimeCudaTests" \
    --gtest_filter='CudaKernelTest.*:CudaDeviceTest.*' --gtest_color=no \
    >"$logs/memcheck.log" 2>&1 || status=$?
  if [ "$status" -eq 0 ]; then
    note memcheck "ok: no memory errors in the kernel tests ($(elapsed $t))"
  elif grep -q 'Device not supported\|error 999' "$logs/memcheck.log"; then
    note memcheck "not supported on this machine ($(elapsed $t))"
  else
    failures=$((failures + 1))
    note memcheck "FAILED (exit $status, see $logs/memcheck.log; $(elapsed $t))"
    grep -E '=========|FAILED' "$logs/memcheck.log" | head -30
  fi
else
  note memcheck "skipped"
fi

# --- benchmark --------------------------------------------------------------------
# run_bench NAME PREFIX: runs <build>/bin/NAME, notes it, and adds its
# "PREFIX: <figures>" lines to the summary.
run_bench() {
  local name=$1 prefix=$2 t=$SECONDS status=0 line
  timeout 150 "$build_dir/bin/$name" >"$logs/$name.log" 2>&1 || status=$?
  cat "$logs/$name.log"
  if [ "$status" -ne 0 ]; then
    failures=$((failures + 1))
    note "$name" "FAILED (exit $status, $(elapsed $t))"
  else
    note "$name" "ok ($(elapsed $t))"
  fi
  while IFS= read -r line; do
    summary+=("  ${line#"$prefix": }")
  done < <(grep -E "^$prefix: [0-9]" "$logs/$name.log")
}
if [ "$have_bench" -eq 1 ]; then
  run_bench GemmCudaBench gemm-bench
  run_bench AttentionCudaBench attention-bench
else
  note GemmCudaBench "NOT BUILT: add bench/cuda to the top-level CMakeLists.txt"
  failures=$((failures + 1))
fi

# --- end to end -------------------------------------------------------------------
# losses FILE: "K V" for each "step K: loss V" line partition-run printed.
losses() { sed -nE 's/^step ([0-9]+): loss ([^ ]+).*/\1 \2/p' "$1"; }
if [ -n "${GPU_CHECK_PLANS:-}" ]; then
  for planfile in "$GPU_CHECK_PLANS"/*.plan; do
    name=$(basename "$planfile" .plan)
    args=$(sed -n 1p "${planfile%.plan}.args") rtol=$(sed -n 2p "${planfile%.plan}.args")
    t=$SECONDS
    ok=1
    for backend in cpu cuda; do
      # shellcheck disable=SC2086
      timeout 240 "$build_dir/bin/partition-run" "$planfile" --backend $backend \
        $args >"$logs/$name-$backend.log" 2>&1 || ok=0
    done
    verdict=$(paste <(losses "$logs/$name-cpu.log") <(losses "$logs/$name-cuda.log") |
      awk -v rtol="$rtol" '
        { d = $4 - $2; if (d < 0) d = -d; r = d / ($2 < 0 ? -$2 : $2)
          if (r > worst) worst = r; if (!(r <= rtol)) bad++; n++ }
        END { printf "%d steps, worst relative loss difference %.2e (tolerance %s)%s",
                     n, worst, rtol, (bad || n == 0) ? ": MISMATCH" : "" }')
    [ "$ok" = 1 ] || verdict="a run failed (see $logs/$name-*.log); $verdict"
    case $verdict in *MISMATCH*|"a run failed"*) failures=$((failures + 1)); 
      tail -5 "$logs/$name-cpu.log" "$logs/$name-cuda.log";; esac
    note "e2e $name" "$verdict ($(elapsed $t))"
    summary+=("  cpu:  $(grep '^summary' "$logs/$name-cpu.log" | cut -c1-110)")
    summary+=("  cuda: $(grep '^summary' "$logs/$name-cuda.log" | cut -c1-110)")
  done
else
  note "end to end" "skipped (GPU_CHECK_PLANS unset: see scripts/gpu-plans.sh)"
fi

# --- summary ----------------------------------------------------------------------
echo
echo "=== gpu-check summary ($(elapsed $started) in all; logs in $logs) ==="
printf '%s\n' "${summary[@]}"
if [ "$failures" -ne 0 ]; then
  echo "gpu-check: $failures step(s) failed"
fi
echo "gpu-check: $tests_passed passed, $tests_failed failed, $tests_skipped skipped"
[ "$failures" -eq 0 ] && [ "$tests_failed" -eq 0 ]
