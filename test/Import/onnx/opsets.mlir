// The input forms of ONNX opset 18, at opsets 18 and 21 (make_models.py's
// opsets-opset*.onnx on x [batch, 6, 8]): ReduceMean / ReduceSum / ReduceMax
// with their axes as an input (an int64 initializer, Constant nodes,
// unsorted, negative), ReduceMax without axes (every axis), ReduceSum with
// noop_with_empty_axes, and Split by num_outputs, evenly (6 = 3 + 3) and not
// (8 = 3 + 3 + 2: the last chunk is the smaller one). Imported with batch 3,
// run on the CPU backend, and compared with float64 numpy
// (Inputs/opsets_reference.py).
//
// Tolerances. max, maxall, noop and split only select or negate f32 values:
// compared exactly. mean (8 terms), sum (6 terms) and halves (one
// subtraction) round: a sum of n f32 terms, in any order, is within
// (n - 1) 2^-24 sum|x_i| of the exact one; with this input (seed 1, |x| <
// 2.8, sum|x_i| at most 11.6 over 8 and 7.2 over 6) that is 6.1e-8 for mean
// (plus the division, one rounding) and 2.2e-7 for sum, and halves is one
// rounding (2^-24 |y|), so 1e-6 absolute + 1e-6 relative holds them
// (measured: 1.3e-8, 1.1e-7, 1.2e-7). A wrong axis,
// keepdims, noop or chunk changes a shape or moves values by O(0.1).
//
// RUN: rm -rf %t && mkdir -p %t/ref
// RUN: %python %S/Inputs/make_models.py %t
// RUN: %python -c "import numpy as np; np.save('%t/x.npy', np.random.default_rng(1).standard_normal((3, 6, 8)).astype(np.float32))"
// RUN: %python %S/Inputs/opsets_reference.py %t/x.npy %t/ref
// RUN: for o in 18 21; do \
// RUN:   partition-import %t/opsets-opset$o.onnx --dim batch=3 -o %t/m$o.mlir && \
// RUN:   FileCheck %s < %t/m$o.mlir && \
// RUN:   partition-opt %t/m$o.mlir --part-spmd="mesh=dp:1" | partition-translate --part-to-plan -o %t/$o.plan && \
// RUN:   mkdir -p %t/out$o && \
// RUN:   partition-run %t/$o.plan --backend cpu --input x=%t/x.npy --output-dir %t/out$o > /dev/null && \
// RUN:   for y in max maxall noop split; do \
// RUN:     %python %S/../../e2e/Inputs/compare.py 0 0 %t/ref/$y.npy %t/out$o/$y.npy || exit 1; \
// RUN:   done && \
// RUN:   for y in mean sum halves; do \
// RUN:     %python %S/../../e2e/Inputs/compare.py 1e-6 1e-6 %t/ref/$y.npy %t/out$o/$y.npy || exit 1; \
// RUN:   done || exit 1; \
// RUN: done
//
// The axes are constants, not parameters: x is the only argument.
// CHECK-LABEL: func.func @main(
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<3x6x8xf32> {part.name = "x", part.role = #part.role<input>})
// CHECK-SAME: -> (tensor<3x6x1xf32> {part.name = "mean"}, tensor<3x8xf32> {part.name = "sum"}, tensor<3xf32> {part.name = "max"}, tensor<1x1x1xf32> {part.name = "maxall"}, tensor<3x6x8xf32> {part.name = "noop"}, tensor<3x6x8xf32> {part.name = "split"}, tensor<3x3x8xf32> {part.name = "halves"})
// CHECK-NEXT: %[[MEAN:.*]] = part.reduce_mean %[[X]] dims [2] keep_dims : tensor<3x6x8xf32> -> tensor<3x6x1xf32>
// CHECK-NEXT: %[[SUM:.*]] = part.reduce_sum %[[X]] dims [1] : tensor<3x6x8xf32> -> tensor<3x8xf32>
// CHECK-NEXT: %[[MAX:.*]] = part.reduce_max %[[X]] dims [1, 2] : tensor<3x6x8xf32> -> tensor<3xf32>
// CHECK-NEXT: %[[ALL:.*]] = part.reduce_max %[[X]] dims [0, 1, 2] keep_dims : tensor<3x6x8xf32> -> tensor<1x1x1xf32>
// noop_with_empty_axes: the negation is the output, nothing reduced.
// CHECK-NEXT: %[[NOOP:.*]] = part.neg %[[X]] : tensor<3x6x8xf32>
// CHECK-NEXT: %[[S0:.*]] = part.slice %[[X]] offsets [0, 0, 0] : tensor<3x6x8xf32> -> tensor<3x6x3xf32>
// CHECK-NEXT: %[[S1:.*]] = part.slice %[[X]] offsets [0, 0, 3] : tensor<3x6x8xf32> -> tensor<3x6x3xf32>
// CHECK-NEXT: %[[S2:.*]] = part.slice %[[X]] offsets [0, 0, 6] : tensor<3x6x8xf32> -> tensor<3x6x2xf32>
// CHECK-NEXT: %[[CAT:.*]] = part.concat %[[S2]], %[[S0]], %[[S1]] dim 2
// CHECK-NEXT: %[[H0:.*]] = part.slice %[[X]] offsets [0, 0, 0] : tensor<3x6x8xf32> -> tensor<3x3x8xf32>
// CHECK-NEXT: %[[H1:.*]] = part.slice %[[X]] offsets [0, 3, 0] : tensor<3x6x8xf32> -> tensor<3x3x8xf32>
// CHECK-NEXT: %[[SUB:.*]] = part.sub %[[H0]], %[[H1]]
// CHECK-NEXT: return %[[MEAN]], %[[SUM]], %[[MAX]], %[[ALL]], %[[NOOP]], %[[CAT]], %[[SUB]] :
