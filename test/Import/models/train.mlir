// The exported GPT trained: partition-import --loss cross-entropy, then
// part-autodiff and part-optimizer (AdamW), 5 steps on 1 rank and on 4
// (dp 2 x tp 2); the per-step losses agree (tolerance as in
// test/e2e/train.mlir) and fall. This is what scripts/demo.sh shows on 8
// ranks.
//
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python -c "import numpy as np; t = np.random.default_rng(0).integers(0, 96, size=(2, 9)); np.save('%t/ids.npy', t[:, :-1].astype(np.int64)); np.save('%t/labels.npy', t[:, 1:].astype(np.int32))"
// RUN: partition-import %S/gpt-opset17.onnx --dim batch=2 --dim seq=8 --loss cross-entropy -o %t/m.mlir --weights %t/w.safetensors
// RUN: partition-opt %t/m.mlir --part-autodiff --part-optimizer="kind=adamw lr=3e-3" -o %t/step.mlir
// RUN: FileCheck %s < %t/step.mlir
// RUN: for m in dp:1 dp:2,tp:2; do \
// RUN:   partition-opt %t/step.mlir --part-spmd="mesh=$m" | partition-translate --part-to-plan -o %t/$m.plan 2>/dev/null && \
// RUN:   partition-run %t/$m.plan --backend cpu --steps 5 --weights %t/w.safetensors --input input_ids=%t/ids.npy --input labels=%t/labels.npy > %t/$m.log || exit 1; \
// RUN: done
// RUN: %python %S/../../e2e/Inputs/losses_agree.py 2e-5 2e-5 %t/dp:1.log %t/dp:2,tp:2.log
// RUN: %python %S/../../e2e/Inputs/losses_agree.py --falling %t/dp:2,tp:2.log
//
// The step updates every parameter named as in the model, and its moments:
// CHECK-LABEL: func.func @main(
// CHECK-SAME: {part.name = "adam.m.wte.weight", part.role = #part.role<state>, part.state_of = {{[0-9]+}} : i64}
// CHECK-SAME: {part.name = "new.wte.weight", part.updates = {{[0-9]+}} : i64}
// CHECK-SAME: {part.name = "new.h.0.attn.c_attn.weight", part.updates = {{[0-9]+}} : i64}
