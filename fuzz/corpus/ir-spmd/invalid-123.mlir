part.mesh @mesh = <["dp"=2, "tp"=4]>
func.func @all_to_all_rank(%x: tensor<8x4xf32>) -> tensor<32xf32> {
  %0 = part.all_to_all %x on @mesh axes ["tp"] split_dim 0 concat_dim 1 : tensor<8x4xf32> -> tensor<32xf32>
  return %0 : tensor<32xf32>
}
