// Pending sums kept through linear ops (Inputs/pending-global.mlir): one
// all-reduce for two row-parallel branches, on 4 CPU ranks against numpy.
// Tolerance: each output is two dot products of 16 f32 terms of O(1), so
// 1e-5 absolute plus 1e-5 relative bounds the rounding.
//
// RUN: rm -rf %t && mkdir -p %t/out
// RUN: %python %S/Inputs/pending_data.py %t
// RUN: partition-opt %S/Inputs/pending-global.mlir --part-propagate-shardings --part-partition > %t/spmd.mlir
// RUN: FileCheck %s --check-prefix=SPMD < %t/spmd.mlir
// RUN: partition-translate --part-to-plan %t/spmd.mlir -o %t/p.plan 2>/dev/null
// RUN: partition-run %t/p.plan --backend cpu --weights %t/w.safetensors --input x=%t/x.npy --output-dir %t/out > /dev/null
// RUN: %python %S/Inputs/compare.py 1e-5 1e-5 %t/expected.npy %t/out/z.npy
//
// SPMD: part.matmul
// SPMD: part.matmul
// SPMD-NOT: part.all_
// SPMD: part.add
// SPMD: part.neg
// SPMD: part.transpose
// SPMD: part.all_reduce {{.*}} axes ["tp"] sum {part.origin = "result 0 of func.return
// SPMD-NOT: part.all_
