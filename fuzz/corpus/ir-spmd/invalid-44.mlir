func.func @matmul_element_types(%a: tensor<2x8xf32>, %b: tensor<8x4xbf16>) -> tensor<2x4xf32> {
  %0 = part.matmul %a, %b : (tensor<2x8xf32>, tensor<8x4xbf16>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}
