func.func @rotary_odd(%x: tensor<4x7xf32>, %c: tensor<4x7xf32>) -> tensor<4x7xf32> {
  %0 = part.rotary_embedding %x, %c, %c : (tensor<4x7xf32>, tensor<4x7xf32>, tensor<4x7xf32>) -> tensor<4x7xf32>
  return %0 : tensor<4x7xf32>
}
