func.func @scatter_add_shape(%u: tensor<2x8xf32>, %i: tensor<2x3xi64>) -> tensor<100x8xf32> {
  %0 = part.scatter_add %u, %i axis 0 : (tensor<2x8xf32>, tensor<2x3xi64>) -> tensor<100x8xf32>
  return %0 : tensor<100x8xf32>
}
