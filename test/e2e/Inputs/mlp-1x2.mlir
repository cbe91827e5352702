part.mesh @mesh = <["dp"=1, "tp"=2]>

// The per-device program of a two-layer MLP, Megatron style: the first
// layer's weight is split by columns over "tp", the second by rows, so the
// second matmul yields a partial sum over "tp" that one all_reduce completes;
// the batch is split over "dp".
func.func @mlp(
    %x: tensor<8x16xf32> {part.name = "x", part.role = #part.role<input>, part.sharding = #part.sharding<@mesh, [{"dp"}, {}]>},
    %w1: tensor<16x16xf32> {part.name = "w1", part.role = #part.role<parameter>, part.sharding = #part.sharding<@mesh, [{}, {"tp"}]>},
    %b1: tensor<16xf32> {part.name = "b1", part.role = #part.role<parameter>, part.sharding = #part.sharding<@mesh, [{"tp"}]>},
    %w2: tensor<16x12xf32> {part.name = "w2", part.role = #part.role<parameter>, part.sharding = #part.sharding<@mesh, [{"tp"}, {}]>},
    %b2: tensor<12xf32> {part.name = "b2", part.role = #part.role<parameter>, part.sharding = #part.sharding<@mesh, [{}]>})
    -> (tensor<8x12xf32> {part.name = "y", part.sharding = #part.sharding<@mesh, [{"dp"}, {}]>}) attributes {part.spmd = @mesh} {
  %0 = part.matmul %x, %w1 : (tensor<8x16xf32>, tensor<16x16xf32>) -> tensor<8x16xf32>
  %1 = part.add %0, %b1 : (tensor<8x16xf32>, tensor<16xf32>) -> tensor<8x16xf32>
  %2 = part.gelu %1 tanh : tensor<8x16xf32>
  %3 = part.matmul %2, %w2 : (tensor<8x16xf32>, tensor<16x12xf32>) -> tensor<8x12xf32>
  %4 = part.all_reduce %3 on @mesh axes ["tp"] sum : tensor<8x12xf32>
  %5 = part.add %4, %b2 : (tensor<8x12xf32>, tensor<12xf32>) -> tensor<8x12xf32>
  return %5 : tensor<8x12xf32>
}
