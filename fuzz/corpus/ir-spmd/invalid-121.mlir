part.mesh @mesh = <["dp"=2, "tp"=4]>
func.func @reduce_scatter_divisible(%x: tensor<6xf32>) -> tensor<1xf32> {
  %0 = part.reduce_scatter %x on @mesh axes ["tp"] dim 0 sum : tensor<6xf32> -> tensor<1xf32>
  return %0 : tensor<1xf32>
}
