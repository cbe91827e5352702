// RUN: partition-opt %s --part-propagate-shardings --part-partition --part-explain -o /dev/null --mlir-print-op-on-diagnostic=false 2>&1 | FileCheck %s

// The Megatron MLP on a 2 x 4 mesh: one all_reduce over "tp" of the
// 4x16xf32 partial sums (256 bytes) moves 2 * 3/4 * 256 = 384 bytes per
// device; the unannotated result is gathered over "dp" into 8x16xf32
// (512 bytes), half of which comes from the other device.
part.mesh @mesh = <["dp"=2, "tp"=4]>
func.func @mlp(%x: tensor<8x16xf32> {part.sharding = #part.sharding<@mesh, [{"dp"}, {}]>},
               %w1: tensor<16x32xf32> {part.sharding = #part.sharding<@mesh, [{}, {"tp"}]>},
               %w2: tensor<32x16xf32> {part.sharding = #part.sharding<@mesh, [{"tp"}, {}]>},
               %b2: tensor<16xf32>) -> tensor<8x16xf32> {
  %0 = part.matmul %x, %w1 : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
  %1 = part.relu %0 : tensor<8x32xf32>
  %2 = part.matmul %1, %w2 : (tensor<8x32xf32>, tensor<32x16xf32>) -> tensor<8x16xf32>
  %3 = part.add %2, %b2 : (tensor<8x16xf32>, tensor<16xf32>) -> tensor<8x16xf32>
  return %3 : tensor<8x16xf32>
}
// CHECK: remark: all_reduce over "tp" (4 devices) of 256 bytes moves 384 bytes per device; needed by operand 0 of part.add at {{.*}}part-explain.mlir:15, sharded by annotation on argument 0 of @mlp; annotation on argument 1 of @mlp; annotation on argument 2 of @mlp
// CHECK: remark: all_gather over "dp" (2 devices) of 256 bytes moves 256 bytes per device; needed by result 0 of func.return at {{.*}}part-explain.mlir:16
// CHECK: func @mlp on @mesh: 2 collectives, 640 bytes per device
// CHECK-NEXT: kind        axes  count  bytes/device
// CHECK-NEXT: all_gather  "dp"  1      256
// CHECK-NEXT: all_reduce  "tp"  1      384
