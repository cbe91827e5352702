// part-model-flops: the model FLOPs of one step, counted on the global
// program (the products only, recomputation left out) and kept as the
// module attribute part.model_flops; part-spmd runs it first, so the count
// is the unpartitioned program's whatever the mesh, and later passes keep
// it.
// RUN: partition-opt %s --split-input-file --part-model-flops | FileCheck %s
//
// A training step (the GPT of test/e2e/train-progress.mlir, 2 layers,
// hidden 32, 4 heads, vocabulary 64, 4 sequences of 8 tokens, AdamW),
// partitioned on three meshes and with part-recompute: the count is the
// same on each.
// RUN: partition-import --model gpt --layers 2 --hidden 32 --heads 4 --vocab 64 --seq 8 --batch 4 --loss cross-entropy --shapes-only -o %t.mlir
// RUN: partition-opt %t.mlir --part-autodiff --part-optimizer="kind=adamw lr=1e-3" -o %t-step.mlir
// RUN: partition-opt %t-step.mlir --part-model-flops | FileCheck %s --check-prefix=GPT
// RUN: partition-opt %t-step.mlir --part-spmd="mesh=dp:2,tp:2" | FileCheck %s --check-prefix=GPT
// RUN: partition-opt %t-step.mlir --part-spmd="mesh=pp:2,dp:2,tp:2 micro-batches=2" | FileCheck %s --check-prefix=GPT
// RUN: partition-opt %t-step.mlir --part-spmd="mesh=dp:2,tp:4" | FileCheck %s --check-prefix=GPT
// RUN: partition-opt %t-step.mlir --part-recompute --part-spmd="mesh=pp:2,dp:2,tp:2 micro-batches=2" | FileCheck %s --check-prefix=GPT
//
// By hand: the matmuls hold 26,624 parameters (per layer the q, k, v
// projections 32 x 96, the output projection 32 x 32, the MLP's 32 x 128
// and 128 x 32: 12,288; the tied head 32 x 64), each used once per token
// forward and twice backward: 6 x 26,624 x 32 tokens = 5,111,808. Each
// attention's product is 2 x 4 x 4 x 8 x 8 x 8 = 16,384 FLOPs (batch, heads,
// queries, keys, head size): 2 forward (q k^T, p v), 4 backward (dP, dV,
// dQ, dK; the q k^T that attention's derivative recomputes is marked
// part.recomputed and left out): 6 x 16,384 x 2 layers = 196,608. In all
// 5,308,416.
// GPT: module attributes {part.model_flops = 5308416 : i64}

// Every kind of product, by hand (2 * M * N * K, times the batch):
//   matmul [8, 16] x [16, 4]                   2 * 8 * 4 * 16        =  1024
//   matmul transpose_a [6, 8]^T x [6, 4]       2 * 8 * 4 * 6         =   384
//   batch_matmul [3, 4, 5] x [3, 5, 6]         2 * 3 * 4 * 6 * 5     =   720
//   attention q [1, 4, 8, 16], k [1, 2, 8, 16], v [1, 2, 8, 8] (grouped
//     query heads): q k^T 2 * 4 * 8 * 8 * 16 + p v 2 * 4 * 8 * 8 * 8   = 12288
//   add, reduce_sum                                                  0
//   the matmul again, marked part.recomputed (part-recompute's clone)  0
// 1024 + 384 + 720 + 12288 = 14416.
// CHECK: module attributes {part.model_flops = 14416 : i64}
func.func @products(%x: tensor<8x16xf32> {part.name = "x", part.role = #part.role<input>},
                    %w: tensor<16x4xf32> {part.name = "w", part.role = #part.role<parameter>},
                    %t: tensor<6x8xf32> {part.name = "t", part.role = #part.role<input>},
                    %u: tensor<6x4xf32> {part.name = "u", part.role = #part.role<parameter>},
                    %a: tensor<3x4x5xf32> {part.name = "a", part.role = #part.role<parameter>},
                    %b: tensor<3x5x6xf32> {part.name = "b", part.role = #part.role<parameter>},
                    %q: tensor<1x4x8x16xf32> {part.name = "q", part.role = #part.role<parameter>},
                    %k: tensor<1x2x8x16xf32> {part.name = "k", part.role = #part.role<parameter>},
                    %v: tensor<1x2x8x8xf32> {part.name = "v", part.role = #part.role<parameter>})
    -> (tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x4xf32>, tensor<3x4x6xf32>, tensor<1x4x8x8xf32>) {
  %0 = part.matmul %x, %w : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
  %1 = part.matmul %t, %u transpose_a : (tensor<6x8xf32>, tensor<6x4xf32>) -> tensor<8x4xf32>
  %2 = part.batch_matmul %a, %b : (tensor<3x4x5xf32>, tensor<3x5x6xf32>) -> tensor<3x4x6xf32>
  %3 = part.attention %q, %k, %v causal : (tensor<1x4x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x8xf32>) -> tensor<1x4x8x8xf32>
  %4 = part.add %0, %1 : (tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<8x4xf32>
  %5 = part.matmul %x, %w {part.recomputed} : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
  return %0, %4, %5, %2, %3 : tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x4xf32>, tensor<3x4x6xf32>, tensor<1x4x8x8xf32>
}

// -----

// A count already there is counted again (a module passed through
// part-spmd twice, or edited by hand).
// CHECK: module attributes {part.model_flops = 1024 : i64}
module attributes {part.model_flops = 7 : i64} {
  func.func @again(%x: tensor<8x16xf32> {part.name = "x", part.role = #part.role<input>},
                   %w: tensor<16x4xf32> {part.name = "w", part.role = #part.role<parameter>}) -> tensor<8x4xf32> {
    %0 = part.matmul %x, %w : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
    return %0 : tensor<8x4xf32>
  }
}

// -----

// Per-device programs written by hand have no global program: no count
// (the runtime counts their products instead).
// CHECK-LABEL: module {
// CHECK-NOT: part.model_flops
// CHECK: func.func @per_device
part.mesh @mesh = <["tp"=2]>
func.func @per_device(%x: tensor<8x16xf32> {part.name = "x", part.role = #part.role<input>, part.sharding = #part.sharding<@mesh, [{}, {}]>},
                      %w: tensor<16x2xf32> {part.name = "w", part.role = #part.role<parameter>, part.sharding = #part.sharding<@mesh, [{}, {"tp"}]>})
    -> (tensor<8x2xf32> {part.sharding = #part.sharding<@mesh, [{}, {"tp"}]>}) attributes {part.spmd = @mesh} {
  %0 = part.matmul %x, %w : (tensor<8x16xf32>, tensor<16x2xf32>) -> tensor<8x2xf32>
  return %0 : tensor<8x2xf32>
}
