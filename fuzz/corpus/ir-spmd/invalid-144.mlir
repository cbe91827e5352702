func.func @name_on_op(%x: tensor<8xf32>) -> tensor<8xf32> {
  %0 = part.neg %x {part.name = "y"} : tensor<8xf32>
  return %0 : tensor<8xf32>
}
