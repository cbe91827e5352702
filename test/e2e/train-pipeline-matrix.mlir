// Pipeline parallelism across the whole cross product: every schedule
// (GPipe, 1F1B, interleaved 1F1B with 2 chunks, ZB-H1, ZB-V and V-Half with
// 2 chunks in a V) x pp 2 and 4 x every mesh with pp * dp * tp <= 8 x ZeRO
// 0-3 where dp > 1 (ZB-V where the batch divides into dp x 2p
// micro-batches) -- 118 plans -- for a
// generated GPT (AdamW; 4 layers on pp:2, 8 on pp:4, each with as many
// micro-batches as stages) and a GPT imported from ONNX (8 layers, SGD). Each plan trains 3 steps (threads as ranks) and must give the
// single-rank run's per-step losses (1e-5 relative) and every final weight
// and optimizer state (Inputs/pipeline_matrix.py).
//
// Tolerances, as train.mlir and train-pipeline.mlir argue: micro-batching
// and the dp/tp splits only regroup f32 sums, ~1e-7 relative; AdamW
// divides by sqrt(v), so weights and state get 1e-5 + 1e-3 |ref|; SGD moves
// a weight by lr times its gradient, so the ONNX GPT's weights get 1e-6 +
// 1e-5 |ref|. A micro-batch dropped or counted twice, a loss not scaled by
// 1/m, or a missed tied-parameter update moves losses by ~1e-2.
//
// Not in the sanitizer build, where it would take most of the suite's time:
// every path it takes (each schedule, the transfers, dp/tp/ZeRO under pp)
// runs there in train-pipeline.mlir; this test multiplies their
// combinations, which is the plain build's job.
// UNSUPPORTED: sanitized
//
// RUN: rm -rf %t && mkdir -p %t/gen %t/onnx
// RUN: %python %S/Inputs/train_data.py %t 8 8 64
// RUN: for l in 4 8; do \
// RUN:   partition-import --model gpt --layers $l --hidden 32 --heads 4 --vocab 64 --seq 8 --batch 8 --seed 5 -o %t/gpt$l.mlir --weights %t/gpt$l.safetensors || exit 1; \
// RUN:   partition-opt %t/gpt$l.mlir --part-append-loss="kind=cross-entropy" --part-autodiff --part-optimizer="kind=adamw lr=1e-3" -o %t/step$l.mlir || exit 1; \
// RUN: done
// RUN: %python %S/Inputs/pipeline_matrix.py --bin $(dirname partition-opt) %t/gen 1e-5 1e-3 %t/step4.mlir %t/gpt4.safetensors %t/step8.mlir %t/gpt8.safetensors -- tokens=%t/tokens.npy labels=%t/labels.npy > %t/gen.log
// RUN: FileCheck %s --input-file %t/gen.log
//
// RUN: %python -c "import numpy as np; t = np.random.default_rng(0).integers(0, 96, size=(8, 9)); np.save('%t/ids.npy', t[:, :-1].astype(np.int64)); np.save('%t/ids-labels.npy', t[:, 1:].astype(np.int32))"
// RUN: partition-import %S/../Import/models/gpt8-opset17.onnx --dim batch=8 --dim seq=8 --loss cross-entropy -o %t/onnx.mlir --weights %t/onnx.safetensors
// RUN: partition-opt %t/onnx.mlir --part-autodiff --part-optimizer="kind=sgd lr=0.1" -o %t/onnx-step.mlir
// RUN: %python %S/Inputs/pipeline_matrix.py --bin $(dirname partition-opt) %t/onnx 1e-6 1e-5 %t/onnx-step.mlir %t/onnx.safetensors %t/onnx-step.mlir %t/onnx.safetensors -- input_ids=%t/ids.npy labels=%t/ids-labels.npy > %t/onnx.log
// RUN: FileCheck %s --input-file %t/onnx.log
//
// CHECK: ok   mesh=pp:2 micro-batches=2 schedule=gpipe zero=0
// CHECK: ok   mesh=pp:2,dp:2,tp:2 micro-batches=2 schedule=1f1b zero=3
// CHECK: ok   mesh=pp:2,dp:2 micro-batches=4 schedule=zb-v zero=3
// CHECK: ok   mesh=pp:2,tp:2 micro-batches=2 schedule=v-half zero=0
// CHECK: ok   mesh=pp:4 micro-batches=4 schedule=interleaved-1f1b zero=0
// CHECK: ok   mesh=pp:4,tp:2 micro-batches=4 schedule=interleaved-1f1b zero=0
// CHECK: ok   mesh=pp:4,dp:2 micro-batches=4 schedule=zero-bubble zero=2
// CHECK: ok   mesh=pp:4 micro-batches=8 schedule=zb-v zero=0
// CHECK: ok   mesh=pp:4,dp:2 micro-batches=4 schedule=v-half zero=1
// CHECK: 118 of 118 configurations agree with one rank
