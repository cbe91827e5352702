func.func private @grad_of_not_index(%w: tensor<8xf32>) -> (tensor<f32>, tensor<8xf32> {part.grad_of = "w"})
