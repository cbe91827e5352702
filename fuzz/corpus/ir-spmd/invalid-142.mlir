func.func @layer_not_integer(%x: tensor<8xf32>) -> tensor<8xf32> {
  %0 = part.neg %x {part.layer = "h.0"} : tensor<8xf32>
  return %0 : tensor<8xf32>
}
