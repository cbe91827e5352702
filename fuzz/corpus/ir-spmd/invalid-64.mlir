func.func @attention_grad_no_heads(%q: tensor<2x4x8x16xf32>, %k: tensor<2x0x8x16xf32>) {
  %dq, %dk, %dv = part.attention_grad %q, %k, %k, %q : (tensor<2x4x8x16xf32>, tensor<2x0x8x16xf32>, tensor<2x0x8x16xf32>, tensor<2x4x8x16xf32>) -> (tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>)
  return
}
