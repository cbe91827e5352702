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
// RUN: for m in dp:1 tp:2 dp:2,tp:2 tp:4; do \
// RUN:   partition-opt %t/m.mlir --part-spmd="mesh=$m" -o %t/$m.mlir && \
// RUN:   partition-translate --part-to-plan %t/$m.mlir -o %t/$m.plan && mkdir -p %t/out-$m && \
// RUN:   partition-run %t/$m.plan --backend cpu --weights %t/w.safetensors --input input_ids=%t/input_ids.npy --output-dir %t/out-$m > /dev/null && \
// RUN:   %python %S/../../e2e/Inputs/compare.py 5e-5 5e-5 %t/logits.npy %t/out-$m/logits.npy || exit 1; \
// RUN: done
// RUN: grep -c 'part.all_reduce .*axes \["tp"\]' %t/tp:2.mlir | FileCheck %s --check-prefix=FIVE
// RUN: grep -c 'part.all_reduce .*axes \["tp"\]' %t/dp:2,tp:2.mlir | FileCheck %s --check-prefix=FIVE
// RUN: grep -c 'part.all_reduce .*axes \["tp"\]' %t/tp:4.mlir | FileCheck %s --check-prefix=FIVE
// FIVE: {{^5$}}
// RUN: FileCheck %s --check-prefix=TP2 < %t/tp:2.mlir
// TP2-COUNT-2: part.attention {{.*}} : (tensor<2x2x8x8xf32>, tensor<2x2x8x8xf32>, tensor<2x2x8x8xf32>)
// RUN: FileCheck %s --check-prefix=DPTP2 < %t/dp:2,tp:2.mlir
// DPTP2-COUNT-2: part.attention {{.*}} : (tensor<1x2x8x8xf32>, tensor<1x2x8x8xf32>, tensor<1x2x8x8xf32>)
//
// The tp:2 program against onnxruntime running the same file, on the
// reference's own seeded tokens (same tolerance):
// RUN: %ort_python %S/../models/reference.py %t/gpt2.onnx %t/ort --dim batch=2 --dim seq=8 --range input_ids=0:96 > /dev/null
// RUN: mkdir -p %t/out-ort && partition-run %t/tp:2.plan --backend cpu --weights %t/w.safetensors --input input_ids=%t/ort/input_ids.npy --output-dir %t/out-ort > /dev/null
// RUN: %python %S/../../e2e/Inputs/compare.py 5e-5 5e-5 %t/ort/logits.npy %t/out-ort/logits.npy
//
// The other forms of the same projection (Inputs/fused_forms.py): c_attn as
// MatMul + Add, the Split's sizes an initializer. Split the same way:
// RUN: %ort_python %S/Inputs/fused_forms.py %t/gpt2.onnx %t/forms.onnx
// RUN: partition-import %t/forms.onnx --shape input_ids=2x8 -o %t/forms.mlir --weights %t/forms.safetensors
// RUN: partition-opt %t/forms.mlir --part-spmd="mesh=tp:2" -o %t/forms-tp2.mlir
// RUN: grep -c 'part.all_reduce .*axes \["tp"\]' %t/forms-tp2.mlir | FileCheck %s --check-prefix=FIVE
// RUN: partition-translate --part-to-plan %t/forms-tp2.mlir -o %t/forms-tp2.plan && mkdir -p %t/out-forms
// RUN: partition-run %t/forms-tp2.plan --backend cpu --weights %t/forms.safetensors --input input_ids=%t/input_ids.npy --output-dir %t/out-forms > /dev/null
// RUN: %python %S/../../e2e/Inputs/compare.py 5e-5 5e-5 %t/logits.npy %t/out-forms/logits.npy
//
// Attention left decomposed (--no-raise) or the projection left fused
// (part-raise without part-split-fused-projections) stays replicated on
// tp:2: one all-reduce per layer, not two, and a remark and a line of
// --part-explain per layer say why.
// RUN: partition-import %t/gpt2.onnx --shape input_ids=2x8 --no-raise -o %t/no-raise.mlir
// RUN: partition-opt %t/no-raise.mlir --part-spmd="mesh=tp:2" --part-explain -o %t/no-raise-tp2.mlir 2>/dev/null | FileCheck %s --check-prefix=DECOMPOSED
// DECOMPOSED-COUNT-2: func @main: attention stays replicated over tp (size 2): it is decomposed (a softmax of the part.batch_matmul at {{.*}}, not a part.attention; {{.*}}), and its queries are a slice (tensor<2x8x32xf32> of tensor<2x8x96xf32>) of the fused projection at
// DECOMPOSED-NOT: stays replicated
// RUN: grep -c 'part.all_reduce .*axes \["tp"\]' %t/no-raise-tp2.mlir | FileCheck %s --check-prefix=THREE
// THREE: {{^3$}}
// RUN: partition-opt %t/no-raise.mlir --part-raise -o %t/unsplit.mlir
// RUN: partition-opt %t/unsplit.mlir --part-spmd="mesh=tp:2" --part-explain -o %t/unsplit-tp2.mlir 2>/dev/null | FileCheck %s --check-prefix=UNSPLIT
// UNSPLIT-COUNT-2: func @main: attention stays replicated over tp (size 2): its queries are a slice (tensor<2x8x32xf32> of tensor<2x8x96xf32>) of the fused projection at
// UNSPLIT-NOT: stays replicated
// RUN: grep -c 'part.all_reduce .*axes \["tp"\]' %t/unsplit-tp2.mlir | FileCheck %s --check-prefix=THREE
