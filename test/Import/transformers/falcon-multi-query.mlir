// Falcon's multi-query layout (FalconConfig(multi_query=True,
// new_decoder_architecture=False): 8 query heads and one key/value head in
// one query_key_value projection, viewed as [B, S, 8 + 2, d] and read by a
// slice and two gathers). part-split-fused-projections gives each block
// its own projection over a slice of the weight, so tensor parallelism
// splits the query heads (4 per rank on tp:2, 2 on tp:4) and every rank
// computes the one kv head. Attention and MLP read one LayerNorm in
// parallel, their partial sums are added before the residual: one
// all-reduce per layer, plus the vocabulary-parallel embedding (2 layers:
// 3). Logits against torch as in transformers.mlir.
//
// REQUIRES: transformers
// RUN: rm -rf %t && mkdir -p %t
// RUN: %ort_python %S/export_transformers.py falcon %t
// RUN: partition-import %t/falcon.onnx --dim batch=2 --dim seq=8 -o %t/m.mlir --weights %t/w.safetensors
// RUN: for m in dp:1 dp:2,tp:2 tp:4; do \
// RUN:   partition-opt %t/m.mlir --part-spmd="mesh=$m" -o %t/$m.mlir && \
// RUN:   partition-translate --part-to-plan %t/$m.mlir -o %t/$m.plan && mkdir -p %t/out-$m && \
// RUN:   partition-run %t/$m.plan --backend cpu --weights %t/w.safetensors --input input_ids=%t/input_ids.npy --output-dir %t/out-$m > /dev/null && \
// RUN:   %python %S/../../e2e/Inputs/compare.py 5e-5 5e-5 %t/logits.npy %t/out-$m/logits.npy || exit 1; \
// RUN: done
// RUN: grep -c 'part.all_reduce .*axes \["tp"' %t/dp:2,tp:2.mlir | FileCheck %s --check-prefix=THREE
// RUN: grep -c 'part.all_reduce .*axes \["tp"' %t/tp:4.mlir | FileCheck %s --check-prefix=THREE
// THREE: {{^3$}}
// RUN: FileCheck %s --check-prefix=TP2 < %t/dp:2,tp:2.mlir
// TP2-COUNT-2: part.attention {{.*}} : (tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>)
// RUN: FileCheck %s --check-prefix=TP4 < %t/tp:4.mlir
// TP4-COUNT-2: part.attention {{.*}} : (tensor<2x2x8x8xf32>, tensor<2x2x8x8xf32>, tensor<2x2x8x8xf32>)
