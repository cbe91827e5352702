// RUN: partition-opt %s --part-hoist-reductions | FileCheck %s

// The input gradient's all_reduce moves up to right after its matmul, above
// the weight gradient that does not read it; two sums of one value keep
// their order; a reduce_scatter moves the same way; a sum of an argument
// stays, and so does the add before it (no layer's op: where it is names
// the section the planner's probe gives it).
// CHECK-LABEL: func.func @backward
// CHECK: %[[DX:.*]] = part.matmul %arg0, %arg1 transpose_b
// CHECK-NEXT: part.all_reduce %[[DX]] on @mesh axes ["tp"] sum {part.origin = "dx"}
// CHECK-NEXT: part.all_reduce %[[DX]] on @mesh axes ["tp"] max {part.origin = "dx max"}
// CHECK-NEXT: %[[DW:.*]] = part.matmul %arg2, %arg0 transpose_a
// CHECK-NEXT: %[[H:.*]] = part.mul %[[DW]], %[[DW]]
// CHECK-NEXT: part.reduce_scatter %[[H]] on @mesh axes ["tp"] dim 0 sum {part.origin = "h"}
// CHECK-NEXT: part.add %arg1, %arg1
// CHECK-NEXT: part.all_reduce %arg1 on @mesh axes ["tp"] sum {part.origin = "arg"}
// CHECK-NEXT: return
part.mesh @mesh = <["tp"=2]>
func.func @backward(%dy: tensor<4x8xf32>, %w: tensor<16x8xf32>, %x: tensor<4x16xf32>) -> (tensor<4x16xf32>, tensor<4x16xf32>, tensor<8x8xf32>, tensor<16x8xf32>, tensor<16x8xf32>) attributes {part.spmd = @mesh} {
  %dx = part.matmul %dy, %w transpose_b : (tensor<4x8xf32>, tensor<16x8xf32>) -> tensor<4x16xf32>
  %dw = part.matmul %x, %dy transpose_a : (tensor<4x16xf32>, tensor<4x8xf32>) -> tensor<16x8xf32>
  %h = part.mul %dw, %dw : (tensor<16x8xf32>, tensor<16x8xf32>) -> tensor<16x8xf32>
  %t = part.add %w, %w : (tensor<16x8xf32>, tensor<16x8xf32>) -> tensor<16x8xf32>
  %s = part.all_reduce %dx on @mesh axes ["tp"] sum {part.origin = "dx"} : tensor<4x16xf32>
  %m = part.all_reduce %dx on @mesh axes ["tp"] max {part.origin = "dx max"} : tensor<4x16xf32>
  %r = part.reduce_scatter %h on @mesh axes ["tp"] dim 0 sum {part.origin = "h"} : tensor<16x8xf32> -> tensor<8x8xf32>
  %a = part.all_reduce %w on @mesh axes ["tp"] sum {part.origin = "arg"} : tensor<16x8xf32>
  return %s, %m, %r, %a, %t : tensor<4x16xf32>, tensor<4x16xf32>, tensor<8x8xf32>, tensor<16x8xf32>, tensor<16x8xf32>
}

// Deferred: a layer's weight gradient (part.layer) and the update that
// reads it, made before the input gradient whose sum does not read them,
// move below that sum (which a layer's op reads), and the sum runs beside
// them; the chain the sum waits for keeps its order. (A sum only the
// update reads, a gradient's over dp, defers nothing: @backward.)
// CHECK-LABEL: func.func @defer
// CHECK: %[[E:.*]] = part.exp %arg0
// CHECK-NEXT: %[[DX:.*]] = part.matmul %[[E]], %arg1 transpose_b
// CHECK-NEXT: %[[S:.*]] = part.all_reduce %[[DX]]
// CHECK-NEXT: %[[DW:.*]] = part.matmul %arg2, %arg0 transpose_a
// CHECK-NEXT: %[[U:.*]] = part.sub %arg1, %[[DW]]
// CHECK-NEXT: part.neg %[[S]]
func.func @defer(%dy: tensor<4x8xf32>, %w: tensor<16x8xf32>, %x: tensor<4x16xf32>) -> (tensor<4x16xf32>, tensor<16x8xf32>) attributes {part.spmd = @mesh} {
  %dw = part.matmul %x, %dy transpose_a {part.layer = 0 : i64} : (tensor<4x16xf32>, tensor<4x8xf32>) -> tensor<16x8xf32>
  %u = part.sub %w, %dw : (tensor<16x8xf32>, tensor<16x8xf32>) -> tensor<16x8xf32>
  %e = part.exp %dy : tensor<4x8xf32>
  %dx = part.matmul %e, %w transpose_b : (tensor<4x8xf32>, tensor<16x8xf32>) -> tensor<4x16xf32>
  %s = part.all_reduce %dx on @mesh axes ["tp"] sum : tensor<4x16xf32>
  %n = part.neg %s {part.layer = 0 : i64} : tensor<4x16xf32>
  return %n, %u : tensor<4x16xf32>, tensor<16x8xf32>
}

// Only per-device functions change.
// CHECK-LABEL: func.func @global
// CHECK: part.add
// CHECK-NEXT: part.all_reduce
func.func @global(%a: tensor<4xf32>, %b: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %s = part.mul %a, %a : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %t = part.add %b, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %r = part.all_reduce %s on @mesh axes ["tp"] sum : tensor<4xf32>
  return %r, %t : tensor<4xf32>, tensor<4xf32>
}
