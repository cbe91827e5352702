// Comparisons, boolean logic and casts to bool on values the program
// computes (exporters make masks this way from an attention_mask input):
// Inputs/logic_model.py's graph, imported, run on the CPU backend and
// compared exactly with numpy. Booleans are i32 0 / 1 in part: a cast to
// bool is `!= 0` (so an int 2 is true and NaN is true, as in ONNX), Not is
// 1 - x, And a product, Or a maximum, Xor an inequality.
//
// RUN: rm -rf %t && mkdir -p %t/out
// RUN: %python %S/Inputs/logic_model.py %t
// RUN: partition-import %t/logic.onnx -o %t/m.mlir
// RUN: FileCheck %s < %t/m.mlir
// RUN: partition-opt %t/m.mlir --part-spmd=mesh=dp:1 | partition-translate --part-to-plan -o %t/p.plan
// RUN: partition-run %t/p.plan --input x=%t/x.npy --input m=%t/m.npy --output-dir %t/out > /dev/null
// RUN: for n in nonzero notm inside outside differ chosen; do \
// RUN:   %python %S/../../e2e/Inputs/compare.py 0 0 %t/ref/$n.npy %t/out/$n.npy || exit 1; \
// RUN: done
//
// CHECK: %[[XB:.*]] = part.compare ne, %arg0, %{{.*}} : (tensor<2x4xf32>, tensor<f32>) -> tensor<2x4xi32>
// CHECK: %[[MB:.*]] = part.compare ne, %arg1, %{{.*}} : (tensor<2x4xi64>, tensor<i64>) -> tensor<2x4xi32>
// CHECK: part.sub %{{.*}}, %[[MB]] : (tensor<i32>, tensor<2x4xi32>) -> tensor<2x4xi32>
// CHECK: %[[GT:.*]] = part.compare gt, %arg0
// CHECK: %[[LT:.*]] = part.compare lt, %arg0
// CHECK: part.mul %[[GT]], %[[LT]] : (tensor<2x4xi32>, tensor<2x4xi32>) -> tensor<2x4xi32>
// CHECK: %[[LE:.*]] = part.compare le, %arg0
// CHECK: %[[GE:.*]] = part.compare ge, %arg0
// CHECK: part.max %[[LE]], %[[GE]]
// CHECK: %[[EQ:.*]] = part.compare eq, %arg1
// CHECK: part.compare ne, %[[EQ]], %[[GT]]
// CHECK: part.select %[[MB]], %arg0, %{{.*}}
