part.mesh @mesh = <["dp"=2, "tp"=4]>
func.func @all_gather_dim(%x: tensor<8xf32>) -> tensor<32xf32> {
  %0 = part.all_gather %x on @mesh axes ["tp"] dim 1 : tensor<8xf32> -> tensor<32xf32>
  return %0 : tensor<32xf32>
}
