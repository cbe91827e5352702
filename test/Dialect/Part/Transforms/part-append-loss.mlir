// RUN: partition-opt %s --split-input-file --part-append-loss | FileCheck %s
// RUN: partition-opt %s --split-input-file --part-append-loss="kind=mse" | FileCheck %s --check-prefix=MSE
// RUN: partition-opt %s --split-input-file --part-append-loss="output=hidden" | FileCheck %s --check-prefix=NAMED

// CHECK-LABEL: func.func @lm(
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<2x8x16xf32> {part.name = "x", part.role = #part.role<input>}
// CHECK-SAME: %[[L:[a-z0-9]+]]: tensor<2x8xi32> {part.name = "labels", part.role = #part.role<label>})
// CHECK-SAME: -> (tensor<f32> {part.name = "loss"})
// CHECK: %[[Y:.*]] = part.relu %[[X]]
// CHECK: %[[LOSS:.*]] = part.softmax_cross_entropy %[[Y]], %[[L]] mean : (tensor<2x8x16xf32>, tensor<2x8xi32>) -> tensor<f32>
// CHECK: return %[[LOSS]] : tensor<f32>
// MSE-LABEL: func.func @lm(
// MSE-SAME: %[[T:[a-z0-9]+]]: tensor<2x8x16xf32> {part.name = "targets", part.role = #part.role<label>})
// MSE: %[[D:.*]] = part.sub %{{.*}}, %[[T]]
// MSE: %[[S:.*]] = part.mul %[[D]], %[[D]]
// MSE: %[[M:.*]] = part.reduce_mean %[[S]] dims [0, 1, 2] : tensor<2x8x16xf32> -> tensor<f32>
// MSE: return %[[M]] : tensor<f32>
func.func @lm(%x: tensor<2x8x16xf32> {part.name = "x", part.role = #part.role<input>}) -> (tensor<2x8x16xf32> {part.name = "hidden"}) {
  %0 = part.relu %x : tensor<2x8x16xf32>
  return %0 : tensor<2x8x16xf32>
}

// -----

// The loss reads the named output; the other outputs are dropped, and a
// bf16 output is cast to f32 first.
// NAMED-LABEL: func.func @two
// NAMED-SAME: -> (tensor<f32> {part.name = "loss"})
// NAMED: %[[C:.*]] = part.cast %{{.*}} : tensor<4x10xbf16> -> tensor<4x10xf32>
// NAMED: part.softmax_cross_entropy %[[C]]
func.func @two(%x: tensor<4x10xbf16> {part.name = "x", part.role = #part.role<input>}) -> (tensor<4x1xbf16> {part.name = "pooled"}, tensor<4x10xbf16> {part.name = "hidden"}) {
  %0 = part.reduce_sum %x dims [1] keep_dims : tensor<4x10xbf16> -> tensor<4x1xbf16>
  return %0, %x : tensor<4x1xbf16>, tensor<4x10xbf16>
}

// -----

// A 0-d result with part.loss_weight (a load-balancing loss) is added,
// weighted, to the loss; the other results are dropped.
// CHECK-LABEL: func.func @aux(
// CHECK-SAME: -> (tensor<f32> {part.name = "loss"})
// CHECK: %[[CE:.*]] = part.softmax_cross_entropy
// CHECK: %[[W:.*]] = part.constant dense<2.000000e-02> : tensor<f32>
// CHECK: %[[A:.*]] = part.mul %{{.*}}, %[[W]]
// CHECK: %[[L:.*]] = part.add %[[CE]], %[[A]]
// CHECK: return %[[L]] : tensor<f32>
func.func @aux(%x: tensor<2x8x16xf32> {part.name = "x", part.role = #part.role<input>})
    -> (tensor<2x8x16xf32> {part.name = "hidden"}, tensor<f32> {part.name = "aux_loss", part.loss_weight = 2.000000e-02 : f64}) {
  %0 = part.relu %x : tensor<2x8x16xf32>
  %1 = part.reduce_sum %0 dims [0, 1, 2] : tensor<2x8x16xf32> -> tensor<f32>
  return %0, %1 : tensor<2x8x16xf32>, tensor<f32>
}
