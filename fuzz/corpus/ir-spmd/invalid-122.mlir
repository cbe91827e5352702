part.mesh @mesh = <["dp"=2, "tp"=4]>
func.func @reduce_scatter_shape(%x: tensor<16xf32>) -> tensor<8xf32> {
  %0 = part.reduce_scatter %x on @mesh axes ["dp", "tp"] dim 0 sum : tensor<16xf32> -> tensor<8xf32>
  return %0 : tensor<8xf32>
}
