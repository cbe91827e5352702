// After partitioning, a per-device program's types are local: the report
// derives the global shapes from them (it used to take the local types as
// global and fail, silently, when they did not divide again).
// RUN: partition-opt %s --part-spmd="mesh=dp:2,tp:2" --part-sharding-report -o /dev/null | FileCheck %s

// CHECK-LABEL: func @mlp on @mesh ["dp"=2, "tp"=2] (4 devices)
// CHECK-NEXT: value     role       global     sharding
// CHECK-NEXT: arg 0     input      8x16xf32   [{"dp"}, {}]
// CHECK-SAME: 4x16xf32   256
// CHECK-NEXT: arg 1     parameter  16x32xf32  [{}, {"tp"}]
// CHECK-SAME: 16x16xf32  1024
// CHECK-NEXT: arg 2     parameter  32x4xf32   [{"tp"}, {}]
// CHECK-SAME: 16x4xf32   256
// CHECK-NEXT: result 0             8x4xf32    replicated (not annotated)  8x4xf32    128
// CHECK-NEXT: parameters: 2560 bytes in all, 1280 bytes per device (50.0%)
func.func @mlp(%x: tensor<8x16xf32> {part.role = #part.role<input>},
               %w1: tensor<16x32xf32> {part.role = #part.role<parameter>},
               %w2: tensor<32x4xf32> {part.role = #part.role<parameter>}) -> tensor<8x4xf32> {
  %0 = part.matmul %x, %w1 : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
  %1 = part.relu %0 : tensor<8x32xf32>
  %2 = part.matmul %1, %w2 : (tensor<8x32xf32>, tensor<32x4xf32>) -> tensor<8x4xf32>
  return %2 : tensor<8x4xf32>
}
