func.func @batch_matmul_element_types(%a: tensor<3x2x8xf16>, %b: tensor<3x8x4xf32>) -> tensor<3x2x4xf16> {
  %0 = part.batch_matmul %a, %b : (tensor<3x2x8xf16>, tensor<3x8x4xf32>) -> tensor<3x2x4xf16>
  return %0 : tensor<3x2x4xf16>
}
