// IsNaN, IsInf and GatherND as torch 2.x exports them: SDPA's NaN guard
// Where(IsNaN(p), 0, p) on a run-time value, and transformers' mask lookup
// through aten.index (GatherND of a run-time mask or of host positions at
// indices built from the shape). Inputs/gathernd_isnan_model.py writes the
// model with symbolic dimensions and onnxruntime's outputs; the import
// binds them, the program runs on the CPU backend and every output must
// equal onnxruntime's exactly (same dtype, same values, infinities
// included): these ops only compare and move values.
//
// RUN: rm -rf %t && mkdir -p %t/out
// RUN: %ort_python %S/Inputs/gathernd_isnan_model.py %t
// RUN: partition-import %t/gathernd_isnan.onnx --dim batch=2 --dim seq=8 -o %t/m.mlir
// RUN: FileCheck %s < %t/m.mlir
// RUN: partition-opt %t/m.mlir --part-spmd=mesh=dp:1 | partition-translate --part-to-plan -o %t/p.plan
// RUN: partition-run %t/p.plan --input x=%t/x.npy --input m=%t/m.npy --input r=%t/r.npy --output-dir %t/out > /dev/null
// RUN: %python -c "import numpy as np, os, sys; \
// RUN:   names = sorted(os.listdir('%t/ref')); assert len(names) == 14, names; \
// RUN:   [np.testing.assert_array_equal(np.load('%t/out/' + f), np.load('%t/ref/' + f), f) or \
// RUN:    np.load('%t/out/' + f).dtype == np.load('%t/ref/' + f).dtype or sys.exit(f + ': dtype') \
// RUN:    for f in names]"
//
// IsNaN is x != x, and the NaN guard a select on it: the form attention
// raising matches.
// CHECK: %[[NAN:.*]] = part.compare ne, %arg0, %arg0 : (tensor<2x3x4xf32>, tensor<2x3x4xf32>) -> tensor<2x3x4xi32>
// CHECK: %[[ZERO:.*]] = part.constant dense<0.000000e+00> : tensor<f32>
// CHECK: part.select %[[NAN]], %[[ZERO]], %arg0
// IsInf: equality with each infinity detected.
// CHECK: %[[PINF:.*]] = part.constant dense<0x7F800000> : tensor<f32>
// CHECK: %[[ISP:.*]] = part.compare eq, %arg0, %[[PINF]]
// CHECK: %[[NINF:.*]] = part.constant dense<0xFF800000> : tensor<f32>
// CHECK: %[[ISN:.*]] = part.compare eq, %arg0, %[[NINF]]
// CHECK: part.max %[[ISP]], %[[ISN]]
// GatherND with constant indices: a gather of rows of the data viewed as
// [rows, rest] (negative indices counted from the end; batch_dims folded
// into the row numbers).
// CHECK: %[[ROWS:.*]] = part.constant dense<[1, 0, 1]> : tensor<3xi64>
// CHECK: part.gather %arg0, %[[ROWS]] axis 0 : (tensor<2x3x4xf32>, tensor<3xi64>) -> tensor<3x3x4xf32>
// CHECK: %[[FLAT:.*]] = part.reshape %arg0 : tensor<2x3x4xf32> -> tensor<24xf32>
// CHECK: %[[ELEMS:.*]] = part.constant dense<[11, 20]> : tensor<2xi64>
// CHECK: part.gather %[[FLAT]], %[[ELEMS]] axis 0 : (tensor<24xf32>, tensor<2xi64>) -> tensor<2xf32>
// CHECK: %[[VIEW:.*]] = part.reshape %arg0 : tensor<2x3x4xf32> -> tensor<6x4xf32>
// CHECK: %[[BATCH:.*]] = part.constant dense<{{\[\[}}2, 0], [4, 4]]> : tensor<2x2xi64>
// CHECK: part.gather %[[VIEW]], %[[BATCH]] axis 0 : (tensor<6x4xf32>, tensor<2x2xi64>) -> tensor<2x2x4xf32>
// Run-time indices of one component: a gather along dimension 0 at the
// indices, each negative one shifted by the dimension's size.
// CHECK: %[[COL:.*]] = part.reshape %arg2 : tensor<3xi64> -> tensor<3x1xi64>
// CHECK: %[[IDS:.*]] = part.reshape %[[COL]] : tensor<3x1xi64> -> tensor<3xi64>
// CHECK: %[[SHIFTED:.*]] = part.add %[[IDS]], %{{.*}} : (tensor<3xi64>, tensor<3xi64>) -> tensor<3xi64>
// CHECK: part.gather %{{.*}}, %[[SHIFTED]] axis 0 : (tensor<2x3x4xf32>, tensor<3xi64>) -> tensor<3x3x4xf32>
// The mask lookup reads every element once, in order: no gather.
// CHECK: %[[MASK:.*]] = part.compare ne, %arg1
// CHECK-NEXT: part.cast %[[MASK]] : tensor<2x8xi32> -> tensor<2x8xi64>
// Folded at import: IsNaN of a constant, GatherND of host positions.
// CHECK: part.constant dense<[1.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00]> : tensor<4xf32>
// CHECK: part.constant dense<{{\[\[}}1, 2, 3, 4, 5, 6, 7, 8], [1, 2, 3, 4, 5, 6, 7, 8]]> : tensor<2x8xi64>
// CHECK-NOT: part.gather
