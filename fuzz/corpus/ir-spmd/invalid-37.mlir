func.func @compare_element_types(%a: tensor<4xf32>, %b: tensor<4xi32>) -> tensor<4xi32> {
  %0 = part.compare lt, %a, %b : (tensor<4xf32>, tensor<4xi32>) -> tensor<4xi32>
  return %0 : tensor<4xi32>
}
