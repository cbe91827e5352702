// Two per-device programs that use every collective and a transfer between
// meshes; test/e2e/collectives.mlir runs them on 8 ranks.
part.mesh @s0 = <["dp"=2, "tp"=2]>
part.mesh @s1 = <["dp"=2, "tp"=2]>

func.func @stage0(%x: tensor<4x4xf32> {part.name = "x", part.role = #part.role<input>, part.sharding = #part.sharding<@s0, [{"dp"}, {"tp"}]>})
    attributes {part.spmd = @s0} {
  %g = part.all_gather %x on @s0 axes ["tp"] dim 1 : tensor<4x4xf32> -> tensor<4x8xf32>
  %r = part.reduce_scatter %g on @s0 axes ["dp", "tp"] dim 1 max : tensor<4x8xf32> -> tensor<4x2xf32>
  %a = part.all_to_all %r on @s0 axes ["tp"] split_dim 0 concat_dim 1 : tensor<4x2xf32> -> tensor<2x4xf32>
  %p = part.collective_permute %a on @s0 axes ["dp"] pairs [[0, 1], [1, 0]] : tensor<2x4xf32>
  part.send %p to @s1 channel 3 : tensor<2x4xf32>
  return
}

func.func @stage1() -> (tensor<4xf32> {part.name = "out", part.sharding = #part.sharding<@s1, [{"dp", "tp"}]>})
    attributes {part.spmd = @s1} {
  %q = part.recv from @s0 channel 3 : tensor<2x4xf32>
  %m = part.all_reduce %q on @s1 axes ["tp"] avg : tensor<2x4xf32>
  %s = part.all_slice %m on @s1 axes ["tp"] dim 1 : tensor<2x4xf32> -> tensor<2x2xf32>
  %f = part.reshape %s : tensor<2x2xf32> -> tensor<4xf32>
  return %f : tensor<4xf32>
}
