// The routing ops of a mixture of experts (TopK, OneHot, ScatterElements,
// NonZero) folded on constants, OneHot on a run-time input as a compare
// with a constant iota and a select, and TopK on a run-time input as
// part.top_k. Inputs/routing_model.py writes the
// model and onnxruntime's outputs; the program runs on the CPU backend and
// every output must equal onnxruntime's exactly (same dtype, same values):
// these ops only compare, pick and add small integers.
//
// RUN: rm -rf %t && mkdir -p %t/out
// RUN: %ort_python %S/Inputs/routing_model.py %t 2> /dev/null
// RUN: partition-import %t/routing.onnx -o %t/m.mlir
// RUN: FileCheck %s < %t/m.mlir
// RUN: partition-opt %t/m.mlir --part-spmd=mesh=dp:1 | partition-translate --part-to-plan -o %t/p.plan
// RUN: partition-run %t/p.plan --input idx=%t/idx.npy --output-dir %t/out > /dev/null
// RUN: %python -c "import numpy as np, os, sys; \
// RUN:   names = sorted(os.listdir('%t/ref')); assert len(names) == 16, names; \
// RUN:   [np.testing.assert_array_equal(np.load('%t/out/' + f), np.load('%t/ref/' + f), f) or \
// RUN:    np.load('%t/out/' + f).dtype == np.load('%t/ref/' + f).dtype or sys.exit(f + ': dtype') \
// RUN:    for f in names]"
//
// OneHot at run time: index == j or index == j - depth, for the iota j
// along the new axis.
// CHECK: %[[IDX:.*]] = part.reshape %arg0 : tensor<2x3xi64> -> tensor<2x3x1xi64>
// CHECK: %[[IOTA:.*]] = part.constant dense<{{\[\[\[}}0, 1, 2, 3]]]> : tensor<1x1x4xi64>
// CHECK: %[[EQ:.*]] = part.compare eq, %[[IDX]], %[[IOTA]]
// CHECK: %[[NEG:.*]] = part.compare eq, %[[IDX]], %{{.*}}
// CHECK: %[[HOT:.*]] = part.max %[[EQ]], %[[NEG]]
// CHECK: part.select %[[HOT]], %{{.*}}, %{{.*}} : (tensor<2x3x4xi32>, tensor<f32>, tensor<f32>) -> tensor<2x3x4xf32>
// CHECK: part.compare eq, %{{.*}} : (tensor<1x2x3xi64>, tensor<4x1x1xi64>) -> tensor<4x2x3xi32>
// Run-time TopK: the largest two along the last axis; the smallest along
// axis 0 as the largest of the negated values, transposed last and back.
// CHECK: %{{.*}}, %{{.*}} = part.top_k %{{.*}} : (tensor<2x3xf32>) -> (tensor<2x2xf32>, tensor<2x2xi64>)
// CHECK: %[[T:.*]] = part.transpose %{{.*}} [1, 0] : tensor<2x3xf32> -> tensor<3x2xf32>
// CHECK: %[[N:.*]] = part.neg %[[T]]
// CHECK: %[[LV:.*]], %[[LI:.*]] = part.top_k %[[N]] : (tensor<3x2xf32>) -> (tensor<3x1xf32>, tensor<3x1xi64>)
// CHECK: part.neg %[[LV]]
// The rest is folded.
// CHECK-NOT: part.gather
