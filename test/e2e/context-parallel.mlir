// Context parallelism end to end: a generated Llama (2 layers, sequence 64,
// 4 query heads and 2 key/value heads, causal) trained 3 steps (SGD) by
// partition-check on cp:2, cp:4, dp:2,cp:2, cp:2,tp:2 and pp:2,cp:2, and
// composed with ZeRO-1 and ZeRO-3 (dp:2,cp:2), sequence parallelism
// (cp:2,tp:2) and an interleaved pipeline (pp:2,cp:2), against one
// device: the losses of every step and every weight after the last agree
// (the default tolerances: 1e-5 + 1e-4 max|ref| on the losses, rtol 1e-3
// on the weights; measured 0 and 3.7e-9). On cp:4 there are fewer
// key/value heads (2) than devices: the all-gather form gathers the other
// devices' positions of every head, so any number of heads works.
// Attention given no positions (the balanced order but the mask on local
// indices) fails it: 6 of 23 outputs differ.
//
// RUN: rm -rf %t && mkdir -p %t
// RUN: partition-import --model llama --layers 2 --hidden 32 --heads 4 --kv-heads 2 --vocab 128 --seq 64 --batch 4 --seed 3 -o %t/llama.mlir --weights %t/llama.safetensors
// RUN: for m in "cp:2" "cp:4" "dp:2,cp:2" "cp:2,tp:2" "pp:2,cp:2"; do \
// RUN:   partition-check %t/llama.mlir --weights %t/llama.safetensors --mesh $m --steps 3 > "%t/check-$m.log" || { cat "%t/check-$m.log"; exit 1; }; \
// RUN:   FileCheck %s --check-prefix=TRAIN < "%t/check-$m.log" || exit 1; \
// RUN: done
// RUN: for m in "dp:2,cp:2;zero=1" "dp:2,cp:2;zero=3" "cp:2,tp:2;sequence-parallel=true" "pp:2,cp:2;micro-batches=4 schedule=interleaved-1f1b"; do \
// RUN:   partition-check %t/llama.mlir --weights %t/llama.safetensors --mesh "${m%%;*}" --spmd-options "${m#*;}" --steps 3 > %t/composed.log || { cat %t/composed.log; exit 1; }; \
// RUN:   FileCheck %s --check-prefix=TRAIN < %t/composed.log || exit 1; \
// RUN: done
//
// TRAIN: trained 3 steps
// TRAIN: step 3:
// TRAIN-NOT: MISMATCH
// TRAIN: weights after step 3: {{[0-9]+}} tensors agree
// TRAIN-NEXT: PASS
//
// On cp:4 each device's attention works on its own quarter of the
// sequence: 16 query positions (two chunks of 8, in the balanced order),
// against the 64 keys gathered whole; every other activation holds 16
// positions, and no [B, S, ...] value of the whole sequence is left but the
// keys and values attention gathers and the token ids the device picks its
// positions from. Backward reduce-scatters the keys' and values'
// gradients over cp and sums the weights' gradients.
// RUN: partition-opt %t/llama.mlir --part-append-loss="kind=cross-entropy" --part-autodiff --part-optimizer="kind=adamw lr=1e-3" -o %t/step.mlir
// RUN: partition-opt %t/step.mlir --part-spmd="mesh=cp:4" -o %t/cp4.mlir
// RUN: FileCheck %s --check-prefix=CP4 < %t/cp4.mlir
// RUN: grep -v "func.func\|dense<" %t/cp4.mlir | grep -o "tensor<[0-9x]*x64x[0-9x]*[fi][0-9]*>" | sort -u | FileCheck %s --check-prefix=WHOLE
// RUN: partition-opt %t/step.mlir --part-spmd="mesh=cp:4" --part-explain -o /dev/null 2>&1 | FileCheck %s --check-prefix=EXPLAIN
//
// CP4: part.constant dense<[0, 1, 2, 3, 4, 5, 6, 7, 56, 57, 58, 59, 60, 61, 62, 63, 8, 9,
// CP4: %[[LOCAL:.*]] = part.all_slice %[[ORDER:[0-9]+]] on @mesh axes ["cp"] dim 0 {{.*}} : tensor<64xi64> -> tensor<16xi64>
// CP4: part.gather %arg0, %[[LOCAL]] axis 1 : (tensor<4x64xi32>, tensor<16xi64>) -> tensor<4x16xi32>
// CP4: %[[K:.*]] = part.all_gather %{{.*}} on @mesh axes ["cp"] dim 2 {{.*}} : tensor<4x2x16x8xf32> -> tensor<4x2x64x8xf32>
// CP4: part.attention %{{.*}}, %[[K]], %{{.*}} causal positions(%[[LOCAL]], %[[ORDER]]) {{.*}} : (tensor<4x4x16x8xf32>, tensor<4x2x64x8xf32>, tensor<4x2x64x8xf32>, tensor<16xi64>, tensor<64xi64>) -> tensor<4x4x16x8xf32>
// CP4: part.batch_matmul {{.*}} transpose_a{{.*}}: (tensor<4x16x32xf32>, tensor<4x16x128xf32>) -> tensor<4x32x128xf32>
// CP4: part.attention_grad {{.*}} causal positions(%[[LOCAL]], %[[ORDER]]) {{.*}} -> (tensor<4x4x16x8xf32>, tensor<4x4x64x8xf32>, tensor<4x4x64x8xf32>)
// CP4: part.reduce_scatter {{.*}} axes ["cp"] dim 2 {{.*}} -> tensor<4x2x16x8xf32>
//
// The values of the whole sequence (64 positions) are the token ids the
// device picks its own from, and the keys and values: gathered ([B, Hkv,
// S, D]) and their gradients before the reduce-scatter (per query head
// [B, H, S, D], summed over each group's heads [B, Hkv, G, S, D], and the
// value's in the projection's layout [B, S, Hkv, D] and [B, S, Hkv D]).
// No hidden state ([B, S, 32]) nor MLP activation ([B, S, 88]) is whole.
// WHOLE: tensor<4x2x2x64x8xf32>
// WHOLE-NEXT: tensor<4x2x64x8xf32>
// WHOLE-NEXT: tensor<4x4x64x8xf32>
// WHOLE-NEXT: tensor<4x64x16xf32>
// WHOLE-NEXT: tensor<4x64x2x8xf32>
// WHOLE-NEXT: tensor<4x64xi32>
// WHOLE-EMPTY:
//
// EXPLAIN: remark: all_gather over "cp" (4 devices) of {{[0-9]+}} bytes moves {{[0-9]+}} bytes per device; needed by operand 1 of part.attention at {{.*}}, sharded by context parallelism over "cp" (each device's chunks of the sequence)
// EXPLAIN: remark: all_gather over "cp" (4 devices) of {{[0-9]+}} bytes moves {{[0-9]+}} bytes per device; needed by operand 2 of part.attention
