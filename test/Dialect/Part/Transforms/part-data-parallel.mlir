// RUN: partition-opt %s --part-data-parallel -split-input-file | FileCheck %s

// Only inputs whose first dimension is the batch are split: the rotary
// tables [S, d] are indexed by position and stay whole on every device
// (their dimension 0 is joined to the activations' sequence through the
// rotary embedding's sharding rule), even where S equals the batch.
part.mesh @mesh = <["dp"=2]>
// CHECK-LABEL: func.func @rotary
// CHECK-SAME: %{{[a-z0-9]+}}: tensor<8x2x8x8xf32> {part.role = #part.role<input>, part.sharding = #part.sharding<@mesh, [{"dp"}, {}, {}, {}]>}
// CHECK-SAME: %{{[a-z0-9]+}}: tensor<8x8xf32> {part.role = #part.role<input>}
// CHECK-SAME: %{{[a-z0-9]+}}: tensor<8x8xf32> {part.role = #part.role<input>}
func.func @rotary(%x: tensor<8x2x8x8xf32> {part.role = #part.role<input>},
                  %cos: tensor<8x8xf32> {part.role = #part.role<input>},
                  %sin: tensor<8x8xf32> {part.role = #part.role<input>})
    -> tensor<8x2x8x8xf32> {
  %0 = part.rotary_embedding %x, %cos, %sin : (tensor<8x2x8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x2x8x8xf32>
  return %0 : tensor<8x2x8x8xf32>
}

// -----

// With labels, the batch is theirs: the activations [B, S, d] joined to
// them through the loss are split, the tables [S, d] (joined to the
// sequence) are not, an input that no op uses is split when its dimension 0
// has the batch's size and left whole otherwise.
part.mesh @mesh = <["dp"=2]>
// CHECK-LABEL: func.func @labels
// CHECK-SAME: %{{[a-z0-9]+}}: tensor<4x16x8xf32> {part.role = #part.role<input>, part.sharding = #part.sharding<@mesh, [{"dp"}, {}, {}]>}
// CHECK-SAME: %{{[a-z0-9]+}}: tensor<16x8xf32> {part.role = #part.role<input>}
// CHECK-SAME: %{{[a-z0-9]+}}: tensor<4x16xi32> {part.role = #part.role<label>, part.sharding = #part.sharding<@mesh, [{"dp"}, {}]>}
// CHECK-SAME: %{{[a-z0-9]+}}: tensor<4xf32> {part.role = #part.role<input>, part.sharding = #part.sharding<@mesh, [{"dp"}]>}
// CHECK-SAME: %{{[a-z0-9]+}}: tensor<6xf32> {part.role = #part.role<input>}
func.func @labels(%x: tensor<4x16x8xf32> {part.role = #part.role<input>},
                  %table: tensor<16x8xf32> {part.role = #part.role<input>},
                  %labels: tensor<4x16xi32> {part.role = #part.role<label>},
                  %unused: tensor<4xf32> {part.role = #part.role<input>},
                  %other: tensor<6xf32> {part.role = #part.role<input>})
    -> tensor<f32> {
  %0 = part.add %x, %table : (tensor<4x16x8xf32>, tensor<16x8xf32>) -> tensor<4x16x8xf32>
  %1 = part.softmax_cross_entropy %0, %labels mean : (tensor<4x16x8xf32>, tensor<4x16xi32>) -> tensor<f32>
  return %1 : tensor<f32>
}

// -----

// An annotated input names the batch too: with the activations already
// split by hand and no labels, the table is still no batch.
part.mesh @mesh = <["dp"=2]>
// CHECK-LABEL: func.func @annotated
// CHECK-SAME: %{{[a-z0-9]+}}: tensor<8x2x16x8xf32> {part.role = #part.role<input>, part.sharding = #part.sharding<@mesh, [{"dp"}, {}, {}, {}]>}
// CHECK-SAME: %{{[a-z0-9]+}}: tensor<16x8xf32> {part.role = #part.role<input>}
func.func @annotated(%x: tensor<8x2x16x8xf32> {part.role = #part.role<input>, part.sharding = #part.sharding<@mesh, [{"dp"}, {}, {}, {}]>},
                     %cos: tensor<16x8xf32> {part.role = #part.role<input>})
    -> tensor<8x2x16x8xf32> {
  %0 = part.rotary_embedding %x, %cos, %cos : (tensor<8x2x16x8xf32>, tensor<16x8xf32>, tensor<16x8xf32>) -> tensor<8x2x16x8xf32>
  return %0 : tensor<8x2x16x8xf32>
}
