func.func @softmax_dim(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = part.softmax %x dim 2 : tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}
