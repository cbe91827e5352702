part.mesh @mesh = <["tp"=2]>
func.func @split_loss(%logits: tensor<4x10xf32> {part.sharding = #part.sharding<@mesh, [{}, {"tp"}]>},
                      %labels: tensor<4xi32>) -> tensor<f32> {
  %0 = part.softmax_cross_entropy %logits, %labels mean : (tensor<4x10xf32>, tensor<4xi32>) -> tensor<f32>
  return %0 : tensor<f32>
}
