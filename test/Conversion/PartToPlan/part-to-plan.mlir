// RUN: partition-translate --part-to-plan --part-fuse-elementwise=false %s -o %t.plan --part-memory-report 2>&1 | FileCheck %s --check-prefix=REMARK
// RUN: partition-run %t.plan --dump | FileCheck %s

// Two stages on two meshes: stage 0 computes and sends, stage 1 receives.
// The world is mesh @s0's 4 devices followed by @s1's 4.
// CHECK: world of 8 ranks
// CHECK: mesh @s0 ["dp"=2, "tp"=2] ranks [0, 1, 2, 3]
// CHECK: mesh @s1 ["dp"=2, "tp"=2] ranks [4, 5, 6, 7]
part.mesh @s0 = <["dp"=2, "tp"=2]>
part.mesh @s1 = <["dp"=2, "tp"=2]>

// The collectives' staging (CollectiveScratch.h), as the executor allocates
// it: slot 0 for the all_gather along dim 1 (its 4x8 result, 128 bytes) and
// the reduce_scatter along dim 1 (its 4x8 operand, 128), slot 1 for the
// all_to_all's unpacking (its 2x4 result, 32): 160 bytes.
// REMARK: remark: per-device memory of @stage0: arena 192 bytes (512 without reuse), parameters and constants 24 bytes, inputs 64 bytes, collective staging 160 bytes, peak 440 bytes
// REMARK: remark: per-device memory of @stage1: arena 128 bytes (128 without reuse), parameters and constants 0 bytes, inputs 0 bytes, peak 128 bytes
// CHECK-LABEL: program 0 @stage0 on @s0
// CHECK: param "constant0" %[[C:[0-9]+]] : f32[2]
// CHECK: param "constant1" %[[S:[0-9]+]] : f32[4]
// CHECK: input "x" %0 : f32[4, 4] of global [8, 8] sharded [{"dp"}, {"tp"}]
func.func @stage0(%x: tensor<4x4xf32> {part.name = "x", part.sharding = #part.sharding<@s0, [{"dp"}, {"tp"}]>})
    attributes {part.spmd = @s0} {
  %c = part.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %s = part.constant dense<0.5> : tensor<4xf32>
  // Values whose lifetimes are disjoint share arena bytes: the 128-byte
  // gather result reuses the bytes of the first two 64-byte values, which are
  // dead by then, while the live operand of each op keeps its own.
  // CHECK: %[[A:[0-9]+]] = Add(%0, %[[S]]) : f32[4, 4] @arena+0
  %0 = part.add %x, %s : (tensor<4x4xf32>, tensor<4xf32>) -> tensor<4x4xf32>
  // CHECK: %[[E:[0-9]+]] = Exp(%[[A]]) : f32[4, 4] @arena+64
  %1 = part.exp %0 : tensor<4x4xf32>
  // CHECK: %[[N:[0-9]+]] = Neg(%[[E]]) : f32[4, 4] @arena+128
  %2 = part.neg %1 : tensor<4x4xf32>
  // CHECK: %[[G:[0-9]+]] = AllGather over {"tp"} (group of 2) {dim=1}(%[[N]]) : f32[4, 8] @arena+0
  %3 = part.all_gather %2 on @s0 axes ["tp"] dim 1 : tensor<4x4xf32> -> tensor<4x8xf32>
  // CHECK: %[[RS:[0-9]+]] = ReduceScatter Max over {"dp", "tp"} (group of 4) {dim=1}(%[[G]]) : f32[4, 2] @arena+128
  %4 = part.reduce_scatter %3 on @s0 axes ["dp", "tp"] dim 1 max : tensor<4x8xf32> -> tensor<4x2xf32>
  // CHECK: %[[T:[0-9]+]] = AllToAll over {"tp"} (group of 2) {split_dim=0, concat_dim=1}(%[[RS]]) : f32[2, 4] @arena+0
  %5 = part.all_to_all %4 on @s0 axes ["tp"] split_dim 0 concat_dim 1 : tensor<4x2xf32> -> tensor<2x4xf32>
  // CHECK: %[[P:[0-9]+]] = Permute over {"dp"} (group of 2) {pairs={{\[\[}}0, 1], [1, 0]]}(%[[T]]) : f32[2, 4] @arena+64
  %6 = part.collective_permute %5 on @s0 axes ["dp"] pairs [[0, 1], [1, 0]] : tensor<2x4xf32>
  // A reshape is an alias, not an instruction.
  // CHECK: Send to program 1 channel 7(%[[R:[0-9]+]])
  // CHECK: %[[R]] = alias of %[[P]] : f32[8]
  %7 = part.reshape %6 : tensor<2x4xf32> -> tensor<8xf32>
  part.send %7 to @s1 channel 7 : tensor<8xf32>
  return
}

// CHECK-LABEL: program 1 @stage1 on @s1
// CHECK: %[[V:[0-9]+]] = Recv from program 0 channel 7() : f32[8] @arena+0
// CHECK: = Mul(%[[V]], %[[V]]) : f32[8] @arena+64
// CHECK: output "out" %{{[0-9]+}} : f32[8] of global [8] sharded [{}]
func.func @stage1() -> (tensor<8xf32> {part.name = "out"}) attributes {part.spmd = @s1} {
  %0 = part.recv from @s0 channel 7 : tensor<8xf32>
  %1 = part.mul %0, %0 : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  return %1 : tensor<8xf32>
}
// CHECK: schedule: (program 0, micro-batch 0) (program 1, micro-batch 0)

// A function that is not a per-device program is not lowered.
// CHECK-NOT: @global
func.func @global(%x: tensor<8xf32>) -> tensor<8xf32> {
  return %x : tensor<8xf32>
}
