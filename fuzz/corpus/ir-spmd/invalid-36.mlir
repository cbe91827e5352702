func.func @select_element_types(%c: tensor<4xi32>, %a: tensor<4xf32>, %b: tensor<4xbf16>) -> tensor<4xf32> {
  %0 = part.select %c, %a, %b : (tensor<4xi32>, tensor<4xf32>, tensor<4xbf16>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
