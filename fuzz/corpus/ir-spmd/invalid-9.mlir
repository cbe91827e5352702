part.mesh @mesh = <["dp"=2, "tp"=4]>
func.func private @unknown_mesh(%x: tensor<8xf32> {part.sharding = #part.sharding<@nomesh, [{"dp"}]>})
