func.func @scatter_add_integers(%u: tensor<4xi32>, %i: tensor<4xi32>) -> tensor<10xi32> {
  %0 = part.scatter_add %u, %i axis 0 : (tensor<4xi32>, tensor<4xi32>) -> tensor<10xi32>
  return %0 : tensor<10xi32>
}
