func.func @cross_entropy_float_labels(%l: tensor<2x100xf32>, %y: tensor<2xf32>) -> tensor<f32> {
  %0 = part.softmax_cross_entropy %l, %y mean : (tensor<2x100xf32>, tensor<2xf32>) -> tensor<f32>
  return %0 : tensor<f32>
}
