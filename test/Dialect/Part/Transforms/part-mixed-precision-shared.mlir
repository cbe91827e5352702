// RUN: partition-opt %s --part-mixed-precision | FileCheck %s

// One compute-type copy per value and layer: the q, k and v projections of
// layer 0 read one cast of the normalised input (so sequence parallelism
// gathers it once and autodiff sums their input gradients before the one
// reduction, as Megatron's fused QKV projection does); layer 1 has its own
// (part-recompute recomputes a cast with the layer that reads it).
func.func @qkv(%x: tensor<4x8xf32> {part.name = "x", part.role = #part.role<input>},
               %wq: tensor<8x8xf32> {part.name = "wq", part.role = #part.role<parameter>},
               %wk: tensor<8x8xf32> {part.name = "wk", part.role = #part.role<parameter>},
               %wv: tensor<8x8xf32> {part.name = "wv", part.role = #part.role<parameter>},
               %w1: tensor<8x8xf32> {part.name = "w1", part.role = #part.role<parameter>})
    -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) {
  %n = part.exp %x {part.layer = 0 : i64} : tensor<4x8xf32>
  %q = part.matmul %n, %wq {part.layer = 0 : i64} : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %k = part.matmul %n, %wk {part.layer = 0 : i64} : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %v = part.matmul %n, %wv {part.layer = 0 : i64} : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %o = part.matmul %n, %w1 {part.layer = 1 : i64} : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  return %q, %k, %v, %o : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>
}
// CHECK-LABEL: func.func @qkv(
// CHECK: %[[N:.*]] = part.exp %{{.*}} {part.layer = 0 : i64} : tensor<4x8xf32>
// CHECK-NEXT: %[[N0:.*]] = part.cast %[[N]] {part.layer = 0 : i64} : tensor<4x8xf32> -> tensor<4x8xbf16>
// CHECK-NEXT: part.matmul %[[N0]], %{{.*}} {part.layer = 0 : i64}
// CHECK-NEXT: part.matmul %[[N0]], %{{.*}} {part.layer = 0 : i64}
// CHECK-NEXT: part.matmul %[[N0]], %{{.*}} {part.layer = 0 : i64}
// CHECK-NEXT: %[[N1:.*]] = part.cast %[[N]] {part.layer = 1 : i64} : tensor<4x8xf32> -> tensor<4x8xbf16>
// CHECK-NEXT: part.matmul %[[N1]], %{{.*}} {part.layer = 1 : i64}

// On the generated GPT, bf16 with tensor and sequence parallelism: layer 0
// gathers its normalised input once for q, k and v (not once per
// projection), and the step reduce-scatters 6 hidden-sized bf16 sums (8
// when each projection's input gradient was reduced on its own).
// RUN: partition-import --model gpt --layers 1 --hidden 64 --heads 4 --vocab 128 --seq 16 --batch 2 --shapes-only -o %t.gpt.mlir
// RUN: partition-opt %t.gpt.mlir --part-append-loss="kind=cross-entropy" --part-mixed-precision --part-autodiff --part-optimizer | partition-opt --part-spmd="mesh=tp:2 sequence-parallel=true" -o %t.sp.mlir
// RUN: FileCheck %s --check-prefix=GATHER < %t.sp.mlir
// RUN: grep -c "part.reduce_scatter .*tensor<2x16x64xbf16> -> tensor<2x8x64xbf16>" %t.sp.mlir | FileCheck %s --check-prefix=SCATTERS
// GATHER: part.layer_norm {{.*}} {part.layer = 0 : i64}
// GATHER: part.all_gather {{.*}} {part.layer = 0 : i64
// GATHER-NOT: part.all_gather
// GATHER: part.attention
// SCATTERS: {{^}}6{{$}}
