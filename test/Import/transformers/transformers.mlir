// Models as their authors export them: Hugging Face transformers 4.36.2
// models built from small configs (random, seeded weights; nothing is
// downloaded), exported by torch.onnx.export at opset 17
// (export_transformers.py): GPT-2 (GPT2LMHeadModel), Llama with grouped
// query attention (8 query heads, 2 kv heads) and BERT (BertForMaskedLM).
// Each is imported with batch 2 and sequence 8 and run on 1 rank, on
// dp:2,tp:2 and on tp:4 (Llama's 2 kv heads then have a copy on each pair
// of ranks whose query heads use them), and its logits are compared
// with the model's own in torch (f32), within the tolerance of
// test/Import/models (5e-5 absolute plus 5e-5 relative).
//
// REQUIRES: transformers
// RUN: rm -rf %t && mkdir -p %t
// RUN: for a in gpt2 llama bert; do \
// RUN:   %ort_python %S/export_transformers.py $a %t/$a && \
// RUN:   partition-import %t/$a/$a.onnx --dim batch=2 --dim seq=8 -o %t/$a/m.mlir --weights %t/$a/w.safetensors || exit 1; \
// RUN:   for m in dp:1 dp:2,tp:2 tp:4; do \
// RUN:     partition-opt %t/$a/m.mlir --part-spmd="mesh=$m" -o %t/$a/$m.mlir && \
// RUN:     partition-translate --part-to-plan %t/$a/$m.mlir -o %t/$a/$m.plan && mkdir -p %t/$a/out-$m && \
// RUN:     partition-run %t/$a/$m.plan --backend cpu --weights %t/$a/w.safetensors --input input_ids=%t/$a/input_ids.npy --output-dir %t/$a/out-$m > /dev/null && \
// RUN:     %python %S/../../e2e/Inputs/compare.py 5e-5 5e-5 %t/$a/logits.npy %t/$a/out-$m/logits.npy || exit 1; \
// RUN:   done; \
// RUN: done
//
// The same models exported with an attention_mask input (the second
// sequence's last two tokens padded; export_transformers.py --mask): the
// exporters build the additive mask at run time from comparisons, casts to
// bool and Where. 1 rank and dp:2,tp:2, against torch with the same mask.
// RUN: for a in gpt2 llama bert; do \
// RUN:   %ort_python %S/export_transformers.py $a %t/$a-mask --mask && \
// RUN:   partition-import %t/$a-mask/$a.onnx --dim batch=2 --dim seq=8 -o %t/$a-mask/m.mlir --weights %t/$a-mask/w.safetensors || exit 1; \
// RUN:   for m in dp:1 dp:2,tp:2; do \
// RUN:     partition-opt %t/$a-mask/m.mlir --part-spmd="mesh=$m" | partition-translate --part-to-plan -o %t/$a-mask/$m.plan && mkdir -p %t/$a-mask/out-$m && \
// RUN:     partition-run %t/$a-mask/$m.plan --backend cpu --weights %t/$a-mask/w.safetensors --input input_ids=%t/$a-mask/input_ids.npy --input attention_mask=%t/$a-mask/attention_mask.npy --output-dir %t/$a-mask/out-$m > /dev/null && \
// RUN:     %python %S/../../e2e/Inputs/compare.py 5e-5 5e-5 %t/$a-mask/logits.npy %t/$a-mask/out-$m/logits.npy || exit 1; \
// RUN:   done; \
// RUN: done
// The mask changes the logits (by 2e-3 to 0.2 at the padded positions), so
// a mask the import dropped would fail the comparisons above:
// RUN: %python -c "import numpy as np, sys; sys.exit(0 if all(abs(np.load('%t/' + a + '-mask/logits.npy') - np.load('%t/' + a + '/logits.npy')).max() > 1e-3 for a in ('gpt2', 'llama', 'bert')) else 1)"
//
// Tensor parallelism splits attention by heads and the MLP as Megatron
// does: two all-reduces over "tp" per layer, plus one for the
// vocabulary-parallel embedding lookup (2 layers: 5), and each rank's
// attention has half the heads (4 -> 2 in BERT; in Llama 8 query heads -> 4,
// 2 kv heads -> 1).
// RUN: grep -c 'part.all_reduce .*axes \["tp"\]' %t/bert/dp:2,tp:2.mlir | FileCheck %s --check-prefix=FIVE
// RUN: grep -c 'part.all_reduce .*axes \["tp"\]' %t/bert/tp:4.mlir | FileCheck %s --check-prefix=FIVE
// RUN: grep -c 'part.all_reduce .*axes \["tp"\]' %t/llama/dp:2,tp:2.mlir | FileCheck %s --check-prefix=FIVE
// FIVE: {{^5$}}
// GPT-2's fused c_attn ([Q | K | V] from one [32, 96] weight) is split by
// part-split-fused-projections into a [32, 3, 32] view, so tp gives each
// rank whole heads of Q, K and V as well: the same two all-reduces per
// layer, and half the heads per rank on tp:2 (a quarter on tp:4).
// RUN: grep -c 'part.all_reduce .*axes \["tp"\]' %t/gpt2/dp:2,tp:2.mlir | FileCheck %s --check-prefix=FIVE
// RUN: grep -c 'part.all_reduce .*axes \["tp"\]' %t/gpt2/tp:4.mlir | FileCheck %s --check-prefix=FIVE
// RUN: FileCheck %s --check-prefix=GPT2 < %t/gpt2/dp:2,tp:2.mlir
// GPT2: part.name = "model.transformer.h.0.attn.c_attn.weight", part.role = #part.role<parameter>, part.sharding = #part.sharding<@mesh, [{}, {}, {"tp"}]>, part.stored_shape = array<i64: 32, 96>
// GPT2-COUNT-2: part.attention {{.*}} : (tensor<1x2x8x8xf32>, tensor<1x2x8x8xf32>, tensor<1x2x8x8xf32>)
// The plan reads each rank's [32, 3, 16] block from the stored [32, 96]:
// RUN: partition-run %t/gpt2/dp:2,tp:2.plan --dump | FileCheck %s --check-prefix=DUMP
// DUMP: param "model.transformer.h.0.attn.c_attn.weight" %{{[0-9]+}} : f32[32, 3, 16] of global [32, 3, 32] sharded [{}, {}, {"tp"}] stored as [32, 96]
// DUMP: param "model.transformer.h.0.attn.c_attn.bias" %{{[0-9]+}} : f32[3, 16] of global [3, 32] sharded [{}, {"tp"}] stored as [96]
// RUN: FileCheck %s --check-prefix=BERT < %t/bert/dp:2,tp:2.mlir
// BERT: part.attention {{.*}} : (tensor<1x2x8x8xf32>, tensor<1x2x8x8xf32>, tensor<1x2x8x8xf32>)
// RUN: FileCheck %s --check-prefix=LLAMA < %t/llama/dp:2,tp:2.mlir
// LLAMA: part.attention {{.*}} : (tensor<1x4x8x8xf32>, tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32>)
//
// On tp:4 the 2 kv heads split tp into "tp"=2 x "tp_rep"=2: 2 query heads
// and 1 kv head per rank, and the block and embedding all-reduces over both.
// RUN: FileCheck %s --check-prefix=LLAMA4 < %t/llama/tp:4.mlir
// LLAMA4: part.mesh @mesh = <["tp"=2, "tp_rep"=2]>
// LLAMA4: part.attention {{.*}} : (tensor<2x2x8x8xf32>, tensor<2x1x8x8xf32>, tensor<2x1x8x8xf32>)
// RUN: grep -c 'part.all_reduce .*axes \["tp", "tp_rep"\]' %t/llama/tp:4.mlir | FileCheck %s --check-prefix=FIVE
//
// Training the Llama (cross-entropy on next tokens, AdamW) for 3 steps on
// dp:2,tp:4 equals training it on one rank: the same losses, and the same
// weights and moments after the last step (AdamW divides by the square root
// of the second moment, so elements whose gradients are near zero differ
// relatively more: tolerance as in test/e2e/checkpoint.mlir).
// RUN: %python -c "import numpy as np; t = np.random.default_rng(0).integers(0, 96, size=(2, 9)); np.save('%t/ids.npy', t[:, :-1].astype(np.int64)); np.save('%t/labels.npy', t[:, 1:].astype(np.int32))"
// RUN: partition-import %t/llama/llama.onnx --dim batch=2 --dim seq=8 --loss cross-entropy -o %t/llama/loss.mlir --weights %t/llama/tw.safetensors
// RUN: partition-opt %t/llama/loss.mlir --part-autodiff --part-optimizer="kind=adamw lr=3e-3" -o %t/llama/step.mlir
// RUN: for m in dp:1 dp:2,tp:4; do \
// RUN:   partition-opt %t/llama/step.mlir --part-spmd="mesh=$m" 2>/dev/null | partition-translate --part-to-plan -o %t/llama/train-$m.plan && \
// RUN:   partition-run %t/llama/train-$m.plan --backend cpu --steps 3 --weights %t/llama/tw.safetensors --input input_ids=%t/ids.npy --input labels=%t/labels.npy --output-dir %t/llama/trained-$m > %t/llama/train-$m.log || exit 1; \
// RUN: done
// RUN: %python %S/../../e2e/Inputs/losses_agree.py 2e-5 2e-5 %t/llama/train-dp:1.log %t/llama/train-dp:2,tp:4.log
// RUN: %python %S/../../e2e/Inputs/losses_agree.py --falling %t/llama/train-dp:1.log
// RUN: %python %S/../../e2e/Inputs/compare_dirs.py 1e-5 1e-3 %t/llama/trained-dp:1 %t/llama/trained-dp:2,tp:4
//
// The same for GPT-2 on dp:2,tp:2: its fused c_attn weight is trained in the
// [32, 3, 32] view, and its new value is written in the file's [32, 96].
// With SGD: the key bias's gradient is zero in exact arithmetic (softmax
// does not change when every score of a row moves by the same q.b), so it
// is rounding noise, which Adam's normalisation would blow up to updates of
// lr * noise / eps (3e-5 here) that differ between any two summation orders.
// RUN: partition-import %t/gpt2/gpt2.onnx --dim batch=2 --dim seq=8 --loss cross-entropy -o %t/gpt2/loss.mlir --weights %t/gpt2/tw.safetensors
// RUN: partition-opt %t/gpt2/loss.mlir --part-autodiff --part-optimizer="kind=sgd lr=0.1" -o %t/gpt2/step.mlir
// RUN: for m in dp:1 dp:2,tp:2; do \
// RUN:   partition-opt %t/gpt2/step.mlir --part-spmd="mesh=$m" | partition-translate --part-to-plan -o %t/gpt2/train-$m.plan && \
// RUN:   partition-run %t/gpt2/train-$m.plan --backend cpu --steps 3 --weights %t/gpt2/tw.safetensors --input input_ids=%t/ids.npy --input labels=%t/labels.npy --output-dir %t/gpt2/trained-$m > %t/gpt2/train-$m.log || exit 1; \
// RUN: done
// RUN: %python %S/../../e2e/Inputs/losses_agree.py 2e-5 2e-5 %t/gpt2/train-dp:1.log %t/gpt2/train-dp:2,tp:2.log
// RUN: %python %S/../../e2e/Inputs/losses_agree.py --falling %t/gpt2/train-dp:1.log
// RUN: %python %S/../../e2e/Inputs/compare_dirs.py 1e-5 1e-3 %t/gpt2/trained-dp:1 %t/gpt2/trained-dp:2,tp:2
// RUN: %python -c "import numpy as np, sys; s = np.load('%t/gpt2/trained-dp:2,tp:2/new.model.transformer.h.0.attn.c_attn.weight.npy').shape; sys.exit(0 if s == (32, 96) else 'c_attn written as %%s' %% (s,))"
