// RUN: partition-opt %s --part-propagate-shardings -verify-diagnostics -o /dev/null

// A global (not per-device) function must hold only ops with sharding rules:
// a collective there cannot be propagated through.
part.mesh @mesh = <["x"=2]>
func.func @f(%x: tensor<8xf32> {part.sharding = #part.sharding<@mesh, [{"x"}]>}) -> tensor<8xf32> {
  // expected-error @+1 {{'part.all_reduce' op has no sharding rule, so its operands and results cannot be sharded}}
  %0 = part.all_reduce %x on @mesh axes ["x"] sum : tensor<8xf32>
  return %0 : tensor<8xf32>
}
