func.func private @grad_of_range(%w: tensor<8xf32>) -> (tensor<f32>, tensor<8xf32> {part.grad_of = 1 : i64})
