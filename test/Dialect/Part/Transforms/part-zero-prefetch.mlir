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

// Flat (the default): a layer's gathers become one. The shards are
// flattened to [1, n] and concatenated, gathered once over dimension 0
// ([2, 36]: row i is device i's shards of w and b), and each parameter's
// columns are sliced out and reshaped to its gathered shape. Layer 1's
// group is prefetched above layer 0's compute as one gather; a gather whose
// shard is not one run of the gathered value (dim 1 of a 4x4) stays apart.
// With flat=false the gathers stay one per parameter.
// RUN: partition-opt %s --part-zero-prefetch="flat=false" | FileCheck %s --check-prefix=APART
// CHECK-LABEL: func.func @flat(
// CHECK: %[[W0:.*]] = part.reshape %arg1 : tensor<4x8xf32> -> tensor<1x32xf32>
// CHECK-NEXT: %[[B0:.*]] = part.reshape %arg2 : tensor<4xf32> -> tensor<1x4xf32>
// CHECK-NEXT: %[[C0:.*]] = part.concat %[[W0]], %[[B0]] dim 1 : (tensor<1x32xf32>, tensor<1x4xf32>) -> tensor<1x36xf32>
// CHECK-NEXT: %[[G0:.*]] = part.all_gather %[[C0]] on @mesh axes ["dp"] dim 0 {part.origin = "flat all_gather of 2 parameters (part-zero-prefetch): w0 b0"} : tensor<1x36xf32> -> tensor<2x36xf32>
// CHECK-NOT: part.slice
// CHECK: %[[G1:.*]] = part.all_gather %{{.*}} on @mesh axes ["dp"] dim 0 {part.origin = "flat all_gather of 2 parameters (part-zero-prefetch): w1 b1; first: all_gather; prefetched (part-zero-prefetch) above the compute of the previous group{{.*}}"} : tensor<1x36xf32> -> tensor<2x36xf32>
// CHECK-NEXT: part.all_gather %arg5 on @mesh axes ["dp"] dim 1
// Each parameter's columns are sliced out right before their first use, so
// that the compute stream, which runs in order, does not wait for a gather
// before the compute it was prefetched to run beside:
// CHECK-NEXT: %[[S0:.*]] = part.slice %[[G0]] offsets [0, 0] : tensor<2x36xf32> -> tensor<2x32xf32>
// CHECK-NEXT: %[[GW0:.*]] = part.reshape %[[S0]] : tensor<2x32xf32> -> tensor<8x8xf32>
// CHECK-NEXT: %[[H0:.*]] = part.matmul %arg0, %[[GW0]]
// CHECK-NEXT: %[[T0:.*]] = part.slice %[[G0]] offsets [0, 32] : tensor<2x36xf32> -> tensor<2x4xf32>
// CHECK-NEXT: %[[GB0:.*]] = part.reshape %[[T0]] : tensor<2x4xf32> -> tensor<8xf32>
// CHECK-NEXT: part.add %[[H0]], %[[GB0]]
// CHECK-NEXT: part.slice %[[G1]] offsets [0, 0]
// CHECK-NOT: part.all_gather
// CHECK: return
// APART-LABEL: func.func @flat(
// APART-COUNT-5: part.all_gather %arg
// APART-NOT: part.concat
func.func @flat(
    %x: tensor<2x8xf32> {part.name = "x", part.role = #part.role<input>},
    %w0: tensor<4x8xf32> {part.name = "w0", part.role = #part.role<parameter>},
    %b0: tensor<4xf32> {part.name = "b0", part.role = #part.role<parameter>},
    %w1: tensor<4x8xf32> {part.name = "w1", part.role = #part.role<parameter>},
    %b1: tensor<4xf32> {part.name = "b1", part.role = #part.role<parameter>},
    %m1: tensor<4x4xf32> {part.name = "m1", part.role = #part.role<parameter>})
    -> (tensor<2x8xf32>, tensor<4x8xf32>) attributes {part.spmd = @mesh} {
  %gw0 = part.all_gather %w0 on @mesh axes ["dp"] dim 0 : tensor<4x8xf32> -> tensor<8x8xf32>
  %gb0 = part.all_gather %b0 on @mesh axes ["dp"] dim 0 : tensor<4xf32> -> tensor<8xf32>
  %h0 = part.matmul %x, %gw0 {part.layer = 0 : i64} : (tensor<2x8xf32>, tensor<8x8xf32>) -> tensor<2x8xf32>
  %a0 = part.add %h0, %gb0 {part.layer = 0 : i64} : (tensor<2x8xf32>, tensor<8xf32>) -> tensor<2x8xf32>
  %gw1 = part.all_gather %w1 on @mesh axes ["dp"] dim 0 : tensor<4x8xf32> -> tensor<8x8xf32>
  %gb1 = part.all_gather %b1 on @mesh axes ["dp"] dim 0 : tensor<4xf32> -> tensor<8xf32>
  %gm1 = part.all_gather %m1 on @mesh axes ["dp"] dim 1 : tensor<4x4xf32> -> tensor<4x8xf32>
  %h1 = part.matmul %a0, %gw1 {part.layer = 1 : i64} : (tensor<2x8xf32>, tensor<8x8xf32>) -> tensor<2x8xf32>
  %a1 = part.add %h1, %gb1 {part.layer = 1 : i64} : (tensor<2x8xf32>, tensor<8xf32>) -> tensor<2x8xf32>
  %m = part.add %gm1, %gm1 {part.layer = 1 : i64} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %a1, %m : tensor<2x8xf32>, tensor<4x8xf32>
}

// A parameter gathered twice in one group (a layer's recomputed forward and
// its backward read it) travels once: the flat gather carries w0 and b0,
// and both of w0's uses read the one gathered value.
// CHECK-LABEL: func.func @twice(
// CHECK: %[[G:.*]] = part.all_gather %{{.*}} on @mesh axes ["dp"] dim 0 {part.origin = "flat all_gather of 2 parameters (part-zero-prefetch): w0 b0"} : tensor<1x36xf32> -> tensor<2x36xf32>
// CHECK-NEXT: %[[S:.*]] = part.slice %[[G]] offsets [0, 0] : tensor<2x36xf32> -> tensor<2x32xf32>
// CHECK-NEXT: %[[W:.*]] = part.reshape %[[S]] : tensor<2x32xf32> -> tensor<8x8xf32>
// CHECK-NEXT: part.matmul %arg0, %[[W]]
// CHECK-NOT: part.all_gather
// CHECK: part.matmul %{{.*}}, %[[W]] transpose_b
func.func @twice(
    %x: tensor<2x8xf32> {part.name = "x", part.role = #part.role<input>},
    %w0: tensor<4x8xf32> {part.name = "w0", part.role = #part.role<parameter>},
    %b0: tensor<4xf32> {part.name = "b0", part.role = #part.role<parameter>})
    -> tensor<2x8xf32> attributes {part.spmd = @mesh} {
  %g1 = part.all_gather %w0 on @mesh axes ["dp"] dim 0 : tensor<4x8xf32> -> tensor<8x8xf32>
  %gb = part.all_gather %b0 on @mesh axes ["dp"] dim 0 : tensor<4xf32> -> tensor<8xf32>
  %g2 = part.all_gather %w0 on @mesh axes ["dp"] dim 0 : tensor<4x8xf32> -> tensor<8x8xf32>
  %h = part.matmul %x, %g1 {part.layer = 0 : i64} : (tensor<2x8xf32>, tensor<8x8xf32>) -> tensor<2x8xf32>
  %a = part.add %h, %gb {part.layer = 0 : i64} : (tensor<2x8xf32>, tensor<8xf32>) -> tensor<2x8xf32>
  %d = part.matmul %a, %g2 transpose_b {part.layer = 0 : i64} : (tensor<2x8xf32>, tensor<8x8xf32>) -> tensor<2x8xf32>
  return %d : tensor<2x8xf32>
}
