func.func @attention_grad_result_grad(%q: tensor<2x4x16x8xf32>, %dy: tensor<2x4x16x4xf32>) {
  %dq, %dk, %dv = part.attention_grad %q, %q, %q, %dy : (tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>, tensor<2x4x16x4xf32>) -> (tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>)
  return
}
