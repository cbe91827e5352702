// Mixtral (MixtralForCausalLM: 4 experts, each token's top 2 of the
// router's softmax renormalised) from transformers 5, as torch 2.x exports
// it today (export_current.py), with the experts that export:
// experts_implementation="batched_mm" (the default grouped_mm has no ONNX
// form; the eager loop over the experts hit is data-dependent and the
// dynamo exporter cannot trace it). batched_mm repeats each token over its
// 2 slots, gathers each slot's expert weights at its expert id (dynamo:
// GatherND with run-time indices; TorchScript: Gather) and takes one
// matrix-vector bmm per slot. part-raise rewrites that into one
// part.expert_dispatch, the expert SwiGLU as batched matmuls over the
// experts with gate_up_proj [4, 192, 64] and down_proj [4, 64, 96] whole,
// and one part.expert_combine per layer (the routing weights and the sum
// over the slots as exported), so part-expert-parallel splits the 4 expert
// weights over ep and the tokens travel by all-to-all (2 per layer
// forward). check_export.py prints one line per check; see its docstring.
//
// Each import: the parameters are exactly torch's named_parameters(); the
// logits equal torch's on 1 rank, ep:2, dp:2,ep:2, ep:2,tp:2 and tp:4 (the
// experts whole under tp: 1 all-reduce per layer for attention, 1 for the
// embedding); the Hugging Face checkpoint loads by name on 1 rank and ep:2
// (each ep rank reading its 2 experts); 3 SGD steps on ep:2 equal 3 on one
// rank, and those equal torch's. With an attention mask the attention stays
// decomposed and the experts are raised the same way. The legacy
// TorchScript exporter needs an attention mask (without one it cannot
// export transformers 5's mask code, aten::diff), as for Llama.
// REQUIRES: current-transformers
// RUN: rm -rf %t && mkdir -p %t
// RUN: %current_python %S/check_export.py --bin $(dirname partition-opt) mixtral %t/dynamo --meshes dp:1,ep:2,dp:2+ep:2,ep:2+tp:2,tp:4 --hf-checkpoint dp:1,ep:2 --train ep:2 | FileCheck %s --check-prefix=DYNAMO
// DYNAMO: import mixtral: ok
// DYNAMO-NEXT: params: 21 equal named_parameters() (9 viewed transposed)
// DYNAMO-NEXT: run dp:1: logits equal torch; attention 2; tp all-reduces 0; expert dispatches 2; parameters split over ep 0; ep all-to-alls 0
// DYNAMO-NEXT: run ep:2: logits equal torch; attention 2; tp all-reduces 0; expert dispatches 2; parameters split over ep 4; ep all-to-alls 4
// DYNAMO-NEXT: run dp:2,ep:2: logits equal torch; attention 2; tp all-reduces 0; expert dispatches 2; parameters split over ep 4; ep all-to-alls 4
// DYNAMO-NEXT: run ep:2,tp:2: logits equal torch; attention 2; tp all-reduces 3; expert dispatches 2; parameters split over ep 4; ep all-to-alls 4
// DYNAMO-NEXT: run tp:4: logits equal torch; attention 2; tp all-reduces 3; expert dispatches 2; parameters split over ep 0; ep all-to-alls 0
// DYNAMO-NEXT: hf: the weights file holds the Hugging Face checkpoint's 21 tensors
// DYNAMO-NEXT: hf dp:1: the Hugging Face checkpoint loads by name; logits equal torch
// DYNAMO-NEXT: hf ep:2: the Hugging Face checkpoint loads by name; logits equal torch
// DYNAMO-NEXT: train ep:2: 3 steps equal one rank's
// DYNAMO-NEXT: train dp:1: 3 steps equal torch's
//
// The imported layer: the router's softmax and top 2, the tokens [2, 8, 64]
// dispatched to [4 experts, 2 sequences, 8 slots, 64] (capacity 8 = the
// sequence: a token's 2 experts are distinct, so nothing is dropped), the
// SwiGLU on the buffers, the combine, the renormalised weights applied and
// the 2 slots summed. No gather of expert weights is left.
// RUN: FileCheck %s --check-prefix=IR < %t/dynamo/m.mlir
// IR: %[[PROBS:.*]] = part.softmax
// IR: %{{.*}}, %[[IDS:.*]] = part.top_k %[[PROBS]] {{.*}} -> (tensor<16x2xf32>, tensor<16x2xi64>)
// IR: %[[ROUTE:.*]] = part.reshape %[[IDS]] {{.*}} -> tensor<2x8x2xi64>
// IR: %[[BUF:.*]] = part.expert_dispatch %{{.*}}, %[[ROUTE]] {{.*}}: (tensor<2x8x64xf32>, tensor<2x8x2xi64>) -> tensor<4x2x8x64xf32>
// IR: part.batch_matmul %{{.*}}, %arg9 transpose_b {{.*}}: (tensor<4x16x64xf32>, tensor<4x192x64xf32>) -> tensor<4x16x192xf32>
// IR: part.silu {{.*}} : tensor<4x2x8x96xf32>
// IR: part.batch_matmul %{{.*}}, %arg10 transpose_b {{.*}}: (tensor<4x16x96xf32>, tensor<4x64x96xf32>) -> tensor<4x16x64xf32>
// IR: part.expert_combine %{{.*}}, %[[ROUTE]] {{.*}}: (tensor<4x2x8x64xf32>, tensor<2x8x2xi64>) -> tensor<2x8x2x64xf32>
// IR: part.reduce_sum %{{.*}} dims [1] {{.*}}: tensor<16x2x64xf32> -> tensor<16x64xf32>
// RUN: FileCheck %s --check-prefix=NOGATHER < %t/dynamo/m.mlir
// NOGATHER-NOT: part.gather {{.*}}: (tensor<4x
//
// The layers: the dynamo exporter names its nodes "node_MatMul_7", and
// the importer takes each node's layer from the module scopes it records
// ("model.layers.1"), so the planner sees 2 layers (it saw none) and the
// import trains on a pipeline with its experts split over ep, 3 steps
// equal to one device.
// RUN: partition-plan %t/dynamo/m.mlir --cluster %S/../../e2e/Inputs/cpu-4.json --devices 4 --precision f32 --fix ep=2,pp=2 --top 1 | FileCheck %s --check-prefix=PLAN
// PLAN: model: 2 layers, {{.*}} parameters (4 experts per layer)
// PLAN: 1 1 2 1 2
// RUN: partition-check %t/dynamo/m.mlir --mesh pp:2,ep:2 --spmd-options "micro-batches=1" --steps 3 --random-weights 1 --random-scale 0.1 | FileCheck %s --check-prefix=PIPELINE
// PIPELINE: PASS
//
// RUN: %current_python %S/check_export.py --bin $(dirname partition-opt) mixtral %t/dynamo-mask --mask --meshes dp:1,ep:2 | FileCheck %s --check-prefix=MASK
// MASK: import mixtral --mask: ok
// MASK-NEXT: params: 21 equal named_parameters() (9 viewed transposed)
// MASK-NEXT: run dp:1: logits equal torch; attention 0; tp all-reduces 0; expert dispatches 2; parameters split over ep 0; ep all-to-alls 0
// MASK-NEXT: run ep:2: logits equal torch; attention 0; tp all-reduces 0; expert dispatches 2; parameters split over ep 4; ep all-to-alls 4
//
// RUN: %current_python %S/check_export.py --bin $(dirname partition-opt) mixtral %t/legacy --exporter legacy --mask --meshes dp:1,ep:2 --train ep:2 | FileCheck %s --check-prefix=LEGACY
// LEGACY: import mixtral --exporter legacy --mask: ok
// LEGACY-NEXT: params: 21 equal named_parameters() (11 viewed transposed)
// LEGACY-NEXT: run dp:1: logits equal torch; attention 0; tp all-reduces 0; expert dispatches 2; parameters split over ep 0; ep all-to-alls 0
// LEGACY-NEXT: run ep:2: logits equal torch; attention 0; tp all-reduces 0; expert dispatches 2; parameters split over ep 4; ep all-to-alls 4
// LEGACY-NEXT: train ep:2: 3 steps equal one rank's
// LEGACY-NEXT: train dp:1: 3 steps equal torch's
//
// Qwen2-MoE (Qwen2MoeForCausalLM: 6 experts, top 3 of the softmax, not
// renormalised, and a shared expert gated by a sigmoid, added to the
// experts' output): the same rewrite, the routing weights as exported.
// RUN: %current_python %S/check_export.py --bin $(dirname partition-opt) qwen2_moe %t/qwen2-moe --meshes dp:1,ep:2 --train ep:2 | FileCheck %s --check-prefix=QWEN
// QWEN: import qwen2_moe: ok
// QWEN-NEXT: params: 35 equal named_parameters() (9 viewed transposed)
// QWEN-NEXT: run dp:1: logits equal torch; attention 2; tp all-reduces 0; expert dispatches 2; parameters split over ep 0; ep all-to-alls 0
// QWEN-NEXT: run ep:2: logits equal torch; attention 2; tp all-reduces 0; expert dispatches 2; parameters split over ep 4; ep all-to-alls 4
// QWEN-NEXT: train ep:2: 3 steps equal one rank's
// QWEN-NEXT: train dp:1: 3 steps equal torch's
