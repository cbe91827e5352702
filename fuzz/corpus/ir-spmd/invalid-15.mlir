part.mesh @mesh = <["dp"=2, "tp"=4]>
func.func private @not_a_tensor(%x: i32 {part.sharding = #part.sharding<@mesh, []>})
