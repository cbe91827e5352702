// RUN: partition-opt %s --verify-diagnostics --part-spmd="mesh=dp:4,tp:4" -o /dev/null

// 2 key/value heads on tp (size 4) would make tp two axes, which a sharding
// the user wrote over tp cannot follow.
part.mesh @mesh = <["dp"=4, "tp"=4]>
// expected-error @+1 {{'func.func' op has a sharding over tp, which must become two axes (2 x 2) to keep copies of the 2 key/value heads; leave tp to the tensor-parallel pass}}
func.func @kv_copies_annotated(%x: tensor<4x8x16xf32>, %wq: tensor<16x16xf32> {part.role = #part.role<parameter>},
                    %wk: tensor<16x8xf32> {part.role = #part.role<parameter>},
                    %wv: tensor<16x8xf32> {part.role = #part.role<parameter>},
                    %wo: tensor<16x16xf32> {part.role = #part.role<parameter>, part.sharding = #part.sharding<@mesh, [{"tp"}, {}]>}) -> tensor<4x8x16xf32> {
  %q0 = part.matmul %x, %wq : (tensor<4x8x16xf32>, tensor<16x16xf32>) -> tensor<4x8x16xf32>
  %q1 = part.reshape %q0 : tensor<4x8x16xf32> -> tensor<4x8x4x4xf32>
  %q = part.transpose %q1 [0, 2, 1, 3] : tensor<4x8x4x4xf32> -> tensor<4x4x8x4xf32>
  %k0 = part.matmul %x, %wk : (tensor<4x8x16xf32>, tensor<16x8xf32>) -> tensor<4x8x8xf32>
  %k1 = part.reshape %k0 : tensor<4x8x8xf32> -> tensor<4x8x2x4xf32>
  %k = part.transpose %k1 [0, 2, 1, 3] : tensor<4x8x2x4xf32> -> tensor<4x2x8x4xf32>
  %v0 = part.matmul %x, %wv : (tensor<4x8x16xf32>, tensor<16x8xf32>) -> tensor<4x8x8xf32>
  %v1 = part.reshape %v0 : tensor<4x8x8xf32> -> tensor<4x8x2x4xf32>
  %v = part.transpose %v1 [0, 2, 1, 3] : tensor<4x8x2x4xf32> -> tensor<4x2x8x4xf32>
  %a = part.attention %q, %k, %v : (tensor<4x4x8x4xf32>, tensor<4x2x8x4xf32>, tensor<4x2x8x4xf32>) -> tensor<4x4x8x4xf32>
  %t = part.transpose %a [0, 2, 1, 3] : tensor<4x4x8x4xf32> -> tensor<4x8x4x4xf32>
  %r = part.reshape %t : tensor<4x8x4x4xf32> -> tensor<4x8x16xf32>
  %o = part.matmul %r, %wo : (tensor<4x8x16xf32>, tensor<16x16xf32>) -> tensor<4x8x16xf32>
  return %o : tensor<4x8x16xf32>
}
