// Checkpoints: partition-run --checkpoint DIR writes every rank's blocks of
// every parameter and optimizer-state value (rank-<r>.safetensors) and then
// manifest.json; --resume DIR loads them, under the same plan or another
// partitioning of the same step.
//
// (a) Same plan: 3 steps + checkpoint + resume + 2 steps must equal 5 steps
//     straight bit for bit (tolerance 0 on the printed losses, which %.9g
//     prints exactly, and on the final weights and state): resuming only
//     reloads the exact bytes the devices held, and the step counter
//     (optimizer.step) comes back with them. Threads and --processes.
// (b) Another plan: a GPT checkpoint written under dp:2,tp:2 resumed under
//     dp:1 and dp:4, and one written under dp:1 resumed under dp:2,tp:2,
//     against 5 straight steps on dp:1, with the tolerances of train.mlir
//     (losses 2e-5 + 2e-5 |ref|, weights and state 1e-5 + 1e-3 |ref|):
//     the only difference from a straight run is the partitioning of some
//     of the steps, whose f32 reduction orders train.mlir bounds.
// (c) Bad checkpoints: no manifest, a tensor missing, a shape that does not
//     match the plan.
//
// RUN: rm -rf %t && mkdir -p %t/lin
// RUN: %python %S/Inputs/linreg_reference.py %t/lin adamw 5 --lr 0.01
// RUN: partition-opt %S/Inputs/linreg-grad.mlir --part-optimizer="kind=adamw lr=0.01" | partition-opt --part-spmd="mesh=dp:2" | partition-translate --part-to-plan -o %t/lin/2.plan 2>/dev/null
// RUN: cd %t/lin && mkdir -p straight resumed resumed-p resumed-pp && feed="--backend cpu --input x=x.npy --input y=y.npy" && \
// RUN: partition-run 2.plan $feed --steps 5 --weights weights.safetensors --output-dir straight > straight.log && \
// RUN: partition-run 2.plan $feed --steps 3 --weights weights.safetensors --checkpoint ckpt > first.log && \
// RUN: partition-run 2.plan $feed --steps 2 --resume ckpt --output-dir resumed > resumed.log && \
// RUN: partition-run 2.plan $feed --steps 2 --resume ckpt --output-dir resumed-p --processes > resumed-p.log && \
// RUN: partition-run 2.plan $feed --steps 3 --weights weights.safetensors --checkpoint ckpt-p --processes > first-p.log && \
// RUN: partition-run 2.plan $feed --steps 2 --resume ckpt-p --output-dir resumed-pp > resumed-pp.log
// RUN: cd %t/lin && cat first.log resumed.log > split.log && cat first.log resumed-p.log > split-p.log && cat first-p.log resumed-pp.log > split-pp.log
// RUN: %python %S/Inputs/losses_agree.py 0 0 %t/lin/straight.log %t/lin/split.log %t/lin/split-p.log %t/lin/split-pp.log
// RUN: %python %S/Inputs/compare_dirs.py 0 0 %t/lin/straight %t/lin/resumed %t/lin/resumed-p %t/lin/resumed-pp
// The straight run is right (the reference of optimizer.mlir):
// RUN: %python %S/Inputs/losses_agree.py 1e-5 1e-5 %t/lin/losses.txt %t/lin/straight.log
// RUN: FileCheck %s --check-prefix=FIRST < %t/lin/first.log
// RUN: FileCheck %s --check-prefix=RESUMED < %t/lin/resumed.log
// RUN: FileCheck %s --check-prefix=MANIFEST < %t/lin/ckpt/manifest.json
// RUN: ls %t/lin/ckpt | FileCheck %s --check-prefix=FILES
//
// FIRST: step 1: loss
// FIRST: step 3: loss
// FIRST: checkpoint ckpt: 7 tensors after step 3
// RESUMED-NOT: step 3:
// RESUMED: step 4: loss
// RESUMED: step 5: loss
//
// MANIFEST: "format": "partition-checkpoint",
// MANIFEST: "steps": 3,
// MANIFEST: {"name": "mesh", "axis_names": ["dp"], "axis_sizes": [2], "ranks": [0, 1]}
// MANIFEST: "adam.m.b": {"role": "state", "dtype": "F32", "shape": [3], "blocks": [
// MANIFEST-NEXT: {"file": "rank-0.safetensors", "rank": 0, "offsets": [0], "shape": [3]},
// MANIFEST-NEXT: {"file": "rank-1.safetensors", "rank": 1, "offsets": [0], "shape": [3]}]},
// MANIFEST: "optimizer.step": {"role": "state", "dtype": "F32", "shape": [], "blocks": [
// MANIFEST: "w": {"role": "parameter", "dtype": "F32", "shape": [4, 3], "blocks": [
// MANIFEST-NEXT: {"file": "rank-0.safetensors", "rank": 0, "offsets": [0, 0], "shape": [4, 3]},
//
// FILES: manifest.json
// FILES-NEXT: rank-0.safetensors
// FILES-NEXT: rank-1.safetensors
// FILES-NOT: tmp
//
// (b) and GPT under (a): the generated model of train.mlir.
// RUN: mkdir -p %t/gpt && cd %t/gpt && %python %S/Inputs/train_data.py . 4 8 64
// RUN: cd %t/gpt && partition-import --model gpt --layers 2 --hidden 32 --heads 4 --vocab 64 --seq 8 --batch 4 --seed 3 -o gpt.mlir --weights gpt.safetensors
// RUN: cd %t/gpt && partition-opt gpt.mlir --part-append-loss="kind=cross-entropy" --part-autodiff --part-optimizer="kind=adamw lr=1e-3" > step.mlir
// RUN: cd %t/gpt && for m in dp:1 dp:4 dp:2,tp:2; do \
// RUN:   partition-opt step.mlir --part-spmd="mesh=$m" | partition-translate --part-to-plan -o $m.plan 2>/dev/null || exit 1; \
// RUN: done
// RUN: cd %t/gpt && mkdir -p straight-dp:1 straight-dp:2,tp:2 same to-dp:1 to-dp:4 to-dp:2,tp:2 && feed="--backend cpu --input tokens=tokens.npy --input labels=labels.npy" && \
// RUN: for m in dp:1 dp:2,tp:2; do \
// RUN:   partition-run $m.plan $feed --steps 5 --weights gpt.safetensors --output-dir straight-$m > straight-$m.log || exit 1; \
// RUN:   partition-run $m.plan $feed --steps 3 --weights gpt.safetensors --checkpoint ckpt-$m > first-$m.log || exit 1; \
// RUN: done && \
// RUN: partition-run dp:2,tp:2.plan $feed --steps 2 --resume ckpt-dp:2,tp:2 --output-dir same > same.log && \
// RUN: partition-run dp:1.plan $feed --steps 2 --resume ckpt-dp:2,tp:2 --output-dir to-dp:1 > to-dp:1.log && \
// RUN: partition-run dp:4.plan $feed --steps 2 --resume ckpt-dp:2,tp:2 --output-dir to-dp:4 > to-dp:4.log && \
// RUN: partition-run dp:2,tp:2.plan $feed --steps 2 --resume ckpt-dp:1 --output-dir to-dp:2,tp:2 > to-dp:2,tp:2.log && \
// RUN: cat first-dp:2,tp:2.log same.log > split-same.log && \
// RUN: cat first-dp:2,tp:2.log to-dp:1.log > split-to-dp:1.log && \
// RUN: cat first-dp:2,tp:2.log to-dp:4.log > split-to-dp:4.log && \
// RUN: cat first-dp:1.log to-dp:2,tp:2.log > split-to-dp:2,tp:2.log
// RUN: cd %t/gpt && %python %S/Inputs/losses_agree.py 0 0 straight-dp:2,tp:2.log split-same.log
// RUN: cd %t/gpt && %python %S/Inputs/compare_dirs.py 0 0 straight-dp:2,tp:2 same
// RUN: cd %t/gpt && %python %S/Inputs/losses_agree.py 2e-5 2e-5 straight-dp:1.log split-to-dp:1.log split-to-dp:4.log split-to-dp:2,tp:2.log
// RUN: cd %t/gpt && %python %S/Inputs/compare_dirs.py 1e-5 1e-3 straight-dp:1 to-dp:1 to-dp:4 to-dp:2,tp:2
// The tensor-parallel blocks (split over tp, repeated over dp) really were
// reassembled:
// RUN: FileCheck %s --check-prefix=GPT < %t/gpt/ckpt-dp:2,tp:2/manifest.json
// GPT: "axis_names": ["dp", "tp"], "axis_sizes": [2, 2]
// GPT: "h.0.mlp.fc.weight": {"role": "parameter", "dtype": "F32", "shape": [32, 128], "blocks": [
// GPT-NEXT: "rank": 0, "offsets": [0, 0], "shape": [{{16, 128|32, 64}}]},
// GPT-NEXT: "rank": 1, "offsets": [{{16, 0|0, 64}}], "shape": [{{16, 128|32, 64}}]},
//
// (c) Bad checkpoints.
// RUN: mkdir -p %t/empty
// RUN: cd %t/lin && not partition-run 2.plan --backend cpu --input x=x.npy --input y=y.npy --resume %t/empty 2>&1 | FileCheck %s --check-prefix=NOMANIFEST
// RUN: cd %t/lin && not partition-run 2.plan --backend cpu --input x=x.npy --input y=y.npy --resume ckpt --weights weights.safetensors 2>&1 | FileCheck %s --check-prefix=BOTH
// RUN: %python %S/Inputs/edit_manifest.py %t/lin/ckpt %t/lin/dropped --drop adam.v.b
// RUN: cd %t/lin && not partition-run 2.plan --backend cpu --input x=x.npy --input y=y.npy --resume dropped 2>&1 | FileCheck %s --check-prefix=MISSING
// RUN: %python %S/Inputs/edit_manifest.py %t/lin/ckpt %t/lin/reshaped --shape w 4,5
// RUN: cd %t/lin && not partition-run 2.plan --backend cpu --input x=x.npy --input y=y.npy --resume reshaped 2>&1 | FileCheck %s --check-prefix=SHAPE
// The GPT checkpoint under the regression's plan:
// RUN: cd %t/lin && not partition-run 2.plan --backend cpu --input x=x.npy --input y=y.npy --resume %t/gpt/ckpt-dp:1 2>&1 | FileCheck %s --check-prefix=OTHER
//
// NOMANIFEST: partition-run: not found: checkpoint {{.*}}empty has no manifest.json (it is not a checkpoint, or its writing did not finish)
// BOTH: partition-run: --resume loads the parameters; it excludes --weights and --random-weights
// MISSING: partition-run: ranks 0-1: invalid argument: checkpoint dropped: tensor "adam.v.b" is missing (the checkpoint has: adam.m.b, adam.m.w, adam.v.w, b, optimizer.step, w)
// SHAPE: partition-run: ranks 0-1: invalid argument: checkpoint reshaped: tensor "w" is f32[4, 5] in the checkpoint but f32[4, 3] in the plan
// OTHER: partition-run: ranks 0-1: invalid argument: checkpoint {{.*}}ckpt-dp:1: tensor "{{[a-z.]+}}" is missing (the checkpoint has: adam.m.
