func.func @cast_shape(%x: tensor<4x8xf32>) -> tensor<8x4xbf16> {
  %0 = part.cast %x : tensor<4x8xf32> -> tensor<8x4xbf16>
  return %0 : tensor<8x4xbf16>
}
