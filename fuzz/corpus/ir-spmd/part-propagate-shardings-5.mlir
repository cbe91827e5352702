part.mesh @mesh = <["tp"=4, "x"=8]>
func.func @heads(%a: tensor<2x64xf32> {part.sharding = #part.sharding<@mesh, [{}, {"tp"}]>},
                 %b: tensor<2x64xf32> {part.sharding = #part.sharding<@mesh, [{}, {"x"}]>})
    -> (tensor<2x4x16xf32>, tensor<2x4x16xf32>) {
  %0 = part.reshape %a : tensor<2x64xf32> -> tensor<2x4x16xf32>
  %1 = part.reshape %b : tensor<2x64xf32> -> tensor<2x4x16xf32>
  return %0, %1 : tensor<2x4x16xf32>, tensor<2x4x16xf32>
}
