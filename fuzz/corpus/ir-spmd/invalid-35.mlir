func.func @select_condition_type(%c: tensor<4xf32>, %a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = part.select %c, %a, %a : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
