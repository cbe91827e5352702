part.mesh @mesh = <["dp"=2, "tp"=4]>
func.func @mlp(%x: tensor<8x16xf32> {part.sharding = #part.sharding<@mesh, [{"dp"}, {}]>},
               %w1: tensor<16x32xf32> {part.sharding = #part.sharding<@mesh, [{}, {"tp"}]>},
               %b1: tensor<32xf32>,
               %w2: tensor<32x16xf32> {part.sharding = #part.sharding<@mesh, [{"tp"}, {}]>},
               %b2: tensor<16xf32>) -> (tensor<8x16xf32> {part.sharding = #part.sharding<@mesh, [{"dp"}, {}]>}) {
  %0 = part.matmul %x, %w1 : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
  %1 = part.add %0, %b1 : (tensor<8x32xf32>, tensor<32xf32>) -> tensor<8x32xf32>
  %2 = part.relu %1 : tensor<8x32xf32>
  %3 = part.matmul %2, %w2 : (tensor<8x32xf32>, tensor<32x16xf32>) -> tensor<8x16xf32>
  %4 = part.add %3, %b2 : (tensor<8x16xf32>, tensor<16xf32>) -> tensor<8x16xf32>
  return %4 : tensor<8x16xf32>
}
