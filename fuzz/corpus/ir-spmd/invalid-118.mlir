part.mesh @mesh = <["dp"=2, "tp"=4]>
func.func @all_gather_overflow(%x: tensor<2305843009213693952xf16>) {
  %0 = part.all_gather %x on @mesh axes ["tp"] dim 0 : tensor<2305843009213693952xf16> -> tensor<8xf16>
  return
}
