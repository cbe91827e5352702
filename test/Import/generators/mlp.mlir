// partition-import --model mlp: L linear layers (matmul + bias), ReLU after
// all but the last; hidden -> ffn -> ... -> ffn -> hidden.
//
// RUN: partition-import --model mlp --layers 3 --hidden 64 --ffn 128 --batch 8 --shapes-only -o %t.mlir
// RUN: FileCheck %s < %t.mlir
// RUN: FileCheck %s --check-prefix=GLOBAL < %t.mlir
// GLOBAL-NOT: part.mesh
// GLOBAL-NOT: part.sharding
//
// CHECK-LABEL: func.func @mlp(
// CHECK-SAME: %[[X:arg[0-9]+]]: tensor<8x64xf32> {part.name = "x", part.role = #part.role<input>}
// CHECK-SAME: %[[W0:arg[0-9]+]]: tensor<64x128xf32> {part.name = "layers.0.weight", part.role = #part.role<parameter>}
// CHECK-SAME: %[[B0:arg[0-9]+]]: tensor<128xf32> {part.name = "layers.0.bias", part.role = #part.role<parameter>}
// CHECK-SAME: %[[W1:arg[0-9]+]]: tensor<128x128xf32> {part.name = "layers.1.weight"
// CHECK-SAME: %[[B1:arg[0-9]+]]: tensor<128xf32> {part.name = "layers.1.bias"
// CHECK-SAME: %[[W2:arg[0-9]+]]: tensor<128x64xf32> {part.name = "layers.2.weight"
// CHECK-SAME: %[[B2:arg[0-9]+]]: tensor<64xf32> {part.name = "layers.2.bias", part.role = #part.role<parameter>})
// CHECK-SAME: -> (tensor<8x64xf32> {part.name = "y"})
// CHECK: %[[M0:.*]] = part.matmul %[[X]], %[[W0]] {part.layer = 0 : i64} : (tensor<8x64xf32>, tensor<64x128xf32>) -> tensor<8x128xf32>
// CHECK: %[[A0:.*]] = part.add %[[M0]], %[[B0]]
// CHECK: %[[R0:.*]] = part.relu %[[A0]]
// CHECK: %[[M1:.*]] = part.matmul %[[R0]], %[[W1]] {part.layer = 1 : i64}
// CHECK: %[[A1:.*]] = part.add %[[M1]], %[[B1]]
// CHECK: %[[R1:.*]] = part.relu %[[A1]]
// CHECK: %[[M2:.*]] = part.matmul %[[R1]], %[[W2]] {part.layer = 2 : i64} : (tensor<8x128xf32>, tensor<128x64xf32>) -> tensor<8x64xf32>
// CHECK: %[[Y:.*]] = part.add %[[M2]], %[[B2]] {part.layer = 2 : i64}
// CHECK-NOT: part.relu
// CHECK: return %[[Y]] : tensor<8x64xf32>
//
// One layer maps hidden to hidden; the FFN size defaults to 4 x hidden.
// RUN: partition-import --model mlp --layers 1 --hidden 32 --shapes-only | FileCheck %s --check-prefix=ONE
// ONE: tensor<32x32xf32> {part.name = "layers.0.weight"
// ONE-NOT: part.relu
// RUN: partition-import --model mlp --layers 2 --hidden 32 --shapes-only | FileCheck %s --check-prefix=TWO
// TWO: tensor<32x128xf32> {part.name = "layers.0.weight"{{.*}}tensor<128x32xf32> {part.name = "layers.1.weight"
//
// Two layers are one Megatron block: column- then row-parallel, one
// all-reduce over tp.
// RUN: partition-import --model mlp --layers 2 --hidden 64 --batch 8 --shapes-only | partition-opt --part-spmd="mesh=dp:2,tp:4" | FileCheck %s --check-prefix=SPMD
// SPMD: func.func @mlp(%{{.*}}: tensor<4x64xf32> {part.name = "x"{{.*}}, %{{.*}}: tensor<64x64xf32> {part.name = "layers.0.weight"{{.*}}, %{{.*}}: tensor<64x64xf32> {part.name = "layers.1.weight"
// SPMD-NOT: part.all_
// SPMD: part.all_reduce {{.*}} axes ["tp"] sum
// SPMD-NOT: part.all_reduce
// SPMD: return
//
// The weights: He-normal matrices (std sqrt(2 / 64) = 0.18 for the first,
// sqrt(2 / 128) = 0.125 for the others), zero biases.
// RUN: partition-import --model mlp --layers 3 --hidden 64 --ffn 128 --batch 8 --seed 1 -o %t.weights.mlir --weights %t.safetensors
// RUN: diff %t.mlir %t.weights.mlir
// RUN: %python %S/Inputs/safetensors_info.py %t.safetensors | FileCheck %s --check-prefix=WEIGHTS
// WEIGHTS: layers.0.bias F32 [128] zeros
// WEIGHTS-NEXT: layers.0.weight F32 [64x128] normal std=0.18
// WEIGHTS-NEXT: layers.1.bias F32 [128] zeros
// WEIGHTS-NEXT: layers.1.weight F32 [128x128] normal std=0.12
// WEIGHTS-NEXT: layers.2.bias F32 [64] zeros
// WEIGHTS-NEXT: layers.2.weight F32 [128x64] normal std=0.12
// WEIGHTS-NOT: {{.}}
