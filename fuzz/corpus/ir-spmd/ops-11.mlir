part.mesh @mesh = <["dp"=2, "tp"=4]>
part.mesh @stage0 = <["dp"=2]>
part.mesh @stage1 = <["dp"=2]>
func.func @all_slice(%x: tensor<16x4xf32>) -> tensor<2x4xf32> {
  %0 = part.all_slice %x on @mesh axes ["dp", "tp"] dim 0 : tensor<16x4xf32> -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}
