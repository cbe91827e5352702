func.func @batch_matmul_contracting(%a: tensor<3x2x8xf32>, %b: tensor<3x8x4xf32>) -> tensor<3x2x8xf32> {
  %0 = part.batch_matmul %a, %b transpose_b : (tensor<3x2x8xf32>, tensor<3x8x4xf32>) -> tensor<3x2x8xf32>
  return %0 : tensor<3x2x8xf32>
}
