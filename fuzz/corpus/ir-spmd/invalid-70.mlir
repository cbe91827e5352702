func.func @attention_head_size(%q: tensor<2x4x16x8xf32>, %k: tensor<2x4x16x4xf32>) -> tensor<2x4x16x4xf32> {
  %0 = part.attention %q, %k, %k : (tensor<2x4x16x8xf32>, tensor<2x4x16x4xf32>, tensor<2x4x16x4xf32>) -> tensor<2x4x16x4xf32>
  return %0 : tensor<2x4x16x4xf32>
}
