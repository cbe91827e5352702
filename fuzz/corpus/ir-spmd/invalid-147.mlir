part.mesh @mesh = <["dp"=2, "tp"=4]>
func.func @all_slice_shape(%x: tensor<8x2xf32>) -> tensor<4x2xf32> {
  %0 = part.all_slice %x on @mesh axes ["tp"] dim 0 : tensor<8x2xf32> -> tensor<4x2xf32>
  return %0 : tensor<4x2xf32>
}
