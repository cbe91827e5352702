func.func @layer_norm_result(%x: tensor<4x8xf32>, %g: tensor<8xf32>) -> tensor<4x8xbf16> {
  %0 = part.layer_norm %x, %g : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xbf16>
  return %0 : tensor<4x8xbf16>
}
