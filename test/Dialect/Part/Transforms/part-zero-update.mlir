// part-zero finds the optimizer update by data flow, wherever part-optimizer
// put it: interleaved with backward (the default), at the end
// (interleave=false), after global-norm clipping, for AdamW and SGD. The
// input is a gradient function written by hand: `w` is 4x4 like the batch
// values `xw` and `d` (a type alone does not make a gradient), and the
// gradient of `b`, used twice, is the sum of two contributions.
//
// Annotations: each gradient gets one constraint, right after it is produced,
// used by the update only.
// RUN: partition-opt %s --part-optimizer="kind=adamw" | partition-opt --part-define-mesh="shape=dp:2" --part-data-parallel --part-zero="stage=1" | FileCheck %s --check-prefix=ADAM
// RUN: partition-opt %s --part-optimizer="kind=adamw interleave=false" | partition-opt --part-define-mesh="shape=dp:2" --part-data-parallel --part-zero="stage=2" | FileCheck %s --check-prefix=END
// RUN: partition-opt %s --part-optimizer="kind=adamw clip=1.0" | partition-opt --part-define-mesh="shape=dp:2" --part-data-parallel --part-zero="stage=2" | FileCheck %s --check-prefix=CLIP
// RUN: partition-opt %s --part-optimizer="kind=sgd momentum=0.9 weight-decay=0.1" | partition-opt --part-define-mesh="shape=dp:2" --part-data-parallel --part-zero="stage=3" | FileCheck %s --check-prefix=SGD
//
// Partitioned: one reduce-scatter per gradient (w: 4x4 -> 2x4 rows, b: 4 ->
// 2) at every stage, one all-reduce for the loss and, with clipping, one for
// the squared norm (a scalar). Nothing else is reduced.
// RUN: for opt in "kind=adamw" "kind=adamw interleave=false" "kind=sgd" "kind=sgd momentum=0.9 weight-decay=0.1"; do \
// RUN:   for z in 1 2 3; do \
// RUN:     partition-opt %s --part-optimizer="$opt" | partition-opt --part-spmd="mesh=dp:2 zero=$z" 2>/dev/null | \
// RUN:       FileCheck %s --check-prefix=ONCE --implicit-check-not=part.reduce_scatter --implicit-check-not=part.all_reduce || exit 1; \
// RUN:   done; \
// RUN: done
// RUN: for z in 1 2 3; do \
// RUN:   partition-opt %s --part-optimizer="kind=adamw clip=1.0" | partition-opt --part-spmd="mesh=dp:2 zero=$z" 2>/dev/null | \
// RUN:     FileCheck %s --check-prefixes=ONCE,NORM --implicit-check-not=part.reduce_scatter --implicit-check-not=part.all_reduce || exit 1; \
// RUN: done

func.func @step(
    %x: tensor<4x4xf32> {part.name = "x", part.role = #part.role<input>},
    %y: tensor<4x4xf32> {part.name = "y", part.role = #part.role<label>},
    %w: tensor<4x4xf32> {part.name = "w", part.role = #part.role<parameter>},
    %b: tensor<4xf32> {part.name = "b", part.role = #part.role<parameter>})
    -> (tensor<f32> {part.name = "loss"},
        tensor<4x4xf32> {part.name = "grad.w", part.grad_of = 2},
        tensor<4xf32> {part.name = "grad.b", part.grad_of = 3}) {
  %xw = part.matmul %x, %w : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %h = part.add %xw, %b : (tensor<4x4xf32>, tensor<4xf32>) -> tensor<4x4xf32>
  %pred = part.add %h, %b : (tensor<4x4xf32>, tensor<4xf32>) -> tensor<4x4xf32>
  %d = part.sub %pred, %y : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %sq = part.mul %d, %d : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %loss = part.reduce_mean %sq dims [0, 1] : tensor<4x4xf32> -> tensor<f32>
  %scale = part.constant dense<1.250000e-01> : tensor<f32>
  %g = part.mul %d, %scale : (tensor<4x4xf32>, tensor<f32>) -> tensor<4x4xf32>
  %gw = part.matmul %x, %g transpose_a : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %gb1 = part.reduce_sum %g dims [0] : tensor<4x4xf32> -> tensor<4xf32>
  %gb2 = part.reduce_sum %g dims [0] : tensor<4x4xf32> -> tensor<4xf32>
  %gb = part.add %gb1, %gb2 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %loss, %gw, %gb : tensor<f32>, tensor<4x4xf32>, tensor<4xf32>
}

// AdamW, interleaved: w's update follows its gradient, inside backward, and
// uses the constrained gradient for both moments; then b's.
// ADAM-LABEL: func.func @step(
// ADAM: %[[GW:.*]] = part.matmul %arg0, %{{.*}} transpose_a
// ADAM-NEXT: %[[CW:.*]] = part.sharding_constraint %[[GW]] <@mesh, [{"dp"}, {}]> : tensor<4x4xf32>
// ADAM-NEXT: part.mul %[[CW]], %{{.*}} : (tensor<4x4xf32>, tensor<f32>)
// ADAM-NOT: %[[GW]]
// ADAM: part.mul %[[CW]], %[[CW]]
// ADAM: %[[GB:.*]] = part.add %{{.*}}, %{{.*}} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
// ADAM-NEXT: %[[CB:.*]] = part.sharding_constraint %[[GB]] <@mesh, [{"dp"}]> : tensor<4xf32>
// ADAM-NEXT: part.mul %[[CB]], %{{.*}} : (tensor<4xf32>, tensor<f32>)
// ADAM-NOT: part.sharding_constraint
// ADAM: return

// AdamW at the end: the same constraints, still right after each gradient
// (so the reduce-scatter runs inside backward), before the update.
// END-LABEL: func.func @step(
// END: %[[GW:.*]] = part.matmul %arg0, %{{.*}} transpose_a
// END-NEXT: %[[CW:.*]] = part.sharding_constraint %[[GW]] <@mesh, [{"dp"}, {}]>
// END: %[[GB:.*]] = part.add %{{.*}}, %{{.*}} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
// END-NEXT: %[[CB:.*]] = part.sharding_constraint %[[GB]] <@mesh, [{"dp"}]>
// END-NEXT: part.constant
// END: part.mul %[[CW]], %[[CW]]
// END: part.mul %[[CB]], %[[CB]]

// Clipping: the gradient is the value before the clip scale; the norm and
// the scaled gradient are part of the update and use the constrained value.
// CLIP-LABEL: func.func @step(
// CLIP: %[[GW:.*]] = part.matmul %arg0, %{{.*}} transpose_a
// CLIP-NEXT: %[[CW:.*]] = part.sharding_constraint %[[GW]] <@mesh, [{"dp"}, {}]>
// CLIP: %[[CB:.*]] = part.sharding_constraint %{{.*}} <@mesh, [{"dp"}]>
// CLIP: part.mul %[[CW]], %[[CW]]
// CLIP: part.mul %[[CB]], %[[CB]]
// CLIP: part.sqrt
// CLIP: part.mul %[[CW]], %{{.*}} : (tensor<4x4xf32>, tensor<f32>)
// CLIP: part.mul %[[CB]], %{{.*}} : (tensor<4xf32>, tensor<f32>)

// SGD with momentum and weight decay at stage 3: the gradient is
// constrained; uses of the parameters in forward see them whole over dp
// (an all-gather each), the update (weight decay, new value) uses the shard.
// SGD-LABEL: func.func @step(
// SGD-SAME: %arg2: tensor<4x4xf32> {part.name = "w", part.role = #part.role<parameter>, part.sharding = #part.sharding<@mesh, [{"dp"}, {}]>}
// SGD: %[[W:.*]] = part.sharding_constraint %arg2 <@mesh, [{}, {}]>
// SGD-NEXT: part.matmul %arg0, %[[W]]
// SGD: %[[GW:.*]] = part.matmul %arg0, %{{.*}} transpose_a
// SGD-NEXT: %[[CW:.*]] = part.sharding_constraint %[[GW]] <@mesh, [{"dp"}, {}]>
// SGD-NEXT: part.mul %arg2, %{{.*}} : (tensor<4x4xf32>, tensor<f32>)
// SGD-NEXT: part.add %[[CW]], %{{.*}} : (tensor<4x4xf32>, tensor<4x4xf32>)
// SGD: part.sub %arg2,

// (The loss's all-reduce runs as soon as the loss is made, part-hoist-reductions.)
// ONCE-LABEL: func.func @step(
// ONCE: part.all_reduce {{.*}} {part.origin = "result 0 of func.return
// ONCE: part.reduce_scatter {{.*}} axes ["dp"] dim 0 sum {{.*}} : tensor<4x4xf32> -> tensor<2x4xf32>
// ONCE: part.reduce_scatter {{.*}} axes ["dp"] dim 0 sum {{.*}} : tensor<4xf32> -> tensor<2xf32>
// NORM: part.all_reduce {{.*}} : tensor<f32>
// ONCE: return
