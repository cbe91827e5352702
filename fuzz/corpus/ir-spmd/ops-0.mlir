part.mesh @mesh = <["dp"=2, "tp"=4]>
part.mesh @stage0 = <["dp"=2]>
part.mesh @stage1 = <["dp"=2]>
func.func @annotations(
    %x: tensor<8x16xf32> {part.role = #part.role<input>, part.sharding = #part.sharding<@mesh, [{"dp"}, {}]>},
    %w: tensor<16x32xf32> {part.role = #part.role<parameter>, part.sharding = #part.sharding<@mesh, [{}, {"tp"}]>},
    %y: tensor<8xi32> {part.role = #part.role<label>})
    -> (tensor<8x32xf32> {part.sharding = #part.sharding<@mesh, [{"dp"}, {}], unreduced={"tp"}>}) {
  %0 = part.matmul %x, %w {part.sharding = #part.sharding<@mesh, [{"dp"}, {"tp"}]>} : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
  %1 = part.sharding_constraint %0 <@mesh, [{"dp", "tp"}, {}]> : tensor<8x32xf32>
  return %1 : tensor<8x32xf32>
}
