#!/usr/bin/env bash
# Makes the training plans that scripts/gpu-check.sh runs end to end on the
# CUDA and the CPU backend (the GPU machine builds the runtime only, so the
# plans are compiled here, where partition-translate is). Each DIR/NAME.plan
# comes with DIR/NAME.args: its first line the partition-run arguments of
# its run (random weights and synthetic batches, so no weights file
# travels), its second the relative tolerance of each step's loss, CUDA
# against CPU.
#   scripts/gpu-plans.sh DIR
#   GPU_CHECK_PLANS=DIR scripts/gpu-check.sh    # on the GPU machine
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -eq 1 ] || { echo "usage: scripts/gpu-plans.sh DIR" >&2; exit 2; }
out=$1
bin=${BUILD_DIR:-build}/bin
mkdir -p "$out"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# plan NAME IMPORT_ARGS OPT_ARGS RUN_ARGS RTOL [SPMD]: a generated model's
# training step on one device (part-spmd's options SPMD, default
# mesh=dp:1), lowered to DIR/NAME.plan.
plan() {
  local name=$1 import=$2 opt=$3 run=$4 rtol=$5 spmd=${6:-mesh=dp:1}
  # shellcheck disable=SC2086
  "$bin/partition-import" $import --loss cross-entropy --shapes-only \
    -o "$work/$name.mlir"
  # shellcheck disable=SC2086
  "$bin/partition-opt" "$work/$name.mlir" $opt --part-autodiff \
    --part-optimizer="kind=adamw lr=1e-3" |
    "$bin/partition-opt" --part-spmd="$spmd" |
    "$bin/partition-translate" --part-to-plan -o "$out/$name.plan"
  printf '%s\n%s\n' "$run" "$rtol" >"$out/$name.args"
  echo "gpu-plans: $out/$name.plan ($(stat -c %s "$out/$name.plan") bytes)"
}

gpt="--model gpt --layers 4 --hidden 512 --heads 8 --vocab 4096 --seq 256 --batch 8"
llama="--model llama --layers 2 --hidden 256 --heads 8 --kv-heads 2 --vocab 2048 --seq 128 --batch 4"
# Tolerances. f32: both backends compute in f32 (cuBLAS without TF32) and
# differ only in the order of sums, as partitioned runs differ from one rank,
# where 3 AdamW steps agree within 2e-5 (docs/benchmarks.md); 1e-4 leaves
# room for 5 steps. bf16: each product's result is rounded to bf16 (8
# significant bits, 2^-9 = 2e-3 relative), and a different order of sums
# may round the other way, so a loss moves by a few of those: 2e-2.
plan gpt-f32 "$gpt" "" "--random-weights 1 --synthetic 7 --vocab 4096 --steps 5" 1e-4
plan gpt-bf16 "$gpt" "--part-mixed-precision=compute=bf16" \
  "--random-weights 1 --synthetic 7 --vocab 4096 --steps 5" 2e-2
plan llama-f32 "$llama" "" "--random-weights 2 --synthetic 8 --vocab 2048 --steps 5" 1e-4
# The pipeline schedule table on one device (a GPU runs one rank, and NCCL
# does not put two ranks of a communicator on one GPU): a one-stage
# pipeline of 4 micro-batches, whose plan runs its fragments P, F, B and U
# from the table, with stash slots, micro-batched inputs and accumulators
# summed in place -- everything a pp plan runs but the transfers.
plan gpt-table-f32 "$gpt" "" "--random-weights 1 --synthetic 7 --vocab 4096 --steps 5" 1e-4 \
  "mesh=pp:1 micro-batches=4"
