// part-spmd on a cp x tp mesh with sequence parallelism: a generated Llama
// layer (GQA: 4 query heads of 16, 2 kv heads; sequence 64) trained on
// cp:2,tp:2.
//
// Sequence parallelism splits each cp device's 32 tokens again over tp
// (the residual stream's sequence over ["cp", "tp"]): the row-parallel
// sums are reduce-scattered to 16 tokens, not to 32 of the whole sequence.
// The key and value gradients, partial sums over the cp devices' queries,
// are summed over each kv head's group of query heads before they are
// reduce-scattered over cp: the kv head's [1, 1, 64, 16], not every query
// head's [1, 1, 2, 64, 16].
// RUN: partition-import --model llama --layers 1 --hidden 64 --heads 4 --kv-heads 2 --vocab 128 --seq 64 --batch 1 --shapes-only -o %t.mlir
// RUN: partition-opt %t.mlir --part-append-loss --part-autodiff '--part-spmd=mesh=cp:2,tp:2 sequence-parallel=true' | FileCheck %s --implicit-check-not='axes ["cp"] dim 3'
// CHECK: part.all_gather %{{.*}} on @mesh axes ["cp"] dim 2 {{.*}} : tensor<1x1x32x16xf32> -> tensor<1x1x64x16xf32>
// CHECK: part.reduce_scatter %{{.*}} on @mesh axes ["tp"] dim 1 sum {{.*}} : tensor<1x32x64xf32> -> tensor<1x16x64xf32>
// CHECK: part.reduce_scatter %{{.*}} on @mesh axes ["cp"] dim 2 sum {{.*}} : tensor<1x1x64x16xf32> -> tensor<1x1x32x16xf32>
// CHECK: part.all_gather %{{.*}} on @mesh axes ["cp", "tp"] dim 1
