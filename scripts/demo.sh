#!/usr/bin/env bash
# Sets up, builds and runs partition's main job. Today:
#   1. verify a two-layer GPT-2 written in the part dialect and annotated for a
#      2 x 4 (dp x tp) mesh, print it, and show how it is split over 8 devices;
#      partition the same model without annotations for that mesh and explain
#      every collective;
#   2. lower a hand-sharded MLP (the per-device program of a 2 x 2 mesh) to an
#      execution plan, show the plan, run it on 4 CPU ranks and on 1 rank
#      (the unsharded program), and compare both with numpy;
#   3. import the small GPT that test/Import/models/export.py exported from
#      PyTorch (ONNX opset 17, symbolic batch and sequence), partition it for
#      a 2 x 2 (dp x tp) mesh, run it on 4 CPU ranks and on 1, and compare
#      both with onnxruntime;
#   4. train the same GPT: a cross-entropy loss, gradients and AdamW compiled
#      into one training step, partitioned for 8 CPU ranks as dp 2 x tp 4 and
#      as a 1F1B pipeline of 2 stages of dp 2 x tp 2, and run for 30 steps,
#      with the losses of 1 rank beside them; the pipeline plan written as an
#      HTML report (its path is printed);
#   5. let partition choose: rank the plans of GPT-3 175B on 1024 A100s
#      (with an HTML report), and train the imported GPT with the plan the
#      cost model of this machine prefers.
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

echo
model=test/Import/models/gpt-opset17.onnx
echo "== 3. $model (exported from PyTorch) imported by partition-import"
"$bin/partition-import" "$model" --dim batch=2 --dim seq=8 \
  -o "$work/gpt.mlir" --weights "$work/gpt.safetensors"
echo "   ops of the imported function (decomposed layers raised to layer ops):"
grep -o ' = part\.[a-z_]*' "$work/gpt.mlir" | sed 's/ = //' | sort | uniq -c | sort -rn |
  awk '{printf "     %3d %s\n", $1, $2}'
echo "   parameters (named as in the model), first five:"
grep -o 'part.name = "[^"]*", part.role = #part.role<parameter>' "$work/gpt.mlir" |
  head -5 | sed 's/part.name = "\([^"]*\)".*/     \1/'
echo "== partitioned for dp:2,tp:2: the collectives and why"
"$bin/partition-opt" "$work/gpt.mlir" --part-spmd="mesh=dp:2,tp:2" --part-explain \
  -o "$work/gpt-spmd.mlir" --mlir-print-op-on-diagnostic=false 2>&1 |
  grep remark | sed 's/^.*remark: /  /'
"$bin/partition-translate" --part-to-plan "$work/gpt-spmd.mlir" -o "$work/gpt4.plan" 2>/dev/null
"$bin/partition-opt" "$work/gpt.mlir" --part-spmd="mesh=dp:1" |
  "$bin/partition-translate" --part-to-plan -o "$work/gpt1.plan" 2>/dev/null
.venv/bin/python test/Import/models/reference.py "$model" "$work/ref" \
  --dim batch=2 --dim seq=8 >/dev/null
mkdir -p "$work/gpt-out4" "$work/gpt-out1"
echo "== run on 4 CPU ranks and on 1"
"$bin/partition-run" "$work/gpt4.plan" --backend cpu --weights "$work/gpt.safetensors" \
  --input input_ids="$work/ref/input_ids.npy" --output-dir "$work/gpt-out4" | tail -1
"$bin/partition-run" "$work/gpt1.plan" --backend cpu --weights "$work/gpt.safetensors" \
  --input input_ids="$work/ref/input_ids.npy" --output-dir "$work/gpt-out1" | tail -1
echo "== both against onnxruntime"
/usr/bin/python3 test/e2e/Inputs/compare.py 5e-5 5e-5 "$work/ref/logits.npy" \
  "$work/gpt-out4/logits.npy" "$work/gpt-out1/logits.npy"

echo
echo "== 4. training the imported GPT: --loss cross-entropy, part-autodiff, part-optimizer (AdamW)"
"$bin/partition-import" "$model" --dim batch=4 --dim seq=8 --loss cross-entropy \
  -o "$work/gpt-loss.mlir" --weights "$work/gpt.safetensors"
"$bin/partition-opt" "$work/gpt-loss.mlir" --part-autodiff \
  --part-optimizer="kind=adamw lr=3e-3" -o "$work/gpt-step.mlir"
echo "   the training step: $(grep -o 'part.updates' "$work/gpt-step.mlir" | wc -l) values updated in place per step" \
  "(parameters, Adam moments, the step count)"
/usr/bin/python3 -c "
import numpy as np
t = np.random.default_rng(0).integers(0, 96, size=(4, 9))
np.save('$work/ids.npy', t[:, :-1].astype(np.int64))
np.save('$work/labels.npy', t[:, 1:].astype(np.int32))"
# 8 ranks as dp 2 x tp 4; 8 ranks as 2 pipeline stages of dp 2 x tp 2 (each
# data-parallel group runs 2 micro-batches of 1 on 1F1B); 1 rank.
i=0
for m in "dp:2,tp:4" "pp:2,dp:2,tp:2 micro-batches=2 schedule=1f1b" "dp:1"; do
  i=$((i + 1))
  "$bin/partition-opt" "$work/gpt-step.mlir" --part-spmd="mesh=$m" |
    "$bin/partition-translate" --part-to-plan -o "$work/train-$i.plan" 2>/dev/null
  # stdout: the losses and a summary; stderr: a progress line per step
  # (shown only if the run fails)
  "$bin/partition-run" "$work/train-$i.plan" --backend cpu --steps 30 \
    --weights "$work/gpt.safetensors" --input input_ids="$work/ids.npy" \
    --input labels="$work/labels.npy" > "$work/train-$i.log" \
    2> "$work/train-$i.err" || { cat "$work/train-$i.err" >&2; exit 1; }
done
echo "   step  8 ranks (dp 2 x tp 4)  8 ranks (pp 2 x dp 2 x tp 2, 1F1B)  1 rank"
paste "$work/train-1.log" "$work/train-2.log" "$work/train-3.log" | grep '^step' |
  awk 'NR <= 5 || NR % 5 == 0 {printf "   %4d  %-22s %-36s %s\n", $2, $4, $8, $12}'
echo "   each run's summary (partition-run):"
for i in 1 2 3; do grep '^summary' "$work/train-$i.log" | sed 's/^/     /'; done
# The pipeline plan as a page: its devices, memory per stage, schedule and
# collectives (kept after the demo, unlike its other files).
mkdir -p "$build_dir/demo"
report="$build_dir/demo/pipeline-report.html"
"$bin/partition-opt" "$work/gpt-step.mlir" \
  --part-spmd="mesh=pp:2,dp:2,tp:2 micro-batches=2 schedule=1f1b" \
  --part-report="$report" --part-report-cluster=dgx-a100 -o /dev/null
echo "== the 8-rank pipeline plan as an HTML page (partition-opt --part-report): $report"

echo
echo "== 5. let partition choose: GPT-3 175B on 1024 A100s (128 DGX nodes), a batch of 1536"
"$bin/partition-import" --model gpt --layers 96 --hidden 12288 --heads 96 --vocab 51200 \
  --seq 2048 --batch 1 --shapes-only -o "$work/gpt3.mlir"
"$bin/partition-plan" "$work/gpt3.mlir" --cluster dgx-a100 --devices 1024 \
  --global-batch 1536 --top 5 --explain --html "$build_dir/demo/plan-report.html" |
  sed 's/^/   /'
echo "== the ranking and the first plan as an HTML page (partition-plan --html): $build_dir/demo/plan-report.html"
echo "== and the imported GPT trained on 4 CPU ranks with the plan part-auto-partition"
echo "   chose for this machine, as partition-run --calibrate measures it"
"$bin/partition-run" --calibrate -o "$work/local-cpu.json" --ranks 4 > /dev/null
"$bin/partition-opt" "$work/gpt-loss.mlir" --part-auto-partition="cluster=$work/local-cpu.json devices=4 precision=f32 optimizer='kind=adamw lr=3e-3'" \
  2> "$work/auto.remark" | "$bin/partition-translate" --part-to-plan -o "$work/auto.plan" 2>/dev/null
sed -n 's/.*remark: /   /p' "$work/auto.remark"
"$bin/partition-run" "$work/auto.plan" --backend cpu --steps 30 \
  --weights "$work/gpt.safetensors" --input input_ids="$work/ids.npy" \
  --input labels="$work/labels.npy" > "$work/train-auto.log" \
  2> "$work/train-auto.err" || { cat "$work/train-auto.err" >&2; exit 1; }
echo "   step  chosen plan  1 rank"
paste "$work/train-auto.log" "$work/train-3.log" | grep '^step' |
  awk 'NR <= 3 || NR % 10 == 0 {printf "   %4d  %-12s %s\n", $2, $4, $8}'
