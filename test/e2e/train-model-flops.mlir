// The model FLOPs per step that partition-run reports (and divides by the
// step time for MFU) are the model's, whatever the partitioning: the same
// training step of the GPT exported from PyTorch (2 layers, hidden 32, 4
// heads, vocabulary 96, the head tied to the token embedding as in torch;
// 4 sequences of 8 tokens, AdamW) on 1 rank, dp:2,tp:2, pp:2,dp:2,tp:2 (2 micro-batches) and dp:2,tp:4 reports
// the count part-spmd made on the global program, kept in the plan.
//
// By hand: the matmuls hold 27,648 parameters (per layer the fused q, k, v
// projection 32 x 96, the output projection 32 x 32, the MLP's 32 x 128 and
// 128 x 32: 12,288; the head 32 x 96), each used once per token forward and
// twice backward: 6 x 27,648 x 32 tokens = 5,308,416. Each attention product
// is 2 x 4 x 4 x 8 x 8 x 8 = 16,384 FLOPs (batch, heads, queries, keys, head
// size): 2 forward (q k^T, p v), 4 backward (dP, dV, dQ, dK; the q k^T
// that attention's derivative recomputes is not counted): 6 x 16,384 x 2
// layers = 196,608. In all 5,505,024, PaLM's 6 N T + 12 L d T.
//
// RUN: rm -rf %t && mkdir -p %t && cd %t
// RUN: %python -c "import numpy as np; t = np.random.default_rng(0).integers(0, 96, size=(4, 9)); np.save('ids.npy', t[:, :-1].astype(np.int64)); np.save('labels.npy', t[:, 1:].astype(np.int32))"
// RUN: partition-import %S/../Import/models/gpt-opset17.onnx --dim batch=4 --dim seq=8 --loss cross-entropy -o gpt.mlir --weights gpt.safetensors
// RUN: partition-opt gpt.mlir --part-autodiff --part-optimizer="kind=adamw lr=3e-3" -o step.mlir
// RUN: i=0; for m in "dp:1" "dp:2,tp:2" "pp:2,dp:2,tp:2 micro-batches=2" "dp:2,tp:4"; do \
// RUN:   i=$((i+1)); \
// RUN:   partition-opt step.mlir --part-spmd="mesh=$m" -o $i.mlir || exit 1; \
// RUN:   partition-translate --part-to-plan $i.mlir -o $i.plan || exit 1; \
// RUN:   partition-run $i.plan --dump > $i.dump || exit 1; \
// RUN:   partition-run $i.plan --backend cpu --steps 2 --weights gpt.safetensors --input input_ids=ids.npy --input labels=labels.npy --cluster h200 > $i.out 2> $i.err || exit 1; \
// RUN: done
// RUN: cat 1.dump 2.dump 3.dump 4.dump | FileCheck %s --check-prefix=DUMP
// RUN: cat 1.out 2.out 3.out 4.out | FileCheck %s --check-prefix=SUMMARY
//
// The dump's second line, once per plan:
// DUMP-COUNT-4: model FLOPs per step 5505024 (of the global program)
// DUMP-NOT: model FLOPs per step
//
// SUMMARY:     summary: 2 steps in {{[0-9.]+m?s}}, {{.*}}, 5.505e+06 model FLOP per step, MFU {{[0-9.e-]+}}% (h200),
// SUMMARY:     summary: 2 steps in {{.*}}, 5.505e+06 model FLOP per step, MFU
// SUMMARY:     summary: 2 steps in {{.*}}, 5.505e+06 model FLOP per step, MFU
// SUMMARY:     summary: 2 steps in {{.*}}, 5.505e+06 model FLOP per step, MFU
// SUMMARY-NOT: summary:
//
// A plan without the count (translated from the dp:2,tp:4 program with the
// module attribute taken off, as per-device programs written by hand are)
// still runs and counts every device's products, saying so: 5,537,792,
// which counts the work that dp:2,tp:4 repeats on several devices once per
// device.
// RUN: sed 's/module attributes {part.model_flops = [0-9]* : i64} {/module {/' 4.mlir > bare.mlir
// RUN: not grep part.model_flops bare.mlir
// RUN: partition-translate --part-to-plan bare.mlir -o bare.plan
// RUN: partition-run bare.plan --dump | FileCheck %s --check-prefix=BARE-DUMP
// RUN: partition-run bare.plan --backend cpu --steps 2 --weights gpt.safetensors --input input_ids=ids.npy --input labels=labels.npy 2>&1 | FileCheck %s --check-prefix=BARE
// BARE-DUMP: model FLOPs per step 5537792 (counted from the per-device programs)
// BARE:      summary: 2 steps in {{.*}}, 5.538e+06 model FLOP per step (counted from the per-device programs), MFU -,
