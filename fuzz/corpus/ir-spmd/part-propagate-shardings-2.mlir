part.mesh @mesh = <["dp"=2, "tp"=2]>
func.func @priority(%x: tensor<8x4xf32> {part.sharding = #part.sharding<@mesh, [{"dp"}, {}]>}) -> tensor<8x4xf32> {
  %0 = part.neg %x {part.sharding = #part.sharding<@mesh, [{}, {"tp"}]>} : tensor<8x4xf32>
  %1 = part.exp %0 : tensor<8x4xf32>
  %2 = part.sharding_constraint %1 <@mesh, [{"dp", "tp"}, {}]> : tensor<8x4xf32>
  %3 = part.tanh %2 : tensor<8x4xf32>
  return %3 : tensor<8x4xf32>
}
