func.func @attention_causal_lengths(%q: tensor<2x4x1x8xf32>, %k: tensor<2x4x16x8xf32>) -> tensor<2x4x1x8xf32> {
  %0 = part.attention %q, %k, %k causal : (tensor<2x4x1x8xf32>, tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>) -> tensor<2x4x1x8xf32>
  return %0 : tensor<2x4x1x8xf32>
}
