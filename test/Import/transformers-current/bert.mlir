// BERT (BertForMaskedLM: bidirectional attention; the decoder is the word
// embedding transposed, and its bias is cls.predictions.bias, tied) from
// transformers 5, as torch 2.x exports it today (export_current.py): the
// dynamo exporter (torch.onnx.export's default) and the legacy TorchScript
// exporter at opset 17 with an attention mask. check_export.py checks each
// line it prints against torch (see llama.mlir and its docstring). BERT is
// not causal: the logits are the masked-LM head's at every position, and
// the raised attentions carry no causal mask; the training loss is the
// same cross-entropy on shifted tokens, which serves to compare gradients.
//
// The decoder's folded transpose is tied to the word embedding (one
// parameter, bert.embeddings.word_embeddings.weight). The decoder bias
// cannot be named from a dynamo export: torch.export reads it as
// cls.predictions.decoder.bias, and its other name is in the signature
// only, with nothing in the file tying the two (no node reads it, no
// module path or data relates them), so it keeps the name the file gives
// (--known-alias states it). It is one parameter either way, trained
// like torch's. The legacy exporter names it cls.predictions.bias.
// REQUIRES: current-transformers
// The sanitizer build runs llama.mlir, which takes the same import paths.
// UNSUPPORTED: sanitized
// RUN: rm -rf %t && mkdir -p %t
// RUN: %current_python %S/check_export.py --bin $(dirname partition-opt) bert %t/dynamo --known-alias cls.predictions.bias=cls.predictions.decoder.bias --train dp:2+tp:2 | FileCheck %s --check-prefix=DYNAMO
// DYNAMO: import bert: ok
// DYNAMO-NEXT: params: 42 equal named_parameters() (13 viewed transposed; cls.predictions.bias imported as cls.predictions.decoder.bias)
// DYNAMO-NEXT: run dp:1: logits equal torch; attention 2; tp all-reduces 0
// DYNAMO-NEXT: run dp:2,tp:2: logits equal torch; attention 2; tp all-reduces 5
// DYNAMO-NEXT: run tp:4: logits equal torch; attention 2; tp all-reduces 5
// DYNAMO-NEXT: train dp:2,tp:2: 3 steps equal one rank's
// DYNAMO-NEXT: train dp:1: 3 steps equal torch's
// RUN: %current_python %S/check_export.py --bin $(dirname partition-opt) bert %t/legacy --exporter legacy --mask --meshes dp:1,dp:2+tp:2 --train dp:2+tp:2 | FileCheck %s --check-prefix=LEGACY
// LEGACY: import bert --exporter legacy --mask: ok
// LEGACY-NEXT: params: 42 equal named_parameters() (13 viewed transposed)
// LEGACY-NEXT: run dp:1: logits equal torch; attention 0; tp all-reduces 0
// LEGACY-NEXT: run dp:2,tp:2: logits equal torch; attention 0; tp all-reduces 5
// LEGACY-NEXT: train dp:2,tp:2: 3 steps equal one rank's
// LEGACY-NEXT: train dp:1: 3 steps equal torch's
// Raised attention is bidirectional: no causal flag.
// RUN: grep -c 'part.attention ' %t/dynamo/dp1.mlir | FileCheck %s --check-prefix=BIDI
// BIDI: {{^2$}}
// RUN: not grep 'part.attention .* causal' %t/dynamo/dp1.mlir
// The import says so, and what it did with the decoder's transpose.
// RUN: partition-import %t/dynamo/bert.onnx $(%current_python %S/check_export.py --shapes) --report-parameters -o %t/r.mlir 2>&1 | FileCheck %s --check-prefix=REPORT
// REPORT-DAG: initializer 'cls.predictions.decoder.weight' [96, 32]: parameter 'bert.embeddings.word_embeddings.weight' (tied: torch.export also lists it as 'cls.predictions.decoder.weight', and module 'bert.embeddings.word_embeddings' reads it under that name)
// REPORT-DAG: the transpose of parameter 'bert.embeddings.word_embeddings.weight' (tied: its users read that parameter, and its data is initializer 'cls.predictions.decoder.weight' transposed, bit for bit)
// REPORT-DAG: remark: torch.export lists parameter 'cls.predictions.bias', which no node reads and no initializer holds: unused, or tied to a parameter the file names otherwise, and nothing in the file says which
