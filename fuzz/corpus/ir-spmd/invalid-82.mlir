func.func @broadcast_rank(%x: tensor<4x8xf32>) -> tensor<8xf32> {
  %0 = part.broadcast %x : tensor<4x8xf32> -> tensor<8xf32>
  return %0 : tensor<8xf32>
}
