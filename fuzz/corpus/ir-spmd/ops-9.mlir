part.mesh @mesh = <["dp"=2, "tp"=4]>
part.mesh @stage0 = <["dp"=2]>
part.mesh @stage1 = <["dp"=2]>
func.func @collectives(%x: tensor<16x16xf32>, %y: tensor<64x64xf32>) -> tensor<16x16xf32> {
  %0 = part.all_reduce %x on @mesh axes ["tp"] sum : tensor<16x16xf32>
  %1 = part.all_reduce %0 on @mesh axes ["dp", "tp"] avg : tensor<16x16xf32>
  %2 = part.all_reduce %1 on @mesh axes ["dp"] max : tensor<16x16xf32>
  %3 = part.all_reduce %2 on @mesh axes ["dp"] min : tensor<16x16xf32>
  %4 = part.all_gather %3 on @mesh axes ["tp"] dim 1 : tensor<16x16xf32> -> tensor<16x64xf32>
  %5 = part.reduce_scatter %y on @mesh axes ["dp"] dim 0 sum : tensor<64x64xf32> -> tensor<32x64xf32>
  %6 = part.all_to_all %3 on @mesh axes ["tp"] split_dim 0 concat_dim 1 : tensor<16x16xf32> -> tensor<4x64xf32>
  %7 = part.all_to_all %3 on @mesh axes ["tp"] split_dim 1 concat_dim 1 : tensor<16x16xf32> -> tensor<16x16xf32>
  %8 = part.collective_permute %3 on @mesh axes ["tp"] pairs [[0, 1], [1, 2], [2, 3], [3, 0]] : tensor<16x16xf32>
  part.send %8 to @stage1 channel 0 : tensor<16x16xf32>
  %9 = part.recv from @stage0 channel 0 : tensor<16x16xf32>
  return %9 : tensor<16x16xf32>
}
