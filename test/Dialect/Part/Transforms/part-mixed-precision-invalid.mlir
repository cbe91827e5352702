// RUN: not partition-opt %s --part-mixed-precision="compute=f8" 2>&1 | FileCheck %s --check-prefix=TYPE
// TYPE: error: part-mixed-precision: unknown compute type "f8" (expected bf16 or f16)
// RUN: not partition-opt %s --part-mixed-precision="compute=f16 initial-loss-scale=0" 2>&1 | FileCheck %s --check-prefix=SCALE
// SCALE: error: part-mixed-precision: initial-loss-scale must be positive, got 0
// After autodiff it is too late:
// RUN: not partition-opt %s --part-autodiff --part-mixed-precision 2>&1 | FileCheck %s --check-prefix=ORDER
// ORDER: error: @loss already has gradients; part-mixed-precision rewrites the forward function (run it before part-autodiff)

func.func @loss(%w: tensor<4xf32> {part.name = "w", part.role = #part.role<parameter>}) -> tensor<f32> {
  %s = part.reduce_sum %w dims [0] : tensor<4xf32> -> tensor<f32>
  return %s : tensor<f32>
}
