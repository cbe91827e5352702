func.func @compare_result_type(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = part.compare eq, %a, %a : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
