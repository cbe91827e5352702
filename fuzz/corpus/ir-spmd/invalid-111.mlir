func.func @gather_axis(%t: tensor<100x8xf32>, %i: tensor<4xi32>) -> tensor<4x8xf32> {
  %0 = part.gather %t, %i axis 2 : (tensor<100x8xf32>, tensor<4xi32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}
