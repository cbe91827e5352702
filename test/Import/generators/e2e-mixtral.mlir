// A generated Mixtral (2 layers, 4 experts, top-2, grouped-query attention)
// run end to end against Hugging Face's MixtralForCausalLM (transformers 5,
// float64) on the same weights: every token's two experts from the router's
// softmax, their weights renormalised, no token dropped (capacity factor 0:
// each expert has seq x top-k slots per sequence). Run on 1 rank and on 4
// (dp x tp = 2 x 2), on CPU ranks.
//
// Tolerance 1e-5 + 1e-5 * |ref|, as e2e-llama.mlir: the longest dot products
// are the experts' 176-term down projections. A routing decision flipped by
// rounding would differ by O(0.1) and fail.
//
// REQUIRES: current-transformers
// RUN: rm -rf %t && mkdir -p %t
// RUN: partition-import --model mixtral --layers 2 --hidden 64 --heads 4 --kv-heads 2 --experts 4 --top-k 2 --vocab 128 --seq 16 --batch 4 --seed 7 -o %t/mixtral.mlir --weights %t/mixtral.safetensors
// RUN: %python -c "import numpy as np; np.save('%t/tokens.npy', np.random.default_rng(1).integers(0, 128, (4, 16)).astype(np.int32))"
// RUN: for m in 1x1 2x2; do \
// RUN:   partition-opt %t/mixtral.mlir --part-spmd="mesh=dp:${m%%x*},tp:${m#*x}" | partition-translate --part-to-plan -o %t/$m.plan || exit 1; \
// RUN:   mkdir -p %t/$m && partition-run %t/$m.plan --backend cpu --weights %t/mixtral.safetensors --input tokens=%t/tokens.npy --output-dir %t/$m > %t/$m.log || exit 1; \
// RUN: done
// RUN: %current_python %S/Inputs/mixtral_reference.py 4 2 2 %t/mixtral.safetensors %t/tokens.npy %t/torch.npy
// RUN: %python %S/../../e2e/Inputs/compare.py 1e-5 1e-5 %t/torch.npy %t/1x1/logits.npy %t/2x2/logits.npy
// RUN: FileCheck %s < %t/2x2.log
//
// CHECK: output logits: f32[4, 16, 128]
// CHECK: output aux_loss: f32[]

// Trained one SGD step (lr 0.1) on the mean cross-entropy plus 0.02 times
// the load-balancing loss (Switch's, over both layers' routed tokens, for
// each sequence as Hugging Face's load_balancing_loss_func computes it,
// averaged over the batch), on 1 rank and on ep:2 and
// dp:2,ep:2, against torch's autograd on Hugging Face's model: the loss and
// every weight after the step (the rotary tables are constants, as
// torch's buffers: no weight of either).
// The gradient reaches the router through the renormalised top-2 weights
// and the load-balancing loss's probabilities. Tolerance 1e-6 + 1e-4 |ref|:
// a step moves each weight by 0.1 times a gradient of f32 sums of at most a
// few thousand terms (2e-4 relative), weights are about 0.02.
// RUN: %python -c "import numpy as np; t = np.random.default_rng(3).integers(0, 128, (4, 17)); np.save('%t/ids.npy', t[:, :-1].astype(np.int32)); np.save('%t/labels.npy', t[:, 1:].astype(np.int32))"
// RUN: partition-import --model mixtral --layers 2 --hidden 64 --heads 4 --kv-heads 2 --experts 4 --top-k 2 --vocab 128 --seq 16 --batch 4 --seed 7 --router-aux-loss-coef 0.02 -o %t/aux.mlir
// RUN: partition-opt %t/aux.mlir --part-append-loss="kind=cross-entropy" --part-autodiff --part-optimizer="kind=sgd lr=0.1" -o %t/step.mlir
// RUN: for m in "dp:1" "ep:2" "dp:2,ep:2"; do \
// RUN:   partition-opt %t/step.mlir --part-spmd="mesh=$m" | partition-translate --part-to-plan -o %t/train-$m.plan || exit 1; \
// RUN:   mkdir -p %t/train-$m && partition-run %t/train-$m.plan --backend cpu --steps 1 --weights %t/mixtral.safetensors --input tokens=%t/ids.npy --input labels=%t/labels.npy --output-dir %t/train-$m > /dev/null || exit 1; \
// RUN: done
// RUN: %current_python %S/Inputs/mixtral_reference.py 4 2 2 %t/mixtral.safetensors %t/ids.npy %t/torch-step --train %t/labels.npy 0.1 0.02
// RUN: %python %S/../../e2e/Inputs/compare_dirs.py 1e-6 1e-4 %t/torch-step %t/train-dp:1 %t/train-ep:2 %t/train-dp:2,ep:2
