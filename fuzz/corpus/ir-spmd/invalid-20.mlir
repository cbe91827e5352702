part.mesh @mesh = <["dp"=2, "tp"=4]>
func.func @multi_result_bad_entry(%x: tensor<8xf32>) {
  %0:2 = "test.two"() {part.sharding = [#part.sharding<@mesh, [{"dp"}]>, #part.sharding<@mesh, [{"tp"}]>]} : () -> (tensor<8xf32>, tensor<6xf32>)
  return
}
