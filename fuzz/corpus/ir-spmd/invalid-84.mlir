func.func @slice_rank(%x: tensor<4x8xf32>) -> tensor<4xf32> {
  %0 = part.slice %x offsets [0, 0] : tensor<4x8xf32> -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
