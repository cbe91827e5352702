// Two row-parallel branches added, negated and transposed: the pending sums
// over "tp" stay pending through the add, the negation and the transpose,
// and one all-reduce at the end completes them (instead of one per branch).
part.mesh @mesh = <["tp"=4]>

func.func @f(%x: tensor<8x16xf32> {part.name = "x", part.role = #part.role<input>, part.sharding = #part.sharding<@mesh, [{}, {"tp"}]>},
             %w1: tensor<16x8xf32> {part.name = "w1", part.role = #part.role<parameter>, part.sharding = #part.sharding<@mesh, [{"tp"}, {}]>},
             %w2: tensor<16x8xf32> {part.name = "w2", part.role = #part.role<parameter>, part.sharding = #part.sharding<@mesh, [{"tp"}, {}]>})
    -> (tensor<8x8xf32> {part.name = "z"}) {
  %0 = part.matmul %x, %w1 : (tensor<8x16xf32>, tensor<16x8xf32>) -> tensor<8x8xf32>
  %1 = part.matmul %x, %w2 : (tensor<8x16xf32>, tensor<16x8xf32>) -> tensor<8x8xf32>
  %2 = part.add %0, %1 : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %3 = part.neg %2 : tensor<8x8xf32>
  %4 = part.transpose %3 [1, 0] : tensor<8x8xf32> -> tensor<8x8xf32>
  return %4 : tensor<8x8xf32>
}
