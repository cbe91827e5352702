func.func @concat_dim(%x: tensor<4x8xf32>) -> tensor<4x16xf32> {
  %0 = part.concat %x, %x dim 2 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x16xf32>
  return %0 : tensor<4x16xf32>
}
