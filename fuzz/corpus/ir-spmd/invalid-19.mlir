part.mesh @mesh = <["dp"=2, "tp"=4]>
func.func @multi_result_needs_array(%x: tensor<8xf32>) {
  %0:2 = "test.two"() {part.sharding = #part.sharding<@mesh, [{"dp"}]>} : () -> (tensor<8xf32>, tensor<8xf32>)
  return
}
