part.mesh @mesh = <["dp"=2, "tp"=4]>
func.func @permute_range(%x: tensor<8xf32>) -> tensor<8xf32> {
  %0 = part.collective_permute %x on @mesh axes ["tp"] pairs [[0, 1], [1, 4]] : tensor<8xf32>
  return %0 : tensor<8xf32>
}
