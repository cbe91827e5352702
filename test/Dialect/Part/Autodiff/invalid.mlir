// RUN: partition-opt %s --part-autodiff -split-input-file -verify-diagnostics
// One case per diagnostic of part-autodiff.
//
// partition-opt exits non-zero and names the op and where it is:
// RUN: not partition-opt %s --part-autodiff -split-input-file 2>&1 | FileCheck %s
// CHECK: invalid.mlir:{{[0-9]+}}:8: error: 'part.all_reduce' op is on the path to the loss but has no vector-Jacobian product (VjpOpInterface), so part-autodiff cannot differentiate through it

// expected-error @+1 {{part-autodiff differentiates a function whose single result is a 0-d float loss, but @not_scalar returns (tensor<4xf32>)}}
func.func @not_scalar(%x: tensor<4xf32> {part.role = #part.role<parameter>}) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}

// -----

// expected-error @+1 {{part-autodiff differentiates a function whose single result is a 0-d float loss, but @two_results returns (tensor<f32>, tensor<f32>)}}
func.func @two_results(%x: tensor<f32> {part.role = #part.role<parameter>}) -> (tensor<f32>, tensor<f32>) {
  return %x, %x : tensor<f32>, tensor<f32>
}

// -----

// expected-error @+1 {{part-autodiff differentiates a function whose single result is a 0-d float loss, but @integer_loss returns (tensor<i32>)}}
func.func @integer_loss(%x: tensor<i32> {part.role = #part.role<input>}) -> tensor<i32> {
  return %x : tensor<i32>
}

// -----

// expected-error @+1 {{parameter argument 0 has type 'tensor<4xi32>', which has no gradient (parameters must be float tensors)}}
func.func @integer_parameter(%x: tensor<4xi32> {part.role = #part.role<parameter>}) -> tensor<f32> {
  %0 = part.cast %x : tensor<4xi32> -> tensor<4xf32>
  %1 = part.reduce_sum %0 dims [0] : tensor<4xf32> -> tensor<f32>
  return %1 : tensor<f32>
}

// -----

// A collective on the path to the loss: autodiff runs on global programs.
part.mesh @mesh = <["x"=2]>
func.func @no_rule(%x: tensor<4xf32> {part.role = #part.role<parameter>}) -> tensor<f32> {
  // expected-error @+1 {{'part.all_reduce' op is on the path to the loss but has no vector-Jacobian product (VjpOpInterface), so part-autodiff cannot differentiate through it}}
  %0 = part.all_reduce %x on @mesh axes ["x"] sum : tensor<4xf32>
  %1 = part.reduce_sum %0 dims [0] : tensor<4xf32> -> tensor<f32>
  return %1 : tensor<f32>
}

// -----

part.mesh @mesh = <["x"=2]>
// expected-error @+1 {{@per_device is a per-device program; part-autodiff differentiates the global program (run it before part-spmd)}}
func.func @per_device(%x: tensor<2xf32> {part.role = #part.role<parameter>}) -> tensor<f32> attributes {part.spmd = @mesh} {
  %0 = part.reduce_sum %x dims [0] : tensor<2xf32> -> tensor<f32>
  return %0 : tensor<f32>
}
