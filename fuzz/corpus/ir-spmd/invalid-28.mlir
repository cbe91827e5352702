part.mesh @mesh = <["dp"=2, "tp"=4]>
func.func @constraint_does_not_divide(%x: tensor<6xf32>) -> tensor<6xf32> {
  %0 = part.sharding_constraint %x <@mesh, [{"tp"}]> : tensor<6xf32>
  return %0 : tensor<6xf32>
}
