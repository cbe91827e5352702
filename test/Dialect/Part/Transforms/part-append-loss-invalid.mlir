// RUN: partition-opt %s --split-input-file --part-append-loss -verify-diagnostics
// RUN: not partition-opt %s --split-input-file --part-append-loss="kind=hinge" 2>&1 | FileCheck %s --check-prefix=KIND
// RUN: not partition-opt %s --split-input-file --part-append-loss="output=nope" 2>&1 | FileCheck %s --check-prefix=NAME
// KIND: unknown loss kind "hinge" (expected cross-entropy or mse)
// NAME: has no result named "nope" (output=)

// expected-error @+1 {{already returns a scalar; it needs no appended loss}}
func.func @scalar(%x: tensor<4xf32> {part.role = #part.role<input>}) -> tensor<f32> {
  %0 = part.reduce_sum %x dims [0] : tensor<4xf32> -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

// expected-error @+1 {{result 0 has type 'tensor<4xi32>'; a loss needs a float tensor}}
func.func @ints(%x: tensor<4xi32> {part.role = #part.role<input>}) -> tensor<4xi32> {
  return %x : tensor<4xi32>
}

// -----

// expected-error @+1 {{result 0 of type 'tensor<4xf32>' has no class dimension for a cross-entropy loss}}
func.func @vector(%x: tensor<4xf32> {part.role = #part.role<input>}) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}

// -----

// expected-error @+1 {{result 1 has part.loss_weight but type 'tensor<4xf32>'; an auxiliary loss is a 0-d float}}
func.func @aux_not_scalar(%x: tensor<4x8xf32> {part.role = #part.role<input>})
    -> (tensor<4x8xf32>, tensor<4xf32> {part.loss_weight = 1.000000e-01 : f64}) {
  %0 = part.reduce_sum %x dims [1] : tensor<4x8xf32> -> tensor<4xf32>
  return %x, %0 : tensor<4x8xf32>, tensor<4xf32>
}
