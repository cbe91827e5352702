// The Llama style model of export.py (2 blocks, hidden 32, 4 query heads and
// 2 key/value heads, RMSNorm, rotary embeddings by rotate-half, SwiGLU MLP,
// a triu causal mask, untied head, vocabulary 128), exported at opsets 14
// and 17 and converted to 18 (ReduceMean's axes become an input): imported
// with batch 2 and sequence 8, run on 1 rank and on 4 (dp 2 x tp 2), and
// compared with onnxruntime. Tolerance 5e-5 + 5e-5 * |reference|, argued in
// gpt.mlir (measured onnxruntime f32 error against float64 here: 1.0e-6).
//
// RUN: rm -rf %t && mkdir -p %t
// RUN: for o in 14 17 18; do \
// RUN:   %ort_python %S/reference.py %S/llama-opset$o.onnx %t/ref$o --dim batch=2 --dim seq=8 > /dev/null && \
// RUN:   partition-import %S/llama-opset$o.onnx --dim batch=2 --dim seq=8 -o %t/m$o.mlir --weights %t/w$o.safetensors && \
// RUN:   FileCheck %s --check-prefix=IR < %t/m$o.mlir && \
// RUN:   FileCheck %s --check-prefix=RAW < %t/m$o.mlir && \
// RUN:   partition-opt %t/m$o.mlir --part-spmd="mesh=dp:1" | partition-translate --part-to-plan -o %t/$o-1.plan && \
// RUN:   partition-opt %t/m$o.mlir --part-spmd="mesh=dp:2,tp:2" > %t/spmd$o.mlir && \
// RUN:   FileCheck %s --check-prefix=SPMD < %t/spmd$o.mlir && \
// RUN:   partition-translate --part-to-plan %t/spmd$o.mlir -o %t/$o-4.plan && \
// RUN:   mkdir -p %t/out$o-1 %t/out$o-4 && \
// RUN:   partition-run %t/$o-1.plan --backend cpu --weights %t/w$o.safetensors --input input_ids=%t/ref$o/input_ids.npy --output-dir %t/out$o-1 > /dev/null && \
// RUN:   partition-run %t/$o-4.plan --backend cpu --weights %t/w$o.safetensors --input input_ids=%t/ref$o/input_ids.npy --output-dir %t/out$o-4 > /dev/null && \
// RUN:   %python %S/../../e2e/Inputs/compare.py 5e-5 5e-5 %t/ref$o/logits.npy %t/out$o-1/logits.npy %t/out$o-4/logits.npy || exit 1; \
// RUN: done
//
// Raised structure: per block RMSNorm (epsilon 1e-6), causal grouped-query
// attention (repeat_kv's Expand/Reshape folded away: keys and values keep
// their 2 heads), RMSNorm, SiLU; then the final RMSNorm.
// IR-LABEL: func.func @main(
// IR-SAME: "embed_tokens.weight"
// IR-SAME: -> (tensor<2x8x128xf32> {{.*}}"logits"
// IR: part.rms_norm {{.*}} epsilon 9.99999997E-7
// IR: part.attention {{.*}} causal{{.*}} : (tensor<2x4x8x8xf32>, tensor<2x2x8x8xf32>, tensor<2x2x8x8xf32>) -> tensor<2x4x8x8xf32>
// IR: part.rms_norm {{.*}} epsilon 9.99999997E-7
// IR: part.silu
// IR: part.rms_norm {{.*}} epsilon 9.99999997E-7
// IR: part.attention {{.*}} causal
// IR: part.rms_norm {{.*}} epsilon 9.99999997E-7
// IR: part.silu
// IR: part.rms_norm {{.*}} epsilon 9.99999997E-7
// IR: return
//
// RAW-NOT: part.softmax
// RAW-NOT: part.sigmoid
// RAW-NOT: part.pow
// RAW-NOT: part.sqrt
// RAW-NOT: part.rsqrt
//
// SPMD: part.spmd = @
// SPMD: part.all_reduce {{.*}}axes ["tp"]
