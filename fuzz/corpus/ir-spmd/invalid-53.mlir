func.func @layer_norm_scalar(%x: tensor<f32>, %g: tensor<1xf32>) -> tensor<f32> {
  %0 = part.layer_norm %x, %g : (tensor<f32>, tensor<1xf32>) -> tensor<f32>
  return %0 : tensor<f32>
}
