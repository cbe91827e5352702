// Gradients of whole models: a 2-layer MLP, a 1-layer GPT and a 1-layer
// Llama (grouped-query attention with 2 key/value heads for 4 query heads,
// rotary embeddings, RMS norm, SwiGLU) from partition-import, each given a
// mean cross-entropy loss against a label input by hand
// (Inputs/append_loss.py), differentiated by part-autodiff, partitioned by
// part-spmd for 1 rank and for 4 (dp x tp = 2 x 2: the batch over dp,
// Megatron splits over tp), lowered to plans and run on CPU ranks, with the
// generators' weights given random biases and norm scales (perturb.py:
// zeros and ones would hide a dropped bias gradient).
//
// Inputs/model_grads.py checks the 1-rank run against an independent
// float64 numpy forward of each model (reference.py): the loss, and every
// gradient at 8 elements against central finite differences of that
// forward (tolerance 1e-4 s + 1e-3 |fd| + 1e-10, s the gradient's largest
// magnitude; measured under 1.3e-6 s); and the 4-rank run against the
// 1-rank one over every element of every gradient (1e-5 s + 1e-10:
// partitioning only reorders f32 sums of at most 128 terms, 7.6e-6 of their
// magnitudes; measured at most 6e-7 s). model_grads.py gives the reasoning
// behind both bounds. Making part-autodiff overwrite instead of add the
// cotangents of a value with several uses fails the GPT check.
//
// Gradients come out whole: every gradient result is replicated in the
// 4-rank plan, and partition-run writes each as one array of the
// parameter's full shape (model_grads.py checks every shape).
//
// RUN: rm -rf %t && mkdir -p %t
// RUN: partition-import --model mlp --layers 2 --hidden 16 --ffn 32 --batch 8 --seed 3 -o %t/mlp.mlir --weights %t/mlp0.safetensors
// RUN: partition-import --model gpt --layers 1 --hidden 32 --heads 4 --vocab 64 --seq 8 --batch 2 --seed 1 -o %t/gpt.mlir --weights %t/gpt0.safetensors
// RUN: partition-import --model llama --layers 1 --hidden 32 --heads 4 --kv-heads 2 --vocab 64 --seq 8 --batch 2 --seed 2 -o %t/llama.mlir --weights %t/llama0.safetensors
// RUN: %python %S/../../../Import/generators/Inputs/perturb.py %t/mlp0.safetensors %t/mlp.safetensors 1
// RUN: %python %S/../../../Import/generators/Inputs/perturb.py %t/gpt0.safetensors %t/gpt.safetensors 1
// RUN: %python %S/../../../Import/generators/Inputs/perturb.py %t/llama0.safetensors %t/llama.safetensors 1
// RUN: %python %S/Inputs/append_loss.py %t/mlp.mlir %t/mlp-loss.mlir
// RUN: %python %S/Inputs/append_loss.py %t/gpt.mlir %t/gpt-loss.mlir
// RUN: %python %S/Inputs/append_loss.py %t/llama.mlir %t/llama-loss.mlir
// RUN: %python -c "import numpy as np; r = np.random.default_rng(1); np.save('%t/x.npy', r.standard_normal((8, 16)).astype(np.float32)); np.save('%t/mlp-labels.npy', r.integers(0, 16, (8,)).astype(np.int32)); np.save('%t/tokens.npy', r.integers(0, 64, (2, 8)).astype(np.int32)); np.save('%t/gpt-labels.npy', r.integers(0, 64, (2, 8)).astype(np.int32))"
// RUN: for m in 1x1 2x2; do \
// RUN:   for model in mlp gpt llama; do \
// RUN:     partition-opt %t/$model-loss.mlir --part-autodiff --part-spmd="mesh=dp:${m%%x*},tp:${m#*x}" | partition-translate --part-to-plan -o %t/$model$m.plan 2>/dev/null || exit 1; \
// RUN:     mkdir -p %t/$model$m; \
// RUN:   done; \
// RUN:   partition-run %t/mlp$m.plan --backend cpu --weights %t/mlp.safetensors --input x=%t/x.npy --input labels=%t/mlp-labels.npy --output-dir %t/mlp$m > %t/mlp$m.log || exit 1; \
// RUN:   partition-run %t/gpt$m.plan --backend cpu --weights %t/gpt.safetensors --input tokens=%t/tokens.npy --input labels=%t/gpt-labels.npy --output-dir %t/gpt$m > %t/gpt$m.log || exit 1; \
// RUN:   partition-run %t/llama$m.plan --backend cpu --weights %t/llama.safetensors --input tokens=%t/tokens.npy --input labels=%t/gpt-labels.npy --output-dir %t/llama$m > %t/llama$m.log || exit 1; \
// RUN: done
// RUN: %python %S/Inputs/model_grads.py mlp - %t/mlp.safetensors %t/x.npy %t/mlp-labels.npy %t/mlp1x1 %t/mlp2x2 | FileCheck %s --check-prefix=MLP
// RUN: %python %S/Inputs/model_grads.py gpt 4 %t/gpt.safetensors %t/tokens.npy %t/gpt-labels.npy %t/gpt1x1 %t/gpt2x2 | FileCheck %s --check-prefix=GPT
// RUN: %python %S/Inputs/model_grads.py llama 4 %t/llama.safetensors %t/tokens.npy %t/gpt-labels.npy %t/llama1x1 %t/llama2x2 | FileCheck %s --check-prefix=LLAMA
// RUN: partition-run %t/gpt2x2.plan --dump | FileCheck %s --check-prefix=DUMP
// RUN: FileCheck %s --check-prefix=RUN4 < %t/gpt2x2.log
//
// MLP: loss {{.*}}: ok
// MLP-COUNT-4: grad.layers.{{[01]}}.{{weight|bias}}: ok against finite differences
// MLP: mlp2x2: ok, every gradient within
//
// GPT: loss {{.*}}: ok
// GPT-COUNT-20: ok against finite differences
// GPT: gpt2x2: ok, every gradient within
//
// LLAMA: loss {{.*}}: ok
// LLAMA-COUNT-12: ok against finite differences
// LLAMA: llama2x2: ok, every gradient within
//
// DUMP: mesh @mesh ["dp"=2, "tp"=2]
// DUMP: output "loss" %{{[0-9]+}} : f32[] of global []
// DUMP: output "grad.wte" %{{[0-9]+}} : f32[64, 32] of global [64, 32] sharded [{}, {}]
// DUMP: output "grad.h.0.mlp.fc.weight" %{{[0-9]+}} : f32[32, 128] of global [32, 128] sharded [{}, {}]
//
// RUN4: rank 3: setup
// RUN4: output loss: f32[]
// RUN4: output grad.wte: f32[64, 32]
