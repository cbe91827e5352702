// Llama (LlamaForCausalLM, grouped-query attention: 8 query heads, 2 kv
// heads) from transformers 5, as torch 2.x exports it today
// (export_current.py): the dynamo exporter (torch.onnx.export's default:
// opset 20, weights in llama.onnx.data, dynamic batch and sequence named
// after torch's symbols), with and without an attention mask, and the
// legacy TorchScript exporter at opset 17 (with a mask: without one it
// cannot export transformers 5's mask code, aten::diff). check_export.py
// prints one line per check; see its docstring.
//
// Each import: the parameters are exactly torch's named_parameters(), by
// their Hugging Face names and in their layout (no rotary table, mask or
// folded copy is trained; the program views the 15 Linear weights
// transposed, [in, out], as the exporters fold them, while the weights
// file holds torch's [out, in]), the weights file partition-import writes is the
// Hugging Face checkpoint (the state dict as safetensors) bit for bit, and
// that checkpoint loads by name on 1 rank and on dp:2,tp:2 (each rank
// reading its block of the transposed file); the logits equal torch's on
// 1 rank, dp:2,tp:2 and
// tp:4 (the 2 kv heads then have a copy on each pair of ranks), and
// tensor parallelism needs 2 all-reduces per layer plus 1 for the
// vocabulary-parallel embedding. Without a mask attention is raised in both
// layers: the NaN guard SDPA exports after the softmax is a no-op under the
// causal mask. With an attention_mask input the mask is data, not a
// constant, so attention stays decomposed (and exact). 3 SGD steps on
// dp:2,tp:2 equal 3 on one rank, and 3 on one rank equal torch's.
//
// This family also runs in the sanitizer build: the other families of this
// folder multiply the same import paths.
// REQUIRES: current-transformers
// RUN: rm -rf %t && mkdir -p %t
// RUN: %current_python %S/check_export.py --bin $(dirname partition-opt) llama %t/dynamo --train dp:2+tp:2 --hf-checkpoint dp:1,dp:2+tp:2 | FileCheck %s --check-prefix=DYNAMO
// DYNAMO: import llama: ok
// DYNAMO-NEXT: params: 21 equal named_parameters() (15 viewed transposed)
// DYNAMO-NEXT: run dp:1: logits equal torch; attention 2; tp all-reduces 0
// DYNAMO-NEXT: run dp:2,tp:2: logits equal torch; attention 2; tp all-reduces 5
// DYNAMO-NEXT: run tp:4: logits equal torch; attention 2; tp all-reduces 5
// DYNAMO-NEXT: hf: the weights file holds the Hugging Face checkpoint's 21 tensors
// DYNAMO-NEXT: hf dp:1: the Hugging Face checkpoint loads by name; logits equal torch
// DYNAMO-NEXT: hf dp:2,tp:2: the Hugging Face checkpoint loads by name; logits equal torch
// DYNAMO-NEXT: train dp:2,tp:2: 3 steps equal one rank's
// DYNAMO-NEXT: train dp:1: 3 steps equal torch's
//
// Context parallelism on the dynamo export: the logits equal torch's with
// the sequence split over cp (alone and with dp),
// and 3 steps on cp:2 equal one rank's.
// RUN: %current_python %S/check_export.py --bin $(dirname partition-opt) llama %t/cp --meshes cp:2,dp:2+cp:2,cp:4 --train cp:2 | FileCheck %s --check-prefix=CP
// CP: run cp:2: logits equal torch; attention 2; tp all-reduces 0
// CP-NEXT: run dp:2,cp:2: logits equal torch; attention 2; tp all-reduces 0
// CP-NEXT: run cp:4: logits equal torch; attention 2; tp all-reduces 0
// CP-NEXT: train cp:2: 3 steps equal one rank's
// CP-NEXT: train dp:1: 3 steps equal torch's
//
// RUN: %current_python %S/check_export.py --bin $(dirname partition-opt) llama %t/dynamo-mask --mask --meshes dp:1,dp:2+tp:2 | FileCheck %s --check-prefix=MASK
// MASK: import llama --mask: ok
// MASK-NEXT: params: 21 equal named_parameters() (15 viewed transposed)
// MASK-NEXT: run dp:1: logits equal torch; attention 0; tp all-reduces 0
// MASK-NEXT: run dp:2,tp:2: logits equal torch; attention 0; tp all-reduces 5
//
// RUN: %current_python %S/check_export.py --bin $(dirname partition-opt) llama %t/legacy --exporter legacy --mask --meshes dp:1,dp:2+tp:2 --hf-checkpoint dp:1,dp:2+tp:2 | FileCheck %s --check-prefix=LEGACY
// LEGACY: import llama --exporter legacy --mask: ok
// LEGACY-NEXT: params: 21 equal named_parameters() (15 viewed transposed)
// LEGACY-NEXT: run dp:1: logits equal torch; attention 0; tp all-reduces 0
// LEGACY-NEXT: run dp:2,tp:2: logits equal torch; attention 0; tp all-reduces 5
// LEGACY-NEXT: hf: the weights file holds the Hugging Face checkpoint's 21 tensors
// LEGACY-NEXT: hf dp:1: the Hugging Face checkpoint loads by name; logits equal torch
// LEGACY-NEXT: hf dp:2,tp:2: the Hugging Face checkpoint loads by name; logits equal torch
//
// Eager attention (attn_implementation="eager": the softmax of the scores
// plus the mask, no NaN guard) raises as SDPA's does.
// RUN: %current_python %S/check_export.py --bin $(dirname partition-opt) llama %t/eager --attn eager --meshes dp:1,tp:4 | FileCheck %s --check-prefix=EAGER
// EAGER: import llama --attn eager: ok
// EAGER-NEXT: params: 21 equal named_parameters() (15 viewed transposed)
// EAGER-NEXT: run dp:1: logits equal torch; attention 2; tp all-reduces 0
// EAGER-NEXT: run tp:4: logits equal torch; attention 2; tp all-reduces 5
