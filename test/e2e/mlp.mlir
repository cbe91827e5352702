// The hand-sharded MLP of Inputs/mlp-*.mlir (a Megatron column/row split over
// "tp", the batch over "dp") lowered to plans and run on 1, 2 and 4 CPU ranks,
// as threads and as processes; every run must match the float64 numpy
// reference.
//
// Tolerance: every output is a dot product of at most 32 f32 terms whose
// magnitudes sum to about 6 (GELU outputs of O(1) times weights of about
// 0.2), so f32 rounding is bounded by 32 * 2^-24 * 6 ~ 1.2e-5; the check
// allows 2e-5 absolute plus 1e-5 relative. (Measured: under 4e-7.) The runs
// are not bitwise equal to each other: splitting the second matmul's sum over
// "tp" reorders its additions.
//
// RUN: rm -rf %t && mkdir -p %t/out1 %t/out2 %t/out4 %t/outp
// RUN: %python %S/Inputs/mlp_data.py %t
// RUN: partition-translate --part-to-plan %S/Inputs/mlp-1x1.mlir -o %t/1.plan
// RUN: partition-translate --part-to-plan %S/Inputs/mlp-1x2.mlir -o %t/2.plan
// RUN: partition-translate --part-to-plan %S/Inputs/mlp-2x2.mlir -o %t/4.plan --part-memory-report 2>&1 | FileCheck %s --check-prefix=MEMORY
// RUN: partition-run %t/4.plan --dump | FileCheck %s --check-prefix=DUMP
// RUN: partition-run %t/1.plan --weights %t/weights.safetensors --input x=%t/x.npy --output-dir %t/out1 | FileCheck %s --check-prefix=RUN1
// RUN: partition-run %t/2.plan --weights %t/weights.safetensors --input x=%t/x.npy --output-dir %t/out2 | FileCheck %s --check-prefix=RUN2
// RUN: partition-run %t/4.plan --ranks 4 --weights %t/weights.safetensors --input x=%t/x.npy --output-dir %t/out4 | FileCheck %s --check-prefix=RUN4
// RUN: partition-run %t/4.plan --processes --weights %t/weights.safetensors --input x=%t/x.npy --output-dir %t/outp | FileCheck %s --check-prefix=RUN4
// RUN: partition-run %t/4.plan --weights %t/weights.safetensors --input x=%t/x.npy --trace %t/trace.json > /dev/null
// RUN: %python %S/Inputs/check_trace.py %t/trace.json 4 Matmul Fused AllReduce
// RUN: %python %S/Inputs/compare.py 2e-5 1e-5 %t/expected.npy %t/out1/y.npy %t/out2/y.npy %t/out4/y.npy %t/outp/y.npy
//
// MEMORY: remark: per-device memory of @mlp: arena 512 bytes (1088 without reuse), parameters and constants 1904 bytes, inputs 256 bytes, peak 2672 bytes
//
// DUMP: mesh @mesh ["dp"=2, "tp"=2] ranks [0, 1, 2, 3]
// DUMP: memory per device: arena 512 bytes, parameters and constants 1904 bytes, inputs 256 bytes, peak 2672 bytes
// DUMP: param "w1" %1 : f32[16, 16] of global [16, 32] sharded [{}, {"tp"}]
// DUMP: input "x" %0 : f32[4, 16] of global [8, 16] sharded [{"dp"}, {}]
// DUMP: = Matmul {transpose_a=false, transpose_b=false}(%0, %1)
// DUMP: = AllReduce Sum over {"tp"} (group of 2)
// DUMP: output "y" %{{[0-9]+}} : f32[4, 12] of global [8, 12] sharded [{"dp"}, {}]
//
// RUN1: rank 0: setup
// RUN1: output y: f32[8, 12]
// RUN2: rank 1: setup
// RUN2: output y: f32[8, 12]
// The runtime allocates exactly what the compiler planned (the MEMORY line).
// RUN4: rank 3: setup {{.*}} per step, peak memory 2672 bytes
// RUN4: output y: f32[8, 12]
