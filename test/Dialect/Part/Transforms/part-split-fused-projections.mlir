// RUN: partition-opt %s --split-input-file --part-split-fused-projections | FileCheck %s

// GPT-2's c_attn: one [32, 96] weight and [96] bias, the result reshaped
// over its leading dimensions and sliced into Q, K and V. The weight becomes
// a [32, 3, 32] view of the same stored tensor, and each block its own
// projection.
// CHECK-LABEL: func.func @c_attn
// CHECK-SAME: %[[W:[a-z0-9]+]]: tensor<32x3x32xf32> {part.name = "c_attn.weight", part.role = #part.role<parameter>, part.stored_shape = array<i64: 32, 96>}
// CHECK-SAME: %[[B:[a-z0-9]+]]: tensor<3x32xf32> {part.name = "c_attn.bias", part.role = #part.role<parameter>, part.stored_shape = array<i64: 96>}
// CHECK: %[[W0:.*]] = part.slice %[[W]] offsets [0, 0, 0] {part.layer = 0 : i64} : tensor<32x3x32xf32> -> tensor<32x1x32xf32>
// CHECK: %[[W0F:.*]] = part.reshape %[[W0]] {part.layer = 0 : i64} : tensor<32x1x32xf32> -> tensor<32x32xf32>
// CHECK: %[[Y0:.*]] = part.matmul %{{.*}}, %[[W0F]] {part.layer = 0 : i64} : (tensor<16x32xf32>, tensor<32x32xf32>) -> tensor<16x32xf32>
// CHECK: %[[B0:.*]] = part.slice %[[B]] offsets [0, 0] {part.layer = 0 : i64} : tensor<3x32xf32> -> tensor<1x32xf32>
// CHECK: %[[B0F:.*]] = part.reshape %[[B0]] {part.layer = 0 : i64} : tensor<1x32xf32> -> tensor<32xf32>
// CHECK: %[[Q:.*]] = part.add %[[Y0]], %[[B0F]]
// CHECK: %[[Q3:.*]] = part.reshape %[[Q]] {part.layer = 0 : i64} : tensor<16x32xf32> -> tensor<2x8x32xf32>
// CHECK: part.slice %[[W]] offsets [0, 1, 0]
// CHECK: part.slice %[[B]] offsets [1, 0]
// CHECK: part.slice %[[W]] offsets [0, 2, 0]
// CHECK: part.slice %[[B]] offsets [2, 0]
// CHECK: %[[V3:.*]] = part.reshape %{{.*}} : tensor<16x32xf32> -> tensor<2x8x32xf32>
// CHECK-NOT: tensor<16x96xf32>
// CHECK: return %[[Q3]], %[[V3]], %{{.*}}
func.func @c_attn(%x: tensor<16x32xf32>,
                  %w: tensor<32x96xf32> {part.name = "c_attn.weight", part.role = #part.role<parameter>},
                  %b: tensor<96xf32> {part.name = "c_attn.bias", part.role = #part.role<parameter>})
    -> (tensor<2x8x32xf32>, tensor<2x8x32xf32>, tensor<2x8x32xf32>) {
  %0 = part.matmul %x, %w {part.layer = 0 : i64} : (tensor<16x32xf32>, tensor<32x96xf32>) -> tensor<16x96xf32>
  %1 = part.add %0, %b {part.layer = 0 : i64} : (tensor<16x96xf32>, tensor<96xf32>) -> tensor<16x96xf32>
  %2 = part.reshape %1 {part.layer = 0 : i64} : tensor<16x96xf32> -> tensor<2x8x96xf32>
  %q = part.slice %2 offsets [0, 0, 0] : tensor<2x8x96xf32> -> tensor<2x8x32xf32>
  %v = part.slice %2 offsets [0, 0, 64] : tensor<2x8x96xf32> -> tensor<2x8x32xf32>
  %k = part.slice %2 offsets [0, 0, 32] : tensor<2x8x96xf32> -> tensor<2x8x32xf32>
  return %q, %v, %k : tensor<2x8x32xf32>, tensor<2x8x32xf32>, tensor<2x8x32xf32>
}

// -----

// Phi-3's gate_up_proj as the importer gives it: the program reads [16, 96]
// ([in, 2 n]), the weights file holds torch's [96, 16] (part.stored_shape
// with part.stored_permutation). The [16, 2, 48] view keeps that layout: it
// reshapes the transposed file, not the argument's old type.
// CHECK-LABEL: func.func @gate_up_stored_transposed
// CHECK-SAME: tensor<16x2x48xf32> {part.role = #part.role<parameter>, part.stored_permutation = array<i64: 1, 0>, part.stored_shape = array<i64: 96, 16>}
// CHECK-COUNT-2: part.matmul %{{.*}}, %{{.*}} : (tensor<4x16xf32>, tensor<16x48xf32>) -> tensor<4x48xf32>
func.func @gate_up_stored_transposed(%x: tensor<4x16xf32>,
    %w: tensor<16x96xf32> {part.role = #part.role<parameter>, part.stored_permutation = array<i64: 1, 0>, part.stored_shape = array<i64: 96, 16>})
    -> (tensor<4x48xf32>, tensor<4x48xf32>) {
  %0 = part.matmul %x, %w : (tensor<4x16xf32>, tensor<16x96xf32>) -> tensor<4x96xf32>
  %g = part.slice %0 offsets [0, 0] : tensor<4x96xf32> -> tensor<4x48xf32>
  %u = part.slice %0 offsets [0, 48] : tensor<4x96xf32> -> tensor<4x48xf32>
  return %g, %u : tensor<4x48xf32>, tensor<4x48xf32>
}

// -----

// A fused gate/up projection stored transposed ([2 n, in], as nn.Linear
// keeps it), without a bias: a [2, 48, 16] view, blocks along dimension 0.
// CHECK-LABEL: func.func @gate_up
// CHECK-SAME: tensor<2x48x16xf32> {part.role = #part.role<parameter>, part.stored_shape = array<i64: 96, 16>}
// CHECK: part.slice %{{.*}} offsets [0, 0, 0] : tensor<2x48x16xf32> -> tensor<1x48x16xf32>
// CHECK: part.reshape %{{.*}} : tensor<1x48x16xf32> -> tensor<48x16xf32>
// CHECK: part.matmul %{{.*}}, %{{.*}} transpose_b : (tensor<4x16xf32>, tensor<48x16xf32>) -> tensor<4x48xf32>
// CHECK: part.slice %{{.*}} offsets [1, 0, 0]
// CHECK: part.silu
func.func @gate_up(%x: tensor<4x16xf32>,
                   %w: tensor<96x16xf32> {part.role = #part.role<parameter>}) -> tensor<4x48xf32> {
  %0 = part.matmul %x, %w transpose_b : (tensor<4x16xf32>, tensor<96x16xf32>) -> tensor<4x96xf32>
  %gate = part.slice %0 offsets [0, 0] : tensor<4x96xf32> -> tensor<4x48xf32>
  %up = part.slice %0 offsets [0, 48] : tensor<4x96xf32> -> tensor<4x48xf32>
  %s = part.silu %gate : tensor<4x48xf32>
  %y = part.mul %s, %up : (tensor<4x48xf32>, tensor<4x48xf32>) -> tensor<4x48xf32>
  return %y : tensor<4x48xf32>
}

// -----

// Left alone: the result is read whole as well as sliced; a block is read
// twice; the blocks do not cover the features; the weight has another use;
// the weight is an input, not a parameter.
// CHECK-LABEL: func.func @whole_read
// CHECK: part.matmul {{.*}} -> tensor<4x64xf32>
func.func @whole_read(%x: tensor<4x16xf32>, %w: tensor<16x64xf32> {part.role = #part.role<parameter>})
    -> (tensor<4x32xf32>, tensor<4x32xf32>, tensor<4x64xf32>) {
  %0 = part.matmul %x, %w : (tensor<4x16xf32>, tensor<16x64xf32>) -> tensor<4x64xf32>
  %a = part.slice %0 offsets [0, 0] : tensor<4x64xf32> -> tensor<4x32xf32>
  %b = part.slice %0 offsets [0, 32] : tensor<4x64xf32> -> tensor<4x32xf32>
  return %a, %b, %0 : tensor<4x32xf32>, tensor<4x32xf32>, tensor<4x64xf32>
}

// CHECK-LABEL: func.func @twice
// CHECK: part.matmul {{.*}} -> tensor<4x64xf32>
func.func @twice(%x: tensor<4x16xf32>, %w: tensor<16x64xf32> {part.role = #part.role<parameter>})
    -> (tensor<4x32xf32>, tensor<4x32xf32>) {
  %0 = part.matmul %x, %w : (tensor<4x16xf32>, tensor<16x64xf32>) -> tensor<4x64xf32>
  %a = part.slice %0 offsets [0, 0] : tensor<4x64xf32> -> tensor<4x32xf32>
  %b = part.slice %0 offsets [0, 0] : tensor<4x64xf32> -> tensor<4x32xf32>
  return %a, %b : tensor<4x32xf32>, tensor<4x32xf32>
}

// CHECK-LABEL: func.func @gap
// CHECK: part.matmul {{.*}} -> tensor<4x64xf32>
func.func @gap(%x: tensor<4x16xf32>, %w: tensor<16x64xf32> {part.role = #part.role<parameter>})
    -> (tensor<4x16xf32>, tensor<4x16xf32>) {
  %0 = part.matmul %x, %w : (tensor<4x16xf32>, tensor<16x64xf32>) -> tensor<4x64xf32>
  %a = part.slice %0 offsets [0, 0] : tensor<4x64xf32> -> tensor<4x16xf32>
  %b = part.slice %0 offsets [0, 16] : tensor<4x64xf32> -> tensor<4x16xf32>
  return %a, %b : tensor<4x16xf32>, tensor<4x16xf32>
}

// CHECK-LABEL: func.func @shared_weight
// CHECK: part.matmul {{.*}} -> tensor<4x64xf32>
func.func @shared_weight(%x: tensor<4x16xf32>, %w: tensor<16x64xf32> {part.role = #part.role<parameter>})
    -> (tensor<4x32xf32>, tensor<4x32xf32>, tensor<16x64xf32>) {
  %0 = part.matmul %x, %w : (tensor<4x16xf32>, tensor<16x64xf32>) -> tensor<4x64xf32>
  %a = part.slice %0 offsets [0, 0] : tensor<4x64xf32> -> tensor<4x32xf32>
  %b = part.slice %0 offsets [0, 32] : tensor<4x64xf32> -> tensor<4x32xf32>
  %n = part.neg %w : tensor<16x64xf32>
  return %a, %b, %n : tensor<4x32xf32>, tensor<4x32xf32>, tensor<16x64xf32>
}

// CHECK-LABEL: func.func @input_weight
// CHECK: part.matmul {{.*}} -> tensor<4x64xf32>
func.func @input_weight(%x: tensor<4x16xf32>, %w: tensor<16x64xf32>)
    -> (tensor<4x32xf32>, tensor<4x32xf32>) {
  %0 = part.matmul %x, %w : (tensor<4x16xf32>, tensor<16x64xf32>) -> tensor<4x64xf32>
  %a = part.slice %0 offsets [0, 0] : tensor<4x64xf32> -> tensor<4x32xf32>
  %b = part.slice %0 offsets [0, 32] : tensor<4x64xf32> -> tensor<4x32xf32>
  return %a, %b : tensor<4x32xf32>, tensor<4x32xf32>
}

// -----

// Blocks of different widths (Phi-3's [Q 16 | K 8 | V 8], stored [out, in]):
// no [k, n] view fits, so each block reads its own slice of the weight.
// CHECK-LABEL: func.func @unequal
// CHECK-SAME: tensor<32x16xf32> {part.role = #part.role<parameter>})
// CHECK: part.slice %{{.*}} offsets [0, 0] : tensor<32x16xf32> -> tensor<16x16xf32>
// CHECK: part.matmul %{{.*}}, %{{.*}} transpose_b : (tensor<4x16xf32>, tensor<16x16xf32>) -> tensor<4x16xf32>
// CHECK: part.slice %{{.*}} offsets [16, 0] : tensor<32x16xf32> -> tensor<8x16xf32>
// CHECK: part.slice %{{.*}} offsets [24, 0] : tensor<32x16xf32> -> tensor<8x16xf32>
// CHECK-NOT: tensor<4x32xf32>
func.func @unequal(%x: tensor<4x16xf32>, %w: tensor<32x16xf32> {part.role = #part.role<parameter>})
    -> (tensor<4x16xf32>, tensor<4x8xf32>, tensor<4x8xf32>) {
  %0 = part.matmul %x, %w transpose_b : (tensor<4x16xf32>, tensor<32x16xf32>) -> tensor<4x32xf32>
  %q = part.slice %0 offsets [0, 0] : tensor<4x32xf32> -> tensor<4x16xf32>
  %k = part.slice %0 offsets [0, 16] : tensor<4x32xf32> -> tensor<4x8xf32>
  %v = part.slice %0 offsets [0, 24] : tensor<4x32xf32> -> tensor<4x8xf32>
  return %q, %k, %v : tensor<4x16xf32>, tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// Falcon's multi-query layout: the result viewed by heads [.., 4 + 2, d],
// the query heads sliced and the one key and one value head gathered.
// CHECK-LABEL: func.func @multi_query
// CHECK: %[[Q:.*]] = part.slice %{{.*}} offsets [0, 0] : tensor<16x24xf32> -> tensor<16x16xf32>
// CHECK: part.matmul %{{.*}}, %[[Q]] : (tensor<2x8x16xf32>, tensor<16x16xf32>) -> tensor<2x8x16xf32>
// CHECK: part.reshape %{{.*}} : tensor<2x8x16xf32> -> tensor<2x8x4x4xf32>
// CHECK: part.slice %{{.*}} offsets [0, 16] : tensor<16x24xf32> -> tensor<16x4xf32>
// CHECK: part.reshape %{{.*}} : tensor<2x8x4xf32> -> tensor<2x8x1x4xf32>
// CHECK: part.slice %{{.*}} offsets [0, 20] : tensor<16x24xf32> -> tensor<16x4xf32>
// CHECK-NOT: part.gather
func.func @multi_query(%x: tensor<2x8x16xf32>, %w: tensor<16x24xf32> {part.role = #part.role<parameter>})
    -> (tensor<2x8x4x4xf32>, tensor<2x8x1x4xf32>, tensor<2x8x1x4xf32>) {
  %0 = part.matmul %x, %w : (tensor<2x8x16xf32>, tensor<16x24xf32>) -> tensor<2x8x24xf32>
  %1 = part.reshape %0 : tensor<2x8x24xf32> -> tensor<2x8x6x4xf32>
  %q = part.slice %1 offsets [0, 0, 0, 0] : tensor<2x8x6x4xf32> -> tensor<2x8x4x4xf32>
  %i = part.constant dense<4> : tensor<1xi64>
  %k = part.gather %1, %i axis 2 : (tensor<2x8x6x4xf32>, tensor<1xi64>) -> tensor<2x8x1x4xf32>
  %j = part.constant dense<5> : tensor<1xi64>
  %v = part.gather %1, %j axis 2 : (tensor<2x8x6x4xf32>, tensor<1xi64>) -> tensor<2x8x1x4xf32>
  return %q, %k, %v : tensor<2x8x4x4xf32>, tensor<2x8x1x4xf32>, tensor<2x8x1x4xf32>
}
