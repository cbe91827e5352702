part.mesh @mesh = <["dp"=2, "tp"=4]>
func.func private @axis_sharded_and_unreduced(%x: tensor<8x8xf32> {part.sharding = #part.sharding<@mesh, [{}, {"tp"}], unreduced={"tp"}>})
