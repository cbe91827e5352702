func.func @select_broadcast(%c: tensor<4x1xi32>, %a: tensor<8xf32>, %b: tensor<3x1xf32>) -> tensor<4x8xf32> {
  %0 = part.select %c, %a, %b : (tensor<4x1xi32>, tensor<8xf32>, tensor<3x1xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}
