func.func @layer_negative(%x: tensor<8xf32>) -> tensor<8xf32> {
  %0 = part.neg %x {part.layer = -1 : i64} : tensor<8xf32>
  return %0 : tensor<8xf32>
}
