part.mesh @mesh = <["tp"=4]>
func.func @sequence_parallel(%h: tensor<8x16xf32> {part.sharding = #part.sharding<@mesh, [{}, {"tp"}]>},
                             %w: tensor<16x8xf32> {part.sharding = #part.sharding<@mesh, [{"tp"}, {}]>})
    -> (tensor<8x8xf32> {part.sharding = #part.sharding<@mesh, [{"tp"}, {}]>}) {
  %0 = part.matmul %h, %w : (tensor<8x16xf32>, tensor<16x8xf32>) -> tensor<8x8xf32>
  %1 = part.softmax %0 dim 1 : tensor<8x8xf32>
  return %1 : tensor<8x8xf32>
}
