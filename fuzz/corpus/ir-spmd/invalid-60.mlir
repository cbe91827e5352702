func.func @attention_rank(%q: tensor<4x16x8xf32>) -> tensor<4x16x8xf32> {
  %0 = part.attention %q, %q, %q : (tensor<4x16x8xf32>, tensor<4x16x8xf32>, tensor<4x16x8xf32>) -> tensor<4x16x8xf32>
  return %0 : tensor<4x16x8xf32>
}
