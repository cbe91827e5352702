// Weights used by several ops stay one parameter: the embedding table tied
// to the output head (a Gather and a transposed MatMul) and a weight the
// exporter deduplicated through Identity. The safetensors file holds each
// once, and the program computes what numpy computes (at most 8 f32
// products per dot product, chained three times: 1e-5 + 1e-5 |ref|).
//
// RUN: rm -rf %t && mkdir -p %t/out1 %t/out4
// RUN: %python %S/Inputs/make_shared.py %t
// RUN: partition-import %t/tied.onnx --dim batch=2 -o %t/tied.mlir --weights %t/w.safetensors
// RUN: FileCheck %s < %t/tied.mlir
// RUN: %python %S/Inputs/check_weights.py %t/w.safetensors %t/tied-weights.npz
// RUN: partition-opt %t/tied.mlir --part-spmd="mesh=dp:1" | partition-translate --part-to-plan -o %t/1.plan
// RUN: partition-opt %t/tied.mlir --part-spmd="mesh=dp:2,tp:2" | partition-translate --part-to-plan -o %t/4.plan
// RUN: partition-run %t/1.plan --backend cpu --weights %t/w.safetensors --input ids=%t/ids.npy --output-dir %t/out1 > /dev/null
// RUN: partition-run %t/4.plan --backend cpu --weights %t/w.safetensors --input ids=%t/ids.npy --output-dir %t/out4 > /dev/null
// RUN: %python %S/../../e2e/Inputs/compare.py 1e-5 1e-5 %t/expected.npy %t/out1/logits.npy %t/out4/logits.npy
//
// CHECK-LABEL: func.func @main(
// CHECK-SAME: %[[IDS:[a-z0-9]+]]: tensor<2x4xi64> {part.name = "ids", part.role = #part.role<input>}
// CHECK-SAME: %[[WTE:[a-z0-9]+]]: tensor<16x8xf32> {part.name = "wte", part.role = #part.role<parameter>}
// CHECK-SAME: %[[PROJ:[a-z0-9]+]]: tensor<8x8xf32> {part.name = "proj", part.role = #part.role<parameter>})
// CHECK: part.gather %[[WTE]]
// CHECK: part.matmul %{{.*}}, %[[PROJ]] :
// CHECK: part.matmul %{{.*}}, %[[PROJ]] :
// The head reads the table in its own layout, as a tied head should:
// CHECK-NOT: part.transpose
// CHECK: part.matmul %{{.*}}, %[[WTE]] transpose_b :
