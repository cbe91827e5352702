part.mesh @mesh = <["dp"=2, "tp"=4]>
func.func private @does_not_divide(%x: tensor<8x6xf32> {part.sharding = #part.sharding<@mesh, [{"dp"}, {"tp"}]>})
