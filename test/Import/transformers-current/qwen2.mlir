// Qwen2 (Qwen2ForCausalLM: grouped-query attention 8/2, q/k/v biases) from transformers 5, as torch 2.x exports it today
// (export_current.py): the dynamo exporter (torch.onnx.export's default)
// and the legacy TorchScript exporter at opset 17 with an attention mask.
// check_export.py checks each line it prints against torch (see llama.mlir
// and its docstring): the parameters are torch's named_parameters(), the
// logits torch's on every mesh, the Hugging Face checkpoint loads by name
// on dp:1 and dp:2,tp:2, training on dp:2,tp:2 equals one rank's;
// the lines below pin how many attentions were raised and how many
// all-reduces tensor parallelism needs.
// REQUIRES: current-transformers
// The sanitizer build runs llama.mlir, which takes the same import paths.
// UNSUPPORTED: sanitized
// RUN: rm -rf %t && mkdir -p %t
// RUN: %current_python %S/check_export.py --bin $(dirname partition-opt) qwen2 %t/dynamo --train dp:2+tp:2 --hf-checkpoint dp:1,dp:2+tp:2 | FileCheck %s --check-prefix=DYNAMO
// DYNAMO: import qwen2: ok
// DYNAMO-NEXT: params: 27 equal named_parameters() (15 viewed transposed)
// DYNAMO-NEXT: run dp:1: logits equal torch; attention 2; tp all-reduces 0
// DYNAMO-NEXT: run dp:2,tp:2: logits equal torch; attention 2; tp all-reduces 5
// DYNAMO-NEXT: run tp:4: logits equal torch; attention 2; tp all-reduces 5
// DYNAMO-NEXT: hf: the weights file holds the Hugging Face checkpoint's 27 tensors
// DYNAMO-NEXT: hf dp:1: the Hugging Face checkpoint loads by name; logits equal torch
// DYNAMO-NEXT: hf dp:2,tp:2: the Hugging Face checkpoint loads by name; logits equal torch
// DYNAMO-NEXT: train dp:2,tp:2: 3 steps equal one rank's
// DYNAMO-NEXT: train dp:1: 3 steps equal torch's
// RUN: %current_python %S/check_export.py --bin $(dirname partition-opt) qwen2 %t/legacy --exporter legacy --mask --meshes dp:1,dp:2+tp:2 --hf-checkpoint dp:1,dp:2+tp:2 | FileCheck %s --check-prefix=LEGACY
// LEGACY: import qwen2 --exporter legacy --mask: ok
// LEGACY-NEXT: params: 27 equal named_parameters() (15 viewed transposed)
// LEGACY-NEXT: run dp:1: logits equal torch; attention 0; tp all-reduces 0
// LEGACY-NEXT: run dp:2,tp:2: logits equal torch; attention 0; tp all-reduces 5
// LEGACY-NEXT: hf: the weights file holds the Hugging Face checkpoint's 27 tensors
// LEGACY-NEXT: hf dp:1: the Hugging Face checkpoint loads by name; logits equal torch
// LEGACY-NEXT: hf dp:2,tp:2: the Hugging Face checkpoint loads by name; logits equal torch
