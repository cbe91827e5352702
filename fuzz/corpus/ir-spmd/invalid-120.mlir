part.mesh @mesh = <["dp"=2, "tp"=4]>
func.func @all_gather_shape(%x: tensor<8x2xf32>) -> tensor<16x2xf32> {
  %0 = part.all_gather %x on @mesh axes ["tp"] dim 0 : tensor<8x2xf32> -> tensor<16x2xf32>
  return %0 : tensor<16x2xf32>
}
