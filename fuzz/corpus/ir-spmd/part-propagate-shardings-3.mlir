part.mesh @mesh = <["x"=2]>
func.func @conflict(%a: tensor<4x4xf32> {part.sharding = #part.sharding<@mesh, [{"x"}, {}]>},
                    %b: tensor<4x4xf32> {part.sharding = #part.sharding<@mesh, [{}, {"x"}]>}) -> tensor<4x4xf32> {
  %0 = part.add %a, %b : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}
