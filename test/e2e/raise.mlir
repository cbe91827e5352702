// part-raise preserves the function: every pattern (Inputs/raise-decomposed.mlir)
// runs decomposed and raised on the CPU backend with the same random
// parameters, and the outputs must agree.
//
// Tolerance: 1e-5 absolute plus 1e-5 relative. Inputs are in [-3, 3). The
// two sides differ only in f32 rounding: at most about ten roundings
// (u = 2^-24 each) and a few-ulp erf / tanh / exp, on values of at most ~9
// (a normalised value times a scale), so the difference is below 20 * u * 9
// ~ 1.1e-5 even in the worst case and ~1e-6 in practice (measured: under
// 6e-7). A wrong raise is far outside it: the erf and tanh GELUs differ by
// up to 4.7e-4 here, causal and non-causal attention or another scale by O(1),
// as would a window the kernel ignored.
//
// RUN: rm -rf %t && mkdir -p %t/before %t/after
// RUN: partition-opt %S/Inputs/raise-decomposed.mlir --part-raise > %t/raised.mlir
// RUN: FileCheck %s < %t/raised.mlir
// RUN: partition-translate --part-to-plan %S/Inputs/raise-decomposed.mlir -o %t/before.plan 2>/dev/null
// RUN: partition-translate --part-to-plan %t/raised.mlir -o %t/after.plan 2>/dev/null
// RUN: partition-run %t/before.plan --backend cpu --random-weights 5 --random-scale 3 --output-dir %t/before > /dev/null
// RUN: partition-run %t/after.plan --backend cpu --random-weights 5 --random-scale 3 --output-dir %t/after > /dev/null
// RUN: %python %S/Inputs/compare.py 1e-5 1e-5 %t/before/gelu_erf.npy %t/after/gelu_erf.npy
// RUN: %python %S/Inputs/compare.py 1e-5 1e-5 %t/before/gelu_tanh.npy %t/after/gelu_tanh.npy
// RUN: %python %S/Inputs/compare.py 1e-5 1e-5 %t/before/layer_norm.npy %t/after/layer_norm.npy
// RUN: %python %S/Inputs/compare.py 1e-5 1e-5 %t/before/rms_norm.npy %t/after/rms_norm.npy
// RUN: %python %S/Inputs/compare.py 1e-5 1e-5 %t/before/silu.npy %t/after/silu.npy
// RUN: %python %S/Inputs/compare.py 1e-5 1e-5 %t/before/attention_add.npy %t/after/attention_add.npy
// RUN: %python %S/Inputs/compare.py 1e-5 1e-5 %t/before/attention_select.npy %t/after/attention_select.npy
// RUN: %python %S/Inputs/compare.py 1e-5 1e-5 %t/before/attention_grouped.npy %t/after/attention_grouped.npy
// RUN: %python %S/Inputs/compare.py 1e-5 1e-5 %t/before/attention_window.npy %t/after/attention_window.npy
//
// Everything was raised: one op per pattern and nothing decomposed left.
// CHECK-LABEL: func.func @decomposed
// CHECK-NEXT: part.gelu %{{.*}} erf
// CHECK-NEXT: part.gelu %{{.*}} tanh
// CHECK-NEXT: part.layer_norm %{{.*}}, %{{.*}}, %{{.*}} :
// CHECK-NEXT: part.rms_norm %{{.*}}, %{{.*}} epsilon 9.99999997E-7
// CHECK-NEXT: part.silu
// CHECK-NEXT: part.attention %{{.*}}, %{{.*}}, %{{.*}} causal :
// CHECK-NEXT: part.attention %{{.*}}, %{{.*}}, %{{.*}} causal scale 2.500000e-01
// CHECK-NEXT: part.attention %{{.*}}, %{{.*}}, %{{.*}} causal : (tensor<1x4x6x8xf32>, tensor<1x2x6x8xf32>, tensor<1x2x6x8xf32>) -> tensor<1x4x6x8xf32>
// CHECK-NEXT: part.attention %{{.*}}, %{{.*}}, %{{.*}} causal window 3 scale 2.500000e-01 : (tensor<1x4x6x8xf32>, tensor<1x2x6x8xf32>, tensor<1x2x6x8xf32>) -> tensor<1x4x6x8xf32>
// CHECK-NEXT: return
