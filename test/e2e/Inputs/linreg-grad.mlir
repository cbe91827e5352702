// Linear regression with its gradient written by hand (the form part-autodiff
// produces): loss = mean((x W + b - y)^2), and dloss/dW, dloss/db as results
// marked part.grad_of. The input of test/e2e/optimizer.mlir.
func.func @linreg(
    %x: tensor<8x4xf32> {part.name = "x", part.role = #part.role<input>},
    %y: tensor<8x3xf32> {part.name = "y", part.role = #part.role<label>},
    %w: tensor<4x3xf32> {part.name = "w", part.role = #part.role<parameter>},
    %b: tensor<3xf32> {part.name = "b", part.role = #part.role<parameter>})
    -> (tensor<f32> {part.name = "loss"},
        tensor<4x3xf32> {part.name = "grad.w", part.grad_of = 2},
        tensor<3xf32> {part.name = "grad.b", part.grad_of = 3}) {
  %xw = part.matmul %x, %w : (tensor<8x4xf32>, tensor<4x3xf32>) -> tensor<8x3xf32>
  %pred = part.add %xw, %b : (tensor<8x3xf32>, tensor<3xf32>) -> tensor<8x3xf32>
  %d = part.sub %pred, %y : (tensor<8x3xf32>, tensor<8x3xf32>) -> tensor<8x3xf32>
  %sq = part.mul %d, %d : (tensor<8x3xf32>, tensor<8x3xf32>) -> tensor<8x3xf32>
  %loss = part.reduce_mean %sq dims [0, 1] : tensor<8x3xf32> -> tensor<f32>
  %scale = part.constant dense<0.0833333358> : tensor<f32>
  %g = part.mul %d, %scale : (tensor<8x3xf32>, tensor<f32>) -> tensor<8x3xf32>
  %gw = part.matmul %x, %g transpose_a : (tensor<8x4xf32>, tensor<8x3xf32>) -> tensor<4x3xf32>
  %gb = part.reduce_sum %g dims [0] : tensor<8x3xf32> -> tensor<3xf32>
  return %loss, %gw, %gb : tensor<f32>, tensor<4x3xf32>, tensor<3xf32>
}
