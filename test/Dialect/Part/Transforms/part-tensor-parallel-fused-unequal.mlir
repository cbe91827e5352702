// Fused projections whose blocks differ in width: Phi-3's qkv_proj
// ([Q | K | V] with 4 query and 2 key/value heads, stored [out, in]).
// part-split-fused-projections gives each block its own projection over a
// slice of the weight; part-tensor-parallel splits the slices (a sharding
// constraint: each rank computes its heads from its rows of the whole
// weight), with copies of the kv heads where tp exceeds them.
// RUN: partition-opt %s --part-split-fused-projections -o %t.mlir
// RUN: partition-opt %t.mlir --part-spmd="mesh=tp:2" | FileCheck %s --check-prefix=TP2
// RUN: partition-opt %t.mlir --part-spmd="mesh=tp:4" 2>/dev/null | FileCheck %s --check-prefix=TP4
// TP2: part.all_slice {{.*}} axes ["tp"] dim 0 {{.*}} : tensor<16x16xf32> -> tensor<8x16xf32>
// TP2: part.attention {{.*}} : (tensor<4x2x8x4xf32>, tensor<4x1x8x4xf32>, tensor<4x1x8x4xf32>)
// TP2-COUNT-1: part.all_reduce {{.*}} axes ["tp"] sum
// TP4: part.mesh @mesh = <["tp"=2, "tp_rep"=2]>
// TP4: part.all_slice {{.*}} axes ["tp", "tp_rep"] dim 0 {{.*}} : tensor<16x16xf32> -> tensor<4x16xf32>
// TP4: part.all_slice {{.*}} axes ["tp"] dim 0 {{.*}} : tensor<8x16xf32> -> tensor<4x16xf32>
// TP4: part.attention {{.*}} : (tensor<4x1x8x4xf32>, tensor<4x1x8x4xf32>, tensor<4x1x8x4xf32>)
// TP4-COUNT-1: part.all_reduce {{.*}} axes ["tp", "tp_rep"] sum
//
// Left whole (as before the split, or whenever no split reaches it), the
// attention stays replicated, with a remark and a line of --part-explain
// saying why.
// RUN: partition-opt %s --part-spmd="mesh=tp:2" --part-explain -o /dev/null 2>%t.remarks | FileCheck %s --check-prefix=EXPLAIN
// RUN: FileCheck %s --check-prefix=REMARK < %t.remarks
// EXPLAIN: func @phi3: attention stays replicated over tp (size 2): its queries are a slice (tensor<4x8x16xf32> of tensor<4x8x32xf32>) of the fused projection at loc({{.*}}:{{[0-9]+}}:8), which stays one projection
// REMARK: remark: attention stays replicated over tp (size 2): its queries are a slice
func.func @phi3(%x: tensor<4x8x16xf32>,
                %w: tensor<32x16xf32> {part.name = "qkv_proj.weight", part.role = #part.role<parameter>},
                %wo: tensor<16x16xf32> {part.name = "o_proj.weight", part.role = #part.role<parameter>}) -> tensor<4x8x16xf32> {
  %0 = part.matmul %x, %w transpose_b : (tensor<4x8x16xf32>, tensor<32x16xf32>) -> tensor<4x8x32xf32>
  %q0 = part.slice %0 offsets [0, 0, 0] : tensor<4x8x32xf32> -> tensor<4x8x16xf32>
  %k0 = part.slice %0 offsets [0, 0, 16] : tensor<4x8x32xf32> -> tensor<4x8x8xf32>
  %v0 = part.slice %0 offsets [0, 0, 24] : tensor<4x8x32xf32> -> tensor<4x8x8xf32>
  %q1 = part.reshape %q0 : tensor<4x8x16xf32> -> tensor<4x8x4x4xf32>
  %q = part.transpose %q1 [0, 2, 1, 3] : tensor<4x8x4x4xf32> -> tensor<4x4x8x4xf32>
  %k1 = part.reshape %k0 : tensor<4x8x8xf32> -> tensor<4x8x2x4xf32>
  %k = part.transpose %k1 [0, 2, 1, 3] : tensor<4x8x2x4xf32> -> tensor<4x2x8x4xf32>
  %v1 = part.reshape %v0 : tensor<4x8x8xf32> -> tensor<4x8x2x4xf32>
  %v = part.transpose %v1 [0, 2, 1, 3] : tensor<4x8x2x4xf32> -> tensor<4x2x8x4xf32>
  %a = part.attention %q, %k, %v causal : (tensor<4x4x8x4xf32>, tensor<4x2x8x4xf32>, tensor<4x2x8x4xf32>) -> tensor<4x4x8x4xf32>
  %t = part.transpose %a [0, 2, 1, 3] : tensor<4x4x8x4xf32> -> tensor<4x8x4x4xf32>
  %r = part.reshape %t : tensor<4x8x4x4xf32> -> tensor<4x8x16xf32>
  %o = part.matmul %r, %wo transpose_b : (tensor<4x8x16xf32>, tensor<16x16xf32>) -> tensor<4x8x16xf32>
  return %o : tensor<4x8x16xf32>
}
