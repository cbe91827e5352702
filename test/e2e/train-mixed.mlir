// Mixed precision end to end: part-mixed-precision (bf16, or f16 with
// dynamic loss scaling) on the generated GPT and MLP of train.mlir, trained
// for 5 steps on meshes (dp, tp) = (1,1), (2,1), (1,2), (2,2), (4,2) and
// with ZeRO 1-3 on (2,2). The parameters are bf16, the master copies and
// optimizer state f32.
//
// Tolerances. bf16 keeps 8 significant bits, a relative 2^-9 = 2e-3 per
// rounding. Partitionings round different partial results (tensor
// parallelism rounds each rank's partial matmul to bf16 before the
// all-reduce; the single rank rounds the whole sum once), so activations
// and gradients differ between meshes by that much, and sums that cancel
// (bias gradients) by more. Hence:
// - SGD with momentum (lr 0.02): losses within 2e-3 |ref|; weights, master
//   copies and momentum within 2e-2 + 2e-2 |ref|. After one step the
//   gradients of two meshes differ by one bf16 ulp of the largest ones
//   (2e-3 at 0.5 in the MLP); momentum sums five steps of them (x ~4) as
//   the trajectories drift apart: ~1.4e-2 measured. SGD moves weights by
//   lr times that. A gradient not reduced over dp (twice or half the right
//   one) moves momentum by 50-100% of its size (up to ~2 in the MLP).
//   The rate is 0.02: at 0.1 the MLP's trajectories on tp:2 (its first two
//   layers split Megatron's way, so partial products are rounded to bf16
//   before their all-reduce, as in Megatron) drift apart from one-ulp
//   differences of the first step's momenta (0.0039, measured) to 2.8e-3
//   |ref| in the fifth loss and 0.08 in momenta; at 0.02, 1.2e-3 |ref| and
//   0.021.
//   (AdamW is compared on losses only: it divides by sqrt(v), so the
//   rounding noise of a gradient that is ~0 in exact arithmetic, such as
//   an attention key bias's, becomes a full lr step of either sign.)
// - bf16 against f32 (AdamW, one rank): losses within 5e-3 |ref| -- the same
//   function, computed with 8-bit mantissas.
//
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python %S/Inputs/train_data.py %t 4 8 64
// RUN: partition-import --model gpt --layers 2 --hidden 32 --heads 4 --vocab 64 --seq 8 --batch 4 --seed 3 -o %t/gpt.mlir --weights %t/gpt.safetensors
// RUN: partition-import --model mlp --layers 3 --hidden 16 --ffn 32 --batch 4 --seed 3 -o %t/mlp.mlir --weights %t/mlp.safetensors
// RUN: for model in gpt mlp; do \
// RUN:   if [ $model = gpt ]; then feed="--input tokens=%t/tokens.npy --input labels=%t/labels.npy"; loss=cross-entropy; \
// RUN:   else feed="--input x=%t/x.npy --input targets=%t/targets.npy"; loss=mse; fi; \
// RUN:   partition-opt %t/$model.mlir --part-append-loss="kind=$loss" --part-mixed-precision --part-autodiff --part-optimizer="kind=sgd lr=0.02 momentum=0.9" > %t/$model-sgd.mlir || exit 1; \
// RUN:   for m in dp:1 dp:2 dp:1,tp:2 dp:2,tp:2 dp:4,tp:2 dp:2,tp:2/1 dp:2,tp:2/2 dp:2,tp:2/3; do \
// RUN:     mesh=${m%%/*}; zero=0; [ "$mesh" != "$m" ] && zero=${m##*/}; n=$model-$mesh-z$zero; \
// RUN:     partition-opt %t/$model-sgd.mlir --part-spmd="mesh=$mesh zero=$zero" 2>/dev/null | partition-translate --part-to-plan -o %t/$n.plan 2>/dev/null || exit 1; \
// RUN:     mkdir -p %t/$n && partition-run %t/$n.plan --backend cpu --steps 5 --weights %t/$model.safetensors $feed --output-dir %t/$n > %t/$n.log || exit 1; \
// RUN:   done; \
// RUN:   %python %S/Inputs/losses_agree.py 0 2e-3 %t/$model-dp:1-z0.log %t/$model-*-z?.log || exit 1; \
// RUN:   %python %S/Inputs/compare_dirs.py 2e-2 2e-2 %t/$model-dp:1-z0 %t/$model-*-z? || exit 1; \
// RUN: done
// The parameters are bf16 outputs (safetensors), the master copies f32
// (.npy); the run ends with a summary of what it wrote:
// RUN: FileCheck %s --check-prefix=TYPES < %t/gpt-dp:2,tp:2-z1.log
// TYPES: trained 5 steps (steps 1 to 5); {{[0-9]+}} output{{s?}} ({{[0-9]+}} bytes) written to {{.*}}gpt-dp:2,tp:2-z1
// RUN: %python -c "import json, struct, numpy as np; d = '%t/gpt-dp:2,tp:2-z1/'; h = open(d + 'new.wte.safetensors', 'rb').read(); n = struct.unpack('<Q', h[:8])[0]; t = json.loads(h[8:8 + n])['new.wte']; assert t['dtype'] == 'BF16' and t['shape'] == [64, 32], t; [np.testing.assert_equal((a.dtype, a.shape), (np.float32, (64, 32))) for a in (np.load(d + 'new.master.wte.npy'), np.load(d + 'new.momentum.wte.npy'))]"
//
// bf16 computes the f32 function: AdamW on one rank, both ways.
// RUN: for p in f32 bf16; do \
// RUN:   mp=""; [ $p = bf16 ] && mp="--part-mixed-precision"; \
// RUN:   partition-opt %t/gpt.mlir --part-append-loss $mp --part-autodiff --part-optimizer="kind=adamw lr=1e-2" | partition-opt --part-spmd="mesh=dp:1" | partition-translate --part-to-plan -o %t/adam-$p.plan 2>/dev/null || exit 1; \
// RUN:   partition-run %t/adam-$p.plan --backend cpu --steps 5 --weights %t/gpt.safetensors --input tokens=%t/tokens.npy --input labels=%t/labels.npy > %t/adam-$p.log || exit 1; \
// RUN: done
// RUN: %python %S/Inputs/losses_agree.py 0 5e-3 %t/adam-f32.log %t/adam-bf16.log
// RUN: %python %S/Inputs/losses_agree.py --falling %t/adam-bf16.log
//
// f16 with dynamic loss scaling, on dp:2. A loss scale of 1e30 overflows
// f16 in backward: every step is skipped (the loss stays, the master copies
// keep their initial weights bit for bit, the step count stays 0) and the
// scale halves each time, to 1e30 / 8 after 3 steps.
// RUN: partition-opt %t/mlp.mlir --part-append-loss="kind=mse" --part-mixed-precision="compute=f16 initial-loss-scale=1e30" --part-autodiff --part-optimizer="kind=adamw lr=1e-3" | partition-opt --part-spmd="mesh=dp:2" | partition-translate --part-to-plan -o %t/f16-skip.plan 2>/dev/null
// RUN: mkdir -p %t/f16-skip && partition-run %t/f16-skip.plan --backend cpu --steps 3 --weights %t/mlp.safetensors --input x=%t/x.npy --input targets=%t/targets.npy --output-dir %t/f16-skip > %t/f16-skip.log
// RUN: %python %S/Inputs/check_loss_scale.py %t/f16-skip %t/mlp.safetensors 0 1.25e29
// RUN: FileCheck %s --check-prefix=SKIP < %t/f16-skip.log
// SKIP: step 1: loss [[LOSS:[0-9.]+]]
// SKIP-NEXT: step 2: loss [[LOSS]]
// SKIP-NEXT: step 3: loss [[LOSS]]
//
// A non-finite loss (NaN in the input) under loss scaling: each step is
// skipped as designed, with a warning, instead of stopping the run.
// RUN: %python -c "import numpy as np; x = np.load('%t/x.npy'); x[0, 0] = np.nan; np.save('%t/x_nan.npy', x)"
// RUN: mkdir -p %t/f16-nan && partition-run %t/f16-skip.plan --backend cpu --steps 2 --weights %t/mlp.safetensors --input x=%t/x_nan.npy --input targets=%t/targets.npy --output-dir %t/f16-nan > %t/f16-nan.log 2>&1
// RUN: %python %S/Inputs/check_loss_scale.py %t/f16-nan %t/mlp.safetensors 0 2.5e29
// RUN: FileCheck %s --check-prefix=SKIPNAN < %t/f16-nan.log
// SKIPNAN: warning: step 1: output "loss" is nan; the plan's loss scaling skips this step
// SKIPNAN: warning: step 2: output "loss" is nan; the plan's loss scaling skips this step
//
// From 1024 with a growth interval of 2, five finite steps double the
// scale twice (4096) and count 5 steps; the losses are the bf16 run's
// within f16's rounding (5e-3).
// RUN: partition-opt %t/mlp.mlir --part-append-loss="kind=mse" --part-mixed-precision="compute=f16 initial-loss-scale=1024" --part-autodiff --part-optimizer="kind=adamw lr=1e-3 loss-scale-growth-interval=2" | partition-opt --part-spmd="mesh=dp:2" | partition-translate --part-to-plan -o %t/f16.plan 2>/dev/null
// RUN: mkdir -p %t/f16 && partition-run %t/f16.plan --backend cpu --steps 5 --weights %t/mlp.safetensors --input x=%t/x.npy --input targets=%t/targets.npy --output-dir %t/f16 > %t/f16.log
// RUN: %python %S/Inputs/check_loss_scale.py %t/f16 %t/mlp.safetensors 5 4096
// RUN: partition-opt %t/mlp.mlir --part-append-loss="kind=mse" --part-autodiff --part-optimizer="kind=adamw lr=1e-3" | partition-opt --part-spmd="mesh=dp:2" | partition-translate --part-to-plan -o %t/f32.plan 2>/dev/null
// RUN: partition-run %t/f32.plan --backend cpu --steps 5 --weights %t/mlp.safetensors --input x=%t/x.npy --input targets=%t/targets.npy > %t/f32.log
// RUN: %python %S/Inputs/losses_agree.py 0 5e-3 %t/f32.log %t/f16.log
