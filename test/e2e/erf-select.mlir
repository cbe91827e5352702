// part.erf and part.select through propagation, partitioning, the plan and
// the CPU kernels on 2 ranks, against float64 numpy (Inputs/erf-select-global.mlir).
//
// Tolerances: an f32 erf is within a few ulp (glibc documents at most 2):
// 1e-7 absolute plus 1e-6 relative bounds it, since |erf| <= 1. The f16 erf
// is computed in f32 and rounded once to f16: half an f16 ulp, 2^-11 ~ 4.9e-4
// relative, plus the f32 error; 5e-4 relative plus 1e-6 absolute. Select
// only moves values: the i64 result must be exact, and the f32 one carries
// only the erf error of the values it took.
//
// RUN: rm -rf %t && mkdir -p %t/out
// RUN: %python %S/Inputs/erf_select_data.py %t
// RUN: partition-opt %S/Inputs/erf-select-global.mlir --part-propagate-shardings --part-partition > %t/spmd.mlir
// RUN: FileCheck %s --check-prefix=SPMD < %t/spmd.mlir
// RUN: partition-translate --part-to-plan %t/spmd.mlir -o %t/p.plan 2>/dev/null
// RUN: partition-run %t/p.plan --dump | FileCheck %s --check-prefix=DUMP
// RUN: partition-run %t/p.plan --ranks 2 --backend cpu --input x=%t/x.npy --input c=%t/c.npy --input y=%t/y.npy --input h=%t/h.npy --output-dir %t/out > /dev/null
// RUN: %python %S/Inputs/compare.py 1e-7 1e-6 %t/e_ref.npy %t/out/e.npy
// RUN: %python %S/Inputs/compare.py 1e-7 1e-6 %t/s_ref.npy %t/out/s.npy
// RUN: %python %S/Inputs/compare.py 1e-6 5e-4 %t/eh_ref.npy %t/out/eh.npy
// RUN: %python %S/Inputs/compare.py 0 0 %t/si_ref.npy %t/out/si.npy
//
// The rows of x are split, and select keeps the split of each operand that
// has the dimension (y [4, 1] takes it; the condition [8] does not).
// SPMD: part.erf %{{.*}} : tensor<2x8xf32>
// SPMD: part.select %{{.*}}, %{{.*}}, %{{.*}} : (tensor<8xi32>, tensor<2x8xf32>, tensor<2x1xf32>) -> tensor<2x8xf32>
// SPMD: part.select %{{.*}}, %{{.*}}, %{{.*}} : (tensor<2x1x1xi64>, tensor<2x8xf32>, tensor<f32>) -> tensor<2x2x8xf32>
// SPMD: part.erf %{{.*}} : tensor<4x8xf16>
// SPMD: part.select %{{.*}}, %{{.*}}, %{{.*}} : (tensor<8xi32>, tensor<2x1xi64>, tensor<8xi64>) -> tensor<2x8xi64>
//
// DUMP: %4 = Erf(%0) : f32[2, 8]
// DUMP: %5 = Select(%1, %4, %2) : f32[2, 8]
// DUMP: %8 = Select(%6, %5, %7) : f32[2, 2, 8]
// DUMP: %9 = Erf(%3) : f16[4, 8]
// DUMP: %12 = Select(%1, %10, %11) : i64[2, 8]
