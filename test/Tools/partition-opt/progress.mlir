// partition-opt --progress: each pass over the module on stderr as it
// starts, with how many there are; without the flag nothing is printed
// when stderr is not a terminal, nor on a terminal for a compile under a
// second.
//
// RUN: partition-opt %s --part-spmd="mesh=dp:2" --progress -o /dev/null 2>&1 | FileCheck %s
// CHECK: partition-opt: pass 1 of [[N:[0-9]+]]: part-{{[a-z-]+}} ({{[0-9.]+}} s)
// CHECK: partition-opt: pass {{[0-9]+}} of [[N]]: part-define-mesh (
// CHECK-NEXT: partition-opt: pass {{[0-9]+}} of [[N]]: part-data-parallel (
// CHECK: partition-opt: pass {{[0-9]+}} of [[N]]: part-partition (
// CHECK-NEXT: partition-opt: pass {{[0-9]+}} of [[N]]: part-hoist-reductions (
// CHECK-NEXT: partition-opt: pass [[N]] of [[N]]: part-remake-in-backward (
//
// RUN: partition-opt %s --part-spmd="mesh=dp:2" -o /dev/null 2>&1 | count 0
// RUN: %python %S/../partition-plan/Inputs/pty_transcript.py partition-opt %s --part-spmd="mesh=dp:2" -o /dev/null | count 0

module {
  func.func @mlp(%x: tensor<4x8xf32> {part.role = #part.role<input>},
                 %w: tensor<8x8xf32> {part.role = #part.role<parameter>}) -> tensor<4x8xf32> {
    %y = part.matmul %x, %w : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
    return %y : tensor<4x8xf32>
  }
}
