// GPT-2 (GPT2LMHeadModel: the LM head is the token embedding transposed, one
// parameter in torch) from transformers 5, as torch 2.x exports it today
// (export_current.py): the dynamo exporter (torch.onnx.export's default)
// and the legacy TorchScript exporter at opset 17 with an attention mask.
// check_export.py checks each line it prints against torch (see llama.mlir
// and its docstring).
//
// Both exporters fold the head's transpose into a second initializer, and
// torch.export reads the tied tensor as lm_head.weight. The import ties the
// two (the folded one is bit for bit the other transposed) into one
// parameter, named transformer.wte.weight as named_parameters() lists it:
// 28 parameters, not 29, and 3 SGD steps equal torch's, whose embedding
// gradient adds the head's. GPT-2's Conv1D weights are [in, out] in torch
// already, so none is viewed transposed.
// REQUIRES: current-transformers
// The sanitizer build runs llama.mlir, which takes the same import paths.
// UNSUPPORTED: sanitized
// RUN: rm -rf %t && mkdir -p %t
// RUN: %current_python %S/check_export.py --bin $(dirname partition-opt) gpt2 %t/dynamo --train dp:2+tp:2 | FileCheck %s --check-prefix=DYNAMO
// DYNAMO: import gpt2: ok
// DYNAMO-NEXT: params: 28 equal named_parameters() (0 viewed transposed)
// DYNAMO-NEXT: run dp:1: logits equal torch; attention 2; tp all-reduces 0
// DYNAMO-NEXT: run dp:2,tp:2: logits equal torch; attention 2; tp all-reduces 5
// DYNAMO-NEXT: run tp:4: logits equal torch; attention 2; tp all-reduces 5
// DYNAMO-NEXT: train dp:2,tp:2: 3 steps equal one rank's
// DYNAMO-NEXT: train dp:1: 3 steps equal torch's
// RUN: %current_python %S/check_export.py --bin $(dirname partition-opt) gpt2 %t/legacy --exporter legacy --mask --meshes dp:1,dp:2+tp:2 --train dp:2+tp:2 | FileCheck %s --check-prefix=LEGACY
// LEGACY: import gpt2 --exporter legacy --mask: ok
// LEGACY-NEXT: params: 28 equal named_parameters() (0 viewed transposed)
// LEGACY-NEXT: run dp:1: logits equal torch; attention 0; tp all-reduces 0
// LEGACY-NEXT: run dp:2,tp:2: logits equal torch; attention 0; tp all-reduces 5
// LEGACY-NEXT: train dp:2,tp:2: 3 steps equal one rank's
// LEGACY-NEXT: train dp:1: 3 steps equal torch's
// The head is a matmul with transpose_b of the embedding's own parameter.
// RUN: FileCheck %s --check-prefix=HEAD < %t/dynamo/m.mlir
// RUN: FileCheck %s --check-prefix=HEAD < %t/legacy/m.mlir
// HEAD: %[[WTE:arg[0-9]+]]: tensor<96x32xf32> {part.name = "transformer.wte.weight"
// HEAD: part.gather %[[WTE]]
// HEAD: part.matmul %{{[0-9]+}}, %[[WTE]] transpose_b
