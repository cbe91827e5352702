part.mesh @mesh = <["dp"=2, "tp"=4]>
func.func @constraint_unknown_mesh(%x: tensor<8xf32>) -> tensor<8xf32> {
  %0 = part.sharding_constraint %x <@other, [{"dp"}]> : tensor<8xf32>
  return %0 : tensor<8xf32>
}
