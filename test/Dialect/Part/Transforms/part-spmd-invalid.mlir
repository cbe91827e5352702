// RUN: partition-opt %s --split-input-file --verify-diagnostics --part-spmd="mesh=dp:4,tp:4" -o /dev/null
// RUN: not partition-opt %s --split-input-file --part-define-mesh="shape=dp:x" -o /dev/null 2>&1 | FileCheck %s --check-prefix=SHAPE
// SHAPE: error: mesh shape "dp:x" must list axes as name:size, e.g. dp:2,tp:4; "dp:x" is not one
// An axis no pass splits over would replicate everything silently.
// RUN: not partition-opt %s --part-spmd="mesh=foo:2" -o /dev/null 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// UNKNOWN: error: part-spmd: unknown mesh axis "foo" in mesh="foo:2"; known axes: "dp" (data parallel), "tp" (tensor parallel), "ep" (expert parallel), "cp" (context parallel), "pp" (pipeline stages)
// RUN: not partition-opt %s --part-spmd="mesh=dp:2,pp:0" -o /dev/null 2>&1 | FileCheck %s --check-prefix=PP
// PP: error: part-spmd: mesh axis "pp" needs a size of at least 1, got "pp:0"
// Sizes below 1 and axes given twice are not meshes.
// RUN: not partition-opt %s --split-input-file --part-spmd="mesh=dp:0" -o /dev/null 2>&1 | FileCheck %s --check-prefix=SIZE
// SIZE: error: mesh shape "dp:0" must list axes as name:size, e.g. dp:2,tp:4; "dp:0" is not one
// RUN: not partition-opt %s --split-input-file --part-spmd="mesh=dp:2,dp:2" -o /dev/null 2>&1 | FileCheck %s --check-prefix=TWICE
// TWICE: error: mesh "dp:2,dp:2": mesh axis "dp" is declared more than once
// RUN: not partition-opt %s --split-input-file --part-spmd="mesh=dp:65536,tp:65536" -o /dev/null 2>&1 | FileCheck %s --check-prefix=DEVICES
// DEVICES: error: mesh "dp:65536,tp:65536": mesh of "dp"=65536 x "tp"=65536 has more than 16777216 devices (the product reaches axis "tp")

// A batch dp does not divide is padded, unless something reads across it
// in a way padding would change (here a normalisation over the batch).
func.func @batch(%x: tensor<6x8xf32> {part.role = #part.role<input>}, %s: tensor<6xf32>) -> tensor<8x6xf32> {
  %0 = part.transpose %x [1, 0] : tensor<6x8xf32> -> tensor<8x6xf32>
  // expected-error @+1 {{'part.layer_norm' op cannot read a padded dimension: dimension 0 of argument 0 (size 6) would be padded to 8 to split it into 4 blocks, but this op reaches it and it needs the whole dimension}}
  %1 = part.layer_norm %0, %s : (tensor<8x6xf32>, tensor<6xf32>) -> tensor<8x6xf32>
  return %1 : tensor<8x6xf32>
}

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

// Grouped-query attention whose 3 key/value heads tp (size 4) neither
// divides nor is a multiple of: no rank could keep whole kv heads.
func.func @kv_heads(%x: tensor<4x8x24xf32>, %wq: tensor<24x24xf32> {part.role = #part.role<parameter>},
                    %wk: tensor<24x6xf32> {part.role = #part.role<parameter>},
                    %wv: tensor<24x6xf32> {part.role = #part.role<parameter>},
                    %wo: tensor<24x24xf32> {part.role = #part.role<parameter>}) -> tensor<4x8x24xf32> {
  %q0 = part.matmul %x, %wq : (tensor<4x8x24xf32>, tensor<24x24xf32>) -> tensor<4x8x24xf32>
  %q1 = part.reshape %q0 : tensor<4x8x24xf32> -> tensor<4x8x12x2xf32>
  %q = part.transpose %q1 [0, 2, 1, 3] : tensor<4x8x12x2xf32> -> tensor<4x12x8x2xf32>
  %k0 = part.matmul %x, %wk : (tensor<4x8x24xf32>, tensor<24x6xf32>) -> tensor<4x8x6xf32>
  // expected-error @+1 {{'part.reshape' op splits keys or values into 3 heads, which tp (size 4) neither divides nor is a multiple of (each rank would need part of a head)}}
  %k1 = part.reshape %k0 : tensor<4x8x6xf32> -> tensor<4x8x3x2xf32>
  %k = part.transpose %k1 [0, 2, 1, 3] : tensor<4x8x3x2xf32> -> tensor<4x3x8x2xf32>
  %v0 = part.matmul %x, %wv : (tensor<4x8x24xf32>, tensor<24x6xf32>) -> tensor<4x8x6xf32>
  %v1 = part.reshape %v0 : tensor<4x8x6xf32> -> tensor<4x8x3x2xf32>
  %v = part.transpose %v1 [0, 2, 1, 3] : tensor<4x8x3x2xf32> -> tensor<4x3x8x2xf32>
  %a = part.attention %q, %k, %v : (tensor<4x12x8x2xf32>, tensor<4x3x8x2xf32>, tensor<4x3x8x2xf32>) -> tensor<4x12x8x2xf32>
  %t = part.transpose %a [0, 2, 1, 3] : tensor<4x12x8x2xf32> -> tensor<4x8x12x2xf32>
  %r = part.reshape %t : tensor<4x8x12x2xf32> -> tensor<4x8x24xf32>
  %o = part.matmul %r, %wo : (tensor<4x8x24xf32>, tensor<24x24xf32>) -> tensor<4x8x24xf32>
  return %o : tensor<4x8x24xf32>
}
