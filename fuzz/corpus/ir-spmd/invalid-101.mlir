func.func @expert_dispatch_slots(%x: tensor<2x16x3x64xf32>, %i: tensor<2x16x2xi64>) -> tensor<4x2x8x64xf32> {
  %0 = part.expert_dispatch %x, %i : (tensor<2x16x3x64xf32>, tensor<2x16x2xi64>) -> tensor<4x2x8x64xf32>
  return %0 : tensor<4x2x8x64xf32>
}
