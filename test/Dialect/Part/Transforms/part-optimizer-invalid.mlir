// RUN: not partition-opt %s --part-optimizer="schedule=linear" 2>&1 | FileCheck %s --check-prefix=KIND
// KIND: error: unknown learning-rate schedule "linear" (expected constant or cosine)
// RUN: not partition-opt %s --part-optimizer="schedule=cosine warmup=10 decay-steps=10" 2>&1 | FileCheck %s --check-prefix=STEPS
// STEPS: error: schedule=cosine needs decay-steps (the step at which the learning rate reaches min-lr) above warmup, got decay-steps=10 and warmup=10
// RUN: not partition-opt %s --part-optimizer="lr=0.1 min-lr=0.2 schedule=cosine decay-steps=10" 2>&1 | FileCheck %s --check-prefix=MIN
// MIN: error: min-lr must be in [0, lr=1.000000e-01], got 2.000000e-01

func.func @g(%w: tensor<4xf32> {part.name = "w", part.role = #part.role<parameter>}) -> (tensor<f32>, tensor<4xf32> {part.grad_of = 0 : i64}) {
  %s = part.reduce_sum %w dims [0] : tensor<4xf32> -> tensor<f32>
  return %s, %w : tensor<f32>, tensor<4xf32>
}
