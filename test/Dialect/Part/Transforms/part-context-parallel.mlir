// RUN: partition-opt %s --split-input-file --part-context-parallel -verify-diagnostics | FileCheck %s

// The sequence (8 positions) over cp:2, in 4 chunks of 2: device 0 holds
// chunks 0 and 3 (positions 0 1 6 7), device 1 chunks 1 and 2 (2 3 4 5).
// The tokens, the labels and the rotary tables' positions are gathered in
// that order with the split indices (each device takes its own, locally);
// the causal attention compares the global positions; the logits go back
// to the sequence's order. The mean loss does not depend on the order.
// CHECK-LABEL: func.func @layer(
// CHECK: %[[ORDER:.*]] = part.constant dense<[0, 1, 6, 7, 2, 3, 4, 5]> : tensor<8xi64>
// CHECK: %[[LOCAL:.*]] = part.sharding_constraint %[[ORDER]] <@mesh, [{"cp"}]> : tensor<8xi64>
// CHECK-DAG: %[[TOKENS:.*]] = part.gather %arg0, %[[LOCAL]] axis 1 : (tensor<2x8xi32>, tensor<8xi64>) -> tensor<2x8xi32>
// CHECK-DAG: %[[LABELS:.*]] = part.gather %arg1, %[[LOCAL]] axis 1 : (tensor<2x8xi32>, tensor<8xi64>) -> tensor<2x8xi32>
// CHECK: %[[POS:.*]] = part.constant dense<{{.*}}> : tensor<8x1xf32>
// CHECK: %[[POS2:.*]] = part.gather %[[POS]], %[[LOCAL]] axis 0
// CHECK: part.mul %[[POS2]]
// CHECK: part.gather %arg2, %[[TOKENS]] axis 0
// CHECK: part.attention %{{.*}}, %{{.*}}, %{{.*}} causal positions(%[[LOCAL]], %[[ORDER]]) {part.layer = 0 : i64}
// CHECK: part.softmax_cross_entropy %{{.*}}, %[[LABELS]]
// CHECK: %[[INVERSE:.*]] = part.constant dense<[0, 1, 4, 5, 6, 7, 2, 3]> : tensor<8xi64>
// CHECK: %[[LOGITS:.*]] = part.gather %{{.*}}, %[[INVERSE]] axis 1 : (tensor<2x8x16xf32>, tensor<8xi64>) -> tensor<2x8x16xf32>
// CHECK: return %[[LOGITS]], %{{.*}} :
part.mesh @mesh = <["cp"=2]>
func.func @layer(%tokens: tensor<2x8xi32> {part.name = "tokens", part.role = #part.role<input>},
                 %labels: tensor<2x8xi32> {part.name = "labels", part.role = #part.role<label>},
                 %embed: tensor<16x8xf32> {part.name = "embed", part.role = #part.role<parameter>})
    -> (tensor<2x8x16xf32> {part.name = "logits"}, tensor<f32> {part.name = "loss"}) {
  %positions = part.constant dense<[[0.0], [1.0], [2.0], [3.0], [4.0], [5.0], [6.0], [7.0]]> : tensor<8x1xf32>
  %freq = part.constant dense<[[1.0, 0.1, 1.0, 0.1]]> : tensor<1x4xf32>
  %angles = part.mul %positions, %freq : (tensor<8x1xf32>, tensor<1x4xf32>) -> tensor<8x4xf32>
  %cos = part.cos %angles : tensor<8x4xf32>
  %sin = part.sin %angles : tensor<8x4xf32>
  %x = part.gather %embed, %tokens axis 0 : (tensor<16x8xf32>, tensor<2x8xi32>) -> tensor<2x8x8xf32>
  %h = part.reshape %x : tensor<2x8x8xf32> -> tensor<2x8x2x4xf32>
  %t = part.transpose %h [0, 2, 1, 3] : tensor<2x8x2x4xf32> -> tensor<2x2x8x4xf32>
  %q = part.rotary_embedding %t, %cos, %sin : (tensor<2x2x8x4xf32>, tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<2x2x8x4xf32>
  %o = part.attention %q, %q, %t causal {part.layer = 0 : i64} : (tensor<2x2x8x4xf32>, tensor<2x2x8x4xf32>, tensor<2x2x8x4xf32>) -> tensor<2x2x8x4xf32>
  %b = part.transpose %o [0, 2, 1, 3] : tensor<2x2x8x4xf32> -> tensor<2x8x2x4xf32>
  %m = part.reshape %b : tensor<2x8x2x4xf32> -> tensor<2x8x8xf32>
  %logits = part.matmul %m, %embed {transpose_b} : (tensor<2x8x8xf32>, tensor<16x8xf32>) -> tensor<2x8x16xf32>
  %loss = part.softmax_cross_entropy %logits, %labels mean : (tensor<2x8x16xf32>, tensor<2x8xi32>) -> tensor<f32>
  return %logits, %loss : tensor<2x8x16xf32>, tensor<f32>
}

// -----

part.mesh @mesh = <["cp"=2]>
// expected-error @below {{mesh axis "cp" splits the sequence, but @mlp has no part.attention (part-raise makes one of an attention written as ops)}}
func.func @mlp(%x: tensor<2x8x4xf32> {part.role = #part.role<input>},
               %w: tensor<4x4xf32> {part.role = #part.role<parameter>}) -> tensor<2x8x4xf32> {
  %y = part.matmul %x, %w : (tensor<2x8x4xf32>, tensor<4x4xf32>) -> tensor<2x8x4xf32>
  return %y : tensor<2x8x4xf32>
}

// -----

part.mesh @mesh = <["cp"=4]>
func.func @short(%x: tensor<1x2x12x4xf32> {part.role = #part.role<input>}) -> tensor<1x2x12x4xf32> {
  // expected-error @below {{context parallelism over "cp" of size 4 cuts the sequence into 8 chunks (two per device, for the causal balance), which do not divide its length 12}}
  %o = part.attention %x, %x, %x causal : (tensor<1x2x12x4xf32>, tensor<1x2x12x4xf32>, tensor<1x2x12x4xf32>) -> tensor<1x2x12x4xf32>
  return %o : tensor<1x2x12x4xf32>
}

// -----

// Labels shifted inside the model (logits[:, :-1]): a slice along the
// sequence, which each device's chunks cannot compute.
part.mesh @mesh = <["cp"=2]>
func.func @shifted(%x: tensor<1x2x8x4xf32> {part.role = #part.role<input>}) -> tensor<1x2x7x4xf32> {
  %o = part.attention %x, %x, %x causal : (tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>) -> tensor<1x2x8x4xf32>
  // expected-error @below {{context parallelism over "cp" cannot split a part.slice along the sequence (dimension 2, 8 positions): each device holds its own chunks of the sequence (shift labels outside the model)}}
  %s = part.slice %o offsets [0, 0, 0, 0] : tensor<1x2x8x4xf32> -> tensor<1x2x7x4xf32>
  return %s : tensor<1x2x7x4xf32>
}

// -----

// expected-error @below {{mesh @mesh has no axis "cp"}}
part.mesh @mesh = <["dp"=2]>
func.func @nocp(%x: tensor<1x2x8x4xf32> {part.role = #part.role<input>}) -> tensor<1x2x8x4xf32> {
  %o = part.attention %x, %x, %x causal : (tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>) -> tensor<1x2x8x4xf32>
  return %o : tensor<1x2x8x4xf32>
}

// -----

// The sequence folded with the batch into rows before the attention (as
// Hugging Face's GPT-2 export writes its Conv1D layers): the input's
// positions cannot be put in the attention's order, so nothing is split
// rather than the attention's mask placed on the wrong positions.
part.mesh @mesh = <["cp"=2]>
// expected-error @below {{context parallelism over "cp" cannot follow the sequence (8 positions) from the attentions to argument 0 (x) of shape [2, 8, 4]: an op between them folds the sequence into another dimension (a part.reshape of [batch, sequence, features] into rows), so its positions could not be put in the order of the attentions'}}
func.func @rows(%x: tensor<2x8x4xf32> {part.name = "x", part.role = #part.role<input>},
                %w: tensor<4x8xf32> {part.role = #part.role<parameter>}) -> tensor<2x2x8x4xf32> {
  %r = part.reshape %x : tensor<2x8x4xf32> -> tensor<16x4xf32>
  %p = part.matmul %r, %w : (tensor<16x4xf32>, tensor<4x8xf32>) -> tensor<16x8xf32>
  %h = part.reshape %p : tensor<16x8xf32> -> tensor<2x8x2x4xf32>
  %t = part.transpose %h [0, 2, 1, 3] : tensor<2x8x2x4xf32> -> tensor<2x2x8x4xf32>
  %o = part.attention %t, %t, %t causal : (tensor<2x2x8x4xf32>, tensor<2x2x8x4xf32>, tensor<2x2x8x4xf32>) -> tensor<2x2x8x4xf32>
  return %o : tensor<2x2x8x4xf32>
}
