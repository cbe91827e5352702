func.func @attention_kv_mismatch(%q: tensor<2x4x16x8xf32>, %k: tensor<2x4x16x8xf32>, %v: tensor<2x4x12x8xf32>) -> tensor<2x4x16x8xf32> {
  %0 = part.attention %q, %k, %v : (tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>, tensor<2x4x12x8xf32>) -> tensor<2x4x16x8xf32>
  return %0 : tensor<2x4x16x8xf32>
}
