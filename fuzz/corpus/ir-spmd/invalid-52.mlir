func.func @layer_norm_bias_type(%x: tensor<4x8xf32>, %g: tensor<8xf32>, %b: tensor<8xbf16>) -> tensor<4x8xf32> {
  %0 = part.layer_norm %x, %g, %b : (tensor<4x8xf32>, tensor<8xf32>, tensor<8xbf16>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}
