part.mesh @mesh = <["x"=2]>
func.func @reshards(%a: tensor<4x8xf32> {part.sharding = #part.sharding<@mesh, [{}, {"x"}]>},
                    %b: tensor<4x8xf32> {part.sharding = #part.sharding<@mesh, [{}, {}]>}) -> tensor<4x8xf32> {
  %0 = part.softmax %a dim 1 : tensor<4x8xf32>
  %1 = part.sharding_constraint %0 <@mesh, [{"x"}, {}]> : tensor<4x8xf32>
  %2 = part.add %1, %b : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %2 : tensor<4x8xf32>
}
