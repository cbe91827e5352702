func.func @compare_direction(%a: tensor<4xf32>) -> tensor<4xi32> {
  %0 = part.compare less, %a, %a : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi32>
  return %0 : tensor<4xi32>
}
