#!/usr/bin/env bash
# Sets up, builds and runs partition's main job. Today:
#   1. verify a two-layer GPT-2 written in the part dialect and annotated for a
#      2 x 4 (dp x tp) mesh, print it, and show how it is split over 8 devices;
#      partition the same model without annotations for that mesh and explain
#      every collective;
#   2. lower a hand-sharded MLP (the per-device program of a 2 x 2 mesh) to an
#      execution plan, show the plan, run it on 4 CPU ranks and on 1 rank
#      (the unsharded program), and compare both with numpy.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh >/dev/null
build_dir=${BUILD_DIR:-build}
bin="$build_dir/bin"
model=test/Examples/gpt2.mlir

echo "== 1. $model: verified and printed by partition-opt"
"$bin/partition-opt" "$model"
echo
echo "== how its values are split over the mesh (--part-sharding-report)"
"$bin/partition-opt" "$model" --part-sharding-report -o /dev/null
echo
echo "== the same model without annotations, partitioned by --part-spmd=\"mesh=dp:2,tp:4\":"
echo "   the collectives it needs and why (--part-explain)"
"$bin/partition-opt" "$model" --part-strip-sharding=remove-meshes |
  "$bin/partition-opt" --part-spmd="mesh=dp:2,tp:4" --part-explain -o /dev/null \
    --mlir-print-op-on-diagnostic=false 2>&1 | grep -E "remark|^func|^  [a-z]" | sed 's/^.*remark: /  /'

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/out1" "$work/out4"
/usr/bin/python3 test/e2e/Inputs/mlp_data.py "$work"
echo "== 2. a hand-sharded MLP lowered to a plan (partition-translate --part-to-plan)"
"$bin/partition-translate" --part-to-plan test/e2e/Inputs/mlp-2x2.mlir -o "$work/mlp4.plan"
"$bin/partition-translate" --part-to-plan test/e2e/Inputs/mlp-1x1.mlir -o "$work/mlp1.plan" 2>/dev/null
"$bin/partition-run" "$work/mlp4.plan" --dump
echo
echo "== run on 4 CPU ranks (threads; --processes would use one process per rank)"
"$bin/partition-run" "$work/mlp4.plan" --backend cpu --weights "$work/weights.safetensors" \
  --input x="$work/x.npy" --output-dir "$work/out4"
echo "== run the unsharded program on 1 rank"
"$bin/partition-run" "$work/mlp1.plan" --backend cpu --weights "$work/weights.safetensors" \
  --input x="$work/x.npy" --output-dir "$work/out1"
echo "== both against the numpy reference"
/usr/bin/python3 test/e2e/Inputs/compare.py 2e-5 1e-5 "$work/expected.npy" \
  "$work/out4/y.npy" "$work/out1/y.npy"
