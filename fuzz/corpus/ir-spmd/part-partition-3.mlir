part.mesh @mesh = <["dp"=4]>
func.func @mean(%x: tensor<8x3xf32> {part.sharding = #part.sharding<@mesh, [{"dp"}, {}]>}) -> tensor<3xf32> {
  %0 = part.reduce_mean %x dims [0] : tensor<8x3xf32> -> tensor<3xf32>
  return %0 : tensor<3xf32>
}
