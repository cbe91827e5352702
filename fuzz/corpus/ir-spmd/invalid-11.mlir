part.mesh @mesh = <["dp"=2, "tp"=4]>
func.func private @unknown_unreduced_axis(%x: tensor<8xf32> {part.sharding = #part.sharding<@mesh, [{}], unreduced={"ep"}>})
