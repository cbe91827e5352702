func.func @reduce_no_dims(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = part.reduce_sum %x dims [] : tensor<4x8xf32> -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}
