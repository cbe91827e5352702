part.mesh @mesh = <["dp"=2, "tp"=4]>
func.func @spmd_not_a_mesh(%x: tensor<8xf32>) -> tensor<8xf32> attributes {part.spmd = @other} {
  return %x : tensor<8xf32>
}
