func.func @rotary_table_shape(%x: tensor<2x4x8xf32>, %c: tensor<4x8xf32>, %s: tensor<8x8xf32>) -> tensor<2x4x8xf32> {
  %0 = part.rotary_embedding %x, %c, %s : (tensor<2x4x8xf32>, tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<2x4x8xf32>
  return %0 : tensor<2x4x8xf32>
}
