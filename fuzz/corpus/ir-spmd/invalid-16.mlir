part.mesh @mesh = <["dp"=2, "tp"=4]>
func.func @bad_result_sharding(%x: tensor<2xf32>) -> (tensor<2xf32> {part.sharding = #part.sharding<@mesh, [{"tp"}]>}) {
  return %x : tensor<2xf32>
}
