part.mesh @mesh = <["dp"=2, "tp"=2]>
func.func @replicated_factors(%x: tensor<4x8xf32> {part.sharding = #part.sharding<@mesh, [{"dp"}, {"tp"}]>},
                              %g: tensor<8xf32>) -> tensor<4x8xf32> {
  %0 = part.softmax %x dim 1 : tensor<4x8xf32>
  %1 = part.rms_norm %0, %g : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  return %1 : tensor<4x8xf32>
}
