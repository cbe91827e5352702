func.func @unknown_op_attr(%x: tensor<8xf32>) -> tensor<8xf32> {
  %0 = part.neg %x {part.shard = 1} : tensor<8xf32>
  return %0 : tensor<8xf32>
}
