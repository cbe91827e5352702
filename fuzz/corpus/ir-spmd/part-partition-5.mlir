part.mesh @mesh = <["tp"=4]>
func.func @split_lookup(%table: tensor<100x8xf32> {part.sharding = #part.sharding<@mesh, [{"tp"}, {}]>},
                        %ids: tensor<6xi64>) -> tensor<6x8xf32> {
  %0 = part.gather %table, %ids axis 0 : (tensor<100x8xf32>, tensor<6xi64>) -> tensor<6x8xf32>
  return %0 : tensor<6x8xf32>
}
