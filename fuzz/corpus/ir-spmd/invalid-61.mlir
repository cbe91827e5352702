func.func @attention_no_heads(%q: tensor<2x4x8x16xf32>, %k: tensor<2x0x8x16xf32>) {
  %0 = part.attention %q, %k, %k : (tensor<2x4x8x16xf32>, tensor<2x0x8x16xf32>, tensor<2x0x8x16xf32>) -> tensor<2x4x8x16xf32>
  return
}
