func.func @scatter_add_element_type(%u: tensor<4x8xf16>, %i: tensor<4xi32>) -> tensor<100x8xf32> {
  %0 = part.scatter_add %u, %i axis 0 : (tensor<4x8xf16>, tensor<4xi32>) -> tensor<100x8xf32>
  return %0 : tensor<100x8xf32>
}
