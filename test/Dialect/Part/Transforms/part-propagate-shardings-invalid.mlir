// RUN: partition-opt %s --part-propagate-shardings -split-input-file -verify-diagnostics -o /dev/null

// A global (not per-device) function must hold only ops with sharding rules:
// a collective there cannot be propagated through.
part.mesh @mesh = <["x"=2]>
func.func @f(%x: tensor<8xf32> {part.sharding = #part.sharding<@mesh, [{"x"}]>}) -> tensor<8xf32> {
  // expected-error @+1 {{'part.all_reduce' op has no sharding rule, so its operands and results cannot be sharded}}
  %0 = part.all_reduce %x on @mesh axes ["x"] sum : tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

// A split that cannot pass an op is not applied beyond it, and says so:
// eight shards of 64 features cannot become a split of 4 heads.
part.mesh @mesh = <["x"=8]>
func.func @uneven(%x: tensor<2x64xf32> {part.sharding = #part.sharding<@mesh, [{}, {"x"}]>}) -> tensor<2x4x16xf32> {
  // expected-remark @+1 {{cannot carry mesh axes "x" of dimension 1 (size 64) through: they do not split the op's factors of that dimension evenly}}
  %0 = part.reshape %x : tensor<2x64xf32> -> tensor<2x4x16xf32>
  return %0 : tensor<2x4x16xf32>
}
