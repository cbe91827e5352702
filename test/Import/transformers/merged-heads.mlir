// Attention with the heads merged into the batch, as Hugging Face
// transformers 4.36.2 builds it (export_transformers.py, small configs,
// seeded weights): OPT (OPTForCausalLM) and BLOOM (BloomForCausalLM) take
// their score products and the products with the values over
// [B * heads, S, head_dim]. OPT splits the scores into [B, heads, S, S]
// only to add its causal mask and clamp them by max(., finfo.min), then
// merges them again for the softmax; part-raise rebuilds part.attention
// from that. BLOOM adds ALiBi, a per-head linear bias, to the scores:
// part.attention has no bias, so its attention stays as exported (and
// replicated under tensor parallelism). Each model is imported with batch 2
// and sequence 8 and run on 1 rank, dp:2,tp:2 and tp:4, and its logits are
// compared with the model's own in torch (f32), within the tolerance of the
// other transformers models (5e-5 absolute plus 5e-5 relative).
//
// REQUIRES: transformers
// RUN: rm -rf %t && mkdir -p %t
// RUN: for a in opt bloom; do \
// RUN:   %ort_python %S/export_transformers.py $a %t/$a && \
// RUN:   partition-import %t/$a/$a.onnx --dim batch=2 --dim seq=8 -o %t/$a/m.mlir --weights %t/$a/w.safetensors || exit 1; \
// RUN:   for m in dp:1 dp:2,tp:2 tp:4; do \
// RUN:     partition-opt %t/$a/m.mlir --part-spmd="mesh=$m" -o %t/$a/$m.mlir && \
// RUN:     partition-translate --part-to-plan %t/$a/$m.mlir -o %t/$a/$m.plan && mkdir -p %t/$a/out-$m && \
// RUN:     partition-run %t/$a/$m.plan --backend cpu --weights %t/$a/w.safetensors --input input_ids=%t/$a/input_ids.npy --output-dir %t/$a/out-$m > /dev/null && \
// RUN:     %python %S/../../e2e/Inputs/compare.py 5e-5 5e-5 %t/$a/logits.npy %t/$a/out-$m/logits.npy || exit 1; \
// RUN:   done; \
// RUN: done
//
// OPT exported with an attention_mask (the second sequence's last two
// tokens padded): its positions are then a cumulative sum of the mask at
// run time, and the mask is no constant, so the attention stays
// decomposed. 1 rank and dp:2,tp:2, against torch with the same mask; the
// mask changes the logits, so a mask the import dropped would fail.
// RUN: %ort_python %S/export_transformers.py opt %t/opt-mask --mask
// RUN: partition-import %t/opt-mask/opt.onnx --dim batch=2 --dim seq=8 -o %t/opt-mask/m.mlir --weights %t/opt-mask/w.safetensors
// RUN: for m in dp:1 dp:2,tp:2; do \
// RUN:   partition-opt %t/opt-mask/m.mlir --part-spmd="mesh=$m" | partition-translate --part-to-plan -o %t/opt-mask/$m.plan && mkdir -p %t/opt-mask/out-$m && \
// RUN:   partition-run %t/opt-mask/$m.plan --backend cpu --weights %t/opt-mask/w.safetensors --input input_ids=%t/opt-mask/input_ids.npy --input attention_mask=%t/opt-mask/attention_mask.npy --output-dir %t/opt-mask/out-$m > /dev/null && \
// RUN:   %python %S/../../e2e/Inputs/compare.py 5e-5 5e-5 %t/opt-mask/logits.npy %t/opt-mask/out-$m/logits.npy || exit 1; \
// RUN: done
// RUN: %python -c "import numpy as np, sys; sys.exit(0 if abs(np.load('%t/opt-mask/logits.npy') - np.load('%t/opt/logits.npy')).max() > 1e-3 else 1)"
//
// OPT's imported layers: causal attention over all 4 heads of 8
// dimensions. OPT scales the queries before the product (q_proj(x) *
// head_dim^-0.5), so the attention's own scale is 1. Nothing of the
// decomposed form is left: no softmax, no batch_matmul, no clamp.
// RUN: FileCheck %s --check-prefix=OPT < %t/opt/m.mlir
// OPT-NOT: part.softmax
// OPT-NOT: part.batch_matmul
// OPT-NOT: part.max {{.*}} -> tensor<2x4x8x8xf32>
// OPT: part.attention {{.*}} causal scale 1.000000e+00 {part.layer = 0 : i64} : (tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>) -> tensor<2x4x8x8xf32>
// OPT-NOT: part.softmax
// OPT-NOT: part.batch_matmul
// OPT-NOT: part.max {{.*}} -> tensor<2x4x8x8xf32>
// OPT: part.attention {{.*}} causal scale 1.000000e+00 {part.layer = 1 : i64}
// OPT-NOT: part.softmax
// OPT-NOT: part.batch_matmul
//
// Tensor parallelism splits OPT's attention by heads (4 -> 2 on dp:2,tp:2,
// 4 -> 1 on tp:4) and its MLP as Megatron does: two all-reduces over "tp"
// per layer (after out_proj and after fc2) plus one for the embeddings
// (2 layers: 5). Both lookups, of the tokens and of the learned positions
// (34 rows: 32 plus OPT's offset of 2, padded to 36 on tp:4), are
// vocabulary-parallel; each rank adds its partial token and position
// embeddings and one all-reduce sums them. Before part-raise handled the
// merged heads, the attention was replicated: 3.
// RUN: for m in dp:2,tp:2 tp:4; do \
// RUN:   grep -c 'part.all_reduce .*axes \["tp"\]' %t/opt/$m.mlir | FileCheck %s --check-prefix=FIVE || exit 1; \
// RUN: done
// FIVE: {{^5$}}
// RUN: FileCheck %s --check-prefix=TP2 < %t/opt/dp:2,tp:2.mlir
// TP2-COUNT-2: part.attention {{.*}} : (tensor<1x2x8x8xf32>, tensor<1x2x8x8xf32>, tensor<1x2x8x8xf32>)
// RUN: FileCheck %s --check-prefix=TP4 < %t/opt/tp:4.mlir
// TP4-COUNT-2: part.attention {{.*}} : (tensor<2x1x8x8xf32>, tensor<2x1x8x8xf32>, tensor<2x1x8x8xf32>)
//
// In BLOOM the ALiBi bias is added to the scores over [B * heads, S, S], so
// no part.attention is made, and part-raise says why.
// RUN: FileCheck %s --check-prefix=BLOOM < %t/bloom/m.mlir
// BLOOM-NOT: part.attention
// BLOOM-COUNT-2: part.softmax {{.*}} dim 3
// BLOOM-NOT: part.attention
// RUN: partition-opt %t/bloom/m.mlir --part-raise=report=true -o /dev/null 2>&1 | FileCheck %s --check-prefix=ALIBI
// ALIBI-COUNT-2: remark: not raised to part.attention: the scores are not a batch_matmul of queries and keys scaled by a constant
//
// Its attention is computed whole on every rank; only the MLP (one
// all-reduce per layer) and the embedding lookup are split: 3.
// RUN: for m in dp:2,tp:2 tp:4; do \
// RUN:   grep -c 'part.all_reduce .*axes \["tp"\]' %t/bloom/$m.mlir | FileCheck %s --check-prefix=THREE || exit 1; \
// RUN: done
// THREE: {{^3$}}
