// GPT-2 exported with do_constant_folding=False (export_transformers.py
// --no-fold): c_attn is a Gemm on [B * S, in], a Reshape to [B, S, 3 E] and
// a Split whose sizes are an input. part-split-fused-projections still
// finds the [Q | K | V] blocks: tp:2 and tp:4 give each rank whole heads,
// two all-reduces per layer plus the vocabulary-parallel embedding's.
//
// REQUIRES: transformers
// RUN: rm -rf %t && mkdir -p %t
// RUN: %ort_python %S/export_transformers.py gpt2 %t --no-fold
// RUN: partition-import %t/gpt2.onnx --dim batch=2 --dim seq=8 -o %t/m.mlir --weights %t/w.safetensors
// RUN: for m in dp:1 dp:2,tp:2 tp:4; do \
// RUN:   partition-opt %t/m.mlir --part-spmd="mesh=$m" -o %t/$m.mlir && \
// RUN:   partition-translate --part-to-plan %t/$m.mlir -o %t/$m.plan && mkdir -p %t/out-$m && \
// RUN:   partition-run %t/$m.plan --backend cpu --weights %t/w.safetensors --input input_ids=%t/input_ids.npy --output-dir %t/out-$m > /dev/null && \
// RUN:   %python %S/../../e2e/Inputs/compare.py 5e-5 5e-5 %t/logits.npy %t/out-$m/logits.npy || exit 1; \
// RUN: done
// RUN: grep -c 'part.all_reduce .*axes \["tp"\]' %t/dp:2,tp:2.mlir | FileCheck %s --check-prefix=FIVE
// RUN: grep -c 'part.all_reduce .*axes \["tp"\]' %t/tp:4.mlir | FileCheck %s --check-prefix=FIVE
// FIVE: {{^5$}}
// RUN: FileCheck %s --check-prefix=TP2 < %t/dp:2,tp:2.mlir
// TP2-COUNT-2: part.attention {{.*}} : (tensor<1x2x8x8xf32>, tensor<1x2x8x8xf32>, tensor<1x2x8x8xf32>)
