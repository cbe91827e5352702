part.mesh @mesh = <["dp"=2, "tp"=4]>
func.func private @two_axes_do_not_divide(%x: tensor<4xf32> {part.sharding = #part.sharding<@mesh, [{"dp", "tp"}]>})
