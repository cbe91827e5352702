func.func @expert_combine_type(%y: tensor<4x2x8x64xf32>, %i: tensor<2x16x2xi64>) -> tensor<2x16x2x64xbf16> {
  %0 = part.expert_combine %y, %i : (tensor<4x2x8x64xf32>, tensor<2x16x2xi64>) -> tensor<2x16x2x64xbf16>
  return %0 : tensor<2x16x2x64xbf16>
}
