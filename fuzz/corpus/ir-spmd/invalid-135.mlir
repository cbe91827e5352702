part.mesh @mesh = <["dp"=2, "tp"=4]>
func.func private @spmd_checks_axes(%x: tensor<3xf32> {part.sharding = #part.sharding<@mesh, [{"pp"}]>}) attributes {part.spmd = @mesh}
