// part.cos and part.sin through propagation, partitioning, the plan and the
// CPU kernels on 1 and 2 ranks, against float64 numpy
// (Inputs/cos-sin-global.mlir): a cosine learning-rate schedule on a scalar,
// rotary tables computed from positions up to 2047 and applied by
// part.rotary_embedding, and f16 values.
//
// Tolerances:
// - c, s (f32): glibc documents at most 1 ulp for cosf and sinf at any
//   argument; the references are exact functions of the same f32 angles
//   (Inputs/cos_sin_data.py), and |cos|, |sin| <= 1, so 1 ulp <= 2^-23 =
//   1.2e-7 absolute. A kernel that reduced its argument in f32 (x - k * 2 pi
//   with f32's 2 pi) was off by 4.9e-5 at angle 2047, and failed.
// - r (f32): q * c + rotate_half(q) * s with |q| < 5: the tables' errors
//   contribute 2 * 5 * 1.2e-7 = 1.2e-6, the two products and the sum
//   2 u * 10 + u * 10 = 1.8e-6 (u = 2^-24): 3e-6 absolute.
// - lr: pi * t / T = 1.16 carries f32 pi's 2.8e-8 and two roundings, at most
//   1.5e-7 relative, i.e. 1.8e-7 absolute, times |sin| <= 1; cosf adds 1 ulp
//   of 0.4 (3e-8), the sum with 1 half an ulp of 1.4 (6e-8), the product
//   with 0.5 is exact: 2.7e-7 in all, 3e-7 allowed.
// - ch, sh (f16): computed in f32 and rounded once to f16: half an f16 ulp,
//   2^-11 ~ 4.9e-4 relative (an absolute 3e-8 for subnormal results), plus
//   the f32 error: 5e-4 relative plus 1e-6 absolute.
//
// RUN: rm -rf %t && mkdir -p %t/out1 %t/out2
// RUN: %python %S/Inputs/cos_sin_data.py %t
// RUN: partition-opt %S/Inputs/cos-sin-global.mlir --part-propagate-shardings --part-partition > %t/spmd2.mlir
// RUN: FileCheck %s --check-prefix=SPMD < %t/spmd2.mlir
// RUN: sed 's/"x"=2/"x"=1/' %S/Inputs/cos-sin-global.mlir | partition-opt --part-propagate-shardings --part-partition > %t/spmd1.mlir
// RUN: partition-translate --part-to-plan %t/spmd1.mlir -o %t/p1.plan 2>/dev/null
// RUN: partition-translate --part-to-plan %t/spmd2.mlir -o %t/p2.plan 2>/dev/null
// RUN: partition-run %t/p2.plan --dump | FileCheck %s --check-prefix=DUMP
// RUN: for n in 1 2; do \
// RUN:   partition-run %t/p$n.plan --ranks $n --backend cpu --input t=%t/t.npy --input pos=%t/pos.npy --input freq=%t/freq.npy --input q=%t/q.npy --input h=%t/h.npy --output-dir %t/out$n > /dev/null || exit 1; \
// RUN: done
// RUN: %python %S/Inputs/compare.py 3e-7 0 %t/lr_ref.npy %t/out1/lr.npy %t/out2/lr.npy
// RUN: %python %S/Inputs/compare.py 1.2e-7 0 %t/c_ref.npy %t/out1/c.npy %t/out2/c.npy
// RUN: %python %S/Inputs/compare.py 1.2e-7 0 %t/s_ref.npy %t/out1/s.npy %t/out2/s.npy
// RUN: %python %S/Inputs/compare.py 3e-6 0 %t/r_ref.npy %t/out1/r.npy %t/out2/r.npy
// RUN: %python %S/Inputs/compare.py 1e-6 5e-4 %t/ch_ref.npy %t/out1/ch.npy %t/out2/ch.npy
// RUN: %python %S/Inputs/compare.py 1e-6 5e-4 %t/sh_ref.npy %t/out1/sh.npy %t/out2/sh.npy
//
// The schedule stays whole; the tables, q and h keep the split of their rows.
// SPMD: part.cos %{{.*}} : tensor<f32>
// SPMD: part.cos %{{.*}} : tensor<8x8xf32>
// SPMD: part.sin %{{.*}} : tensor<8x8xf32>
// SPMD: part.rotary_embedding %{{.*}}, %{{.*}}, %{{.*}} : (tensor<2x4x8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<2x4x8x8xf32>
// SPMD: part.cos %{{.*}} : tensor<2x8xf16>
// SPMD: part.sin %{{.*}} : tensor<2x8xf16>
//
// DUMP: Cos({{.*}}) : f32[]
// DUMP: Cos({{.*}}) : f32[8, 8]
// DUMP: Sin({{.*}}) : f32[8, 8]
// DUMP: Cos({{.*}}) : f16[2, 8]
// DUMP: Sin({{.*}}) : f16[2, 8]
