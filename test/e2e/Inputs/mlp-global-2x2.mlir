// The global MLP of Inputs/mlp-*.mlir, annotated for a 2 x 2 (dp x tp) mesh
// (test/e2e/mlp-partitioned.mlir resizes the mesh):
// only the input, the two weights and the result carry shardings; the
// per-device program comes from part-propagate-shardings and part-partition.
part.mesh @mesh = <["dp"=2, "tp"=2]>

func.func @mlp(
    %x: tensor<8x16xf32> {part.name = "x", part.role = #part.role<input>, part.sharding = #part.sharding<@mesh, [{"dp"}, {}]>},
    %w1: tensor<16x32xf32> {part.name = "w1", part.role = #part.role<parameter>, part.sharding = #part.sharding<@mesh, [{}, {"tp"}]>},
    %b1: tensor<32xf32> {part.name = "b1", part.role = #part.role<parameter>},
    %w2: tensor<32x12xf32> {part.name = "w2", part.role = #part.role<parameter>, part.sharding = #part.sharding<@mesh, [{"tp"}, {}]>},
    %b2: tensor<12xf32> {part.name = "b2", part.role = #part.role<parameter>})
    -> (tensor<8x12xf32> {part.name = "y", part.sharding = #part.sharding<@mesh, [{"dp"}, {}]>}) {
  %0 = part.matmul %x, %w1 : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
  %1 = part.add %0, %b1 : (tensor<8x32xf32>, tensor<32xf32>) -> tensor<8x32xf32>
  %2 = part.gelu %1 tanh : tensor<8x32xf32>
  %3 = part.matmul %2, %w2 : (tensor<8x32xf32>, tensor<32x12xf32>) -> tensor<8x12xf32>
  %4 = part.add %3, %b2 : (tensor<8x12xf32>, tensor<12xf32>) -> tensor<8x12xf32>
  return %4 : tensor<8x12xf32>
}
