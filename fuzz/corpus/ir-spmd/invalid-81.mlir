func.func @broadcast_element_type(%x: tensor<8xf32>) -> tensor<4x8xf16> {
  %0 = part.broadcast %x : tensor<8xf32> -> tensor<4x8xf16>
  return %0 : tensor<4x8xf16>
}
