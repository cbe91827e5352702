func.func @op_sharding_not_a_sharding(%x: tensor<8xf32>) -> tensor<8xf32> {
  %0 = part.neg %x {part.sharding = "dp"} : tensor<8xf32>
  return %0 : tensor<8xf32>
}
