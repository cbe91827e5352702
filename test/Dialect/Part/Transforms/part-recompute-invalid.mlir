// RUN: partition-opt %s --split-input-file --part-recompute -verify-diagnostics
// RUN: not partition-opt %s --split-input-file --part-recompute="layers=x" 2>&1 | FileCheck %s --check-prefix=WORD
// RUN: not partition-opt %s --split-input-file --part-recompute="layers=0,,1" 2>&1 | FileCheck %s --check-prefix=EMPTY
// RUN: not partition-opt %s --split-input-file --part-recompute="layers=-1" 2>&1 | FileCheck %s --check-prefix=NEGATIVE
// RUN: not partition-opt %s --split-input-file --part-recompute="layers=0,5" 2>&1 | FileCheck %s --check-prefix=ABSENT
// RUN: not partition-opt %s --split-input-file --part-recompute="mode=half" 2>&1 | FileCheck %s --check-prefix=MODE
// MODE: error: part-recompute: mode="half" is not full or selective
// WORD: error: layers="x": "x" is not a layer index (expected all, or a comma-separated list of non-negative integers such as 0,2)
// EMPTY: error: layers="0,,1": "" is not a layer index
// NEGATIVE: error: layers="-1": "-1" is not a layer index
// ABSENT: error: layer 5 has no forward ops (part.layer) in the module; its layers are 0

// A training program with one layer: valid, the base of the option errors.
func.func @step(%x: tensor<4xf32> {part.role = #part.role<input>},
                %w: tensor<4xf32> {part.name = "w", part.role = #part.role<parameter>})
    -> (tensor<f32>, tensor<4xf32> {part.grad_of = 1 : i64}) {
  %0 = part.mul %x, %w {part.layer = 0 : i64} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %1 = part.tanh %0 {part.layer = 0 : i64} : tensor<4xf32>
  %2 = part.reduce_sum %1 dims [0] : tensor<4xf32> -> tensor<f32>
  %3 = part.mul %1, %1 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %2, %3 : tensor<f32>, tensor<4xf32>
}

// -----

// expected-error @+1 {{@forward is not a training program of one block returning the loss and gradients (part.grad_of) or updates (part.updates); run part-recompute after part-autodiff}}
func.func @forward(%x: tensor<4xf32> {part.role = #part.role<input>}) -> tensor<f32> {
  %0 = part.tanh %x {part.layer = 0 : i64} : tensor<4xf32>
  %1 = part.reduce_sum %0 dims [0] : tensor<4xf32> -> tensor<f32>
  return %1 : tensor<f32>
}

// -----

part.mesh @mesh = <["dp"=2]>

// expected-error @+1 {{@local is a per-device program; part-recompute works on the global training program (run it before part-spmd)}}
func.func @local(%w: tensor<4xf32> {part.role = #part.role<parameter>})
    -> (tensor<f32>, tensor<4xf32> {part.grad_of = 0 : i64}) attributes {part.spmd = @mesh} {
  %0 = part.reduce_sum %w dims [0] : tensor<4xf32> -> tensor<f32>
  return %0, %w : tensor<f32>, tensor<4xf32>
}

// -----

// expected-warning @below {{no forward op has a part.layer attribute: nothing to recompute}}
module {
  func.func @no_layers(%w: tensor<4xf32> {part.role = #part.role<parameter>})
      -> (tensor<f32>, tensor<4xf32> {part.grad_of = 0 : i64}) {
    %0 = part.reduce_sum %w dims [0] : tensor<4xf32> -> tensor<f32>
    return %0, %w : tensor<f32>, tensor<4xf32>
  }
}
