func.func @matmul_rhs_rank(%a: tensor<2x8xf32>, %b: tensor<2x8x4xf32>) -> tensor<2x4xf32> {
  %0 = part.matmul %a, %b : (tensor<2x8xf32>, tensor<2x8x4xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}
