part.mesh @mesh = <["dp"=2, "tp"=2]>
func.func @merge_minor(%x: tensor<8x16x32xf32> {part.sharding = #part.sharding<@mesh, [{}, {"dp"}, {}]>},
                       %y: tensor<2x16xf32> {part.sharding = #part.sharding<@mesh, [{"dp"}, {"tp"}]>},
                       %z: tensor<4x16xf32> {part.sharding = #part.sharding<@mesh, [{"dp"}, {"tp"}]>})
    -> (tensor<128x32xf32>, tensor<32xf32>, tensor<64xf32>) {
  %0 = part.reshape %x : tensor<8x16x32xf32> -> tensor<128x32xf32>
  %1 = part.reshape %y : tensor<2x16xf32> -> tensor<32xf32>
  %2 = part.reshape %z : tensor<4x16xf32> -> tensor<64xf32>
  return %0, %1, %2 : tensor<128x32xf32>, tensor<32xf32>, tensor<64xf32>
}
