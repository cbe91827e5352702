part.mesh @mesh = <["dp"=2, "tp"=4]>
func.func @all_gather_element_type(%x: tensor<8xf32>) -> tensor<32xf16> {
  %0 = part.all_gather %x on @mesh axes ["tp"] dim 0 : tensor<8xf32> -> tensor<32xf16>
  return %0 : tensor<32xf16>
}
