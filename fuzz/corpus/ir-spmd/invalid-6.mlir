part.mesh @mesh = <["dp"=2, "tp"=4]>
func.func private @no_mesh_name(%x: tensor<8xf32> {part.sharding = #part.sharding<"mesh", [{}]>})
