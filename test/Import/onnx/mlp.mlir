// A small ONNX MLP (Gemm with transB, Relu, MatMul + Add, symbolic batch):
// the translation, the parameters and their safetensors data, and a run on
// the CPU backend against numpy. At most 8 f32 products per dot product:
// 1e-5 absolute + 1e-5 relative bounds the rounding.
//
// RUN: rm -rf %t && mkdir -p %t/out
// RUN: %python %S/Inputs/make_models.py %t
// RUN: partition-import %t/good.onnx --dim batch=5 -o %t/mlp.mlir --weights %t/w.safetensors
// RUN: FileCheck %s < %t/mlp.mlir
// RUN: %python %S/Inputs/check_weights.py %t/w.safetensors %t/good-weights.npz
// RUN: partition-opt %t/mlp.mlir --part-spmd="mesh=dp:1" | partition-translate --part-to-plan -o %t/mlp.plan
// RUN: %python -c "import numpy as np; np.save('%t/x.npy', np.random.default_rng(1).standard_normal((5, 4)).astype(np.float32))"
// RUN: partition-run %t/mlp.plan --backend cpu --weights %t/w.safetensors --input x=%t/x.npy --output-dir %t/out > /dev/null
// RUN: %python %S/Inputs/mlp_reference.py %t/good-weights.npz %t/x.npy %t/expected.npy
// RUN: %python %S/../../e2e/Inputs/compare.py 1e-5 1e-5 %t/expected.npy %t/out/y.npy
//
// CHECK-LABEL: func.func @main(
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<5x4xf32> {part.name = "x", part.role = #part.role<input>}
// CHECK-SAME: %[[W1:[a-z0-9]+]]: tensor<8x4xf32> {part.name = "fc1.weight", part.role = #part.role<parameter>}
// CHECK-SAME: %[[B1:[a-z0-9]+]]: tensor<8xf32> {part.name = "fc1.bias", part.role = #part.role<parameter>}
// CHECK-SAME: %[[W2:[a-z0-9]+]]: tensor<8x3xf32> {part.name = "fc2.weight", part.role = #part.role<parameter>}
// CHECK-SAME: %[[B2:[a-z0-9]+]]: tensor<3xf32> {part.name = "fc2.bias", part.role = #part.role<parameter>}
// CHECK-SAME: -> (tensor<5x3xf32> {part.name = "y"})
// CHECK: %[[H:.*]] = part.matmul %[[X]], %[[W1]] transpose_b
// CHECK: %[[HB:.*]] = part.add %[[H]], %[[B1]]
// CHECK: %[[R:.*]] = part.relu %[[HB]]
// CHECK: %[[M:.*]] = part.matmul %[[R]], %[[W2]] :
// CHECK: %[[Y:.*]] = part.add %[[M]], %[[B2]]
// CHECK: return %[[Y]]
