// Every collective kind and a transfer between two meshes, on 8 CPU ranks
// (4 per stage), against numpy emulating each device. The executor lays out
// all_gather / reduce_scatter / all_to_all along inner dimensions with
// transposes around the flat collectives; this checks those layouts.
// Tolerance: max, permute, gather and all-to-all move values exactly; the
// only arithmetic is one f32 average of two numbers (error <= 2^-24 relative).
//
// RUN: rm -rf %t && mkdir -p %t/out
// RUN: %python %S/Inputs/collectives_data.py %t
// RUN: partition-translate --part-to-plan %S/Inputs/collectives.mlir -o %t/c.plan
// RUN: partition-run %t/c.plan --backend cpu --ranks 8 --input x=%t/x.npy --output-dir %t/out | FileCheck %s
// RUN: %python %S/Inputs/compare.py 0 1e-7 %t/expected.npy %t/out/out.npy
// CHECK: rank 7: setup
// CHECK: output out: f32[16]
