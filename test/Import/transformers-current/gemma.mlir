// Gemma (GemmaForCausalLM: grouped-query attention 8/2, RMSNorm scaling by
// 1 + weight, the LM head tied to the embedding) from transformers 5, as
// torch 2.x exports it today (export_current.py). check_export.py checks
// each line it prints against torch (see llama.mlir and its docstring).
//
// Folded parameters. The dynamo exporter's optimizer (on by default) folds
// each norm's 1 + weight into a new initializer and drops the weight: the
// file holds 1 + w in float32, from which w cannot be recovered exactly
// (its low bits are rounded away), so the import fails naming each weight
// and what it went into. Exported with optimize=False (--no-optimize) the
// weights stay and everything trains like torch. The legacy exporter's
// constant folding does the same but leaves nothing in the file to tell
// (no metadata, a folded name like any Linear's): the import succeeds with
// 1 + w as the norm weights, which check_export's value check shows; with
// do_constant_folding=False (--no-fold) the weights stay.
//
// Tied weights: the head is one parameter with the embedding,
// model.embed_tokens.weight (see gpt2.mlir).
// REQUIRES: current-transformers
// The sanitizer build runs llama.mlir, which takes the same import paths.
// UNSUPPORTED: sanitized
// RUN: rm -rf %t && mkdir -p %t
// RUN: not %current_python %S/check_export.py --bin $(dirname partition-opt) gemma %t/folded --meshes dp:1 2>&1 | FileCheck %s --check-prefix=FOLDED
// FOLDED: error: parameters that torch.export lists were folded by the exporter's optimizer into values computed from them, from which they cannot be recovered exactly, so they would not be trained:
// FOLDED-NEXT: 'model.layers.0.input_layernorm.weight' into 'add_{{[0-9]+}}'
// FOLDED-NEXT: 'model.layers.0.post_attention_layernorm.weight' into 'add_{{[0-9]+}}'
// FOLDED-NEXT: 'model.layers.1.input_layernorm.weight' into 'add_{{[0-9]+}}'
// FOLDED-NEXT: 'model.layers.1.post_attention_layernorm.weight' into 'add_{{[0-9]+}}'
// FOLDED-NEXT: 'model.norm.weight' into 'add_{{[0-9]+}}'
// FOLDED-NEXT: export with torch.onnx.export(..., dynamo=True, optimize=False) to train them, or pass --frozen with their names to import the folded values as constants
//
// RUN: %current_python %S/check_export.py --bin $(dirname partition-opt) gemma %t/dynamo --no-optimize --train dp:2+tp:2 | FileCheck %s --check-prefix=DYNAMO
// DYNAMO: import gemma --no-optimize: ok
// DYNAMO-NEXT: params: 20 equal named_parameters() (0 viewed transposed)
// DYNAMO-NEXT: run dp:1: logits equal torch; attention 2; tp all-reduces 0
// DYNAMO-NEXT: run dp:2,tp:2: logits equal torch; attention 2; tp all-reduces 5
// DYNAMO-NEXT: run tp:4: logits equal torch; attention 2; tp all-reduces 5
// DYNAMO-NEXT: train dp:2,tp:2: 3 steps equal one rank's
// DYNAMO-NEXT: train dp:1: 3 steps equal torch's
//
// RUN: not %current_python %S/check_export.py --bin $(dirname partition-opt) gemma %t/legacy-folded --exporter legacy --mask --meshes dp:1 2>&1 | FileCheck %s --check-prefix=LEGACY-FOLDED
// LEGACY-FOLDED: params: gemma: values differ from the module's: model.layers.0.input_layernorm.weight, model.layers.0.post_attention_layernorm.weight, model.layers.1.input_layernorm.weight, model.layers.1.post_attention_layernorm.weight, model.norm.weight
//
// RUN: %current_python %S/check_export.py --bin $(dirname partition-opt) gemma %t/legacy --exporter legacy --mask --no-fold --meshes dp:1,dp:2+tp:2 | FileCheck %s --check-prefix=LEGACY
// LEGACY: import gemma --exporter legacy --mask --no-fold: ok
// LEGACY-NEXT: params: 20 equal named_parameters() (0 viewed transposed)
// LEGACY-NEXT: run dp:1: logits equal torch; attention 0; tp all-reduces 0
// LEGACY-NEXT: run dp:2,tp:2: logits equal torch; attention 0; tp all-reduces 5
