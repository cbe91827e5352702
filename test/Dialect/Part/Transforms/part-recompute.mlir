// part-recompute on a two-layer program, differentiated here: backward's
// uses of each layer's internal values move to clones placed right before
// them, fed by the layer's input and parameters.
// RUN: partition-opt %s --part-autodiff --part-recompute | FileCheck %s
// Running it again changes nothing (the clones are not forward ops):
// RUN: partition-opt %s --part-autodiff --part-recompute --part-recompute | FileCheck %s
// RUN: partition-opt %s --part-autodiff --part-recompute="layers=1" | FileCheck %s --check-prefix=ONE
// RUN: partition-opt %s --part-autodiff --part-recompute="layers=1,0" | FileCheck %s
// CSE leaves the clones apart from the originals:
// RUN: partition-opt %s --part-autodiff --part-recompute --canonicalize --cse | FileCheck %s --check-prefix=CSE
// RUN: partition-opt %s --part-autodiff --part-recompute --mlir-print-debuginfo | FileCheck %s --check-prefix=LOC
// After part-optimizer, and partitioned like the originals:
// RUN: partition-opt %s --part-autodiff --part-optimizer="kind=sgd lr=0.1" --part-recompute | FileCheck %s --check-prefix=OPT
// RUN: partition-opt %s --part-autodiff --part-recompute --part-spmd="mesh=dp:2" | FileCheck %s --check-prefix=SPMD
// Selective: the matmuls' results are kept, the rest recomputed from them:
// RUN: partition-opt %s --part-autodiff --part-recompute="mode=selective" | FileCheck %s --check-prefix=SEL

// Layer 0 scales by a constant (left as it is) and takes tanh; layer 1 is
// a tanh residual block. tanh's derivative reads tanh's result, so backward
// needs %t0 and %t1; %h0 (layer 0's output, layer 1's input) is kept.
func.func @two_layers(%x: tensor<4x8xf32> {part.name = "x", part.role = #part.role<input>},
                      %w0: tensor<8x8xf32> {part.name = "w0", part.role = #part.role<parameter>},
                      %w1: tensor<8x8xf32> {part.name = "w1", part.role = #part.role<parameter>}) -> tensor<f32> {
  %c = part.constant {part.layer = 0 : i64} dense<0.5> : tensor<f32>
  %m0 = part.matmul %x, %w0 {part.layer = 0 : i64} : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %s0 = part.mul %m0, %c {part.layer = 0 : i64} : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %t0 = part.tanh %s0 {part.layer = 0 : i64} : tensor<4x8xf32>
  %h0 = part.add %x, %t0 {part.layer = 0 : i64} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %m1 = part.matmul %h0, %w1 {part.layer = 1 : i64} : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %t1 = part.tanh %m1 {part.layer = 1 : i64} : tensor<4x8xf32>
  %h1 = part.add %h0, %t1 {part.layer = 1 : i64} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %sq = part.mul %h1, %h1 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %loss = part.reduce_sum %sq dims [0, 1] : tensor<4x8xf32> -> tensor<f32>
  return %loss : tensor<f32>
}

// The forward is unchanged.
// CHECK-LABEL: func.func @two_layers(
// CHECK-SAME: %[[X:[^:]*]]: tensor<4x8xf32> {part.name = "x"
// CHECK-SAME: %[[W0:[^:]*]]: tensor<8x8xf32> {part.name = "w0"
// CHECK-SAME: %[[W1:[^:]*]]: tensor<8x8xf32> {part.name = "w1"
// CHECK: %[[C:.*]] = part.constant {part.layer = 0 : i64}
// CHECK: %[[M0:.*]] = part.matmul %[[X]], %[[W0]] {part.layer = 0 : i64} :
// CHECK: %[[S0:.*]] = part.mul %[[M0]], %[[C]] {part.layer = 0 : i64} :
// CHECK: %[[T0:.*]] = part.tanh %[[S0]] {part.layer = 0 : i64} :
// CHECK: %[[H0:.*]] = part.add %[[X]], %[[T0]] {part.layer = 0 : i64} :
// CHECK: %[[M1:.*]] = part.matmul %[[H0]], %[[W1]] {part.layer = 1 : i64} :
// CHECK: %[[T1:.*]] = part.tanh %[[M1]] {part.layer = 1 : i64} :
// CHECK: %[[H1:.*]] = part.add %[[H0]], %[[T1]] {part.layer = 1 : i64} :
// CHECK: part.reduce_sum
// Layer 1's backward starts at tanh's derivative, 1 - t1^2: its clones come
// right before, from the layer's input %h0 and its weight.
// CHECK-NOT: part.recomputed
// CHECK: %[[RM1:.*]] = part.matmul %[[H0]], %[[W1]] {part.layer = 1 : i64, part.origin = "recomputation of layer 1 for backward (part-recompute)", part.recomputed} : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT: %[[RT1:.*]] = part.tanh %[[RM1]] {part.layer = 1 : i64, part.origin = "recomputation of layer 1 for backward (part-recompute)", part.recomputed} : tensor<4x8xf32>
// CHECK-NEXT: part.mul %[[RT1]], %[[RT1]]
// The weight gradient of layer 1 reads the kept input %h0:
// CHECK: part.matmul %[[H0]], %{{.*}} transpose_a
// Then layer 0's, with the constant used as it is:
// CHECK-NOT: part.constant {{.*}}part.recomputed
// CHECK: %[[RM0:.*]] = part.matmul %[[X]], %[[W0]] {part.layer = 0 : i64, part.origin = "recomputation of layer 0 for backward (part-recompute)", part.recomputed}
// CHECK-NEXT: %[[RS0:.*]] = part.mul %[[RM0]], %[[C]] {part.layer = 0 : i64, {{.*}}part.recomputed}
// CHECK-NEXT: %[[RT0:.*]] = part.tanh %[[RS0]] {part.layer = 0 : i64, {{.*}}part.recomputed}
// CHECK-NEXT: part.mul %[[RT0]], %[[RT0]]
// No backward op reads a recomputed value's original, and the layers'
// outputs (%h0, %h1) are not recomputed:
// CHECK-NOT: %[[T0]]{{[^0-9]}}
// CHECK-NOT: %[[T1]]{{[^0-9]}}
// CHECK-NOT: part.add {{.*}}part.recomputed
// CHECK: return

// ONE-LABEL: func.func @two_layers(
// ONE: %[[T0:.*]] = part.tanh %{{.*}} {part.layer = 0 : i64} :
// ONE: part.tanh %{{.*}} {part.layer = 1 : i64, {{.*}}part.recomputed}
// ONE-NOT: part.layer = 0 : i64, {{.*}}part.recomputed
// ONE: part.mul %[[T0]], %[[T0]]
// ONE-NOT: part.recomputed
// ONE: return

// CSE-LABEL: func.func @two_layers(
// CSE-COUNT-2: part.tanh %{{.*}} {part.layer = {{[01]}} : i64} :
// CSE-COUNT-2: part.tanh %{{.*}} {part.layer = {{[01]}} : i64, {{.*}}part.recomputed}

// LOC: part.tanh {{.*}}part.recomputed} : tensor<4x8xf32> loc(#[[L:.*]])
// LOC: #[[L]] = loc("recomputed"(

// The gradients feed the update; the clones come before their uses there too.
// OPT-LABEL: func.func @two_layers(
// OPT: part.tanh %{{.*}} {part.layer = 1 : i64, {{.*}}part.recomputed}
// OPT: part.tanh %{{.*}} {part.layer = 0 : i64, {{.*}}part.recomputed}
// OPT: return

// The batch is split over dp: the clones hold the same local shards as
// their originals.
// SPMD-LABEL: func.func @two_layers(
// SPMD: part.tanh %{{.*}} {part.layer = 1 : i64} : tensor<2x8xf32>
// SPMD: part.tanh %{{.*}} {part.layer = 1 : i64, {{.*}}part.recomputed} : tensor<2x8xf32>
// SPMD: part.tanh %{{.*}} {part.layer = 0 : i64, {{.*}}part.recomputed} : tensor<2x8xf32>

// SEL-LABEL: func.func @two_layers(
// SEL: %[[M0:.*]] = part.matmul %{{.*}}, %{{.*}} {part.layer = 0 : i64} :
// SEL: %[[M1:.*]] = part.matmul %{{.*}}, %{{.*}} {part.layer = 1 : i64} :
// SEL-NOT: part.matmul {{.*}}part.recomputed
// SEL: %[[RT1:.*]] = part.tanh %[[M1]] {part.layer = 1 : i64, part.origin = "selective recomputation of layer 1 for backward (part-recompute)", part.recomputed} : tensor<4x8xf32>
// SEL-NEXT: part.mul %[[RT1]], %[[RT1]]
// SEL-NOT: part.matmul {{.*}}part.recomputed
// SEL: %[[RS0:.*]] = part.mul %[[M0]], %{{.*}} {part.layer = 0 : i64, part.origin = "selective {{.*}}part.recomputed}
// SEL-NEXT: %[[RT0:.*]] = part.tanh %[[RS0]] {part.layer = 0 : i64, {{.*}}part.recomputed}
// SEL-NEXT: part.mul %[[RT0]], %[[RT0]]
// SEL-NOT: part.matmul {{.*}}part.recomputed
// SEL: return
