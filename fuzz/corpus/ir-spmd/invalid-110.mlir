func.func @concat_shapes(%x: tensor<4x8xf32>, %y: tensor<2x8xf32>) -> tensor<4x16xf32> {
  %0 = part.concat %x, %y dim 1 : (tensor<4x8xf32>, tensor<2x8xf32>) -> tensor<4x16xf32>
  return %0 : tensor<4x16xf32>
}
