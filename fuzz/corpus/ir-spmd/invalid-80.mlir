func.func @transpose_not_permutation(%x: tensor<4x8xf32>) -> tensor<8x8xf32> {
  %0 = part.transpose %x [1, 1] : tensor<4x8xf32> -> tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}
