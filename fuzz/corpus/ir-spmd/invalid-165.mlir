func.func @bad_gradient_of(%w: tensor<8xf32>) -> tensor<8xf32> {
  %0 = part.add %w, %w {part.gradient_of = -1 : i64} : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}
