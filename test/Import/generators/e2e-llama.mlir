// A generated Llama run end to end, as e2e-gpt.mlir: grouped-query
// attention (4 query heads, 2 key/value heads), rotary embeddings from the
// tables the program computes (checked against numpy's), SwiGLU; partitioned for 1 rank and
// for 4 (dp x tp = 2 x 2, one key/value head per tp device), run on CPU
// ranks, and compared with a float64 numpy Llama forward reading the same
// weights by name, with the generator's norm scales (all 1) and with random
// ones.
//
// Tolerance 1e-5 + 1e-5 * |ref|, as in e2e-gpt.mlir: dot products of at
// most 176 f32 terms (the SwiGLU down projection), 176 * 2^-24 = 1e-5
// times the sum of the terms' magnitudes, which stays below 1 (logits are
// at most 0.7 here). Measured: at most 2.5e-7.
//
// RUN: rm -rf %t && mkdir -p %t
// RUN: partition-import --model llama --layers 2 --hidden 64 --heads 4 --kv-heads 2 --vocab 128 --seq 16 --batch 4 --seed 7 -o %t/llama.mlir --weights %t/llama.safetensors
// RUN: %python %S/Inputs/perturb.py %t/llama.safetensors %t/perturbed.safetensors 1
// RUN: %python -c "import numpy as np; np.save('%t/tokens.npy', np.random.default_rng(1).integers(0, 128, (4, 16)).astype(np.int32))"
// RUN: for m in 1x1 2x2; do \
// RUN:   partition-opt %t/llama.mlir --part-spmd="mesh=dp:${m%%x*},tp:${m#*x}" | partition-translate --part-to-plan -o %t/$m.plan 2>/dev/null || exit 1; \
// RUN:   for w in llama perturbed; do \
// RUN:     mkdir -p %t/$w$m && \
// RUN:     partition-run %t/$m.plan --backend cpu --weights %t/$w.safetensors --input tokens=%t/tokens.npy --output-dir %t/$w$m > %t/$w$m.log || exit 1; \
// RUN:   done; \
// RUN: done
// RUN: %python %S/Inputs/reference.py llama 4 %t/llama.safetensors %t/tokens.npy %t/llama.npy
// RUN: %python %S/Inputs/reference.py llama 4 %t/perturbed.safetensors %t/tokens.npy %t/perturbed.npy
// RUN: %python %S/../../e2e/Inputs/compare.py 1e-5 1e-5 %t/llama.npy %t/llama1x1/logits.npy %t/llama2x2/logits.npy
// RUN: %python %S/../../e2e/Inputs/compare.py 1e-5 1e-5 %t/perturbed.npy %t/perturbed1x1/logits.npy %t/perturbed2x2/logits.npy
// RUN: FileCheck %s < %t/llama2x2.log
//
// CHECK: rank 3: setup
// CHECK: output logits: f32[4, 16, 128]

// Trained: the loss appended, AdamW, 3 steps on 1 rank and on tp:2 and
// dp:2,tp:2, equal (losses 1e-5 relative; weights and state 1e-5 + 1e-3
// |ref|, as train.mlir). Llama's own output head (not tied to the
// embedding) is split by vocabulary over tp, as GPT's tied one is, and the
// loss is vocabulary-parallel: each device holds 1/tp of lm_head and of its
// optimizer state. AdamW's epsilon is 1e-6 (as in mixtral.mlir): at 1e-8
// an update of lr m / (sqrt(v) + eps) makes a step of about lr of a
// gradient element however small, so a tiny one's rounding is amplified;
// one element of gate_proj moved 3.3e-5 apart on dp:2,tp:2 (at 1e-6:
// every weight within 8.3e-7).
// RUN: %python -c "import numpy as np; t = np.random.default_rng(2).integers(0, 128, (4, 17)); np.save('%t/ids.npy', t[:, :-1].astype(np.int32)); np.save('%t/labels.npy', t[:, 1:].astype(np.int32))"
// RUN: partition-opt %t/llama.mlir --part-append-loss="kind=cross-entropy" --part-autodiff --part-optimizer="kind=adamw lr=1e-3 epsilon=1e-6" -o %t/step.mlir
// RUN: for m in "dp:1" "tp:2" "dp:2,tp:2"; do \
// RUN:   partition-opt %t/step.mlir --part-spmd="mesh=$m" -o %t/train-$m.mlir && partition-translate --part-to-plan %t/train-$m.mlir -o %t/train-$m.plan || exit 1; \
// RUN:   mkdir -p %t/train-$m && partition-run %t/train-$m.plan --backend cpu --steps 3 --weights %t/llama.safetensors --input tokens=%t/ids.npy --input labels=%t/labels.npy --output-dir %t/train-$m > %t/train-$m.log || exit 1; \
// RUN: done
// RUN: for m in "tp:2" "dp:2,tp:2"; do \
// RUN:   %python %S/../../e2e/Inputs/losses_agree.py 0 1e-5 %t/train-dp:1.log %t/train-$m.log || exit 1; \
// RUN:   %python %S/../../e2e/Inputs/compare_dirs.py 1e-5 1e-3 %t/train-dp:1 %t/train-$m || exit 1; \
// RUN: done
// RUN: FileCheck %s --check-prefix=HEAD < %t/train-tp:2.mlir
// HEAD: tensor<64x64xf32> {part.name = "lm_head.weight", part.role = #part.role<parameter>, part.sharding = #part.sharding<@mesh, [{}, {"tp"}]>}
// HEAD: tensor<64x64xf32> {part.name = "adam.m.lm_head.weight"
// HEAD: part.all_reduce {{.*}} axes ["tp"] max {part.origin = "vocabulary-parallel loss
