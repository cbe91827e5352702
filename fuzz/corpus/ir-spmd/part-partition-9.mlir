part.mesh @mesh = <["dp"=2]>
func.func @merge_minor_split(%a: tensor<8x16x64xf32> {part.sharding = #part.sharding<@mesh, [{"dp"}, {}, {}]>},
                             %b: tensor<8x16x32xf32> {part.sharding = #part.sharding<@mesh, [{}, {"dp"}, {}]>})
    -> (tensor<64x32xf32> {part.sharding = #part.sharding<@mesh, [{}, {}]>}) {
  %0 = part.reshape %a : tensor<8x16x64xf32> -> tensor<128x64xf32>
  %1 = part.reshape %b {part.sharding = #part.sharding<@mesh, [{"dp"}, {}]>} : tensor<8x16x32xf32> -> tensor<128x32xf32>
  %2 = part.matmul %0, %1 transpose_a : (tensor<128x64xf32>, tensor<128x32xf32>) -> tensor<64x32xf32>
  return %2 : tensor<64x32xf32>
}
