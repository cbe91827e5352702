// RUN: partition-opt %s --part-mixed-precision | FileCheck %s
// RUN: partition-opt %s --part-mixed-precision="compute=f16 initial-loss-scale=1024" | FileCheck %s --check-prefix=F16
// RUN: partition-opt %s --part-mixed-precision --part-autodiff --part-optimizer | FileCheck %s --check-prefix=STEP
// RUN: partition-opt %s --part-mixed-precision="compute=f16" --part-autodiff --part-optimizer="loss-scale-growth-interval=100" | FileCheck %s --check-prefix=SCALED

// A layer normalisation, a matmul, GELU and a cross-entropy loss.
func.func @loss(%x: tensor<4x8xf32> {part.name = "x", part.role = #part.role<input>},
                %g: tensor<8xf32> {part.name = "ln.g", part.role = #part.role<parameter>},
                %b: tensor<8xf32> {part.name = "ln.b", part.role = #part.role<parameter>},
                %w: tensor<8x16xf32> {part.name = "w", part.role = #part.role<parameter>},
                %labels: tensor<4xi32> {part.name = "labels", part.role = #part.role<label>})
    -> (tensor<f32> {part.name = "loss"}) {
  %n = part.layer_norm %x, %g, %b epsilon 1.0e-05 : (tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %h = part.matmul %n, %w : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  %half = part.constant dense<5.000000e-01> : tensor<f32>
  %s = part.mul %h, %half : (tensor<4x16xf32>, tensor<f32>) -> tensor<4x16xf32>
  %a = part.gelu %s tanh : tensor<4x16xf32>
  %l = part.softmax_cross_entropy %a, %labels mean : (tensor<4x16xf32>, tensor<4xi32>) -> tensor<f32>
  return %l : tensor<f32>
}

// Parameters become bf16; the input stays f32.
// CHECK-LABEL: func.func @loss(
// CHECK-SAME: %{{.*}}: tensor<4x8xf32> {part.name = "x"
// CHECK-SAME: %[[G:.*]]: tensor<8xbf16> {part.name = "ln.g"
// CHECK-SAME: %[[B:.*]]: tensor<8xbf16> {part.name = "ln.b"
// CHECK-SAME: %[[W:.*]]: tensor<8x16xbf16> {part.name = "w"
// The normalisation computes in f32: its bf16 parameters are cast up.
// CHECK-DAG: %[[G32:.*]] = part.cast %[[G]] : tensor<8xbf16> -> tensor<8xf32>
// CHECK-DAG: %[[B32:.*]] = part.cast %[[B]] : tensor<8xbf16> -> tensor<8xf32>
// CHECK: %[[N:.*]] = part.layer_norm %{{.*}}, %[[G32]], %[[B32]] {{.*}} -> tensor<4x8xf32>
// The matmul computes in bf16: its f32 operand is cast down.
// CHECK: %[[N16:.*]] = part.cast %[[N]] : tensor<4x8xf32> -> tensor<4x8xbf16>
// CHECK: %[[H:.*]] = part.matmul %[[N16]], %[[W]] : (tensor<4x8xbf16>, tensor<8x16xbf16>) -> tensor<4x16xbf16>
// The constant takes the type of the other operand, as a new constant.
// CHECK: %[[HALF:.*]] = part.constant dense<5.000000e-01> : tensor<bf16>
// CHECK: %[[S:.*]] = part.mul %[[H]], %[[HALF]] : (tensor<4x16xbf16>, tensor<bf16>) -> tensor<4x16xbf16>
// Elementwise ops follow their operands.
// CHECK: %[[A:.*]] = part.gelu %[[S]] tanh : tensor<4x16xbf16>
// The loss computes in f32.
// CHECK: %[[A32:.*]] = part.cast %[[A]] : tensor<4x16xbf16> -> tensor<4x16xf32>
// CHECK: %[[L:.*]] = part.softmax_cross_entropy %[[A32]], %{{.*}} -> tensor<f32>
// CHECK: return %[[L]] : tensor<f32>

// f16 adds the loss scale, a state argument.
// F16-LABEL: func.func @loss(
// F16-SAME: tensor<8x16xf16> {part.name = "w"
// F16-SAME: %{{.*}}: tensor<f32> {part.init = 1.024000e+03 : f32, part.loss_scale, part.name = "loss_scale", part.role = #part.role<state>})
// F16: part.matmul {{.*}} -> tensor<4x16xf16>

// The training step keeps an f32 master copy of each bf16 parameter,
// initialised from the parameter's weights, updates it in f32 and writes the
// parameter back as its cast.
// STEP-LABEL: func.func @loss(
// STEP-SAME: %[[W:[^:]*]]: tensor<8x16xbf16> {part.name = "w", part.role = #part.role<parameter>}
// STEP-SAME: %[[MW:[^:]*]]: tensor<8x16xf32> {part.init = "w", part.name = "master.w", part.role = #part.role<state>, part.state_of = {{[0-9]+}} : i64}
// STEP-SAME: tensor<8x16xf32> {part.name = "adam.m.w", part.role = #part.role<state>, part.state_of = {{[0-9]+}} : i64}
// STEP-SAME: -> (tensor<f32> {part.name = "loss"}
// STEP-SAME: tensor<8x16xf32> {part.name = "new.master.w", part.updates = 12 : i64}
// STEP-SAME: tensor<8x16xbf16> {part.name = "new.w", part.updates = 3 : i64}
// The bf16 gradient is cast to f32 before the update.
// STEP: %[[GW:.*]] = part.cast %{{.*}} : tensor<8x16xbf16> -> tensor<8x16xf32>
// STEP: part.mul %[[GW]], %{{.*}} : (tensor<8x16xf32>, tensor<f32>) -> tensor<8x16xf32>
// STEP: %[[NEWMW:.*]] = part.sub %{{.*}}, %{{.*}} : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
// STEP-NEXT: %[[NEWW:.*]] = part.cast %[[NEWMW]] : tensor<8x16xf32> -> tensor<8x16xbf16>
// STEP: return {{.*}}%[[NEWMW]], %[[NEWW]]

// f16: backward starts from the loss scale, the gradients are unscaled, a
// non-finite gradient skips the step (selects), and the scale adapts.
// SCALED-LABEL: func.func @loss(
// SCALED-SAME: %[[SCALE:[^:]*]]: tensor<f32> {part.init = 6.553600e+04 : f32, part.loss_scale
// SCALED-SAME: tensor<f32> {part.name = "loss_scale.good_steps", part.role = #part.role<state>}
// SCALED-SAME: {part.name = "new.loss_scale", part.updates = 5 : i64}
// SCALED: part.softmax_cross_entropy
// The seed of backward is the scale itself, which the loss's rule scales:
// SCALED: part.mul %[[SCALE]], %{{.*}} : (tensor<f32>, tensor<f32>) -> tensor<f32>
// SCALED: %[[INV:.*]] = part.div %{{.*}}, %[[SCALE]] : (tensor<f32>, tensor<f32>) -> tensor<f32>
// SCALED: %[[G32:.*]] = part.cast %{{.*}} : tensor<8x16xf16> -> tensor<8x16xf32>
// SCALED-NEXT: part.mul %[[G32]], %[[INV]]
// SCALED: %[[FINITE:.*]] = part.compare eq, %{{.*}}, %{{.*}} : (tensor<f32>, tensor<f32>) -> tensor<i32>
// SCALED: part.select %[[FINITE]]
// The step count only advances on a finite step:
// SCALED: part.select %[[FINITE]], %{{.*}}, %arg6 : (tensor<i32>, tensor<f32>, tensor<f32>) -> tensor<f32>
// Growth after the interval; halving on a skipped step.
// SCALED: %[[GROW:.*]] = part.compare ge, %{{.*}}, %{{.*}} : (tensor<f32>, tensor<f32>) -> tensor<i32>
// SCALED: %[[HALF:.*]] = part.mul %[[SCALE]], %{{.*}}
// SCALED: %[[DOUBLE:.*]] = part.mul %[[SCALE]], %{{.*}}
// SCALED: %[[KEPT:.*]] = part.select %[[GROW]], %[[DOUBLE]], %[[SCALE]]
// SCALED: part.select %[[FINITE]], %[[KEPT]], %[[HALF]]
