// RUN: partition-opt %s --part-sharding-report -o /dev/null | FileCheck %s
// The IR is unchanged:
// RUN: partition-opt %s --part-sharding-report -o %t.after > /dev/null
// RUN: partition-opt %s | diff - %t.after

part.mesh @mesh = <["dp"=2, "tp"=4]>

// CHECK-LABEL: func @f on @mesh ["dp"=2, "tp"=4] (8 devices)
// CHECK-NEXT: value     role       global      sharding                           local      bytes/device
// CHECK-NEXT: arg 0     input      8x16xf32    [{"dp"}, {}]                       4x16xf32   256
// CHECK-NEXT: arg 1     parameter  16x32xf16   [{}, {"dp", "tp"}]                 16x4xf16   128
// CHECK-NEXT: arg 2     parameter  32xf32      replicated (not annotated)         32xf32     128
// CHECK-NEXT: result 0             8x32xf32    [{"dp"}, {}], unreduced={"tp"}     4x32xf32   512
// CHECK-NEXT: parameters: 1152 bytes in all, 256 bytes per device (22.2%)
func.func @f(%x: tensor<8x16xf32> {part.role = #part.role<input>, part.sharding = #part.sharding<@mesh, [{"dp"}, {}]>},
             %w: tensor<16x32xf16> {part.role = #part.role<parameter>, part.sharding = #part.sharding<@mesh, [{}, {"dp", "tp"}]>},
             %b: tensor<32xf32> {part.role = #part.role<parameter>})
    -> (tensor<8x32xf32> {part.sharding = #part.sharding<@mesh, [{"dp"}, {}], unreduced={"tp"}>}) {
  %0 = part.cast %w : tensor<16x32xf16> -> tensor<16x32xf32>
  %1 = part.matmul %x, %0 : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
  %2 = part.add %1, %b : (tensor<8x32xf32>, tensor<32xf32>) -> tensor<8x32xf32>
  return %2 : tensor<8x32xf32>
}

// A function without annotations is not reported.
// CHECK-NOT: func @plain
func.func @plain(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}

// Values without an annotation show what propagation gives them (the IR is
// not changed); a padded value its unpadded shape.
// CHECK-LABEL: func @propagated on @mesh
// CHECK-NEXT: value
// CHECK-NEXT: arg 0  input      8x16xf32                           [{"dp"}, {}]                         4x16xf32  256
// CHECK-NEXT: arg 1  parameter  16x12xf32 (padded from 16x10xf32)  [{}, {"tp"}]                         16x3xf32  192
// CHECK-NEXT: arg 2  parameter  12xf32                             [{"tp"}] (propagated)                3xf32     12
// CHECK-NEXT: result 0          8x12xf32                           [{"dp"}, {"tp"}] (propagated)        4x3xf32   48
func.func @propagated(%x: tensor<8x16xf32> {part.role = #part.role<input>, part.sharding = #part.sharding<@mesh, [{"dp"}, {}]>},
                      %w: tensor<16x12xf32> {part.role = #part.role<parameter>, part.logical_shape = array<i64: 16, 10>, part.sharding = #part.sharding<@mesh, [{}, {"tp"}]>},
                      %b: tensor<12xf32> {part.role = #part.role<parameter>}) -> tensor<8x12xf32> {
  %0 = part.matmul %x, %w : (tensor<8x16xf32>, tensor<16x12xf32>) -> tensor<8x12xf32>
  %1 = part.add %0, %b : (tensor<8x12xf32>, tensor<12xf32>) -> tensor<8x12xf32>
  return %1 : tensor<8x12xf32>
}
