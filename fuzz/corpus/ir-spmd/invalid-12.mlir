part.mesh @mesh = <["dp"=2, "tp"=4]>
func.func private @wrong_rank(%x: tensor<8xf32> {part.sharding = #part.sharding<@mesh, [{"dp"}, {}]>})
