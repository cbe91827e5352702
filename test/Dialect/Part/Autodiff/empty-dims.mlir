// Tensors with an empty dimension differentiate like any other: the
// gradient of a batched matmul folded its rows as elements / last dimension,
// a division by zero when that dimension is empty.
// RUN: partition-opt %s --part-autodiff | FileCheck %s

// CHECK-LABEL: func.func @f
// CHECK-SAME: -> (tensor<f32>, tensor<0x4xf32> {part.grad_of = 1 : i64
func.func @f(%a: tensor<2x3x0xf32> {part.role = #part.role<input>}, %b: tensor<0x4xf32> {part.role = #part.role<parameter>}) -> tensor<f32> {
  %0 = part.matmul %a, %b : (tensor<2x3x0xf32>, tensor<0x4xf32>) -> tensor<2x3x4xf32>
  %1 = part.reduce_sum %0 dims [0, 1, 2] : tensor<2x3x4xf32> -> tensor<f32>
  return %1 : tensor<f32>
}
