// Numeric options out of range: each would train to NaN or diverge silently.
// RUN: not partition-opt %s --part-optimizer="lr=nan" 2>&1 | FileCheck %s --check-prefix=LRNAN
// LRNAN: error: part-optimizer: lr must be in (0.000000e+00, INF), got nan
// RUN: not partition-opt %s --part-optimizer="lr=inf" 2>&1 | FileCheck %s --check-prefix=LRINF
// LRINF: error: part-optimizer: lr must be in (0.000000e+00, INF), got INF
// RUN: not partition-opt %s --part-optimizer="beta1=1" 2>&1 | FileCheck %s --check-prefix=BETA1
// BETA1: error: part-optimizer: beta1 must be in [0.000000e+00, 1.000000e+00), got 1.000000e+00
// RUN: not partition-opt %s --part-optimizer="beta2=1.5" 2>&1 | FileCheck %s --check-prefix=BETA2
// BETA2: error: part-optimizer: beta2 must be in [0.000000e+00, 1.000000e+00), got 1.500000e+00
// RUN: not partition-opt %s --part-optimizer="epsilon=0" 2>&1 | FileCheck %s --check-prefix=EPS
// EPS: error: part-optimizer: epsilon must be in (0.000000e+00, INF), got 0.000000e+00
// RUN: not partition-opt %s --part-optimizer="weight-decay=-0.5" 2>&1 | FileCheck %s --check-prefix=WD
// WD: error: part-optimizer: weight-decay must be in [0.000000e+00, INF), got -5.000000e-01
// RUN: not partition-opt %s --part-optimizer="kind=sgd momentum=-1" 2>&1 | FileCheck %s --check-prefix=MOM
// MOM: error: part-optimizer: momentum must be in [0.000000e+00, 1.000000e+00), got -1.000000e+00
// RUN: not partition-opt %s --part-optimizer="clip=-1" 2>&1 | FileCheck %s --check-prefix=CLIP
// CLIP: error: part-optimizer: clip must be in [0.000000e+00, INF), got -1.000000e+00
// RUN: not partition-opt %s --part-optimizer="warmup=-1" 2>&1 | FileCheck %s --check-prefix=WARMUP
// WARMUP: error: part-optimizer: warmup and decay-steps count steps and must not be negative, got warmup=-1 and decay-steps=0
// RUN: not partition-opt %s --part-optimizer="decay-steps=100" 2>&1 | FileCheck %s --check-prefix=CONSTANT
// CONSTANT: error: part-optimizer: decay-steps and min-lr apply to schedule=cosine, but the schedule is constant

// A function without gradients has nothing to update.
// RUN: not partition-opt %S/Inputs/no-gradients.mlir --part-optimizer 2>&1 | FileCheck %s --check-prefix=NOGRAD
// NOGRAD: no-gradients.mlir:3:1: error: part-optimizer: @forward returns no gradients (results with part.grad_of); run part-autodiff first
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
