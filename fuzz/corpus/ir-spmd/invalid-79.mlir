func.func @transpose_size(%x: tensor<4x8xf32>) -> tensor<8x4xf32> {
  %0 = part.transpose %x [1, 0, 2] : tensor<4x8xf32> -> tensor<8x4xf32>
  return %0 : tensor<8x4xf32>
}
