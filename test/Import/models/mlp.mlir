// The MLP of export.py: Linear(16, 32) / ReLU / Linear(32, 32) / ReLU on a
// [batch, seq, 16] input (MatMul + Add), a mean over seq, and Linear(32, 8)
// on the 2-D result (Gemm, transB = 1), exported at opsets 14 and 17:
// imported with batch 2 and sequence 8, run on 1 rank and on 4 (dp 2 x tp 2),
// and compared with onnxruntime. Tolerance 5e-5 + 5e-5 * |reference|, argued
// in gpt.mlir (measured onnxruntime f32 error against float64 here: 9.4e-8).
//
// RUN: rm -rf %t && mkdir -p %t
// RUN: for o in 14 17; do \
// RUN:   %ort_python %S/reference.py %S/mlp-opset$o.onnx %t/ref$o --dim batch=2 --dim seq=8 > /dev/null && \
// RUN:   partition-import %S/mlp-opset$o.onnx --dim batch=2 --dim seq=8 -o %t/m$o.mlir --weights %t/w$o.safetensors && \
// RUN:   FileCheck %s --check-prefix=IR < %t/m$o.mlir && \
// RUN:   partition-opt %t/m$o.mlir --part-spmd="mesh=dp:1" | partition-translate --part-to-plan -o %t/$o-1.plan && \
// RUN:   partition-opt %t/m$o.mlir --part-spmd="mesh=dp:2,tp:2" > %t/spmd$o.mlir && \
// RUN:   FileCheck %s --check-prefix=SPMD < %t/spmd$o.mlir && \
// RUN:   partition-translate --part-to-plan %t/spmd$o.mlir -o %t/$o-4.plan && \
// RUN:   mkdir -p %t/out$o-1 %t/out$o-4 && \
// RUN:   partition-run %t/$o-1.plan --backend cpu --weights %t/w$o.safetensors --input x=%t/ref$o/x.npy --output-dir %t/out$o-1 > /dev/null && \
// RUN:   partition-run %t/$o-4.plan --backend cpu --weights %t/w$o.safetensors --input x=%t/ref$o/x.npy --output-dir %t/out$o-4 > /dev/null && \
// RUN:   %python %S/../../e2e/Inputs/compare.py 5e-5 5e-5 %t/ref$o/y.npy %t/out$o-1/y.npy %t/out$o-4/y.npy || exit 1; \
// RUN: done
//
// IR-LABEL: func.func @main(
// IR-SAME: tensor<2x8x16xf32>
// IR-SAME: -> (tensor<2x8xf32> {{.*}}"y"
// IR: part.matmul {{.*}} -> tensor<2x8x32xf32>
// IR: part.relu
// IR: part.matmul {{.*}} -> tensor<2x8x32xf32>
// IR: part.relu
// IR: part.matmul {{.*}} -> tensor<2x8xf32>
// IR: return
//
// fc1 / fc2 are a Megatron column / row pair over tp.
// SPMD: part.spmd = @
// SPMD: part.all_reduce {{.*}}axes ["tp"]
