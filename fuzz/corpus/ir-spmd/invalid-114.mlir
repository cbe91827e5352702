part.mesh @mesh = <["dp"=2, "tp"=4]>
func.func @collective_unknown_axis(%x: tensor<8xf32>) -> tensor<32xf32> {
  %0 = part.all_gather %x on @mesh axes ["pp"] dim 0 : tensor<8xf32> -> tensor<32xf32>
  return %0 : tensor<32xf32>
}
