// part-estimate: the cost model on per-device programs.
//
// A cluster of round numbers (Inputs/round-cluster.json: 2 nodes of 2
// devices; 1e9 FLOP/s at GEMM efficiency 0.5; memory 1e8 B/s; links within a
// node 1e9 B/s and 10 us, between nodes 1e8 B/s and 100 us).
// RUN: partition-opt %s -split-input-file --part-estimate=cluster=%S/Inputs/round-cluster.json -o /dev/null | FileCheck %s
//
// The matmul: 2 x 64^3 = 524,288 FLOPs at 0.5e9 FLOP/s = 1.05 ms (its
// 49,152 bytes at 1e8 B/s would take 0.49 ms); the relu: 32,768 bytes at
// 1e8 B/s = 328 us. The all_reduce over "a" (devices 0 and 1, one node) of
// 16,384 bytes moves 2 (n - 1) / n of it, 16,384 bytes: 2 x 10 us + 16.4 us
// = 36.4 us; over "b" (devices 0 and 2, two nodes): 2 x 100 us + 164 us =
// 364 us.
// Each all_reduce waits for what it reduces, so nothing overlaps here.
// CHECK: estimate on round (2 nodes of 2 devices, f32 peak 1e+09 FLOP/s):
// CHECK-NEXT:   @f on 4 devices: compute 1.38 ms, communication 400 us, both lanes 1.78 ms
// CHECK-NEXT:   step 1.78 ms: compute 1.38 ms, exposed communication 400 us
//
// Communication that compute does not wait for overlaps it: the all_reduce
// of @g's first matmul (36.4 us) runs during its second (1.05 ms).
// CHECK: estimate on round
// CHECK-NEXT: @g on 4 devices: compute 2.1 ms, communication 36.4 us, both lanes 2.1 ms
// CHECK-NEXT: step 2.1 ms: compute 2.1 ms, exposed communication 0 us
//
// Memory-bound ops in a row: @h's relu and exp each move 32,768 bytes
// (328 us). On a cluster that fuses them (Inputs/round-cluster-fused.json,
// "fusion": true, as the presets do) the relu's result, which only the exp
// reads, never goes through memory: 16,384 bytes each, 164 us.
// RUN: partition-opt %s -split-input-file --part-estimate=cluster=%S/Inputs/round-cluster-fused.json -o /dev/null | FileCheck %s --check-prefix=FUSED
// CHECK: estimate on round
// CHECK-NEXT: @h on 4 devices: compute 1.7 ms, communication 0 us, both lanes 1.7 ms
// FUSED: @f on 4 devices: compute 1.38 ms
// FUSED: @h on 4 devices: compute 1.38 ms, communication 0 us, both lanes 1.38 ms
part.mesh @mesh = <["b"=2, "a"=2]>
func.func @f(%x: tensor<64x64xf32>, %w: tensor<64x64xf32>) -> tensor<64x64xf32>
    attributes {part.spmd = @mesh} {
  %0 = part.matmul %x, %w : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
  %1 = part.relu %0 : tensor<64x64xf32>
  %2 = part.all_reduce %1 on @mesh axes ["a"] sum : tensor<64x64xf32>
  %3 = part.all_reduce %2 on @mesh axes ["b"] sum : tensor<64x64xf32>
  %4 = part.reshape %3 : tensor<64x64xf32> -> tensor<64x64xf32>
  return %4 : tensor<64x64xf32>
}

// -----

part.mesh @mesh = <["b"=2, "a"=2]>
func.func @g(%x: tensor<64x64xf32>, %w: tensor<64x64xf32>) -> (tensor<64x64xf32>, tensor<64x64xf32>)
    attributes {part.spmd = @mesh} {
  %0 = part.matmul %x, %w : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
  %1 = part.all_reduce %0 on @mesh axes ["a"] sum : tensor<64x64xf32>
  %2 = part.matmul %w, %x : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
  return %1, %2 : tensor<64x64xf32>, tensor<64x64xf32>
}

// -----

part.mesh @mesh = <["b"=2, "a"=2]>
func.func @h(%x: tensor<64x64xf32>, %w: tensor<64x64xf32>) -> tensor<64x64xf32>
    attributes {part.spmd = @mesh} {
  %0 = part.matmul %x, %w : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
  %1 = part.relu %0 : tensor<64x64xf32>
  %2 = part.exp %1 : tensor<64x64xf32>
  return %2 : tensor<64x64xf32>
}

// The order of two plans that is plain: GPT-2 small (shapes only) on
// dgx-a100 takes less per step on 8 data-parallel devices than on one, and a
// pipeline of 4 stages idles less with 8 micro-batches than with 4.
// RUN: partition-import --model gpt --layers 12 --hidden 768 --heads 12 --vocab 50304 --seq 1024 --batch 8 --shapes-only --loss cross-entropy -o %t.gpt2.mlir
// RUN: partition-opt %t.gpt2.mlir --part-autodiff --part-optimizer -o %t.step.mlir
// RUN: partition-opt %t.step.mlir --part-spmd="mesh=dp:1" --part-estimate=cluster=dgx-a100 -o /dev/null > %t.dp1.txt
// RUN: partition-opt %t.step.mlir --part-spmd="mesh=dp:8" --part-estimate=cluster=dgx-a100 -o /dev/null > %t.dp8.txt
// RUN: partition-opt %t.step.mlir --part-spmd="mesh=pp:4 micro-batches=4" --part-estimate=cluster=dgx-a100 -o /dev/null > %t.m4.txt
// RUN: partition-opt %t.step.mlir --part-spmd="mesh=pp:4 micro-batches=8" --part-estimate=cluster=dgx-a100 -o /dev/null > %t.m8.txt
// RUN: %python -c "import re, sys; t = lambda p: (lambda m: float(m.group(1)) * {'s': 1, 'ms': 1e-3, 'us': 1e-6}[m.group(2)])(re.search(r'^  step ([0-9.e+-]+) (s|ms|us):', open(p).read(), re.M)); sys.exit(0 if t('%t.dp8.txt') < t('%t.dp1.txt') and t('%t.m8.txt') < t('%t.m4.txt') else 1)"
// RUN: FileCheck %s --check-prefix=PIPELINE < %t.m8.txt
// PIPELINE: estimate on dgx-a100 (384 nodes of 8 devices, f32 peak 1.95e+13 FLOP/s):
// PIPELINE-NEXT: @gpt_stage0 on 1 device: compute
// PIPELINE: @gpt_stage3 on 1 device: compute
// PIPELINE-NEXT: step {{.*}}: compute {{.*}}, exposed communication {{.*}}, bubble
//
// Mistakes.
// RUN: not partition-opt %s -split-input-file --part-estimate -o /dev/null 2>&1 | FileCheck %s --check-prefix=NONE
// NONE: error: part-estimate needs cluster=NAME or FILE (a preset: dgx-a100, dgx-h100, h200; or a file from partition-run --calibrate)
// RUN: not partition-opt %s -split-input-file --part-estimate=cluster=dgx-b200 -o /dev/null 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// UNKNOWN: error: part-estimate: "dgx-b200" is neither a cluster preset (dgx-a100, dgx-h100, h200) nor a cluster file
// RUN: not partition-opt %t.gpt2.mlir --part-estimate=cluster=dgx-a100 -o /dev/null 2>&1 | FileCheck %s --check-prefix=NOSPMD
// NOSPMD: error: part-estimate: the module has no per-device program (part.spmd): run part-spmd first
