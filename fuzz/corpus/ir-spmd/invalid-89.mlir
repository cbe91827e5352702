func.func @pad_rank(%x: tensor<4x8xf32>) -> tensor<8xf32> {
  %0 = part.pad %x offsets [0, 0] : tensor<4x8xf32> -> tensor<8xf32>
  return %0 : tensor<8xf32>
}
