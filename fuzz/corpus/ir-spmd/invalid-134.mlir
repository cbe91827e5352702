part.mesh @mesh = <["dp"=2, "tp"=4]>
func.func @spmd_on_op(%x: tensor<8xf32>) -> tensor<8xf32> {
  %0 = part.neg %x {part.spmd = @mesh} : tensor<8xf32>
  return %0 : tensor<8xf32>
}
