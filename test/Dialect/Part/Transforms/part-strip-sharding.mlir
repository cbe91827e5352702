// RUN: partition-opt %s --part-strip-sharding | FileCheck %s
// RUN: partition-opt %s --part-strip-sharding=remove-meshes | FileCheck %s --check-prefix=MESHES

// The mesh named by a collective stays even with remove-meshes; the one only
// shardings referred to goes.
// CHECK: part.mesh @mesh
// CHECK: part.mesh @stage
// MESHES-NOT: part.mesh @mesh =
// MESHES: part.mesh @stage
// MESHES-NOT: part.mesh @mesh =
part.mesh @mesh = <["dp"=2, "tp"=4]>
part.mesh @stage = <["dp"=2]>

// CHECK-LABEL: func.func @f
// CHECK-SAME: (%[[X:.*]]: tensor<8x16xf32> {part.role = #part.role<input>}, %[[W:.*]]: tensor<16x32xf32> {part.role = #part.role<parameter>}) -> tensor<8x32xf32>
func.func @f(%x: tensor<8x16xf32> {part.role = #part.role<input>, part.sharding = #part.sharding<@mesh, [{"dp"}, {}]>},
             %w: tensor<16x32xf32> {part.role = #part.role<parameter>, part.sharding = #part.sharding<@mesh, [{}, {"tp"}]>})
    -> (tensor<8x32xf32> {part.sharding = #part.sharding<@mesh, [{"dp"}, {"tp"}]>}) {
  // CHECK-NEXT: %[[Y:.*]] = part.matmul %[[X]], %[[W]] : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
  %0 = part.matmul %x, %w {part.sharding = #part.sharding<@mesh, [{"dp"}, {"tp"}]>} : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
  %1 = part.sharding_constraint %0 <@mesh, [{"dp"}, {"tp"}]> : tensor<8x32xf32>
  // CHECK-NEXT: %[[R:.*]] = part.relu %[[Y]] : tensor<8x32xf32>
  %2 = part.relu %1 : tensor<8x32xf32>
  // CHECK-NEXT: return %[[R]]
  return %2 : tensor<8x32xf32>
}

// CHECK-LABEL: func.func @collective
// CHECK: part.all_reduce %{{.*}} on @stage axes ["dp"] sum
func.func @collective(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = part.all_reduce %x on @stage axes ["dp"] sum : tensor<4xf32>
  return %0 : tensor<4xf32>
}
