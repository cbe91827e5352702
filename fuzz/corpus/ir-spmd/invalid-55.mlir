func.func @rms_norm_scale(%x: tensor<4x8xf32>, %g: tensor<8x1xf32>) -> tensor<4x8xf32> {
  %0 = part.rms_norm %x, %g : (tensor<4x8xf32>, tensor<8x1xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}
