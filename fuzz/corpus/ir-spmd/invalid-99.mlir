func.func @top_k_index_type(%x: tensor<4x8xf32>) {
  %v, %i = part.top_k %x : (tensor<4x8xf32>) -> (tensor<4x2xf32>, tensor<4x2xi32>)
  return
}
