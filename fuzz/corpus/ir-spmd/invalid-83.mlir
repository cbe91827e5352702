func.func @broadcast_dim(%x: tensor<3xf32>) -> tensor<4x8xf32> {
  %0 = part.broadcast %x : tensor<3xf32> -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}
