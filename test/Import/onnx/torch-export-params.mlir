// Trainability and names from torch.export's metadata (the dynamo
// exporter): a parameter keeps its module name; a Linear weight the
// exporter folded into a transposed copy (val_7) is named after the
// parameter its user's torch node reads, and keeps torch's layout: the
// program reads [in, out], the weights file holds [out, in]
// (part.stored_permutation); a buffer and a value folded from no parameter
// (a mask) are constants, not parameters.
//
// REQUIRES: current-transformers
// RUN: rm -rf %t && mkdir -p %t
// RUN: %current_python %S/Inputs/make_torch_export.py %t
// RUN: partition-import %t/torch-export.onnx --report-parameters -o %t/m.mlir --weights %t/w.safetensors 2> %t/report.txt
// RUN: FileCheck %s < %t/m.mlir
// RUN: FileCheck %s --check-prefix=REPORT < %t/report.txt
// RUN: %current_python %S/Inputs/check_weights.py %t/w.safetensors %t/torch-export-weights.npz
//
// CHECK-LABEL: func.func @main(
// CHECK-SAME: {part.name = "x", part.role = #part.role<input>}
// CHECK-SAME: tensor<4xf32> {part.name = "norm.weight", part.role = #part.role<parameter>}
// CHECK-SAME: tensor<4x4xf32> {part.name = "lin.weight", part.role = #part.role<parameter>, part.stored_permutation = array<i64: 1, 0>, part.stored_shape = array<i64: 4, 4>})
// CHECK-NOT: part.role<parameter>
// CHECK-DAG: part.constant dense<{{.*}}> : tensor<4xf32>
// CHECK-DAG: part.constant dense<{{.*}}> : tensor<2x4xf32>
//
// REPORT-DAG: initializer 'norm.weight' [4]: parameter
// REPORT-DAG: initializer 'val_7' [4, 4]: parameter 'lin.weight'
// REPORT-DAG: initializer 'rope.inv_freq' [4]: constant: torch.export lists it as a buffer ('rope.inv_freq')
// REPORT-DAG: initializer 'val_9' [2, 4]: constant: folded by the exporter; the torch nodes using it read no parameter
//
// The user decides over the export: --frozen keeps a parameter constant
// (by its file name or its module name), --trainable trains a buffer; a
// pattern that matches no initializer is an error, not a silent no-op.
// RUN: partition-import %t/torch-export.onnx --report-parameters --frozen 'lin.*' --trainable 'rope.*' -o %t/o.mlir 2> %t/override.txt
// RUN: FileCheck %s --check-prefix=OVERRIDE < %t/o.mlir
// RUN: FileCheck %s --check-prefix=OVERRIDE-REPORT < %t/override.txt
// OVERRIDE-LABEL: func.func @main(
// OVERRIDE-SAME: tensor<4xf32> {part.name = "norm.weight", part.role = #part.role<parameter>}
// OVERRIDE-SAME: tensor<4xf32> {part.name = "rope.inv_freq", part.role = #part.role<parameter>})
// OVERRIDE-REPORT-DAG: initializer 'val_7' [4, 4]: constant: --frozen 'lin.*'
// OVERRIDE-REPORT-DAG: initializer 'rope.inv_freq' [4]: parameter: --trainable 'rope.*' (the export says torch.export lists it as a buffer ('rope.inv_freq'))
// RUN: not partition-import %t/torch-export.onnx --frozen 'nothing.*' --trainable '[' -o %t/x.mlir 2>&1 | FileCheck %s --check-prefix=UNUSED
// UNUSED-DAG: error: --frozen 'nothing.*' matches no initializer
// UNUSED-DAG: error: --trainable '[' is not a glob pattern ({{.*}}), so it matches no initializer

// The legacy exporter's folded Linear weight (onnx::MatMul_5, [in, out],
// read as a MatMul's B) takes its module's name and torch's layout too;
// the plan carries the layout, and a run reads the file's [out, in].
// RUN: partition-import %t/legacy.onnx -o %t/legacy.mlir --weights %t/legacy.safetensors
// RUN: FileCheck %s --check-prefix=LEGACY < %t/legacy.mlir
// RUN: %current_python %S/Inputs/check_weights.py %t/legacy.safetensors %t/legacy-weights.npz
// LEGACY-LABEL: func.func @main(
// LEGACY-SAME: tensor<4x3xf32> {part.name = "lin.weight", part.role = #part.role<parameter>, part.stored_permutation = array<i64: 1, 0>, part.stored_shape = array<i64: 3, 4>})
// RUN: partition-opt %t/legacy.mlir --part-spmd=mesh=dp:1 | partition-translate --part-to-plan -o %t/legacy.plan
// RUN: partition-run %t/legacy.plan --dump | FileCheck %s --check-prefix=DUMP
// DUMP: param "lin.weight" %{{[0-9]+}} : f32[4, 3] of global [4, 3] sharded [{}, {}] stored as [3, 4] permuted [1, 0]
// RUN: mkdir -p %t/legacy-out
// RUN: partition-run %t/legacy.plan --backend cpu --weights %t/legacy.safetensors --input x=%t/legacy-x.npy --output-dir %t/legacy-out > /dev/null
// RUN: %python %S/../../e2e/Inputs/compare.py 1e-6 1e-6 %t/legacy-y.npy %t/legacy-out/y.npy
