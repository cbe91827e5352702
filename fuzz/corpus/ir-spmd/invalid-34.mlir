func.func @binary_result(%a: tensor<4x8xf32>, %b: tensor<8xf32>) -> tensor<8xf32> {
  %0 = part.sub %a, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}
