func.func @grad_of_on_op(%x: tensor<8xf32>) -> tensor<8xf32> {
  %0 = part.neg %x {part.grad_of = 0 : i64} : tensor<8xf32>
  return %0 : tensor<8xf32>
}
