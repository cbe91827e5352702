part.mesh @mesh = <["x"=2]>
func.func @cost(%big: tensor<8x64xf32> {part.sharding = #part.sharding<@mesh, [{}, {"x"}]>},
                %small: tensor<8x1xf32> {part.sharding = #part.sharding<@mesh, [{"x"}, {}]>}) -> tensor<8x64xf32> {
  %0 = part.add %small, %big : (tensor<8x1xf32>, tensor<8x64xf32>) -> tensor<8x64xf32>
  return %0 : tensor<8x64xf32>
}
