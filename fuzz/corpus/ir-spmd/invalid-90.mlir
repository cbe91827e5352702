func.func @pad_offsets(%x: tensor<4x8xf32>) -> tensor<4x16xf32> {
  %0 = part.pad %x offsets [0] : tensor<4x8xf32> -> tensor<4x16xf32>
  return %0 : tensor<4x16xf32>
}
