// RUN: partition-opt %s --part-print-sharding-rules -split-input-file -verify-diagnostics -o /dev/null
// Every op kind's sharding rule: factors a, b, ... per dimension (`1` for a
// broadcast dimension), their sizes, and the factors that are not parallel.

part.mesh @mesh = <["x"=2]>

func.func @rules(%x: tensor<4x8xf32>, %b: tensor<8xf32>, %c: tensor<4x1xf32>, %w: tensor<8x16xf32>, %wt: tensor<16x8xf32>,
                 %q: tensor<2x4x6x8xf32>, %k: tensor<2x2x6x8xf32>, %v: tensor<2x2x6x3xf32>, %l: tensor<4x8xi32>, %lg: tensor<4x8x10xf32>,
                 %r: tensor<6x4xf32>, %ids: tensor<5xi32>, %t: tensor<3x4x8xf32>, %cs: tensor<4x8xf32>,
                 %lg16: tensor<4x8x16xf32>) {
  // expected-remark @+1 {{sharding rule ([a, b], [b]) -> ([a, b]) a=4 b=8}}
  %0 = part.add %x, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  // expected-remark @+1 {{sharding rule ([a, b], [a, 1]) -> ([a, b]) a=4 b=8}}
  %1 = part.mul %x, %c : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  // expected-remark @+1 {{sharding rule ([a, b]) -> ([a, b]) a=4 b=8}}
  %2 = part.gelu %x tanh : tensor<4x8xf32>
  // expected-remark @+1 {{sharding rule ([a, b]) -> ([a, b]) a=4 b=8}}
  %3 = part.cast %x : tensor<4x8xf32> -> tensor<4x8xbf16>
  // expected-remark @+1 {{sharding rule () -> ([a, b]) a=4 b=8}}
  %4 = part.constant dense<1.0> : tensor<4x8xf32>
  // expected-remark @+1 {{sharding rule ([a, b]) -> ([a, b]) a=4 b=8}}
  %5 = part.sharding_constraint %x <@mesh, [{}, {}]> : tensor<4x8xf32>
  // expected-remark @+1 {{sharding rule ([c]) -> ([a, b, c]) a=3 b=4 c=8}}
  %6 = part.broadcast %b : tensor<8xf32> -> tensor<3x4x8xf32>
  // expected-remark @+1 {{sharding rule ([a, b], [b, c]) -> ([a, c]) a=4 b=8 c=16; b reduction}}
  %7 = part.matmul %x, %w : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  // expected-remark @+1 {{sharding rule ([a, b], [c, b]) -> ([a, c]) a=4 b=8 c=16; b reduction}}
  %8 = part.matmul %x, %wt transpose_b : (tensor<4x8xf32>, tensor<16x8xf32>) -> tensor<4x16xf32>
  // expected-remark @+1 {{sharding rule ([b, a], [b, c]) -> ([a, c]) a=8 b=4 c=8; b reduction}}
  %9 = part.matmul %x, %x transpose_a : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<8x8xf32>
  // expected-remark @+1 {{sharding rule ([a, b, c, d], [a, b, e, d]) -> ([a, b, c, e]) a=2 b=4 c=6 d=8 e=6; d reduction}}
  %10 = part.batch_matmul %q, %q transpose_b : (tensor<2x4x6x8xf32>, tensor<2x4x6x8xf32>) -> tensor<2x4x6x6xf32>
  // expected-remark @+1 {{sharding rule ([a, b]) -> ([a, b]) a=4 b=8; b need-replication}}
  %11 = part.softmax %x dim 1 : tensor<4x8xf32>
  // expected-remark @+1 {{sharding rule ([a, b], [b], [b]) -> ([a, b]) a=4 b=8; b need-replication}}
  %12 = part.layer_norm %x, %b, %b : (tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  // expected-remark @+1 {{sharding rule ([a, b], [b]) -> ([a, b]) a=4 b=8; b need-replication}}
  %13 = part.rms_norm %x, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  // expected-remark @+1 {{sharding rule ([a, b, c], [b, c], [b, c]) -> ([a, b, c]) a=3 b=4 c=8; c need-replication}}
  %14 = part.rotary_embedding %t, %cs, %cs : (tensor<3x4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<3x4x8xf32>
  // expected-remark @+1 {{sharding rule ([a, b c, d, f], [a, b, e, f], [a, b, e, g]) -> ([a, b c, d, g]) a=2 b=2 c=2 d=6 e=6 f=8 g=3; d need-replication, e need-replication, f need-replication}}
  %15 = part.attention %q, %k, %v causal : (tensor<2x4x6x8xf32>, tensor<2x2x6x8xf32>, tensor<2x2x6x3xf32>) -> tensor<2x4x6x3xf32>
  // expected-remark @+1 {{sharding rule ([a, b, c, e], [a, b, d, e], [a, b, d, f]) -> ([a, b, c, f]) a=2 b=4 c=6 d=6 e=8 f=8; d need-replication, e need-replication}}
  %16 = part.attention %q, %q, %q : (tensor<2x4x6x8xf32>, tensor<2x4x6x8xf32>, tensor<2x4x6x8xf32>) -> tensor<2x4x6x8xf32>
  // expected-remark @+1 {{sharding rule ([a, b, c], [a, b]) -> ([]) a=4 b=8 c=10; a reduction, b reduction, c need-replication}}
  %17 = part.softmax_cross_entropy %lg, %l mean : (tensor<4x8x10xf32>, tensor<4x8xi32>) -> tensor<f32>
  // expected-remark @+1 {{sharding rule ([a, b, c], [a, b]) -> ([a, b]) a=4 b=8 c=10; c need-replication}}
  %18 = part.softmax_cross_entropy %lg, %l none : (tensor<4x8x10xf32>, tensor<4x8xi32>) -> tensor<4x8xf32>
  // expected-remark @+1 {{sharding rule ([a, b, c]) -> ([a, c]) a=3 b=4 c=8; b reduction}}
  %19 = part.reduce_sum %t dims [1] : tensor<3x4x8xf32> -> tensor<3x8xf32>
  // expected-remark @+1 {{sharding rule ([a, b, c]) -> ([a, b, 1]) a=3 b=4 c=8; c reduction}}
  %20 = part.reduce_mean %t dims [2] keep_dims : tensor<3x4x8xf32> -> tensor<3x4x1xf32>
  // expected-remark @+1 {{sharding rule ([a, b, c]) -> ([b, c]) a=3 b=4 c=8; a need-replication}}
  %21 = part.reduce_max %t dims [0] : tensor<3x4x8xf32> -> tensor<4x8xf32>
  // expected-remark @+1 {{sharding rule ([a, b, c]) -> ([a, b c]) a=3 b=4 c=8}}
  %22 = part.reshape %t : tensor<3x4x8xf32> -> tensor<3x32xf32>
  // expected-remark @+1 {{sharding rule ([a, b c, d]) -> ([a, b, c, d, 1]) a=3 b=2 c=2 d=8}}
  %23 = part.reshape %t : tensor<3x4x8xf32> -> tensor<3x2x2x8x1xf32>
  // expected-remark @+1 {{sharding rule ([a, b]) -> ([c, d]) a=6 b=4 c=4 d=6; a need-replication, b need-replication, c need-replication, d need-replication}}
  %24 = part.reshape %r : tensor<6x4xf32> -> tensor<4x6xf32>
  // expected-remark @+1 {{sharding rule ([a b, c]) -> ([a, b c]) a=2 b=3 c=4}}
  %25 = part.reshape %r : tensor<6x4xf32> -> tensor<2x12xf32>
  // expected-remark @+1 {{sharding rule ([a, b, c]) -> ([c, a, b]) a=3 b=4 c=8}}
  %26 = part.transpose %t [2, 0, 1] : tensor<3x4x8xf32> -> tensor<8x3x4xf32>
  // expected-remark @+1 {{sharding rule ([a, b]) -> ([a, c]) a=4 b=8 c=4; b need-replication, c need-replication}}
  %27 = part.slice %x offsets [0, 2] : tensor<4x8xf32> -> tensor<4x4xf32>
  // expected-remark @+1 {{sharding rule ([a, c]) -> ([b, c]) a=4 b=2 c=8; a need-replication, b need-replication}}
  %28 = part.slice %x offsets [0, 0] strides [2, 1] : tensor<4x8xf32> -> tensor<2x8xf32>
  // expected-remark @+1 {{sharding rule ([a, b], [a, c]) -> ([a, d]) a=4 b=8 c=8 d=16; b need-replication, c need-replication, d need-replication}}
  %29 = part.concat %x, %x dim 1 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x16xf32>
  // expected-remark @+1 {{sharding rule ([a, b], [c]) -> ([c, b]) a=8 b=16 c=5; a need-replication}}
  %30 = part.gather %w, %ids axis 0 : (tensor<8x16xf32>, tensor<5xi32>) -> tensor<5x16xf32>
  // expected-remark @+1 {{sharding rule ([a, b], [c, d]) -> ([a, c, d]) a=8 b=16 c=4 d=8; b need-replication}}
  %31 = part.gather %w, %l axis 1 : (tensor<8x16xf32>, tensor<4x8xi32>) -> tensor<8x4x8xf32>
  // expected-remark @+1 {{sharding rule ([a, b]) -> ([a, b]) a=4 b=8}}
  %32 = part.erf %x : tensor<4x8xf32>
  // expected-remark @+1 {{sharding rule ([a, b]) -> ([a, b]) a=4 b=8}}
  %cos = part.cos %x : tensor<4x8xf32>
  // expected-remark @+1 {{sharding rule ([a, b]) -> ([a, b]) a=4 b=8}}
  %sin = part.sin %x : tensor<4x8xf32>
  // Select broadcasts all three operands like the binary ops.
  // expected-remark @+1 {{sharding rule ([b, c], [a, b, c], [b, 1]) -> ([a, b, c]) a=3 b=4 c=8}}
  %33 = part.select %l, %t, %c : (tensor<4x8xi32>, tensor<3x4x8xf32>, tensor<4x1xf32>) -> tensor<3x4x8xf32>
  // Compare is elementwise with broadcasting; its result is i32.
  // expected-remark @+1 {{sharding rule ([a, b], [b]) -> ([a, b]) a=4 b=8}}
  %34 = part.compare lt, %x, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xi32>
  // Pad is the transpose of slice: a padded dimension stays whole.
  // expected-remark @+1 {{sharding rule ([a, b]) -> ([a, c]) a=4 b=8 c=16; b need-replication, c need-replication}}
  %35 = part.pad %x offsets [0, 2] : tensor<4x8xf32> -> tensor<4x16xf32>
  // Scatter-add is the transpose of gather: the index dimensions are summed
  // over (reduction), the scattered dimension stays whole.
  // expected-remark @+1 {{sharding rule ([c, d, b], [c, d]) -> ([a, b]) a=8 b=16 c=4 d=8; a need-replication, c reduction, d reduction}}
  %36 = part.scatter_add %lg16, %l axis 0 : (tensor<4x8x16xf32>, tensor<4x8xi32>) -> tensor<8x16xf32>
  return
}

// -----

// Collectives appear only after partitioning and need no rule.
part.mesh @mesh = <["x"=2]>
func.func @collective(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = part.all_reduce %x on @mesh axes ["x"] sum : tensor<4xf32>
  return %0 : tensor<4xf32>
}
