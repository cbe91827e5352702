// RUN: partition-opt %s --part-remake-in-backward | FileCheck %s

part.mesh @mesh = <["tp"=2]>

// Two layers' step as part-partition leaves it under sequence parallelism:
// layer 0's norm input widened to f32, its output gathered over tp for the
// matmul; backward reads the f32 copy (the norm's derivative) and the
// gathered input (the weight gradient) after layer 1's forward and
// backward ran. After the pass forward keeps the bf16 value and the shard:
// backward gathers again where layer 0's backward begins (as part of layer
// 0) and widens again right before the reader. The loss's f32 copy, which
// backward reads as it begins, is kept: remaking it would hold the bf16
// value and the copy at once.
// CHECK-LABEL: func.func @layers(
// CHECK: %[[W:.*]] = part.cast %arg0 : tensor<2x4x8xbf16> -> tensor<2x4x8xf32>
// CHECK-NEXT: %[[N:.*]] = part.exp %[[W]]
// CHECK-NEXT: %[[S:.*]] = part.cast %[[N]] {{.*}}-> tensor<2x4x8xbf16>
// CHECK-NEXT: %[[G:.*]] = part.all_gather %[[S]] on @mesh axes ["tp"] dim 1 :
// CHECK-NEXT: %[[Y:.*]] = part.matmul %[[G]], %arg1
// CHECK-NEXT: %[[Z:.*]] = part.exp %[[Y]] {part.layer = 1 : i64}
// CHECK-NEXT: %[[LW:.*]] = part.cast %[[Z]] : tensor<2x8x8xbf16> -> tensor<2x8x8xf32>
// CHECK-NEXT: %[[L:.*]] = part.reduce_sum %[[LW]]
// CHECK-NEXT: %[[DL:.*]] = part.mul %[[LW]], %[[LW]]
// CHECK-NEXT: %[[DZ:.*]] = part.exp %arg2 {part.layer = 1 : i64}
// CHECK-NEXT: %[[G2:.*]] = part.all_gather %[[S]] on @mesh axes ["tp"] dim 1 {part.layer = 0 : i64, part.origin = "gathered again for backward, which keeps the shard (part-remake-in-backward)"}
// CHECK-NEXT: %[[DX:.*]] = part.matmul %[[DZ]], %arg1 transpose_b {part.layer = 0 : i64}
// CHECK-NEXT: %[[R:.*]] = part.reshape %[[G2]] {part.layer = 0 : i64}
// CHECK-NEXT: %[[RDY:.*]] = part.reshape %[[DZ]]
// CHECK-NEXT: %[[DW:.*]] = part.matmul %[[R]], %[[RDY]] transpose_a {part.layer = 0 : i64}
// CHECK-NEXT: %[[W2:.*]] = part.cast %arg0 {part.origin = "widened again for backward, which keeps the narrow value (part-remake-in-backward)"} : tensor<2x4x8xbf16> -> tensor<2x4x8xf32>
// CHECK-NEXT: %[[DN:.*]] = part.mul %[[W2]], %[[W2]] {part.layer = 0 : i64}
// CHECK-NEXT: return %[[L]], %[[DW]], %[[DN]], %[[DX]], %[[DL]]
func.func @layers(
    %x: tensor<2x4x8xbf16> {part.name = "x", part.role = #part.role<input>},
    %w: tensor<8x8xbf16> {part.name = "w", part.role = #part.role<parameter>},
    %dy: tensor<2x8x8xbf16> {part.name = "dy", part.role = #part.role<input>})
    -> (tensor<f32>, tensor<8x8xbf16> {part.grad_of = 1 : i64},
        tensor<2x4x8xf32> {part.grad_of = 0 : i64},
        tensor<2x8x8xbf16> {part.grad_of = 2 : i64},
        tensor<2x8x8xf32> {part.grad_of = 2 : i64})
    attributes {part.spmd = @mesh} {
  %wide = part.cast %x : tensor<2x4x8xbf16> -> tensor<2x4x8xf32>
  %n = part.exp %wide {part.layer = 0 : i64} : tensor<2x4x8xf32>
  %s = part.cast %n {part.layer = 0 : i64} : tensor<2x4x8xf32> -> tensor<2x4x8xbf16>
  %g = part.all_gather %s on @mesh axes ["tp"] dim 1 : tensor<2x4x8xbf16> -> tensor<2x8x8xbf16>
  %y = part.matmul %g, %w {part.layer = 0 : i64} : (tensor<2x8x8xbf16>, tensor<8x8xbf16>) -> tensor<2x8x8xbf16>
  %z = part.exp %y {part.layer = 1 : i64} : tensor<2x8x8xbf16>
  %lw = part.cast %z : tensor<2x8x8xbf16> -> tensor<2x8x8xf32>
  %l = part.reduce_sum %lw dims [0, 1, 2] : tensor<2x8x8xf32> -> tensor<f32>
  %dl = part.mul %lw, %lw : (tensor<2x8x8xf32>, tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %dz = part.exp %dy {part.layer = 1 : i64} : tensor<2x8x8xbf16>
  %dx = part.matmul %dz, %w transpose_b {part.layer = 0 : i64} : (tensor<2x8x8xbf16>, tensor<8x8xbf16>) -> tensor<2x8x8xbf16>
  %g2 = part.reshape %g {part.layer = 0 : i64} : tensor<2x8x8xbf16> -> tensor<16x8xbf16>
  %dz2 = part.reshape %dz {part.layer = 0 : i64} : tensor<2x8x8xbf16> -> tensor<16x8xbf16>
  %dw = part.matmul %g2, %dz2 transpose_a {part.layer = 0 : i64} : (tensor<16x8xbf16>, tensor<16x8xbf16>) -> tensor<8x8xbf16>
  %dn = part.mul %wide, %wide {part.layer = 0 : i64} : (tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  return %l, %dw, %dn, %dx, %dl : tensor<f32>, tensor<8x8xbf16>, tensor<2x4x8xf32>, tensor<2x8x8xbf16>, tensor<2x8x8xf32>
}

// Left as they are: a parameter's gather (ZeRO-3's, part-zero-prefetch's
// business), a narrowing cast, and a function
// without part.spmd.
// CHECK-LABEL: func.func @kept(
// CHECK-COUNT-1: part.all_gather %arg1
// CHECK-NOT: part-remake-in-backward
// CHECK: return
func.func @kept(
    %x: tensor<2x8xf32> {part.name = "x", part.role = #part.role<input>},
    %w: tensor<4x8xf32> {part.name = "w", part.role = #part.role<parameter>})
    -> (tensor<f32>, tensor<8x8xf32> {part.grad_of = 1 : i64},
        tensor<2x8xbf16> {part.grad_of = 0 : i64})
    attributes {part.spmd = @mesh} {
  %gw = part.all_gather %w on @mesh axes ["tp"] dim 0 : tensor<4x8xf32> -> tensor<8x8xf32>
  %narrow = part.cast %x : tensor<2x8xf32> -> tensor<2x8xbf16>
  %y = part.matmul %x, %gw : (tensor<2x8xf32>, tensor<8x8xf32>) -> tensor<2x8xf32>
  %l = part.reduce_sum %y dims [0, 1] : tensor<2x8xf32> -> tensor<f32>
  %dw = part.matmul %gw, %gw transpose_a {part.layer = 0 : i64} : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %dn = part.add %narrow, %narrow {part.layer = 0 : i64} : (tensor<2x8xbf16>, tensor<2x8xbf16>) -> tensor<2x8xbf16>
  return %l, %dw, %dn : tensor<f32>, tensor<8x8xf32>, tensor<2x8xbf16>
}
// CHECK-LABEL: func.func @global(
// CHECK-NOT: part-remake-in-backward
func.func @global(%x: tensor<2x8xbf16> {part.name = "x", part.role = #part.role<input>})
    -> (tensor<f32>, tensor<2x8xf32> {part.grad_of = 0 : i64}) {
  %wide = part.cast %x : tensor<2x8xbf16> -> tensor<2x8xf32>
  %l = part.reduce_sum %wide dims [0, 1] : tensor<2x8xf32> -> tensor<f32>
  %d = part.mul %wide, %wide : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  return %l, %d : tensor<f32>, tensor<2x8xf32>
}
