func.func @recomputed_not_unit(%x: tensor<8xf32>) -> tensor<8xf32> {
  %0 = part.neg %x {part.recomputed = true} : tensor<8xf32>
  return %0 : tensor<8xf32>
}
