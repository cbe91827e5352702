func.func @top_k_shape(%x: tensor<4x8xf32>) {
  %v, %i = part.top_k %x : (tensor<4x8xf32>) -> (tensor<4x2xf32>, tensor<3x2xi64>)
  return
}
