// A forward function: part-optimizer needs part-autodiff's gradients.

func.func @forward(%w: tensor<4xf32> {part.name = "w", part.role = #part.role<parameter>}) -> tensor<f32> {
  %s = part.reduce_sum %w dims [0] : tensor<4xf32> -> tensor<f32>
  return %s : tensor<f32>
}
