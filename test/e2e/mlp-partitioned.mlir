// The global MLP of Inputs/mlp-global-2x2.mlir, annotated only on its
// input, weights and result, with its mesh resized to every dp x tp with
// dp * tp <= 8 (1x1, 1x2, 2x1, 1x4, 2x2, 4x1, 1x8, 2x4, 4x2, 8x1),
// partitioned automatically (part-propagate-shardings, part-partition),
// lowered and run on that many CPU ranks; every run must match the float64
// numpy reference. Tolerance as in mlp.mlir: at most 32 f32 terms per dot
// product, so 2e-5 + 1e-5 * |ref| bounds the rounding.
//
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python %S/Inputs/mlp_data.py %t
// RUN: partition-opt %S/Inputs/mlp-global-2x2.mlir --part-propagate-shardings --part-partition | FileCheck %s --check-prefix=SPMD
// RUN: for m in 1x1 1x2 2x1 1x4 2x2 4x1 1x8 2x4 4x2 8x1; do \
// RUN:   sed "s/\"dp\"=2, \"tp\"=2/\"dp\"=${m%%x*}, \"tp\"=${m#*x}/" %S/Inputs/mlp-global-2x2.mlir > %t/$m.mlir && \
// RUN:   partition-opt %t/$m.mlir --part-propagate-shardings --part-partition | partition-translate --part-to-plan -o %t/$m.plan 2>/dev/null && \
// RUN:   mkdir -p %t/$m && \
// RUN:   partition-run %t/$m.plan --backend cpu --weights %t/weights.safetensors --input x=%t/x.npy --output-dir %t/$m > %t/$m.log || exit 1; \
// RUN: done
// RUN: FileCheck %s < %t/2x4.log
// RUN: %python %S/Inputs/compare.py 2e-5 1e-5 %t/expected.npy %t/1x1/y.npy %t/1x2/y.npy %t/2x1/y.npy %t/1x4/y.npy %t/2x2/y.npy %t/4x1/y.npy %t/1x8/y.npy %t/2x4/y.npy %t/4x2/y.npy %t/8x1/y.npy
//
// The partitioned program: local shapes and a single all_reduce over "tp".
// SPMD: func.func @mlp(%{{.*}}: tensor<4x16xf32> {{.*}}, %{{.*}}: tensor<16x16xf32> {{.*}}, %{{.*}}: tensor<16xf32> {{.*}}, %{{.*}}: tensor<16x12xf32> {{.*}}, %{{.*}}: tensor<12xf32> {{.*}}) -> (tensor<4x12xf32>
// SPMD-SAME: attributes {part.spmd = @mesh}
// SPMD-NOT: part.all_gather
// SPMD: part.all_reduce {{.*}} axes ["tp"] sum
// SPMD-NOT: part.all_
// SPMD: return
//
// CHECK: rank 7: setup
// CHECK: output y: f32[8, 12]
