func.func @batch_matmul_batch(%a: tensor<3x2x8xf32>, %b: tensor<5x8x4xf32>) -> tensor<3x2x4xf32> {
  %0 = part.batch_matmul %a, %b : (tensor<3x2x8xf32>, tensor<5x8x4xf32>) -> tensor<3x2x4xf32>
  return %0 : tensor<3x2x4xf32>
}
