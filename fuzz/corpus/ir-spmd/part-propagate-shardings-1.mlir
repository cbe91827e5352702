part.mesh @mesh = <["dp"=2]>
func.func @backward(%a: tensor<8x4xf32>, %b: tensor<8x4xf32>)
    -> (tensor<8x4xf32> {part.sharding = #part.sharding<@mesh, [{"dp"}, {}]>}) {
  %0 = part.sub %a, %b : (tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<8x4xf32>
  %1 = part.exp %0 : tensor<8x4xf32>
  return %1 : tensor<8x4xf32>
}
