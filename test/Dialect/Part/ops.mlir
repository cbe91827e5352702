// RUN: partition-opt %s | FileCheck %s
// Printing is stable: the printed form parses back to the same text, both
// through the custom assembly and the generic form.
// RUN: partition-opt %s | partition-opt | FileCheck %s
// RUN: partition-opt %s --mlir-print-op-generic | partition-opt | FileCheck %s

// CHECK: part.mesh @mesh = <["dp"=2, "tp"=4]>
part.mesh @mesh = <["dp"=2, "tp"=4]>
// CHECK: part.mesh @stage0 = <["dp"=2]>
part.mesh @stage0 = <["dp"=2]>
// CHECK: part.mesh @stage1 = <["dp"=2]>
part.mesh @stage1 = <["dp"=2]>

// CHECK-LABEL: func.func @annotations
// CHECK-SAME: (%{{.*}}: tensor<8x16xf32> {part.role = #part.role<input>, part.sharding = #part.sharding<@mesh, [{"dp"}, {}]>}
// CHECK-SAME: %{{.*}}: tensor<16x32xf32> {part.role = #part.role<parameter>, part.sharding = #part.sharding<@mesh, [{}, {"tp"}]>}
// CHECK-SAME: %{{.*}}: tensor<8xi32> {part.role = #part.role<label>})
// CHECK-SAME: -> (tensor<8x32xf32> {part.sharding = #part.sharding<@mesh, [{"dp"}, {}], unreduced={"tp"}>})
func.func @annotations(
    %x: tensor<8x16xf32> {part.role = #part.role<input>, part.sharding = #part.sharding<@mesh, [{"dp"}, {}]>},
    %w: tensor<16x32xf32> {part.role = #part.role<parameter>, part.sharding = #part.sharding<@mesh, [{}, {"tp"}]>},
    %y: tensor<8xi32> {part.role = #part.role<label>})
    -> (tensor<8x32xf32> {part.sharding = #part.sharding<@mesh, [{"dp"}, {}], unreduced={"tp"}>}) {
  // CHECK: part.matmul %{{.*}}, %{{.*}} {part.sharding = #part.sharding<@mesh, [{"dp"}, {"tp"}]>}
  %0 = part.matmul %x, %w {part.sharding = #part.sharding<@mesh, [{"dp"}, {"tp"}]>} : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
  // CHECK: part.sharding_constraint %{{.*}} <@mesh, [{"dp", "tp"}, {}]> : tensor<8x32xf32>
  %1 = part.sharding_constraint %0 <@mesh, [{"dp", "tp"}, {}]> : tensor<8x32xf32>
  return %1 : tensor<8x32xf32>
}

// CHECK-LABEL: func.func @elementwise
func.func @elementwise(%a: tensor<4x8xf32>, %b: tensor<8xf32>, %i: tensor<4x8xi32>) -> tensor<4x8xf32> {
  // CHECK: part.constant dense<1.000000e+00> : tensor<4x8xf32>
  %c = part.constant dense<1.0> : tensor<4x8xf32>
  // CHECK: part.add %{{.*}}, %{{.*}} : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %0 = part.add %a, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  // CHECK: part.sub %{{.*}}, %{{.*}} : (tensor<8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %1 = part.sub %b, %0 : (tensor<8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  // CHECK: part.mul
  %2 = part.mul %1, %c : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  // CHECK: part.div
  %3 = part.div %2, %c : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  // CHECK: part.max
  %4 = part.max %3, %c : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  // CHECK: part.min
  %5 = part.min %4, %c : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  // CHECK: part.pow
  %6 = part.pow %5, %c : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  // CHECK: part.add %{{.*}}, %{{.*}} : (tensor<4x8xi32>, tensor<4x8xi32>) -> tensor<4x8xi32>
  %ii = part.add %i, %i : (tensor<4x8xi32>, tensor<4x8xi32>) -> tensor<4x8xi32>
  // CHECK: part.neg %{{.*}} : tensor<4x8xf32>
  %7 = part.neg %6 : tensor<4x8xf32>
  // CHECK: part.exp
  %8 = part.exp %7 : tensor<4x8xf32>
  // CHECK: part.log
  %9 = part.log %8 : tensor<4x8xf32>
  // CHECK: part.sqrt
  %10 = part.sqrt %9 : tensor<4x8xf32>
  // CHECK: part.rsqrt
  %11 = part.rsqrt %10 : tensor<4x8xf32>
  // CHECK: part.tanh
  %12 = part.tanh %11 : tensor<4x8xf32>
  // CHECK: part.erf %{{.*}} : tensor<4x8xf32>
  %erf = part.erf %12 : tensor<4x8xf32>
  // CHECK: part.cos %{{.*}} : tensor<4x8xf32>
  %cos = part.cos %12 : tensor<4x8xf32>
  // CHECK: part.sin %{{.*}} : tensor<4x8xf32>
  %sin = part.sin %cos : tensor<4x8xf32>
  // CHECK: part.sigmoid
  %13 = part.sigmoid %12 : tensor<4x8xf32>
  // CHECK: part.relu
  %14 = part.relu %13 : tensor<4x8xf32>
  // CHECK: part.silu
  %15 = part.silu %14 : tensor<4x8xf32>
  // CHECK: part.gelu %{{.*}} erf : tensor<4x8xf32>
  %16 = part.gelu %15 erf : tensor<4x8xf32>
  // CHECK: part.gelu %{{.*}} tanh : tensor<4x8xf32>
  %17 = part.gelu %16 tanh : tensor<4x8xf32>
  // CHECK: part.cast %{{.*}} : tensor<4x8xf32> -> tensor<4x8xbf16>
  %18 = part.cast %17 : tensor<4x8xf32> -> tensor<4x8xbf16>
  // CHECK: part.cast %{{.*}} : tensor<4x8xbf16> -> tensor<4x8xf32>
  %19 = part.cast %18 : tensor<4x8xbf16> -> tensor<4x8xf32>
  // CHECK: part.cast %{{.*}} : tensor<4x8xi32> -> tensor<4x8xf16>
  %20 = part.cast %ii : tensor<4x8xi32> -> tensor<4x8xf16>
  // CHECK: part.select %{{.*}}, %{{.*}}, %{{.*}} : (tensor<4x8xi32>, tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %21 = part.select %i, %19, %b : (tensor<4x8xi32>, tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  // All three operands broadcast; an i64 condition; integer values.
  // CHECK: part.select %{{.*}}, %{{.*}}, %{{.*}} : (tensor<4x1xi64>, tensor<2x1x8xi32>, tensor<i32>) -> tensor<2x4x8xi32>
  %c64 = part.constant dense<[[1], [0], [1], [0]]> : tensor<4x1xi64>
  %i3 = part.reshape %ii : tensor<4x8xi32> -> tensor<2x2x8xi32>
  %i1 = part.slice %i3 offsets [0, 0, 0] : tensor<2x2x8xi32> -> tensor<2x1x8xi32>
  %zero = part.constant dense<0> : tensor<i32>
  %22 = part.select %c64, %i1, %zero : (tensor<4x1xi64>, tensor<2x1x8xi32>, tensor<i32>) -> tensor<2x4x8xi32>
  return %21 : tensor<4x8xf32>
}

// CHECK-LABEL: func.func @contractions
func.func @contractions(%x: tensor<2x16x64xf32>, %w: tensor<64x256xf32>, %e: tensor<1000x64xf32>,
                        %q: tensor<2x4x16x8xf32>, %k: tensor<2x4x16x8xf32>, %t: tensor<64x16xf32>) -> tensor<2x4x16x16xf32> {
  // CHECK: part.matmul %{{.*}}, %{{.*}} : (tensor<2x16x64xf32>, tensor<64x256xf32>) -> tensor<2x16x256xf32>
  %0 = part.matmul %x, %w : (tensor<2x16x64xf32>, tensor<64x256xf32>) -> tensor<2x16x256xf32>
  // CHECK: part.matmul %{{.*}}, %{{.*}} transpose_b : (tensor<2x16x64xf32>, tensor<1000x64xf32>) -> tensor<2x16x1000xf32>
  %1 = part.matmul %x, %e transpose_b : (tensor<2x16x64xf32>, tensor<1000x64xf32>) -> tensor<2x16x1000xf32>
  // CHECK: part.matmul %{{.*}}, %{{.*}} transpose_a : (tensor<64x16xf32>, tensor<64x256xf32>) -> tensor<16x256xf32>
  %2 = part.matmul %t, %w transpose_a : (tensor<64x16xf32>, tensor<64x256xf32>) -> tensor<16x256xf32>
  // CHECK: part.batch_matmul %{{.*}}, %{{.*}} transpose_b : (tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>) -> tensor<2x4x16x16xf32>
  %3 = part.batch_matmul %q, %k transpose_b : (tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>) -> tensor<2x4x16x16xf32>
  // CHECK: part.batch_matmul %{{.*}}, %{{.*}} transpose_a : (tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>) -> tensor<2x4x8x8xf32>
  %4 = part.batch_matmul %q, %k transpose_a : (tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>) -> tensor<2x4x8x8xf32>
  return %3 : tensor<2x4x16x16xf32>
}

// CHECK-LABEL: func.func @normalisation_and_attention
func.func @normalisation_and_attention(%x: tensor<2x16x64xf32>, %g: tensor<64xf32>, %b: tensor<64xf32>,
    %q: tensor<2x4x16x8xf32>, %kv: tensor<2x2x16x8xf32>, %cos: tensor<16x8xf32>, %sin: tensor<16x8xf32>,
    %logits: tensor<2x16x1000xf32>, %labels: tensor<2x16xi32>) -> tensor<f32> {
  // CHECK: part.softmax %{{.*}} dim 2 : tensor<2x16x64xf32>
  %0 = part.softmax %x dim 2 : tensor<2x16x64xf32>
  // CHECK: part.layer_norm %{{.*}}, %{{.*}}, %{{.*}} : (tensor<2x16x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<2x16x64xf32>
  %1 = part.layer_norm %x, %g, %b : (tensor<2x16x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<2x16x64xf32>
  // The default epsilon (1e-5) is not printed.
  // CHECK: part.layer_norm %{{.*}}, %{{.*}} : (tensor<2x16x64xf32>, tensor<64xf32>) -> tensor<2x16x64xf32>
  %2 = part.layer_norm %x, %g epsilon 1.0e-5 : (tensor<2x16x64xf32>, tensor<64xf32>) -> tensor<2x16x64xf32>
  // CHECK: part.layer_norm %{{.*}}, %{{.*}}, %{{.*}} epsilon 9.99999996E-13 : (tensor<2x16x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<2x16x64xf32>
  %3 = part.layer_norm %x, %g, %b epsilon 1.0e-12 : (tensor<2x16x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<2x16x64xf32>
  // CHECK: part.rms_norm %{{.*}}, %{{.*}} epsilon 9.99999997E-7 : (tensor<2x16x64xf32>, tensor<64xf32>) -> tensor<2x16x64xf32>
  %4 = part.rms_norm %x, %g epsilon 1.0e-6 : (tensor<2x16x64xf32>, tensor<64xf32>) -> tensor<2x16x64xf32>
  // CHECK: part.rotary_embedding %{{.*}}, %{{.*}}, %{{.*}} : (tensor<2x4x16x8xf32>, tensor<16x8xf32>, tensor<16x8xf32>) -> tensor<2x4x16x8xf32>
  %5 = part.rotary_embedding %q, %cos, %sin : (tensor<2x4x16x8xf32>, tensor<16x8xf32>, tensor<16x8xf32>) -> tensor<2x4x16x8xf32>
  // CHECK: part.attention %{{.*}}, %{{.*}}, %{{.*}} causal : (tensor<2x4x16x8xf32>, tensor<2x2x16x8xf32>, tensor<2x2x16x8xf32>) -> tensor<2x4x16x8xf32>
  %6 = part.attention %5, %kv, %kv causal : (tensor<2x4x16x8xf32>, tensor<2x2x16x8xf32>, tensor<2x2x16x8xf32>) -> tensor<2x4x16x8xf32>
  // CHECK: part.attention %{{.*}}, %{{.*}}, %{{.*}} scale 1.250000e-01 : (tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>) -> tensor<2x4x16x8xf32>
  %7 = part.attention %q, %q, %q scale 0.125 : (tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>) -> tensor<2x4x16x8xf32>
  // CHECK: part.attention %{{.*}}, %{{.*}}, %{{.*}} causal window 4 scale 5.000000e-01 : (tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>) -> tensor<2x4x16x8xf32>
  %win = part.attention %q, %q, %q causal window 4 scale 0.5 : (tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>) -> tensor<2x4x16x8xf32>
  // Its gradients, the key's and value's per query head.
  // CHECK: part.attention_grad %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} causal window 4 : (tensor<2x4x16x8xf32>, tensor<2x2x16x8xf32>, tensor<2x2x16x8xf32>, tensor<2x4x16x8xf32>) -> (tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>)
  %dq, %dk, %dv = part.attention_grad %5, %kv, %kv, %6 causal window 4 : (tensor<2x4x16x8xf32>, tensor<2x2x16x8xf32>, tensor<2x2x16x8xf32>, tensor<2x4x16x8xf32>) -> (tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>)
  // CHECK: part.softmax_cross_entropy %{{.*}}, %{{.*}} none : (tensor<2x16x1000xf32>, tensor<2x16xi32>) -> tensor<2x16xf32>
  %8 = part.softmax_cross_entropy %logits, %labels none : (tensor<2x16x1000xf32>, tensor<2x16xi32>) -> tensor<2x16xf32>
  // CHECK: part.softmax_cross_entropy %{{.*}}, %{{.*}} mean : (tensor<2x16x1000xf32>, tensor<2x16xi32>) -> tensor<f32>
  %9 = part.softmax_cross_entropy %logits, %labels mean : (tensor<2x16x1000xf32>, tensor<2x16xi32>) -> tensor<f32>
  // CHECK: part.softmax_cross_entropy %{{.*}}, %{{.*}} sum
  %10 = part.softmax_cross_entropy %logits, %labels sum : (tensor<2x16x1000xf32>, tensor<2x16xi32>) -> tensor<f32>
  return %9 : tensor<f32>
}

// CHECK-LABEL: func.func @reductions
func.func @reductions(%x: tensor<4x8x16xf32>) -> tensor<4xf32> {
  // CHECK: part.reduce_sum %{{.*}} dims [1, 2] : tensor<4x8x16xf32> -> tensor<4xf32>
  %0 = part.reduce_sum %x dims [1, 2] : tensor<4x8x16xf32> -> tensor<4xf32>
  // CHECK: part.reduce_mean %{{.*}} dims [2] keep_dims : tensor<4x8x16xf32> -> tensor<4x8x1xf32>
  %1 = part.reduce_mean %x dims [2] keep_dims : tensor<4x8x16xf32> -> tensor<4x8x1xf32>
  // CHECK: part.reduce_max %{{.*}} dims [0] : tensor<4x8x16xf32> -> tensor<8x16xf32>
  %2 = part.reduce_max %x dims [0] : tensor<4x8x16xf32> -> tensor<8x16xf32>
  return %0 : tensor<4xf32>
}

// CHECK-LABEL: func.func @data_movement
func.func @data_movement(%x: tensor<2x16x64xf32>, %b: tensor<64xf32>, %table: tensor<1000x64xf32>,
                         %ids: tensor<2x16xi32>, %ids64: tensor<3xi64>) -> tensor<2x4x16x16xf32> {
  // CHECK: part.reshape %{{.*}} : tensor<2x16x64xf32> -> tensor<2x16x4x16xf32>
  %0 = part.reshape %x : tensor<2x16x64xf32> -> tensor<2x16x4x16xf32>
  // CHECK: part.transpose %{{.*}} [0, 2, 1, 3] : tensor<2x16x4x16xf32> -> tensor<2x4x16x16xf32>
  %1 = part.transpose %0 [0, 2, 1, 3] : tensor<2x16x4x16xf32> -> tensor<2x4x16x16xf32>
  // CHECK: part.broadcast %{{.*}} : tensor<64xf32> -> tensor<2x16x64xf32>
  %2 = part.broadcast %b : tensor<64xf32> -> tensor<2x16x64xf32>
  // CHECK: part.slice %{{.*}} offsets [0, 0, 32] : tensor<2x16x64xf32> -> tensor<2x16x32xf32>
  %3 = part.slice %x offsets [0, 0, 32] : tensor<2x16x64xf32> -> tensor<2x16x32xf32>
  // CHECK: part.slice %{{.*}} offsets [0, 1, 0] strides [1, 2, 1] : tensor<2x16x64xf32> -> tensor<2x8x64xf32>
  %4 = part.slice %x offsets [0, 1, 0] strides [1, 2, 1] : tensor<2x16x64xf32> -> tensor<2x8x64xf32>
  // CHECK: part.concat %{{.*}}, %{{.*}} dim 2 : (tensor<2x16x32xf32>, tensor<2x16x32xf32>) -> tensor<2x16x64xf32>
  %5 = part.concat %3, %3 dim 2 : (tensor<2x16x32xf32>, tensor<2x16x32xf32>) -> tensor<2x16x64xf32>
  // CHECK: part.gather %{{.*}}, %{{.*}} axis 0 : (tensor<1000x64xf32>, tensor<2x16xi32>) -> tensor<2x16x64xf32>
  %6 = part.gather %table, %ids axis 0 : (tensor<1000x64xf32>, tensor<2x16xi32>) -> tensor<2x16x64xf32>
  // CHECK: part.gather %{{.*}}, %{{.*}} axis 1 : (tensor<1000x64xf32>, tensor<3xi64>) -> tensor<1000x3xf32>
  %7 = part.gather %table, %ids64 axis 1 : (tensor<1000x64xf32>, tensor<3xi64>) -> tensor<1000x3xf32>
  // CHECK: part.pad %{{.*}} offsets [0, 0, 32] : tensor<2x16x32xf32> -> tensor<2x16x64xf32>
  %8 = part.pad %3 offsets [0, 0, 32] : tensor<2x16x32xf32> -> tensor<2x16x64xf32>
  // CHECK: part.pad %{{.*}} offsets [0, 1, 0] strides [1, 2, 1] : tensor<2x8x64xf32> -> tensor<2x16x64xf32>
  %9 = part.pad %4 offsets [0, 1, 0] strides [1, 2, 1] : tensor<2x8x64xf32> -> tensor<2x16x64xf32>
  // CHECK: part.scatter_add %{{.*}}, %{{.*}} axis 0 : (tensor<2x16x64xf32>, tensor<2x16xi32>) -> tensor<1000x64xf32>
  %10 = part.scatter_add %6, %ids axis 0 : (tensor<2x16x64xf32>, tensor<2x16xi32>) -> tensor<1000x64xf32>
  // CHECK: part.scatter_add %{{.*}}, %{{.*}} axis 1 : (tensor<1000x3xf32>, tensor<3xi64>) -> tensor<1000x64xf32>
  %11 = part.scatter_add %7, %ids64 axis 1 : (tensor<1000x3xf32>, tensor<3xi64>) -> tensor<1000x64xf32>
  // CHECK: %{{.*}}, %{{.*}} = part.top_k %{{.*}} : (tensor<2x16x64xf32>) -> (tensor<2x16x2xf32>, tensor<2x16x2xi64>)
  %top, %chosen = part.top_k %6 : (tensor<2x16x64xf32>) -> (tensor<2x16x2xf32>, tensor<2x16x2xi64>)
  // CHECK: part.expert_dispatch %{{.*}}, %{{.*}} : (tensor<2x16x64xf32>, tensor<2x16x2xi64>) -> tensor<4x2x8x64xf32>
  %buf = part.expert_dispatch %6, %chosen : (tensor<2x16x64xf32>, tensor<2x16x2xi64>) -> tensor<4x2x8x64xf32>
  // CHECK: part.expert_combine %{{.*}}, %{{.*}} : (tensor<4x2x8x64xf32>, tensor<2x16x2xi64>) -> tensor<2x16x2x64xf32>
  %slots = part.expert_combine %buf, %chosen : (tensor<4x2x8x64xf32>, tensor<2x16x2xi64>) -> tensor<2x16x2x64xf32>
  return %1 : tensor<2x4x16x16xf32>
}

// CHECK-LABEL: func.func @compare
func.func @compare(%a: tensor<4x8xf32>, %b: tensor<8xf32>, %i: tensor<4x1xi64>, %j: tensor<i64>, %h: tensor<4x8xbf16>) -> tensor<4x8xi32> {
  // CHECK: part.compare eq, %{{.*}}, %{{.*}} : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xi32>
  %0 = part.compare eq, %a, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xi32>
  // CHECK: part.compare ne, %{{.*}}, %{{.*}} : (tensor<8xf32>, tensor<4x8xf32>) -> tensor<4x8xi32>
  %1 = part.compare ne, %b, %a : (tensor<8xf32>, tensor<4x8xf32>) -> tensor<4x8xi32>
  // CHECK: part.compare lt, %{{.*}}, %{{.*}} : (tensor<4x1xi64>, tensor<i64>) -> tensor<4x1xi32>
  %2 = part.compare lt, %i, %j : (tensor<4x1xi64>, tensor<i64>) -> tensor<4x1xi32>
  // CHECK: part.compare le, %{{.*}}, %{{.*}} : (tensor<4x8xbf16>, tensor<4x8xbf16>) -> tensor<4x8xi32>
  %3 = part.compare le, %h, %h : (tensor<4x8xbf16>, tensor<4x8xbf16>) -> tensor<4x8xi32>
  // CHECK: part.compare gt, %{{.*}}, %{{.*}} : (tensor<4x8xi32>, tensor<4x8xi32>) -> tensor<4x8xi32>
  %4 = part.compare gt, %0, %1 : (tensor<4x8xi32>, tensor<4x8xi32>) -> tensor<4x8xi32>
  // CHECK: part.compare ge, %{{.*}}, %{{.*}} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xi32>
  %5 = part.compare ge, %a, %a : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xi32>
  return %5 : tensor<4x8xi32>
}

// CHECK-LABEL: func.func @gradients
// CHECK-SAME: -> (tensor<f32> {part.name = "loss"}, tensor<8xf32> {part.grad_of = 1 : i64, part.name = "grad.w"})
func.func @gradients(%x: tensor<8xf32> {part.role = #part.role<input>},
                     %w: tensor<8xf32> {part.name = "w", part.role = #part.role<parameter>})
    -> (tensor<f32> {part.name = "loss"}, tensor<8xf32> {part.grad_of = 1 : i64, part.name = "grad.w"}) {
  %0 = part.reduce_sum %x dims [0] : tensor<8xf32> -> tensor<f32>
  return %0, %x : tensor<f32>, tensor<8xf32>
}

// Layer membership and recomputed copies (part-recompute) round trip.
// CHECK-LABEL: func.func @layers
func.func @layers(%x: tensor<8xf32>) -> tensor<8xf32> {
  // CHECK: part.neg %{{.*}} {part.layer = 3 : i64} : tensor<8xf32>
  %0 = part.neg %x {part.layer = 3 : i64} : tensor<8xf32>
  // CHECK: part.neg %{{.*}} {part.layer = 3 : i64, part.recomputed} : tensor<8xf32>
  %1 = part.neg %x {part.layer = 3 : i64, part.recomputed} : tensor<8xf32>
  %2 = part.add %0, %1 : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  return %2 : tensor<8xf32>
}

// CHECK-LABEL: func.func @collectives
func.func @collectives(%x: tensor<16x16xf32>, %y: tensor<64x64xf32>) -> tensor<16x16xf32> {
  // CHECK: part.all_reduce %{{.*}} on @mesh axes ["tp"] sum : tensor<16x16xf32>
  %0 = part.all_reduce %x on @mesh axes ["tp"] sum : tensor<16x16xf32>
  // CHECK: part.all_reduce %{{.*}} on @mesh axes ["dp", "tp"] avg : tensor<16x16xf32>
  %1 = part.all_reduce %0 on @mesh axes ["dp", "tp"] avg : tensor<16x16xf32>
  // CHECK: part.all_reduce %{{.*}} on @mesh axes ["dp"] max
  %2 = part.all_reduce %1 on @mesh axes ["dp"] max : tensor<16x16xf32>
  // CHECK: part.all_reduce %{{.*}} on @mesh axes ["dp"] min
  %3 = part.all_reduce %2 on @mesh axes ["dp"] min : tensor<16x16xf32>
  // CHECK: part.all_gather %{{.*}} on @mesh axes ["tp"] dim 1 : tensor<16x16xf32> -> tensor<16x64xf32>
  %4 = part.all_gather %3 on @mesh axes ["tp"] dim 1 : tensor<16x16xf32> -> tensor<16x64xf32>
  // CHECK: part.reduce_scatter %{{.*}} on @mesh axes ["dp"] dim 0 sum : tensor<64x64xf32> -> tensor<32x64xf32>
  %5 = part.reduce_scatter %y on @mesh axes ["dp"] dim 0 sum : tensor<64x64xf32> -> tensor<32x64xf32>
  // CHECK: part.all_to_all %{{.*}} on @mesh axes ["tp"] split_dim 0 concat_dim 1 : tensor<16x16xf32> -> tensor<4x64xf32>
  %6 = part.all_to_all %3 on @mesh axes ["tp"] split_dim 0 concat_dim 1 : tensor<16x16xf32> -> tensor<4x64xf32>
  // CHECK: part.all_to_all %{{.*}} on @mesh axes ["tp"] split_dim 1 concat_dim 1 : tensor<16x16xf32> -> tensor<16x16xf32>
  %7 = part.all_to_all %3 on @mesh axes ["tp"] split_dim 1 concat_dim 1 : tensor<16x16xf32> -> tensor<16x16xf32>
  // CHECK: part.collective_permute %{{.*}} on @mesh axes ["tp"] pairs {{\[}}[0, 1], [1, 2], [2, 3], [3, 0]] : tensor<16x16xf32>
  %8 = part.collective_permute %3 on @mesh axes ["tp"] pairs [[0, 1], [1, 2], [2, 3], [3, 0]] : tensor<16x16xf32>
  // CHECK: part.send %{{.*}} to @stage1 channel 0 : tensor<16x16xf32>
  part.send %8 to @stage1 channel 0 : tensor<16x16xf32>
  // CHECK: part.recv from @stage0 channel 0 : tensor<16x16xf32>
  %9 = part.recv from @stage0 channel 0 : tensor<16x16xf32>
  return %9 : tensor<16x16xf32>
}

// A declaration has no entry block; its argument shardings are checked
// against the signature.
// CHECK-LABEL: func.func private @declaration
// CHECK-SAME: part.sharding = #part.sharding<@mesh, [{"dp"}, {"tp"}]>
func.func private @declaration(%x: tensor<8x16xf32> {part.sharding = #part.sharding<@mesh, [{"dp"}, {"tp"}]>}) -> (tensor<8x16xf32> {part.sharding = #part.sharding<@mesh, [{}, {}]>})

// A per-device program: types are one device's shards, so a local dimension
// of 3 split over "tp" (global 12) is fine.
// CHECK-LABEL: func.func @spmd_program
// CHECK-SAME: part.name = "w"
// CHECK-SAME: attributes {part.spmd = @mesh}
func.func @spmd_program(%w: tensor<3x5xf32> {part.name = "w", part.role = #part.role<parameter>, part.sharding = #part.sharding<@mesh, [{"tp"}, {}]>})
    -> (tensor<3x5xf32> {part.name = "y", part.sharding = #part.sharding<@mesh, [{"tp"}, {}]>}) attributes {part.spmd = @mesh} {
  %0 = part.neg %w {part.sharding = #part.sharding<@mesh, [{"tp"}, {}]>} : tensor<3x5xf32>
  return %0 : tensor<3x5xf32>
}

// CHECK-LABEL: func.func @all_slice
// CHECK: part.all_slice %{{.*}} on @mesh axes ["dp", "tp"] dim 0 : tensor<16x4xf32> -> tensor<2x4xf32>
func.func @all_slice(%x: tensor<16x4xf32>) -> tensor<2x4xf32> {
  %0 = part.all_slice %x on @mesh axes ["dp", "tp"] dim 0 : tensor<16x4xf32> -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// CHECK-LABEL: func.func @axis_index
// CHECK: part.axis_index on @mesh axes ["dp", "tp"] : tensor<i32>
func.func @axis_index() -> tensor<i32> {
  %0 = part.axis_index on @mesh axes ["dp", "tp"] : tensor<i32>
  return %0 : tensor<i32>
}
