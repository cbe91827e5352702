part.mesh @mesh = <["dp"=2, "tp"=4]>
func.func private @axis_twice(%x: tensor<8x8xf32> {part.sharding = #part.sharding<@mesh, [{"dp"}, {"dp"}]>})
