// Grouped-query attention with fewer key/value heads than tensor-parallel
// ranks: the Llama block of test/Examples (8 query heads, 4 kv heads) on
// tp:8. The axis becomes "tp"=4 (one rank group per kv head) x "tp_rep"=2
// (ranks sharing a kv head, with different query heads): the query, output
// and MLP weights are split over both, the key and value projections over
// "tp" alone, so each rank holds one query head and a copy of the kv head it
// uses, as Megatron keeps copies of kv heads.
// RUN: partition-opt %S/../../../Examples/llama.mlir --part-strip-sharding=remove-meshes > %t.mlir
// RUN: partition-opt %t.mlir --part-spmd="mesh=tp:8" 2>%t.remarks | FileCheck %s
// RUN: FileCheck %s --check-prefix=REMARK < %t.remarks
// RUN: partition-opt %t.mlir --part-spmd="mesh=tp:8" --mlir-print-ir-after=part-tensor-parallel -o /dev/null 2>&1 | FileCheck %s --check-prefix=SPLITS
//
// A training step: the kv weights' gradients are partial sums over the
// ranks that share them (the group of query heads each kv head serves is
// split over "tp_rep"), so the step sums the keys' and values' cotangents
// over "tp_rep" before their weight gradients.
// RUN: partition-opt %t.mlir --part-append-loss="kind=mse" --part-autodiff --part-optimizer="kind=sgd lr=0.1" | partition-opt --part-spmd="mesh=dp:2,tp:8" 2>/dev/null | FileCheck %s --check-prefix=TRAIN

// REMARK: remark: attention has 4 key/value heads for tp (size 8): tp becomes "tp"=4 x "tp_rep"=2; each rank keeps the key/value head its query heads use, the 2 ranks along "tp_rep" hold copies of it and sum its gradients

// CHECK: part.mesh @mesh = <["tp"=4, "tp_rep"=2]>
// CHECK: part.attention {{.*}} : (tensor<8x1x16x8xf32>, tensor<8x1x16x8xf32>, tensor<8x1x16x8xf32>) -> tensor<8x1x16x8xf32>
// CHECK-COUNT-2: part.all_reduce {{.*}} axes ["tp", "tp_rep"] sum
// CHECK-NOT: part.all_

// SPLITS: %arg4: tensor<64x64xf32> {part.role = #part.role<parameter>, part.sharding = #part.sharding<@mesh, [{}, {"tp", "tp_rep"}]>}
// SPLITS-SAME: %arg5: tensor<64x32xf32> {part.role = #part.role<parameter>, part.sharding = #part.sharding<@mesh, [{}, {"tp"}]>}
// SPLITS-SAME: %arg6: tensor<64x32xf32> {part.role = #part.role<parameter>, part.sharding = #part.sharding<@mesh, [{}, {"tp"}]>}
// SPLITS-SAME: %arg7: tensor<64x64xf32> {part.role = #part.role<parameter>, part.sharding = #part.sharding<@mesh, [{"tp", "tp_rep"}, {}]>}

// TRAIN: part.mesh @mesh = <["dp"=2, "tp"=4, "tp_rep"=2]>
// TRAIN: part.all_reduce {{.*}} axes ["tp_rep"] sum {{.*}} : tensor<4x1x16x8xf32>
// TRAIN: part.all_reduce {{.*}} axes ["tp_rep"] sum {{.*}} : tensor<4x16x8xf32>
// TRAIN-NOT: axes ["tp_rep"]
