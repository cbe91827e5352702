func.func @attention_window_zero(%q: tensor<2x4x16x8xf32>) -> tensor<2x4x16x8xf32> {
  %0 = part.attention %q, %q, %q causal window 0 : (tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>) -> tensor<2x4x16x8xf32>
  return %0 : tensor<2x4x16x8xf32>
}
