// RUN: partition-opt %s --part-zero-prefetch | FileCheck %s

part.mesh @mesh = <["dp"=2]>

// Three layers, as part-spmd="zero=3" leaves them: each parameter gathered
// right before its use, forward, then backward in reverse layer order. After
// the pass each gather sits right before the first use of the previous
// gather (one parameter ahead: a group of one without `part.layer`).
// CHECK-LABEL: func.func @layers(
// CHECK: %[[W0:.*]] = part.all_gather %arg1
// CHECK-NEXT: %[[W1:.*]] = part.all_gather %arg2 {{.*}} {part.origin = "all_gather; prefetched (part-zero-prefetch) above the compute of the previous group, from before part.matmul at {{.*}}part-zero-prefetch.mlir:
// CHECK-NEXT: %[[H0:.*]] = part.matmul %arg0, %[[W0]]
// CHECK-NEXT: %[[A0:.*]] = part.relu %[[H0]]
// CHECK-NEXT: %[[W2:.*]] = part.all_gather %arg3 {{.*}}prefetched
// CHECK-NEXT: %[[H1:.*]] = part.matmul %[[A0]], %[[W1]]
// CHECK-NEXT: %[[A1:.*]] = part.relu %[[H1]]
// CHECK-NEXT: %[[B2:.*]] = part.all_gather %arg3 {{.*}}prefetched
// CHECK-NEXT: %[[H2:.*]] = part.matmul %[[A1]], %[[W2]]
// CHECK-NEXT: %[[B1:.*]] = part.all_gather %arg2 {{.*}}prefetched
// CHECK-NEXT: %[[D2:.*]] = part.matmul %[[H2]], %[[B2]] transpose_b
// CHECK-NEXT: %[[D1:.*]] = part.matmul %[[D2]], %[[B1]] transpose_b
// CHECK-NEXT: return
func.func @layers(
    %x: tensor<2x8xf32> {part.name = "x", part.role = #part.role<input>},
    %w0: tensor<4x8xf32> {part.name = "w0", part.role = #part.role<parameter>},
    %w1: tensor<4x8xf32> {part.name = "w1", part.role = #part.role<parameter>},
    %w2: tensor<4x8xf32> {part.name = "w2", part.role = #part.role<parameter>})
    -> tensor<2x8xf32> attributes {part.spmd = @mesh} {
  %g0 = part.all_gather %w0 on @mesh axes ["dp"] dim 0 : tensor<4x8xf32> -> tensor<8x8xf32>
  %h0 = part.matmul %x, %g0 : (tensor<2x8xf32>, tensor<8x8xf32>) -> tensor<2x8xf32>
  %a0 = part.relu %h0 : tensor<2x8xf32>
  %g1 = part.all_gather %w1 on @mesh axes ["dp"] dim 0 : tensor<4x8xf32> -> tensor<8x8xf32>
  %h1 = part.matmul %a0, %g1 : (tensor<2x8xf32>, tensor<8x8xf32>) -> tensor<2x8xf32>
  %a1 = part.relu %h1 : tensor<2x8xf32>
  %g2 = part.all_gather %w2 on @mesh axes ["dp"] dim 0 : tensor<4x8xf32> -> tensor<8x8xf32>
  %h2 = part.matmul %a1, %g2 : (tensor<2x8xf32>, tensor<8x8xf32>) -> tensor<2x8xf32>
  %b2 = part.all_gather %w2 on @mesh axes ["dp"] dim 0 : tensor<4x8xf32> -> tensor<8x8xf32>
  %d2 = part.matmul %h2, %b2 transpose_b : (tensor<2x8xf32>, tensor<8x8xf32>) -> tensor<2x8xf32>
  %b1 = part.all_gather %w1 on @mesh axes ["dp"] dim 0 : tensor<4x8xf32> -> tensor<8x8xf32>
  %d1 = part.matmul %d2, %b1 transpose_b : (tensor<2x8xf32>, tensor<8x8xf32>) -> tensor<2x8xf32>
  return %d1 : tensor<2x8xf32>
}

// Only gathers of parameters move (not of an input, nor anything else), and
// a gather never moves down: the second is already above the first use of
// the first.
// CHECK-LABEL: func.func @stays(
// CHECK: %[[G0:.*]] = part.all_gather %arg1
// CHECK-NEXT: %[[G1:.*]] = part.all_gather %arg2
// CHECK-NOT: prefetched
// CHECK-NEXT: %[[H0:.*]] = part.matmul %arg0, %[[G0]]
// CHECK-NEXT: %[[H1:.*]] = part.matmul %[[H0]], %[[G1]]
// CHECK-NEXT: %[[X:.*]] = part.all_gather %arg0
// CHECK-NEXT: return
func.func @stays(
    %x: tensor<2x8xf32> {part.name = "x", part.role = #part.role<input>},
    %w0: tensor<4x8xf32> {part.name = "w0", part.role = #part.role<parameter>},
    %w1: tensor<4x8xf32> {part.name = "w1", part.role = #part.role<parameter>})
    -> (tensor<2x8xf32>, tensor<4x8xf32>) attributes {part.spmd = @mesh} {
  %g0 = part.all_gather %w0 on @mesh axes ["dp"] dim 0 : tensor<4x8xf32> -> tensor<8x8xf32>
  %g1 = part.all_gather %w1 on @mesh axes ["dp"] dim 0 : tensor<4x8xf32> -> tensor<8x8xf32>
  %h0 = part.matmul %x, %g0 : (tensor<2x8xf32>, tensor<8x8xf32>) -> tensor<2x8xf32>
  %h1 = part.matmul %h0, %g1 : (tensor<2x8xf32>, tensor<8x8xf32>) -> tensor<2x8xf32>
  %gx = part.all_gather %x on @mesh axes ["dp"] dim 0 : tensor<2x8xf32> -> tensor<4x8xf32>
  return %h1, %gx : tensor<2x8xf32>, tensor<4x8xf32>
}

// Not a per-device function: left alone.
// CHECK-LABEL: func.func @global(
// CHECK: part.matmul
// CHECK-NEXT: part.all_gather %arg2
func.func @global(
    %x: tensor<2x8xf32> {part.name = "x", part.role = #part.role<input>},
    %w0: tensor<8x8xf32> {part.name = "w0", part.role = #part.role<parameter>},
    %w1: tensor<4x8xf32> {part.name = "w1", part.role = #part.role<parameter>})
    -> tensor<2x8xf32> {
  %h0 = part.matmul %x, %w0 : (tensor<2x8xf32>, tensor<8x8xf32>) -> tensor<2x8xf32>
  %g1 = part.all_gather %w1 on @mesh axes ["dp"] dim 0 : tensor<4x8xf32> -> tensor<8x8xf32>
  %h1 = part.matmul %h0, %g1 : (tensor<2x8xf32>, tensor<8x8xf32>) -> tensor<2x8xf32>
  return %h1 : tensor<2x8xf32>
}
