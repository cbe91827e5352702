func.func @plain(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = part.neg %x : tensor<4xf32>
  return %0 : tensor<4xf32>
}
