// A global program whose annotations force every kind of reshard the
// partitioner plans: a pending sum reduce-scattered (the row-parallel matmul
// into a row split), an axis moved between dimensions with an all_to_all
// (the constraint), and a gather back to the whole value at the end.
part.mesh @mesh = <["tp"=4]>

func.func @f(%x: tensor<8x16xf32> {part.name = "x", part.role = #part.role<input>, part.sharding = #part.sharding<@mesh, [{}, {"tp"}]>},
             %w: tensor<16x8xf32> {part.name = "w", part.role = #part.role<parameter>, part.sharding = #part.sharding<@mesh, [{"tp"}, {}]>})
    -> (tensor<8x8xf32> {part.name = "z"}) {
  %0 = part.matmul %x, %w : (tensor<8x16xf32>, tensor<16x8xf32>) -> tensor<8x8xf32>
  %1 = part.sharding_constraint %0 <@mesh, [{"tp"}, {}]> : tensor<8x8xf32>
  %2 = part.softmax %1 dim 1 : tensor<8x8xf32>
  %3 = part.sharding_constraint %2 <@mesh, [{}, {"tp"}]> : tensor<8x8xf32>
  %4 = part.softmax %3 dim 0 : tensor<8x8xf32>
  return %4 : tensor<8x8xf32>
}
