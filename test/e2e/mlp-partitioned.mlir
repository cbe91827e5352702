// The global MLP of Inputs/mlp-global-*.mlir, annotated only on its input,
// weights and result, partitioned automatically (part-propagate-shardings,
// part-partition) for dp x tp meshes 2x2, 1x4, 4x1 and 2x4, lowered and run on
// that many CPU ranks; every run must match the float64 numpy reference.
// Tolerance as in mlp.mlir: at most 32 f32 terms per dot product, so
// 2e-5 + 1e-5 * |ref| bounds the rounding.
//
// RUN: rm -rf %t && mkdir -p %t/2x2 %t/1x4 %t/4x1 %t/2x4
// RUN: %python %S/Inputs/mlp_data.py %t
// RUN: partition-opt %S/Inputs/mlp-global-2x2.mlir --part-propagate-shardings --part-partition | FileCheck %s --check-prefix=SPMD
// RUN: partition-opt %S/Inputs/mlp-global-2x2.mlir --part-propagate-shardings --part-partition | partition-translate --part-to-plan -o %t/2x2.plan 2>/dev/null
// RUN: partition-opt %S/Inputs/mlp-global-1x4.mlir --part-propagate-shardings --part-partition | partition-translate --part-to-plan -o %t/1x4.plan 2>/dev/null
// RUN: partition-opt %S/Inputs/mlp-global-4x1.mlir --part-propagate-shardings --part-partition | partition-translate --part-to-plan -o %t/4x1.plan 2>/dev/null
// RUN: partition-opt %S/Inputs/mlp-global-2x4.mlir --part-propagate-shardings --part-partition | partition-translate --part-to-plan -o %t/2x4.plan 2>/dev/null
// RUN: partition-run %t/2x2.plan --backend cpu --weights %t/weights.safetensors --input x=%t/x.npy --output-dir %t/2x2 | FileCheck %s
// RUN: partition-run %t/1x4.plan --backend cpu --weights %t/weights.safetensors --input x=%t/x.npy --output-dir %t/1x4 | FileCheck %s
// RUN: partition-run %t/4x1.plan --backend cpu --weights %t/weights.safetensors --input x=%t/x.npy --output-dir %t/4x1 | FileCheck %s
// RUN: partition-run %t/2x4.plan --backend cpu --weights %t/weights.safetensors --input x=%t/x.npy --output-dir %t/2x4 | FileCheck %s
// RUN: %python %S/Inputs/compare.py 2e-5 1e-5 %t/expected.npy %t/2x2/y.npy %t/1x4/y.npy %t/4x1/y.npy %t/2x4/y.npy
//
// The partitioned program: local shapes and a single all_reduce over "tp".
// SPMD: func.func @mlp(%{{.*}}: tensor<4x16xf32> {{.*}}, %{{.*}}: tensor<16x16xf32> {{.*}}, %{{.*}}: tensor<16xf32> {{.*}}, %{{.*}}: tensor<16x12xf32> {{.*}}, %{{.*}}: tensor<12xf32> {{.*}}) -> (tensor<4x12xf32>
// SPMD-SAME: attributes {part.spmd = @mesh}
// SPMD-NOT: part.all_gather
// SPMD: part.all_reduce {{.*}} axes ["tp"] sum
// SPMD-NOT: part.all_
// SPMD: return
//
// CHECK: output y: f32[8, 12]
