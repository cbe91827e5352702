func.func @rotary_rank(%x: tensor<8xf32>, %c: tensor<1x8xf32>) -> tensor<8xf32> {
  %0 = part.rotary_embedding %x, %c, %c : (tensor<8xf32>, tensor<1x8xf32>, tensor<1x8xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}
