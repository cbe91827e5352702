part.mesh @mesh = <["dp"=2, "tp"=4]>
func.func @bad_op_sharding(%x: tensor<8x16xf32>, %w: tensor<16x4xf32>) -> tensor<8x4xf32> {
  %0 = part.matmul %x, %w {part.sharding = #part.sharding<@mesh, [{"x"}, {}]>} : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
  return %0 : tensor<8x4xf32>
}
