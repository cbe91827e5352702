// RUN: partition-opt %s --part-autodiff -split-input-file | FileCheck %s
// The structure part-autodiff gives a loss function: the same arguments,
// the loss and one gradient per parameter as results, the backward ops after
// the forward ones. The numbers are checked by finite-differences.mlir and
// models.mlir.

// The pass description's example: a broadcast operand's cotangent is summed
// back to its shape.
// CHECK-LABEL: func.func @linear
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32> {part.name = "x", part.role = #part.role<input>}, %[[W:.*]]: tensor<8xf32> {part.name = "w", part.role = #part.role<parameter>})
// CHECK-SAME: -> (tensor<f32> {part.name = "loss"}, tensor<8xf32> {part.grad_of = 1 : i64, part.name = "grad.w"})
// CHECK: %[[MUL:.*]] = part.mul %[[X]], %[[W]]
// CHECK: %[[LOSS:.*]] = part.reduce_sum %[[MUL]] dims [0, 1]
// CHECK: %[[ONE:.*]] = part.constant dense<1.000000e+00> : tensor<f32>
// CHECK: %[[SEED:.*]] = part.reshape %[[ONE]] : tensor<f32> -> tensor<1x1xf32>
// CHECK: %[[DY:.*]] = part.broadcast %[[SEED]] : tensor<1x1xf32> -> tensor<4x8xf32>
// CHECK: %[[DW:.*]] = part.mul %[[DY]], %[[X]]
// CHECK: %[[GRAD:.*]] = part.reduce_sum %[[DW]] dims [0] : tensor<4x8xf32> -> tensor<8xf32>
// CHECK: return %[[LOSS]], %[[GRAD]] : tensor<f32>, tensor<8xf32>
func.func @linear(%x: tensor<4x8xf32> {part.name = "x", part.role = #part.role<input>},
                  %w: tensor<8xf32> {part.name = "w", part.role = #part.role<parameter>}) -> (tensor<f32> {part.name = "loss"}) {
  %0 = part.mul %x, %w : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %1 = part.reduce_sum %0 dims [0, 1] : tensor<4x8xf32> -> tensor<f32>
  return %1 : tensor<f32>
}

// -----

// A parameter used twice: its gradient is the sum (part.add) of both uses'
// cotangents. Transposes fold into the products' flags.
// CHECK-LABEL: func.func @fanout
// CHECK-SAME: -> (tensor<f32> {part.name = "loss"}, tensor<8x8xf32> {part.grad_of = 1 : i64, part.name = "grad.w"})
// CHECK: %[[H:.*]] = part.matmul %[[X:.*]], %[[W:.*]] :
// CHECK: part.reduce_mean
// CHECK: part.constant dense<3.125000e-02> : tensor<f32>
// CHECK: %[[DY:.*]] = part.broadcast
// CHECK: %[[DH:.*]] = part.matmul %[[DY]], %[[W]] transpose_b
// CHECK: %[[DW2:.*]] = part.matmul %[[H]], %[[DY]] transpose_a
// CHECK: %[[DW1:.*]] = part.matmul %[[X]], %[[DH]] transpose_a
// CHECK: %[[DW:.*]] = part.add %[[DW2]], %[[DW1]]
// CHECK: return %{{.*}}, %[[DW]]
func.func @fanout(%x: tensor<4x8xf32> {part.name = "x", part.role = #part.role<input>},
                  %w: tensor<8x8xf32> {part.name = "w", part.role = #part.role<parameter>}) -> (tensor<f32> {part.name = "loss"}) {
  %0 = part.matmul %x, %w : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %1 = part.matmul %0, %w : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %2 = part.reduce_mean %1 dims [0, 1] : tensor<4x8xf32> -> tensor<f32>
  return %2 : tensor<f32>
}

// -----

// An embedding's gradient is a scatter-add of the looked-up rows'
// cotangents. A parameter without a path to the loss (here: one that only
// reaches it through an integer cast, or not at all) gets zeros; integer
// values carry no cotangent; an op off the path is left alone, even one with
// no rule; a parameter without a name gets grad.arg<index>.
// CHECK-LABEL: func.func @no_path
// CHECK-SAME: -> (tensor<f32>, tensor<10x8xf32> {part.grad_of = 1 : i64, part.name = "grad.embed"}, tensor<3xf32> {part.grad_of = 2 : i64, part.name = "grad.unused"}, tensor<8xf32> {part.grad_of = 3 : i64, part.name = "grad.arg3"})
// CHECK: part.all_reduce
// CHECK: %[[DE:.*]] = part.scatter_add %{{.*}}, %[[IDS:.*]] axis 0 : (tensor<4x8xf32>, tensor<4xi32>) -> tensor<10x8xf32>
// CHECK: %[[Z3:.*]] = part.constant dense<0.000000e+00> : tensor<3xf32>
// CHECK: %[[Z8:.*]] = part.constant dense<0.000000e+00> : tensor<8xf32>
// CHECK: return %{{.*}}, %[[DE]], %[[Z3]], %[[Z8]]
part.mesh @mesh = <["x"=2]>
func.func @no_path(%ids: tensor<4xi32> {part.role = #part.role<input>},
                   %e: tensor<10x8xf32> {part.name = "embed", part.role = #part.role<parameter>},
                   %unused: tensor<3xf32> {part.name = "unused", part.role = #part.role<parameter>},
                   %b: tensor<8xf32> {part.role = #part.role<parameter>}) -> tensor<f32> {
  %0 = part.gather %e, %ids axis 0 : (tensor<10x8xf32>, tensor<4xi32>) -> tensor<4x8xf32>
  %1 = part.cast %b : tensor<8xf32> -> tensor<8xi32>
  %2 = part.cast %1 : tensor<8xi32> -> tensor<8xf32>
  %3 = part.add %0, %2 : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %4 = part.all_reduce %unused on @mesh axes ["x"] sum : tensor<3xf32>
  %5 = part.reduce_sum %3 dims [0, 1] : tensor<4x8xf32> -> tensor<f32>
  return %5 : tensor<f32>
}

// -----

// Ties split evenly: reduce_max divides by the number of elements equal to
// the maximum; max gives each side its strict wins plus half of the ties.
// CHECK-LABEL: func.func @ties
// CHECK: %[[MAX:.*]] = part.max %[[A:.*]], %[[B:.*]] :
// CHECK: %[[TOP:.*]] = part.reduce_max %[[MAX]]
// CHECK: %[[M:.*]] = part.reshape %[[TOP]] : tensor<f32> -> tensor<1xf32>
// CHECK: %[[HIT:.*]] = part.compare eq, %[[MAX]], %[[M]] : (tensor<4xf32>, tensor<1xf32>) -> tensor<4xi32>
// CHECK: %[[HITF:.*]] = part.cast %[[HIT]] : tensor<4xi32> -> tensor<4xf32>
// CHECK: %[[COUNT:.*]] = part.reduce_sum %[[HITF]] dims [0] keep_dims
// CHECK: part.div %{{.*}}, %[[COUNT]]
// CHECK: part.compare eq, %[[A]], %[[B]]
// CHECK: part.constant dense<5.000000e-01>
// CHECK: part.compare gt, %[[A]], %[[B]]
// CHECK: part.compare lt, %[[A]], %[[B]]
func.func @ties(%a: tensor<4xf32> {part.name = "a", part.role = #part.role<parameter>},
                %b: tensor<4xf32> {part.name = "b", part.role = #part.role<parameter>}) -> tensor<f32> {
  %0 = part.max %a, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %1 = part.reduce_max %0 dims [0] : tensor<4xf32> -> tensor<f32>
  return %1 : tensor<f32>
}

// -----

// Backward ops nobody uses are erased: a constant exponent needs no
// cotangent, so no log(x) is computed for it.
// CHECK-LABEL: func.func @pow
// CHECK: part.pow
// CHECK: part.pow
// CHECK-NOT: part.log
// CHECK-NOT: part.select
// CHECK: return
func.func @pow(%x: tensor<4xf32> {part.name = "x", part.role = #part.role<parameter>}) -> tensor<f32> {
  %c = part.constant dense<3.0> : tensor<f32>
  %0 = part.pow %x, %c : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %1 = part.reduce_sum %0 dims [0] : tensor<4xf32> -> tensor<f32>
  return %1 : tensor<f32>
}

// -----

// Grouped-query causal attention: one part.attention_grad (which
// recomputes the probabilities block by block) gives the key and value
// cotangents per query head, summed over each group's query heads; slices
// become pads, accumulated where they share a source.
// CHECK-LABEL: func.func @slice_gqa
// CHECK: %[[K:.*]] = part.slice %[[KV:.*]] offsets [0, 0, 0, 0]
// CHECK: %[[V:.*]] = part.slice %[[KV]] offsets [0, 0, 0, 2]
// CHECK: part.attention
// CHECK: %[[DQ:.*]], %[[DKE:.*]], %[[DVE:.*]] = part.attention_grad %arg0, %[[K]], %[[V]], %{{.*}} causal : (tensor<1x4x8x2xf32>, tensor<1x2x8x2xf32>, tensor<1x2x8x2xf32>, tensor<1x4x8x2xf32>) -> (tensor<1x4x8x2xf32>, tensor<1x4x8x2xf32>, tensor<1x4x8x2xf32>)
// CHECK: %[[DK5:.*]] = part.reshape %[[DKE]] : tensor<1x4x8x2xf32> -> tensor<1x2x2x8x2xf32>
// CHECK: %[[DK:.*]] = part.reduce_sum %[[DK5]] dims [2] : tensor<1x2x2x8x2xf32> -> tensor<1x2x8x2xf32>
// CHECK: %[[DV5:.*]] = part.reshape %[[DVE]] : tensor<1x4x8x2xf32> -> tensor<1x2x2x8x2xf32>
// CHECK: %[[DV:.*]] = part.reduce_sum %[[DV5]] dims [2]
// CHECK: %[[PV:.*]] = part.pad %[[DV]] offsets [0, 0, 0, 2] : tensor<1x2x8x2xf32> -> tensor<1x2x8x4xf32>
// CHECK: %[[PK:.*]] = part.pad %[[DK]] offsets [0, 0, 0, 0] : tensor<1x2x8x2xf32> -> tensor<1x2x8x4xf32>
// CHECK: %[[DKV:.*]] = part.add %[[PV]], %[[PK]]
// CHECK: return %{{.*}}, %[[DQ]], %[[DKV]]
func.func @slice_gqa(%q: tensor<1x4x8x2xf32> {part.name = "q", part.role = #part.role<parameter>},
                     %kv: tensor<1x2x8x4xf32> {part.name = "kv", part.role = #part.role<parameter>}) -> tensor<f32> {
  %k = part.slice %kv offsets [0, 0, 0, 0] : tensor<1x2x8x4xf32> -> tensor<1x2x8x2xf32>
  %v = part.slice %kv offsets [0, 0, 0, 2] : tensor<1x2x8x4xf32> -> tensor<1x2x8x2xf32>
  %0 = part.attention %q, %k, %v causal : (tensor<1x4x8x2xf32>, tensor<1x2x8x2xf32>, tensor<1x2x8x2xf32>) -> tensor<1x4x8x2xf32>
  %1 = part.reduce_sum %0 dims [0, 1, 2, 3] : tensor<1x4x8x2xf32> -> tensor<f32>
  return %1 : tensor<f32>
}

// -----

// Cross-entropy: softmax minus the one-hot of the labels (compare against an
// iota), times the cotangent over the number of positions for a mean.
// CHECK-LABEL: func.func @cross_entropy
// CHECK: %[[P:.*]] = part.softmax %[[LOGITS:.*]] dim 2 : tensor<2x3x5xf32>
// CHECK: %[[IOTA:.*]] = part.constant dense<[0, 1, 2, 3, 4]> : tensor<5xi32>
// CHECK: %[[COL:.*]] = part.reshape %[[LABELS:.*]] : tensor<2x3xi32> -> tensor<2x3x1xi32>
// CHECK: %[[HOT:.*]] = part.compare eq, %[[IOTA]], %[[COL]] : (tensor<5xi32>, tensor<2x3x1xi32>) -> tensor<2x3x5xi32>
// CHECK: %[[HOTF:.*]] = part.cast %[[HOT]] : tensor<2x3x5xi32> -> tensor<2x3x5xf32>
// CHECK: %[[DIFF:.*]] = part.sub %[[P]], %[[HOTF]]
// CHECK: part.constant dense<0.166666672> : tensor<f32>
// CHECK: part.mul %[[DIFF]], %{{.*}} : (tensor<2x3x5xf32>, tensor<f32>) -> tensor<2x3x5xf32>
func.func @cross_entropy(%logits: tensor<2x3x5xf32> {part.name = "logits", part.role = #part.role<parameter>},
                         %labels: tensor<2x3xi32> {part.name = "labels", part.role = #part.role<label>}) -> tensor<f32> {
  %0 = part.softmax_cross_entropy %logits, %labels mean : (tensor<2x3x5xf32>, tensor<2x3xi32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

// A function that is only a declaration is left alone; the loss of a
// function may come straight from an argument.
// CHECK-LABEL: func.func private @declaration(tensor<4xf32>) -> tensor<4xf32>
func.func private @declaration(tensor<4xf32>) -> tensor<4xf32>
// CHECK-LABEL: func.func @identity
// CHECK-SAME: -> (tensor<f32>, tensor<f32> {part.grad_of = 0 : i64, part.name = "grad.s"})
// CHECK: %[[ONE:.*]] = part.constant dense<1.000000e+00> : tensor<f32>
// CHECK: return %{{.*}}, %[[ONE]]
func.func @identity(%s: tensor<f32> {part.name = "s", part.role = #part.role<parameter>}) -> tensor<f32> {
  return %s : tensor<f32>
}
