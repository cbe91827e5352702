func.func @cross_entropy_labels(%l: tensor<2x16x100xf32>, %y: tensor<2x8xi32>) -> tensor<f32> {
  %0 = part.softmax_cross_entropy %l, %y mean : (tensor<2x16x100xf32>, tensor<2x8xi32>) -> tensor<f32>
  return %0 : tensor<f32>
}
