// An imported inference model made trainable: `partition-import --loss
// cross-entropy` appends an i32 `labels` argument and returns the mean
// softmax cross-entropy of the logits (part-append-loss). Its value on 1
// and on 4 ranks (dp 2 x tp 2) equals the float64 cross-entropy of
// onnxruntime's logits; tolerance as for the logits in gpt.mlir (5e-5 +
// 5e-5 |ref|): the loss is a mean of logsumexp differences of those logits.
//
// RUN: rm -rf %t && mkdir -p %t/ref %t/out1 %t/out4
// RUN: %ort_python %S/reference.py %S/gpt-opset17.onnx %t/ref --dim batch=2 --dim seq=8 > /dev/null
// RUN: %python %S/Inputs/ce_reference.py %t/ref/logits.npy %t
// RUN: partition-import %S/gpt-opset17.onnx --dim batch=2 --dim seq=8 --loss cross-entropy -o %t/m.mlir --weights %t/w.safetensors
// RUN: FileCheck %s < %t/m.mlir
// RUN: partition-opt %t/m.mlir --part-spmd="mesh=dp:1" | partition-translate --part-to-plan -o %t/1.plan
// RUN: partition-opt %t/m.mlir --part-spmd="mesh=dp:2,tp:2" | partition-translate --part-to-plan -o %t/4.plan
// RUN: partition-run %t/1.plan --backend cpu --weights %t/w.safetensors --input input_ids=%t/ref/input_ids.npy --input labels=%t/labels.npy --output-dir %t/out1 > /dev/null
// RUN: partition-run %t/4.plan --backend cpu --weights %t/w.safetensors --input input_ids=%t/ref/input_ids.npy --input labels=%t/labels.npy --output-dir %t/out4 > /dev/null
// RUN: %python %S/../../e2e/Inputs/compare.py 5e-5 5e-5 %t/loss.npy %t/out1/loss.npy %t/out4/loss.npy
//
// CHECK-LABEL: func.func @main(
// CHECK-SAME: {part.name = "labels", part.role = #part.role<label>}
// CHECK-SAME: -> (tensor<f32> {part.name = "loss"})
// CHECK: part.softmax_cross_entropy {{.*}} mean : (tensor<2x8x96xf32>, tensor<2x8xi32>) -> tensor<f32>
