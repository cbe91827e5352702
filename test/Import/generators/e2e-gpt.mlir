// A generated GPT run end to end: partition-import --model gpt with its
// random weights, partitioned by part-spmd for 1 rank (dp x tp = 1 x 1) and
// for 4 (2 x 2: batch over dp, Megatron splits and a vocabulary-parallel
// embedding and LM head over tp), lowered to plans and run on CPU ranks.
// Every run must match an independent float64 numpy forward of GPT-2
// (Inputs/reference.py) that reads the same safetensors file by parameter
// name: this checks the IR computes the model it claims to, that the
// weights file matches the IR's names and shapes, and that partitioning
// keeps the result. The generator's biases are 0 and its norm scales 1,
// which would hide a dropped or double-counted bias or scale, so every run
// is repeated with those replaced by random values (Inputs/perturb.py).
//
// Tolerance 1e-5 + 1e-5 * |ref|: each output is the end of a chain of f32
// dot products of at most 256 terms (the second MLP matmul), whose rounding
// is bounded by 256 * 2^-24 = 1.5e-5 times the sum of the terms' magnitudes;
// with normalised activations and weights of std 0.02 those sums stay
// below 1 (logits are at most 1.2 here). Measured: at most 3e-7, in both
// the 1-rank and the 4-rank runs. Breaking the generator on purpose moved
// the outputs far more: dropping the attention residual by 1.3 here, a bias
// in e2e-mlp.mlir by 0.31 (only with the perturbed weights), swapping SwiGLU's
// gate and up in e2e-llama.mlir by 0.035.
//
// RUN: rm -rf %t && mkdir -p %t
// RUN: partition-import --model gpt --layers 2 --hidden 64 --heads 4 --vocab 128 --seq 16 --batch 4 --seed 7 -o %t/gpt.mlir --weights %t/gpt.safetensors
// RUN: %python %S/Inputs/perturb.py %t/gpt.safetensors %t/perturbed.safetensors 1
// RUN: %python -c "import numpy as np; np.save('%t/tokens.npy', np.random.default_rng(1).integers(0, 128, (4, 16)).astype(np.int32))"
// RUN: for m in 1x1 2x2; do \
// RUN:   partition-opt %t/gpt.mlir --part-spmd="mesh=dp:${m%%x*},tp:${m#*x}" | partition-translate --part-to-plan -o %t/$m.plan 2>/dev/null || exit 1; \
// RUN:   for w in gpt perturbed; do \
// RUN:     mkdir -p %t/$w$m && \
// RUN:     partition-run %t/$m.plan --backend cpu --weights %t/$w.safetensors --input tokens=%t/tokens.npy --output-dir %t/$w$m > %t/$w$m.log || exit 1; \
// RUN:   done; \
// RUN: done
// RUN: %python %S/Inputs/reference.py gpt 4 %t/gpt.safetensors %t/tokens.npy %t/gpt.npy
// RUN: %python %S/Inputs/reference.py gpt 4 %t/perturbed.safetensors %t/tokens.npy %t/perturbed.npy
// RUN: %python %S/../../e2e/Inputs/compare.py 1e-5 1e-5 %t/gpt.npy %t/gpt1x1/logits.npy %t/gpt2x2/logits.npy
// RUN: %python %S/../../e2e/Inputs/compare.py 1e-5 1e-5 %t/perturbed.npy %t/perturbed1x1/logits.npy %t/perturbed2x2/logits.npy
// RUN: FileCheck %s < %t/gpt2x2.log
//
// CHECK: rank 3: setup
// CHECK: output logits: f32[4, 16, 128]
