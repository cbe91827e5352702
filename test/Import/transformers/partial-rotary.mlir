// Attention with partial rotary embeddings, as Hugging Face transformers
// 4.36.2 builds it (export_transformers.py, small configs, seeded weights):
// GPT-NeoX (GPTNeoXForCausalLM, rotary_pct 0.25: 2 of each head's 8
// dimensions rotated) and Phi (PhiForCausalLM, partial_rotary_factor 0.5: 4
// of 8). Both fuse Q, K and V per head in one projection (GPT-NeoX views it
// as [B, S, heads, 3 * head_dim], Phi as [B, S, heads, 3, head_dim]), and
// GPT-NeoX computes the scores with baddbmm over [B * heads, S, head_dim].
// part-raise rebuilds part.attention and, on each rotated slice, a
// part.rotary_embedding. Each model is imported with batch 2 and sequence 8
// and run on 1 rank, dp:2, dp:2,tp:2 and tp:4, and its logits are compared
// with the model's own in torch (f32), within the tolerance of the other
// transformers models (5e-5 absolute plus 5e-5 relative).
//
// REQUIRES: transformers
// RUN: rm -rf %t && mkdir -p %t
// RUN: for a in gpt_neox phi; do \
// RUN:   %ort_python %S/export_transformers.py $a %t/$a && \
// RUN:   partition-import %t/$a/$a.onnx --dim batch=2 --dim seq=8 -o %t/$a/m.mlir --weights %t/$a/w.safetensors || exit 1; \
// RUN:   for m in dp:1 dp:2 dp:2,tp:2 tp:4; do \
// RUN:     partition-opt %t/$a/m.mlir --part-spmd="mesh=$m" -o %t/$a/$m.mlir && \
// RUN:     partition-translate --part-to-plan %t/$a/$m.mlir -o %t/$a/$m.plan && mkdir -p %t/$a/out-$m && \
// RUN:     partition-run %t/$a/$m.plan --backend cpu --weights %t/$a/w.safetensors --input input_ids=%t/$a/input_ids.npy --output-dir %t/$a/out-$m > /dev/null && \
// RUN:     %python %S/../../e2e/Inputs/compare.py 5e-5 5e-5 %t/$a/logits.npy %t/$a/out-$m/logits.npy || exit 1; \
// RUN:   done; \
// RUN: done
//
// The imported layers: the rotated slice of the queries and of the keys
// each a rotary embedding (sharing one pair of [S, rotary dims] tables), the
// rest of each head concatenated back, then causal attention over all 8
// heads of 8 dimensions. Nothing of the decomposed forms is left.
// RUN: FileCheck %s --check-prefix=NEOX < %t/gpt_neox/m.mlir
// NEOX: %[[QR:.*]] = part.slice %{{.*}} offsets [0, 0, 0, 0] {part.layer = 0 : i64} : tensor<2x8x8x8xf32> -> tensor<2x8x8x2xf32>
// NEOX: %[[QP:.*]] = part.slice %{{.*}} offsets [0, 0, 0, 2] {part.layer = 0 : i64} : tensor<2x8x8x8xf32> -> tensor<2x8x8x6xf32>
// NEOX: %[[COS:.*]] = part.constant {{.*}} : tensor<8x2xf32>
// NEOX: %[[SIN:.*]] = part.constant {{.*}} : tensor<8x2xf32>
// NEOX: %[[QE:.*]] = part.rotary_embedding %[[QR]], %[[COS]], %[[SIN]] {part.layer = 0 : i64} : (tensor<2x8x8x2xf32>, tensor<8x2xf32>, tensor<8x2xf32>)
// NEOX: %[[KE:.*]] = part.rotary_embedding %{{.*}}, %[[COS]], %[[SIN]] {part.layer = 0 : i64}
// NEOX: %[[Q:.*]] = part.concat %[[QE]], %[[QP]] dim 3
// NEOX: %[[K:.*]] = part.concat %[[KE]], %{{.*}} dim 3
// NEOX: part.attention %[[Q]], %[[K]], %{{.*}} causal {part.layer = 0 : i64} : (tensor<2x8x8x8xf32>, tensor<2x8x8x8xf32>, tensor<2x8x8x8xf32>) -> tensor<2x8x8x8xf32>
// NEOX: part.attention {{.*}} causal {part.layer = 1 : i64}
// RUN: FileCheck %s --check-prefix=PHI < %t/phi/m.mlir
// PHI: %[[QR:.*]] = part.slice %{{.*}} offsets [0, 0, 0, 0] {part.layer = 0 : i64} : tensor<2x8x8x8xf32> -> tensor<2x8x8x4xf32>
// PHI: %[[COS:.*]] = part.constant {{.*}} : tensor<8x4xf32>
// PHI: %[[SIN:.*]] = part.constant {{.*}} : tensor<8x4xf32>
// PHI: %[[QE:.*]] = part.rotary_embedding %[[QR]], %[[COS]], %[[SIN]] {part.layer = 0 : i64} : (tensor<2x8x8x4xf32>, tensor<8x4xf32>, tensor<8x4xf32>)
// PHI: %[[KE:.*]] = part.rotary_embedding %{{.*}}, %[[COS]], %[[SIN]] {part.layer = 0 : i64}
// PHI: %[[Q:.*]] = part.concat %[[QE]], %{{.*}} dim 3
// PHI: %[[K:.*]] = part.concat %[[KE]], %{{.*}} dim 3
// PHI: part.attention %[[Q]], %[[K]], %{{.*}} causal {part.layer = 0 : i64} : (tensor<2x8x8x8xf32>, tensor<2x8x8x8xf32>, tensor<2x8x8x8xf32>) -> tensor<2x8x8x8xf32>
// PHI: part.attention {{.*}} causal {part.layer = 1 : i64}
// RUN: cat %t/gpt_neox/m.mlir %t/phi/m.mlir | FileCheck %s --check-prefix=RAISED
// RAISED-NOT: part.softmax
// RAISED-NOT: part.batch_matmul
// RAISED-NOT: part.neg
//
// Tensor parallelism splits attention and the rotary embeddings by heads (8
// -> 4 on dp:2,tp:2, 8 -> 2 on tp:4) and the MLP as Megatron does: two
// all-reduces over "tp" per layer plus one for the vocabulary-parallel
// embedding lookup (2 layers: 5). The fused QKV projections need no
// rewriting for this: their output columns are grouped by head (Q, K and V
// of head 0, then of head 1, ...), so splitting them by columns gives each
// rank whole heads of Q, K and V.
// RUN: for a in gpt_neox phi; do for m in dp:2,tp:2 tp:4; do \
// RUN:   grep -c 'part.all_reduce .*axes \["tp"\]' %t/$a/$m.mlir | FileCheck %s --check-prefix=FIVE || exit 1; \
// RUN: done; done
// FIVE: {{^5$}}
// RUN: FileCheck %s --check-prefix=TP2 < %t/gpt_neox/dp:2,tp:2.mlir
// RUN: FileCheck %s --check-prefix=TP2 < %t/phi/dp:2,tp:2.mlir
// TP2: part.rotary_embedding {{.*}} : (tensor<1x4x8x{{[24]}}xf32>
// TP2: part.attention {{.*}} : (tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>)
// RUN: FileCheck %s --check-prefix=TP4 < %t/gpt_neox/tp:4.mlir
// RUN: FileCheck %s --check-prefix=TP4 < %t/phi/tp:4.mlir
// TP4: part.rotary_embedding {{.*}} : (tensor<2x2x8x{{[24]}}xf32>
// TP4: part.attention {{.*}} : (tensor<2x2x8x8xf32>, tensor<2x2x8x8xf32>, tensor<2x2x8x8xf32>)
