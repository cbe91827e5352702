func.func @compare_broadcast(%a: tensor<4x3xf32>, %b: tensor<4xf32>) -> tensor<4x3xi32> {
  %0 = part.compare eq, %a, %b : (tensor<4x3xf32>, tensor<4xf32>) -> tensor<4x3xi32>
  return %0 : tensor<4x3xi32>
}
