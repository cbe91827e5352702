func.func @matmul_contracting(%a: tensor<2x8xf32>, %b: tensor<4x8xf32>) -> tensor<2x8xf32> {
  %0 = part.matmul %a, %b : (tensor<2x8xf32>, tensor<4x8xf32>) -> tensor<2x8xf32>
  return %0 : tensor<2x8xf32>
}
