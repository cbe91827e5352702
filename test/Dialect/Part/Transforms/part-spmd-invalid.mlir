// RUN: partition-opt %s --split-input-file --verify-diagnostics --part-spmd="mesh=dp:4,tp:4" -o /dev/null
// RUN: not partition-opt %s --split-input-file --part-define-mesh="shape=dp:x" -o /dev/null 2>&1 | FileCheck %s --check-prefix=SHAPE
// SHAPE: error: mesh shape "dp:x" must list axes as name:size, e.g. dp:2,tp:4; "dp:x" is not one
// An axis no pass splits over would replicate everything silently.
// RUN: not partition-opt %s --part-spmd="mesh=foo:2" -o /dev/null 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// UNKNOWN: error: part-spmd: unknown mesh axis "foo" in mesh="foo:2"; known axes: "dp" (data parallel), "tp" (tensor parallel)
// RUN: not partition-opt %s --part-spmd="mesh=dp:2,pp:2" -o /dev/null 2>&1 | FileCheck %s --check-prefix=PP
// PP: error: part-spmd: mesh axis "pp": pipeline stages are not supported yet (known axes: "dp" (data parallel), "tp" (tensor parallel))
// Sizes below 1 and axes given twice are not meshes.
// RUN: not partition-opt %s --split-input-file --part-spmd="mesh=dp:0" -o /dev/null 2>&1 | FileCheck %s --check-prefix=SIZE
// SIZE: error: mesh shape "dp:0" must list axes as name:size, e.g. dp:2,tp:4; "dp:0" is not one
// RUN: not partition-opt %s --split-input-file --part-spmd="mesh=dp:2,dp:2" -o /dev/null 2>&1 | FileCheck %s --check-prefix=TWICE
// TWICE: error: mesh "dp:2,dp:2": mesh axis "dp" is declared more than once
// RUN: not partition-opt %s --split-input-file --part-spmd="mesh=dp:65536,tp:65536" -o /dev/null 2>&1 | FileCheck %s --check-prefix=DEVICES
// DEVICES: error: mesh "dp:65536,tp:65536": mesh of "dp"=65536 x "tp"=65536 has more than 16777216 devices (the product reaches axis "tp")

func.func @batch(%x: tensor<6x8xf32> {part.role = #part.role<input>}) -> tensor<6x8xf32> {
  return %x : tensor<6x8xf32>
}
// expected-error @-3 {{argument 0 has batch size 6, which mesh axis "dp" of size 4 does not divide}}

// -----

// expected-error @+1 {{@mesh is already declared differently from #part.mesh<["dp"=4, "tp"=4]>}}
part.mesh @mesh = <["dp"=2]>

// -----

func.func @heads(%x: tensor<4x8x24xf32>, %wq: tensor<24x24xf32> {part.role = #part.role<parameter>},
                 %wo: tensor<24x24xf32> {part.role = #part.role<parameter>}) -> tensor<4x8x24xf32> {
  %0 = part.matmul %x, %wq : (tensor<4x8x24xf32>, tensor<24x24xf32>) -> tensor<4x8x24xf32>
  // expected-error @+1 {{'part.reshape' op splits features into 6 heads, which tp (size 4) does not divide}}
  %1 = part.reshape %0 : tensor<4x8x24xf32> -> tensor<4x8x6x4xf32>
  %2 = part.reshape %1 : tensor<4x8x6x4xf32> -> tensor<4x8x24xf32>
  %3 = part.matmul %2, %wo : (tensor<4x8x24xf32>, tensor<24x24xf32>) -> tensor<4x8x24xf32>
  return %3 : tensor<4x8x24xf32>
}

// -----

func.func @width(%x: tensor<4x8xf32>, %w1: tensor<8x6xf32> {part.role = #part.role<parameter>},
                 %w2: tensor<6x8xf32> {part.role = #part.role<parameter>}) -> tensor<4x8xf32> {
  // expected-error @+1 {{'part.matmul' op would split dimension 1 of argument 1 (size 6) over tp, but its size 4 does not divide it}}
  %0 = part.matmul %x, %w1 : (tensor<4x8xf32>, tensor<8x6xf32>) -> tensor<4x6xf32>
  %1 = part.relu %0 : tensor<4x6xf32>
  %2 = part.matmul %1, %w2 : (tensor<4x6xf32>, tensor<6x8xf32>) -> tensor<4x8xf32>
  return %2 : tensor<4x8xf32>
}
