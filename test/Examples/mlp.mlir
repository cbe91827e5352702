// A three-layer MLP classifier with a mean cross-entropy loss, annotated for a
// 2 x 4 mesh: batch over "dp", the first layer column-parallel and the second
// row-parallel over "tp", the last layer replicated.
//
// The printed form is a fixed point, through the custom and the generic syntax:
// RUN: partition-opt %s > %t.custom
// RUN: partition-opt %t.custom | diff %t.custom -
// RUN: partition-opt %s --mlir-print-op-generic | partition-opt | diff %t.custom -
// Without its annotations it is the single-device reference program:
// Every op has a sharding rule that fits its types:
// RUN: partition-opt %s --part-print-sharding-rules -o /dev/null 2>/dev/null
// RUN: partition-opt %s --part-propagate-shardings -o /dev/null
// Partitioned: Megatron's two all-reduces per block over "tp".
// RUN: partition-opt %s --part-propagate-shardings --part-partition | FileCheck %s --check-prefix=SPMD
// SPMD: attributes {part.spmd = @mesh}
// SPMD: part.all_reduce {{.*}} axes ["tp"] sum
// SPMD: part.all_reduce {{.*}} axes ["dp"] sum
// SPMD-NOT: part.all_
// RUN: partition-opt %s --part-strip-sharding | FileCheck %s --check-prefix=STRIPPED
// STRIPPED-NOT: part.sharding
// RUN: FileCheck %s < %t.custom
// CHECK-LABEL: func.func @mlp3
// CHECK-COUNT-2: part.relu
// CHECK: part.matmul
// CHECK: part.softmax_cross_entropy

part.mesh @mesh = <["dp"=2, "tp"=4]>

func.func @mlp3(
    %x: tensor<32x64xf32> {part.role = #part.role<input>, part.sharding = #part.sharding<@mesh, [{"dp"}, {}]>},
    %labels: tensor<32xi32> {part.role = #part.role<label>, part.sharding = #part.sharding<@mesh, [{"dp"}]>},
    %w1: tensor<64x128xf32> {part.role = #part.role<parameter>, part.sharding = #part.sharding<@mesh, [{}, {"tp"}]>},
    %b1: tensor<128xf32> {part.role = #part.role<parameter>, part.sharding = #part.sharding<@mesh, [{"tp"}]>},
    %w2: tensor<128x128xf32> {part.role = #part.role<parameter>, part.sharding = #part.sharding<@mesh, [{"tp"}, {}]>},
    %b2: tensor<128xf32> {part.role = #part.role<parameter>, part.sharding = #part.sharding<@mesh, [{}]>},
    %w3: tensor<128x10xf32> {part.role = #part.role<parameter>, part.sharding = #part.sharding<@mesh, [{}, {}]>},
    %b3: tensor<10xf32> {part.role = #part.role<parameter>, part.sharding = #part.sharding<@mesh, [{}]>})
    -> (tensor<f32> {part.sharding = #part.sharding<@mesh, []>}) {
  %fc1_mm = part.matmul %x, %w1 : (tensor<32x64xf32>, tensor<64x128xf32>) -> tensor<32x128xf32>
  %fc1 = part.add %fc1_mm, %b1 : (tensor<32x128xf32>, tensor<128xf32>) -> tensor<32x128xf32>
  %h1 = part.relu %fc1 : tensor<32x128xf32>
  %fc2_mm = part.matmul %h1, %w2 : (tensor<32x128xf32>, tensor<128x128xf32>) -> tensor<32x128xf32>
  %fc2 = part.add %fc2_mm, %b2 : (tensor<32x128xf32>, tensor<128xf32>) -> tensor<32x128xf32>
  %h2 = part.relu %fc2 : tensor<32x128xf32>
  %logits_mm = part.matmul %h2, %w3 : (tensor<32x128xf32>, tensor<128x10xf32>) -> tensor<32x10xf32>
  %logits = part.add %logits_mm, %b3 : (tensor<32x10xf32>, tensor<10xf32>) -> tensor<32x10xf32>
  %loss = part.softmax_cross_entropy %logits, %labels mean : (tensor<32x10xf32>, tensor<32xi32>) -> tensor<f32>
  return %loss : tensor<f32>
}
