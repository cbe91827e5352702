// part-auto-partition on models imported from ONNX -- the GPT, the Llama
// with grouped-query attention and the BERT of test/Import/models, each
// with a cross-entropy loss (the BERT's vocabulary is 32) -- chooses a plan for 4 CPU ranks of a cluster
// file, trains and partitions the model so, and the plan trains 3 steps
// (AdamW) on 4 ranks as the unpartitioned program does on one: once as it
// chooses, once with tensor parallelism fixed and once with a pipeline
// fixed (the constraints partition-plan's --fix takes).
//
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python -c "import numpy as np; t = np.random.default_rng(0).integers(0, 96, size=(4, 9)); np.save('%t/ids.npy', t[:, :-1].astype(np.int64)); np.save('%t/labels.npy', t[:, 1:].astype(np.int32)); np.save('%t/bert-ids.npy', t[:, :-1].astype(np.int64) % 32); np.save('%t/bert-labels.npy', t[:, 1:].astype(np.int32) % 32); np.save('%t/types.npy', np.zeros((4, 8), np.int64)); np.save('%t/mask.npy', np.ones((4, 8), np.int64))"
// RUN: for m in gpt llama bert; do \
// RUN:   inputs="--input input_ids=%t/ids.npy --input labels=%t/labels.npy"; \
// RUN:   if [ $m = bert ]; then inputs="--input input_ids=%t/bert-ids.npy --input labels=%t/bert-labels.npy --input token_type_ids=%t/types.npy --input attention_mask=%t/mask.npy"; fi; \
// RUN:   partition-import %S/../Import/models/$m-opset17.onnx --dim batch=4 --dim seq=8 --loss cross-entropy -o %t/$m.mlir --weights %t/$m.safetensors && \
// RUN:   partition-opt %t/$m.mlir --part-autodiff --part-optimizer="kind=adamw lr=3e-3" --part-spmd="mesh=dp:1" | partition-translate --part-to-plan -o %t/$m-1.plan && \
// RUN:   partition-run %t/$m-1.plan --backend cpu --steps 3 --weights %t/$m.safetensors $inputs > %t/$m-1.log && \
// RUN:   for fix in "" tp=2 pp=2; do \
// RUN:     partition-opt %t/$m.mlir --part-auto-partition="cluster=%S/Inputs/cpu-4.json devices=4 precision=f32 optimizer='kind=adamw lr=3e-3' fix=$fix" 2> %t/$m-$fix.remark | \
// RUN:       partition-translate --part-to-plan -o %t/$m-$fix.plan && \
// RUN:     FileCheck %s --check-prefix=CHOSE < %t/$m-$fix.remark && \
// RUN:     partition-run %t/$m-$fix.plan --backend cpu --steps 3 --weights %t/$m.safetensors $inputs > %t/$m-$fix.log && \
// RUN:     %python %S/Inputs/losses_agree.py 2e-5 2e-5 %t/$m-1.log %t/$m-$fix.log || exit 1; \
// RUN:   done; \
// RUN: done
// RUN: FileCheck %s --check-prefix=TP < %t/llama-tp=2.remark
// RUN: FileCheck %s --check-prefix=PP < %t/bert-pp=2.remark
//
// CHOSE: remark: part-auto-partition chose tp={{[0-9]+}} pp={{[0-9]+}} dp={{[0-9]+}} {{.*}}s per step predicted on cpu-4, of {{[0-9]+}} plans that fit ({{[0-9]+}} considered)
// TP: chose tp=2 pp=
// PP: chose tp={{[0-9]+}} pp=2 dp=
