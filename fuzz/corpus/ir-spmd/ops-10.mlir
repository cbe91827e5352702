part.mesh @mesh = <["dp"=2, "tp"=4]>
part.mesh @stage0 = <["dp"=2]>
part.mesh @stage1 = <["dp"=2]>
func.func @spmd_program(%w: tensor<3x5xf32> {part.name = "w", part.role = #part.role<parameter>, part.sharding = #part.sharding<@mesh, [{"tp"}, {}]>})
    -> (tensor<3x5xf32> {part.name = "y", part.sharding = #part.sharding<@mesh, [{"tp"}, {}]>}) attributes {part.spmd = @mesh} {
  %0 = part.neg %w {part.sharding = #part.sharding<@mesh, [{"tp"}, {}]>} : tensor<3x5xf32>
  return %0 : tensor<3x5xf32>
}
