part.mesh @mesh = <["tp"=4]>
func.func @split_softmax(%x: tensor<6x32xf32> {part.sharding = #part.sharding<@mesh, [{}, {"tp"}]>})
    -> (tensor<6x32xf32> {part.sharding = #part.sharding<@mesh, [{}, {"tp"}]>}) {
  %0 = part.softmax %x dim 1 : tensor<6x32xf32>
  return %0 : tensor<6x32xf32>
}
