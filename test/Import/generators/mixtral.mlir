// partition-import --model mixtral: Llama's attention, and a sparse MLP per
// layer: the router's softmax, each token's top 2 of 4 experts with their
// weights renormalised, the tokens dispatched to their experts' capacity
// buffers (a sequence per group), one SwiGLU per expert as batched matmuls,
// and the slots combined with the router's weights. Its trained form equals
// one device on data and tensor parallel meshes.
//
// RUN: rm -rf %t && mkdir -p %t
// RUN: partition-import --model mixtral --layers 2 --hidden 64 --heads 4 --kv-heads 2 --experts 4 --top-k 2 --vocab 128 --seq 16 --batch 4 --shapes-only -o %t/dropless.mlir
// RUN: FileCheck %s < %t/dropless.mlir
// RUN: partition-opt %t/dropless.mlir --part-print-sharding-rules -o /dev/null 2>&1 | FileCheck %s --check-prefix=RULES
//
// Dropless: 16 slots per expert and sequence (a token picks an expert at
// most once, so no expert gets more than the sequence's 16).
// CHECK-LABEL: func.func @mixtral(
// CHECK-SAME: %[[ROUTER:arg[0-9]+]]: tensor<64x4xf32> {part.name = "layers.0.block_sparse_moe.gate.weight"
// CHECK-SAME: %[[W1:arg[0-9]+]]: tensor<4x64x176xf32> {part.name = "layers.0.block_sparse_moe.experts.w1"
// CHECK-SAME: %[[W3:arg[0-9]+]]: tensor<4x64x176xf32> {part.name = "layers.0.block_sparse_moe.experts.w3"
// CHECK-SAME: %[[W2:arg[0-9]+]]: tensor<4x176x64xf32> {part.name = "layers.0.block_sparse_moe.experts.w2"
// CHECK-NOT: mlp.gate_proj
// CHECK: %[[LOGITS:.*]] = part.matmul %[[H:.*]], %[[ROUTER]] {part.layer = 0 : i64} : (tensor<4x16x64xf32>, tensor<64x4xf32>) -> tensor<4x16x4xf32>
// CHECK: %[[PROBS:.*]] = part.softmax %[[LOGITS]] dim 2
// CHECK: %[[TOP:.*]], %[[CHOSEN:.*]] = part.top_k %[[PROBS]] {part.layer = 0 : i64} : (tensor<4x16x4xf32>) -> (tensor<4x16x2xf32>, tensor<4x16x2xi64>)
// CHECK: %[[SUM:.*]] = part.reduce_sum %[[TOP]] dims [2] keep_dims
// CHECK: %[[WEIGHTS:.*]] = part.div %[[TOP]], %[[SUM]]
// CHECK: %[[BUF:.*]] = part.expert_dispatch %[[H]], %[[CHOSEN]] {part.layer = 0 : i64} : (tensor<4x16x64xf32>, tensor<4x16x2xi64>) -> tensor<4x4x16x64xf32>
// CHECK: part.reshape %[[BUF]] {part.layer = 0 : i64} : tensor<4x4x16x64xf32> -> tensor<4x64x64xf32>
// CHECK: part.batch_matmul {{.*}}, %[[W1]]
// CHECK: part.silu
// CHECK: part.batch_matmul {{.*}}, %[[W3]]
// CHECK: part.batch_matmul {{.*}}, %[[W2]] {part.layer = 0 : i64} : (tensor<4x64x176xf32>, tensor<4x176x64xf32>) -> tensor<4x64x64xf32>
// CHECK: %[[SLOTS:.*]] = part.expert_combine %{{.*}}, %[[CHOSEN]] {part.layer = 0 : i64} : (tensor<4x4x16x64xf32>, tensor<4x16x2xi64>) -> tensor<4x16x2x64xf32>
// CHECK: %[[W:.*]] = part.reshape %[[WEIGHTS]] {part.layer = 0 : i64} : tensor<4x16x2xf32> -> tensor<4x16x2x1xf32>
// CHECK: part.mul %[[SLOTS]], %[[W]]
// CHECK: part.reduce_sum %{{.*}} dims [2] {part.layer = 0 : i64} : tensor<4x16x2x64xf32> -> tensor<4x16x64xf32>
//
// The routing ops' rules: the groups (a) and the hidden size (b) split, the
// experts, capacity, sequence and K whole.
// RULES: remark: sharding rule ([a, b, c]) -> ([a, b, d], [a, b, d]) a=4 b=16 c=4 d=2; c need-replication, d need-replication
// RULES-NEXT: part.top_k
// RULES: remark: sharding rule ([a, e, b], [a, e, f]) -> ([c, a, d, b]) a=4 b=64 c=4 d=16 e=16 f=2; c need-replication, d need-replication, e need-replication, f need-replication
// RULES-NEXT: part.expert_dispatch
// RULES: remark: sharding rule ([c, a, d, b], [a, e, f]) -> ([a, e, f, b]) a=4 b=64 c=4 d=16 e=16 f=2; c need-replication, d need-replication, e need-replication, f need-replication
// RULES-NEXT: part.expert_combine
//
// A capacity factor of 1: ceil(16 x 2 / 4) = 8 slots per expert and
// sequence, so tokens beyond an expert's 8 are dropped.
// RUN: partition-import --model mixtral --layers 1 --experts 4 --top-k 2 --seq 16 --batch 4 --capacity-factor 1 --shapes-only -o - | FileCheck %s --check-prefix=CAPACITY
// CAPACITY: part.expert_dispatch {{.*}} -> tensor<4x4x8x64xf32>
// A capacity factor beyond that is held to the sequence's 16 slots.
// RUN: partition-import --model mixtral --layers 1 --experts 8 --top-k 2 --seq 16 --batch 4 --capacity-factor 100 --shapes-only -o - | FileCheck %s --check-prefix=CLAMPED
// CLAMPED: part.expert_dispatch {{.*}} -> tensor<8x4x16x64xf32>
//
// Trained: the loss appended, AdamW, 3 steps on 1 rank and on dp:2, tp:2
// and dp:2,tp:2, with no token dropped and with a capacity factor of 1
// (tokens dropped: a sequence is one group, so a split of the batch drops
// the same tokens); losses 1e-5 relative, weights and optimizer state
// 1e-5 + 1e-3 |ref| (as e2e-llama.mlir). AdamW's epsilon is 1e-6: its
// update lr g / (|g| + eps) changes by up to lr / (4 eps) per unit of g
// where |g| is near eps, and an expert that gets a token or two in a step
// has such weight gradients: at eps 1e-8 a 1e-9 difference of rounding
// (tp sums attention's gradients in another order) moved one of expert 1's
// weights by 1.9e-5.
// RUN: %python -c "import numpy as np; t = np.random.default_rng(2).integers(0, 128, (4, 17)); np.save('%t/ids.npy', t[:, :-1].astype(np.int32)); np.save('%t/labels.npy', t[:, 1:].astype(np.int32))"
// RUN: for f in 0 1; do \
// RUN:   partition-import --model mixtral --layers 2 --hidden 64 --heads 4 --kv-heads 2 --experts 4 --top-k 2 --vocab 128 --seq 16 --batch 4 --seed 3 --capacity-factor $f -o %t/m$f.mlir --weights %t/m$f.safetensors && \
// RUN:   partition-opt %t/m$f.mlir --part-append-loss="kind=cross-entropy" --part-autodiff --part-optimizer="kind=adamw lr=1e-3 epsilon=1e-6" -o %t/step$f.mlir || exit 1; \
// RUN:   for m in "dp:1" "dp:2" "tp:2" "dp:2,tp:2"; do \
// RUN:     partition-opt %t/step$f.mlir --part-spmd="mesh=$m" -o %t/train$f-$m.mlir && partition-translate --part-to-plan %t/train$f-$m.mlir -o %t/train$f-$m.plan || exit 1; \
// RUN:     mkdir -p %t/train$f-$m && partition-run %t/train$f-$m.plan --backend cpu --steps 3 --weights %t/m$f.safetensors --input tokens=%t/ids.npy --input labels=%t/labels.npy --output-dir %t/train$f-$m > %t/train$f-$m.log || exit 1; \
// RUN:   done; \
// RUN:   for m in "dp:2" "tp:2" "dp:2,tp:2"; do \
// RUN:     %python %S/../../e2e/Inputs/losses_agree.py 0 1e-5 %t/train$f-dp:1.log %t/train$f-$m.log || exit 1; \
// RUN:     %python %S/../../e2e/Inputs/compare_dirs.py 1e-5 1e-3 %t/train$f-dp:1 %t/train$f-$m || exit 1; \
// RUN:   done; \
// RUN: done
// RUN: FileCheck %s --check-prefix=TRAIN < %t/train1-dp:2.log
// TRAIN: step 3
