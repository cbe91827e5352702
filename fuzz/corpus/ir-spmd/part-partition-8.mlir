part.mesh @mesh = <["tp"=2]>
func.func @pending_uses(%x: tensor<4x8xf32> {part.sharding = #part.sharding<@mesh, [{}, {"tp"}]>},
                        %w: tensor<8x4xf32> {part.sharding = #part.sharding<@mesh, [{"tp"}, {}]>},
                        %g: tensor<4xf32>) -> (tensor<4x4xf32>, tensor<4xf32>, tensor<4x4xf32>) {
  %0 = part.matmul %x, %w : (tensor<4x8xf32>, tensor<8x4xf32>) -> tensor<4x4xf32>
  %1 = part.mul %0, %g : (tensor<4x4xf32>, tensor<4xf32>) -> tensor<4x4xf32>
  %2 = part.reduce_sum %0 dims [0] : tensor<4x4xf32> -> tensor<4xf32>
  %3 = part.matmul %x, %w : (tensor<4x8xf32>, tensor<8x4xf32>) -> tensor<4x4xf32>
  %4 = part.mul %3, %g : (tensor<4x4xf32>, tensor<4xf32>) -> tensor<4x4xf32>
  return %1, %2, %4 : tensor<4x4xf32>, tensor<4xf32>, tensor<4x4xf32>
}
