// part-zero on a hand-written training step (SGD with momentum, already
// annotated by part-data-parallel and part-tensor-parallel, with the records
// part-optimizer writes: part.state_of on each momentum buffer, and
// part.gradient_of on the op making each gradient): which arguments and
// values each ZeRO stage annotates.
// RUN: partition-opt %s --part-zero="stage=1" 2>&1 | FileCheck %s --check-prefixes=REMARK,ZERO1
// RUN: partition-opt %s --part-zero="stage=2" 2>/dev/null | FileCheck %s --check-prefix=ZERO2
// RUN: partition-opt %s --part-zero="stage=3" 2>&1 | FileCheck %s --check-prefixes=REMARK3,ZERO3
// RUN: partition-opt %s --part-zero="stage=3" 2>/dev/null | partition-opt --part-propagate-shardings --part-partition | FileCheck %s --check-prefix=PART3
// RUN: partition-opt %s --part-zero="stage=0" | FileCheck %s --check-prefix=ZERO0

part.mesh @mesh = <["dp"=2, "tp"=2]>

func.func @step(
    %x: tensor<4x8xf32> {part.role = #part.role<input>, part.sharding = #part.sharding<@mesh, [{"dp"}, {}]>},
    %w: tensor<8x4xf32> {part.name = "w", part.role = #part.role<parameter>, part.sharding = #part.sharding<@mesh, [{}, {"tp"}]>},
    %b: tensor<3xf32> {part.name = "b", part.role = #part.role<parameter>},
    %v: tensor<4x4xf32> {part.name = "v", part.role = #part.role<parameter>, part.sharding = #part.sharding<@mesh, [{"tp"}, {}]>},
    %bufw: tensor<8x4xf32> {part.name = "momentum.w", part.role = #part.role<state>, part.state_of = 1 : i64},
    %bufb: tensor<3xf32> {part.name = "momentum.b", part.role = #part.role<state>, part.state_of = 2 : i64},
    %bufv: tensor<4x4xf32> {part.name = "momentum.v", part.role = #part.role<state>, part.state_of = 3 : i64},
    %step: tensor<f32> {part.name = "optimizer.step", part.role = #part.role<state>})
    -> (tensor<4x4xf32>, tensor<8x4xf32> {part.updates = 1 : i64}, tensor<3xf32> {part.updates = 2 : i64},
        tensor<4x4xf32> {part.updates = 3 : i64}, tensor<8x4xf32> {part.updates = 4 : i64},
        tensor<3xf32> {part.updates = 5 : i64}, tensor<4x4xf32> {part.updates = 6 : i64},
        tensor<f32> {part.updates = 7 : i64}) {
  // Forward and "backward"; gb does not depend on the data, so it is no
  // pending sum and gets no constraint.
  %y = part.matmul %x, %w : (tensor<4x8xf32>, tensor<8x4xf32>) -> tensor<4x4xf32>
  %z = part.add %y, %v : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %gw = part.matmul %x, %z transpose_a {part.gradient_of = 1 : i64} : (tensor<4x8xf32>, tensor<4x4xf32>) -> tensor<8x4xf32>
  %gb = part.mul %b, %b {part.gradient_of = 2 : i64} : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %gv = part.mul %z, %v {part.gradient_of = 3 : i64} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  // The update: what computes the part.updates results from the gradients.
  %one = part.constant dense<1.000000e+00> : tensor<f32>
  %t = part.add %step, %one : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %lr = part.constant dense<1.000000e-01> : tensor<f32>
  %nbw = part.add %bufw, %gw : (tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<8x4xf32>
  %sw = part.mul %nbw, %lr : (tensor<8x4xf32>, tensor<f32>) -> tensor<8x4xf32>
  %nw = part.sub %w, %sw : (tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<8x4xf32>
  %nbb = part.add %bufb, %gb : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %sb = part.mul %nbb, %lr : (tensor<3xf32>, tensor<f32>) -> tensor<3xf32>
  %nb = part.sub %b, %sb : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %nbv = part.add %bufv, %gv : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %sv = part.mul %nbv, %lr : (tensor<4x4xf32>, tensor<f32>) -> tensor<4x4xf32>
  %nv = part.sub %v, %sv : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  return %z, %nw, %nb, %nv, %nbw, %nbb, %nbv, %t : tensor<4x4xf32>, tensor<8x4xf32>, tensor<3xf32>, tensor<4x4xf32>, tensor<8x4xf32>, tensor<3xf32>, tensor<4x4xf32>, tensor<f32>
}

// A state of 3 elements cannot be split over dp = 2: it stays whole.
// REMARK: remark: argument 5 (momentum.b) stays whole over mesh axis "dp" (size 2): it divides no dimension of its local shape 3

// Stage 1: the state takes its parameter's tp layout (propagated) plus dp on
// the first dimension whose tp-local size dp divides: momentum.w [8, 4/tp]
// on dimension 0; momentum.v [4/tp, 4] on dimension 0 too, after tp (its
// tp-local 2 rows split again over dp). Parameters are pinned to their
// layout, the step counter is left alone, and each gradient is pinned to its
// state's layout right where it is produced (one reduce-scatter).
// ZERO1-LABEL: func.func @step(
// ZERO1-SAME: {part.name = "w", part.role = #part.role<parameter>, part.sharding = #part.sharding<@mesh, [{}, {"tp"}]>}
// ZERO1-SAME: {part.name = "b", part.role = #part.role<parameter>, part.sharding = #part.sharding<@mesh, [{}]>}
// ZERO1-SAME: {part.name = "momentum.w", part.role = #part.role<state>, part.sharding = #part.sharding<@mesh, [{"dp"}, {"tp"}]>, part.state_of = 1 : i64}
// ZERO1-SAME: {part.name = "momentum.b", part.role = #part.role<state>, part.sharding = #part.sharding<@mesh, [{}]>, part.state_of = 2 : i64}
// ZERO1-SAME: {part.name = "momentum.v", part.role = #part.role<state>, part.sharding = #part.sharding<@mesh, [{"tp", "dp"}, {}]>, part.state_of = 3 : i64}
// ZERO1-SAME: {part.name = "optimizer.step", part.role = #part.role<state>})
// ZERO1: %[[GW:.*]] = part.matmul %arg0, %{{.*}} transpose_a
// ZERO1-NEXT: %[[CW:.*]] = part.sharding_constraint %[[GW]] <@mesh, [{"dp"}, {"tp"}]> : tensor<8x4xf32>
// ZERO1-NOT: part.sharding_constraint {{.*}} : tensor<3xf32>
// ZERO1: %[[GV:.*]] = part.mul %{{.*}}, %arg3
// ZERO1-NEXT: %[[CV:.*]] = part.sharding_constraint %[[GV]] <@mesh, [{"tp", "dp"}, {}]> : tensor<4x4xf32>
// ZERO1: part.add %arg4, %[[CW]]
// ZERO1: part.add %arg6, %[[CV]]

// Stage 2: the same program as stage 1 (the gradient constraints are what
// stage 2 used to add; stage 1 now has them too).
// ZERO2-LABEL: func.func @step(
// ZERO2: %[[GW:.*]] = part.matmul %arg0, %{{.*}} transpose_a
// ZERO2-NEXT: %[[CW:.*]] = part.sharding_constraint %[[GW]] <@mesh, [{"dp"}, {"tp"}]> : tensor<8x4xf32>
// ZERO2: %[[GV:.*]] = part.mul %{{.*}}, %arg3
// ZERO2-NEXT: %[[CV:.*]] = part.sharding_constraint %[[GV]] <@mesh, [{"tp", "dp"}, {}]> : tensor<4x4xf32>
// ZERO2: part.add %arg4, %[[CW]]
// ZERO2: part.add %arg6, %[[CV]]

// Stage 3: parameters at rest split like their state; each use outside the
// update sees the parameter without dp; the update uses the shard.
// REMARK3: remark: argument 2 (b) stays whole over mesh axis "dp" (size 2)
// ZERO3-LABEL: func.func @step(
// ZERO3-SAME: {part.name = "w", part.role = #part.role<parameter>, part.sharding = #part.sharding<@mesh, [{"dp"}, {"tp"}]>}
// ZERO3-SAME: {part.name = "v", part.role = #part.role<parameter>, part.sharding = #part.sharding<@mesh, [{"tp", "dp"}, {}]>}
// ZERO3: %[[W:.*]] = part.sharding_constraint %arg1 <@mesh, [{}, {"tp"}]>
// ZERO3-NEXT: part.matmul %arg0, %[[W]]
// ZERO3: %[[V:.*]] = part.sharding_constraint %arg3 <@mesh, [{"tp"}, {}]>
// ZERO3-NEXT: part.add %{{.*}}, %[[V]]
// ZERO3: %[[V2:.*]] = part.sharding_constraint %arg3 <@mesh, [{"tp"}, {}]>
// ZERO3-NEXT: part.mul %{{.*}}, %[[V2]]
// ZERO3: part.sub %arg1,
// ZERO3: part.sub %arg3,

// Partitioned: an all-gather over dp before each use of a parameter.
// PART3-LABEL: func.func @step(
// PART3-SAME: %arg1: tensor<4x2xf32> {part.name = "w"
// PART3: %[[W:.*]] = part.all_gather %arg1 on @mesh axes ["dp"] dim 0 {{.*}} : tensor<4x2xf32> -> tensor<8x2xf32>
// PART3-NEXT: part.matmul %arg0, %[[W]]
// PART3: part.all_gather %arg3 on @mesh axes ["dp"] dim 0 {{.*}} : tensor<1x4xf32> -> tensor<2x4xf32>
// PART3: part.all_gather %arg3 on @mesh axes ["dp"] dim 0 {{.*}} : tensor<1x4xf32> -> tensor<2x4xf32>

// Stage 0 (plain data parallelism, what part-spmd runs without zero=N on a
// mesh with dp) splits nothing over dp: it only constrains each gradient to
// its parameter's layout where backward produces it, so that the pending
// sum over dp is completed once, not once per use in the update.
// ZERO0-LABEL: func.func @step(
// ZERO0-SAME: {part.name = "momentum.w", part.role = #part.role<state>, part.state_of = 1 : i64}
// ZERO0: part.sharding_constraint %{{.*}} <@mesh, [{}, {"tp"}]> : tensor<8x4xf32>
// ZERO0: part.sharding_constraint %{{.*}} <@mesh, [{"tp"}, {}]> : tensor<4x4xf32>
// ZERO0-NOT: "dp"
