// Reshards planned by part-partition (reduce_scatter, all_to_all,
// all_gather) run on 4 CPU ranks against numpy. Tolerance: softmax outputs
// are in [0, 1]; each comes from one f32 dot product of 16 terms of O(1)
// and two f32 softmaxes, so 1e-5 absolute is several times the rounding.
//
// RUN: rm -rf %t && mkdir -p %t/out
// RUN: %python %S/Inputs/reshards_data.py %t
// RUN: partition-opt %S/Inputs/reshards-global.mlir --part-propagate-shardings --part-partition > %t/spmd.mlir
// RUN: FileCheck %s --check-prefix=SPMD < %t/spmd.mlir
// RUN: partition-translate --part-to-plan %t/spmd.mlir -o %t/r.plan 2>/dev/null
// RUN: partition-run %t/r.plan --backend cpu --weights %t/w.safetensors --input x=%t/x.npy --output-dir %t/out | FileCheck %s
// RUN: %python %S/Inputs/compare.py 1e-5 0 %t/expected.npy %t/out/z.npy
//
// SPMD: part.reduce_scatter {{.*}} axes ["tp"] dim 0 sum
// SPMD: part.all_to_all {{.*}} axes ["tp"] split_dim 1 concat_dim 0
// SPMD: part.all_gather {{.*}} axes ["tp"] dim 1
// SPMD-NOT: part.all_reduce
// CHECK: output z: f32[8, 8]
