func.func @model_flops_on_an_op(%x: tensor<8xf32>) -> tensor<8xf32> {
  %0 = part.neg %x {part.model_flops = 12 : i64} : tensor<8xf32>
  return %0 : tensor<8xf32>
}
