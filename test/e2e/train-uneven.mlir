// Uneven shards end to end: a GPT with a vocabulary of 203 (hidden 96)
// whose table tp:2 and tp:4 split with padding (as Megatron pads a
// vocabulary), a batch of 6 that dp:4 splits with padding, and an MLP of
// width 30 on tp:4. Each plan trains 3 SGD steps on CPU ranks; the losses
// must equal the single-rank run's within 1e-5 relative, and the final
// weights (assembled without the padding, in the model's own shapes) within
// 1e-6 + 1e-5 |ref| (SGD is linear in the gradient: partitioning only
// reorders f32 sums). An unmasked padded logit changes the first loss by
// ~1e-2, an unmasked padded row of the batch by more.
//
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python %S/Inputs/train_data.py %t 6 8 203
// RUN: partition-import --model gpt --layers 2 --hidden 96 --heads 4 --vocab 203 --seq 8 --batch 6 --seed 3 -o %t/gpt.mlir --weights %t/gpt.safetensors
// RUN: partition-opt %t/gpt.mlir --part-append-loss="kind=cross-entropy" --part-autodiff --part-optimizer="kind=sgd lr=0.1" -o %t/gpt-step.mlir
// RUN: for m in dp:1 tp:2 tp:4 dp:4 dp:2,tp:2; do \
// RUN:   partition-opt %t/gpt-step.mlir --part-spmd="mesh=$m" | partition-translate --part-to-plan -o %t/gpt-$m.plan || exit 1; \
// RUN:   mkdir -p %t/gpt-$m && \
// RUN:   partition-run %t/gpt-$m.plan --backend cpu --steps 3 --weights %t/gpt.safetensors --input tokens=%t/tokens.npy --input labels=%t/labels.npy --output-dir %t/gpt-$m > %t/gpt-$m.log || exit 1; \
// RUN: done
// RUN: %python %S/Inputs/losses_agree.py 0 1e-5 %t/gpt-dp:1.log %t/gpt-tp:2.log %t/gpt-tp:4.log %t/gpt-dp:4.log %t/gpt-dp:2,tp:2.log
// RUN: %python %S/Inputs/compare_dirs.py 1e-6 1e-5 %t/gpt-dp:1 %t/gpt-tp:2 %t/gpt-tp:4 %t/gpt-dp:4 %t/gpt-dp:2,tp:2
//
// The table is split, not replicated: each of 4 devices holds 51 of the 204
// padded rows, and its global shape stays the model's.
// RUN: partition-run %t/gpt-tp:4.plan --dump | FileCheck %s --check-prefix=DUMP
// DUMP: param "wte" %{{[0-9]+}} : f32[51, 96] of global [203, 96] sharded [{"tp"}, {}]
// DUMP: output "new.wte" %{{[0-9]+}} : f32[51, 96] of global [203, 96] sharded [{"tp"}, {}] updates "wte"
// RUN: partition-opt %t/gpt-step.mlir --part-spmd="mesh=tp:4" | partition-translate --part-to-plan --part-memory-report -o /dev/null 2>&1 | FileCheck %s --check-prefix=MEMORY
// MEMORY: memory report of @gpt on @mesh (4 devices), bytes per device:
// The count of the model's elements is the unpadded one, as on one device:
// 203 x 96 + 8 x 96 + 2 x 111840 (a block) + 2 x 96.
// MEMORY: Psi 244128 parameter elements (global)
// RUN: partition-opt %t/gpt-step.mlir --part-spmd="mesh=dp:1" | partition-translate --part-to-plan --part-memory-report -o /dev/null 2>&1 | FileCheck %s --check-prefix=MEMORY1
// MEMORY1: Psi 244128 parameter elements (global)
//
// An MLP of width 30 on tp:4 (padded to 32) and its batch of 6 on dp:4.
// RUN: partition-import --model mlp --layers 3 --hidden 16 --ffn 30 --batch 6 --seed 3 -o %t/mlp.mlir --weights %t/mlp.safetensors
// RUN: partition-opt %t/mlp.mlir --part-append-loss="kind=mse" --part-autodiff --part-optimizer="kind=sgd lr=1e-2" -o %t/mlp-step.mlir
// RUN: for m in dp:1 tp:4 dp:4 dp:2,tp:2; do \
// RUN:   partition-opt %t/mlp-step.mlir --part-spmd="mesh=$m" | partition-translate --part-to-plan -o %t/mlp-$m.plan || exit 1; \
// RUN:   mkdir -p %t/mlp-$m && \
// RUN:   partition-run %t/mlp-$m.plan --backend cpu --steps 3 --weights %t/mlp.safetensors --input x=%t/x.npy --input targets=%t/targets.npy --output-dir %t/mlp-$m > %t/mlp-$m.log || exit 1; \
// RUN: done
// RUN: %python %S/Inputs/losses_agree.py 0 1e-5 %t/mlp-dp:1.log %t/mlp-tp:4.log %t/mlp-dp:4.log %t/mlp-dp:2,tp:2.log
// RUN: %python %S/Inputs/compare_dirs.py 1e-6 1e-5 %t/mlp-dp:1 %t/mlp-tp:4 %t/mlp-dp:4 %t/mlp-dp:2,tp:2
