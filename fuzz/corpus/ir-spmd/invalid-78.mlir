func.func @reshape_element_type(%x: tensor<4x8xf32>) -> tensor<32xf16> {
  %0 = part.reshape %x : tensor<4x8xf32> -> tensor<32xf16>
  return %0 : tensor<32xf16>
}
