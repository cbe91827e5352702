// Trainability and names from torch.export's metadata (the dynamo
// exporter): a parameter keeps its module name; a Linear weight the
// exporter folded into a transposed copy (val_7) is named after the
// parameter its user's torch node reads; a buffer and a value folded from
// no parameter (a mask) are constants, not parameters.
//
// REQUIRES: current-transformers
// RUN: rm -rf %t && mkdir -p %t
// RUN: %current_python %S/Inputs/make_torch_export.py %t
// RUN: partition-import %t/torch-export.onnx --report-parameters -o %t/m.mlir 2> %t/report.txt
// RUN: FileCheck %s < %t/m.mlir
// RUN: FileCheck %s --check-prefix=REPORT < %t/report.txt
//
// CHECK-LABEL: func.func @main(
// CHECK-SAME: {part.name = "x", part.role = #part.role<input>}
// CHECK-SAME: tensor<4xf32> {part.name = "norm.weight", part.role = #part.role<parameter>}
// CHECK-SAME: tensor<4x4xf32> {part.name = "lin.weight", part.role = #part.role<parameter>})
// CHECK-NOT: part.role<parameter>
// CHECK-DAG: part.constant dense<{{.*}}> : tensor<4xf32>
// CHECK-DAG: part.constant dense<{{.*}}> : tensor<2x4xf32>
//
// REPORT-DAG: initializer 'norm.weight' [4]: parameter
// REPORT-DAG: initializer 'val_7' [4, 4]: parameter 'lin.weight'
// REPORT-DAG: initializer 'rope.inv_freq' [4]: constant: torch.export lists it as a buffer ('rope.inv_freq')
// REPORT-DAG: initializer 'val_9' [2, 4]: constant: folded by the exporter; the torch nodes using it read no parameter
