func.func @softmax_negative_dim(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = part.softmax %x dim -1 : tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}
