func.func @origin_not_string(%x: tensor<8xf32>) -> tensor<8xf32> {
  %0 = part.neg %x {part.sharding_origin = 3} : tensor<8xf32>
  return %0 : tensor<8xf32>
}
