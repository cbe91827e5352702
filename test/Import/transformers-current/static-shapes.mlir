// Llama exported by torch 2.x's dynamo exporter with fixed shapes
// (export_current.py --static: batch 2, sequence 8, no dynamic_shapes): the
// exporter folds them into constants (the causal mask is an initializer
// [2, 1, 8, 8]), so the file serves only those shapes. partition-import
// says so when asked for another, and in its parameter report; the shapes
// the file has import and run as torch does.
// REQUIRES: current-transformers
// UNSUPPORTED: sanitized
// RUN: rm -rf %t && mkdir -p %t
// RUN: %current_python %S/export_current.py llama %t --static > /dev/null 2>&1
// RUN: not partition-import %t/llama.onnx --shape input_ids=4x8 -o %t/m.mlir 2>&1 | FileCheck %s --check-prefix=OTHER
// OTHER: llama.onnx: error: --shape input_ids=4x8: input 'input_ids', dimension 0 is fixed at 2 by the model, not 4; the model's inputs are fixed at input_ids [2, 8], and the file serves only these shapes {{.*}}; to serve others, export with dynamic shapes: torch.onnx.export(..., dynamic_shapes=...)
// RUN: not partition-import %t/llama.onnx --dim s72=4 -o %t/m.mlir 2>&1 | FileCheck %s --check-prefix=DIM
// DIM: error: --dim s72=4 names no symbolic dimension of the model's inputs; the model's inputs are fixed at input_ids [2, 8]
// RUN: partition-import %t/llama.onnx --shape input_ids=2x8 --report-parameters -o %t/m.mlir --weights %t/w.safetensors 2>&1 | FileCheck %s --check-prefix=REPORT
// REPORT: remark: initializer '{{.*}}' [2, 1, 8, 8]: constant: folded by the exporter
// REPORT: remark: the model's inputs are fixed at input_ids [2, 8], and the file serves only these shapes
// RUN: partition-opt %t/m.mlir --part-spmd="mesh=dp:1" | partition-translate --part-to-plan -o %t/m.plan && mkdir -p %t/out
// RUN: partition-run %t/m.plan --backend cpu --weights %t/w.safetensors --input input_ids=%t/input_ids.npy --output-dir %t/out > /dev/null
// RUN: %python %S/../../e2e/Inputs/compare.py 5e-5 5e-5 %t/logits.npy %t/out/logits.npy
