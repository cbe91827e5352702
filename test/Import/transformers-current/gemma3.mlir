// Gemma 3 (Gemma3ForCausalLM: a sliding-window layer of window 4 and a
// full-attention layer, q/k norms, four norms per layer scaling by
// 1 + weight, the LM head tied to the embedding) from transformers 5, as
// torch 2.x exports it today (export_current.py). check_export.py checks
// each line it prints against torch (see llama.mlir and its docstring).
// Folded parameters as in gemma.mlir: the dynamo exporter's optimizer
// folds each norm's 1 + weight (the q/k norms' too), so the import fails
// naming them; exported with optimize=False, or by the legacy exporter
// without constant folding, everything trains like torch.
// REQUIRES: current-transformers
// The sanitizer build runs llama.mlir, which takes the same import paths.
// UNSUPPORTED: sanitized
// RUN: rm -rf %t && mkdir -p %t
// RUN: not %current_python %S/check_export.py --bin $(dirname partition-opt) gemma3 %t/folded --meshes dp:1 2>&1 | FileCheck %s --check-prefix=FOLDED
// FOLDED: error: parameters that torch.export lists were folded by the exporter's optimizer
// FOLDED-NEXT: 'model.layers.0.input_layernorm.weight' into 'add_{{[0-9]+}}'
// FOLDED-NEXT: 'model.layers.0.post_attention_layernorm.weight' into 'add_{{[0-9]+}}'
// FOLDED-NEXT: 'model.layers.0.post_feedforward_layernorm.weight' into 'add_{{[0-9]+}}'
// FOLDED-NEXT: 'model.layers.0.pre_feedforward_layernorm.weight' into 'add_{{[0-9]+}}'
// FOLDED-NEXT: 'model.layers.0.self_attn.k_norm.weight' into 'add_{{[0-9]+}}'
// FOLDED-NEXT: 'model.layers.0.self_attn.q_norm.weight' into 'add_{{[0-9]+}}'
// FOLDED: 'model.norm.weight' into 'add_{{[0-9]+}}'
// FOLDED-NEXT: export with torch.onnx.export(..., dynamo=True, optimize=False)
//
// RUN: %current_python %S/check_export.py --bin $(dirname partition-opt) gemma3 %t/dynamo --no-optimize --meshes dp:1,dp:2+tp:2 --train dp:2+tp:2 | FileCheck %s --check-prefix=DYNAMO
// DYNAMO: import gemma3 --no-optimize: ok
// DYNAMO-NEXT: params: 28 equal named_parameters() (0 viewed transposed)
// DYNAMO-NEXT: run dp:1: logits equal torch; attention 2; tp all-reduces 0
// DYNAMO-NEXT: run dp:2,tp:2: logits equal torch; attention 2; tp all-reduces 5
// DYNAMO-NEXT: train dp:2,tp:2: 3 steps equal one rank's
// DYNAMO-NEXT: train dp:1: 3 steps equal torch's
//
// RUN: %current_python %S/check_export.py --bin $(dirname partition-opt) gemma3 %t/legacy --exporter legacy --mask --no-fold --meshes dp:1,dp:2+tp:2 | FileCheck %s --check-prefix=LEGACY
// LEGACY: import gemma3 --exporter legacy --mask --no-fold: ok
// LEGACY-NEXT: params: 28 equal named_parameters() (0 viewed transposed)
// LEGACY-NEXT: run dp:1: logits equal torch; attention 0; tp all-reduces 0
// LEGACY-NEXT: run dp:2,tp:2: logits equal torch; attention 0; tp all-reduces 5
//
// The sliding-window layer's attention is raised with its window (each
// query sees itself and the 3 keys before it), the other without one.
// RUN: grep -c 'part.attention .* causal window 4 ' %t/dynamo/dp1.mlir | FileCheck %s --check-prefix=WINDOW
// WINDOW: {{^1$}}
// RUN: grep -c 'part.attention .* causal scale' %t/dynamo/dp1.mlir | FileCheck %s --check-prefix=FULL
// FULL: {{^1$}}
