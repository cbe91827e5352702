func.func @rotary_table_type(%x: tensor<4x8xf32>, %c: tensor<4x8xf16>) -> tensor<4x8xf32> {
  %0 = part.rotary_embedding %x, %c, %c : (tensor<4x8xf32>, tensor<4x8xf16>, tensor<4x8xf16>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}
