// Training end to end on generated models: partition-import --model, a
// cross-entropy loss (part-append-loss), gradients (part-autodiff), an AdamW
// step (part-optimizer), partitioned for meshes (dp, tp) = (1,1), (2,1),
// (1,2), (2,2), (4,2) and run for 5 steps by partition-run. Every mesh must give
// the single-rank run's per-step losses and final weights and optimizer
// state.
//
// Tolerance: losses 2e-5 + 2e-5 |ref|; weights and state 1e-5 + 1e-3 |ref|.
// Partitioning only reorders f32 sums (tp splits the contractions, dp the
// batch), a relative 1e-6 per step on losses and gradients. AdamW's update
// is lr * m / sqrt(v) per element, about lr in size whatever the gradient's
// magnitude, so a gradient differing by 1e-6 relative moves an update of
// 1e-3 by ~1e-9; after 5 steps weights agree to ~1e-8 absolute, and the
// second moments (squares of gradients) to ~1e-5 relative. A dropped
// gradient, a gradient not reduced over dp, or a wrong update moves
// weights by ~1e-3 (one step of lr) or losses by far more.
//
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python %S/Inputs/train_data.py %t 4 8 64
// RUN: for model in gpt mlp; do \
// RUN:   if [ $model = gpt ]; then \
// RUN:     partition-import --model gpt --layers 2 --hidden 32 --heads 4 --vocab 64 --seq 8 --batch 4 --seed 3 -o %t/$model.mlir --weights %t/$model.safetensors || exit 1; \
// RUN:     feed="--input tokens=%t/tokens.npy --input labels=%t/labels.npy"; \
// RUN:   else \
// RUN:     partition-import --model mlp --layers 3 --hidden 16 --ffn 32 --batch 4 --seed 3 -o %t/$model.mlir --weights %t/$model.safetensors || exit 1; \
// RUN:     feed="--input x=%t/x.npy --input targets=%t/targets.npy"; \
// RUN:   fi; \
// RUN:   loss=cross-entropy; [ $model = mlp ] && loss=mse; \
// RUN:   partition-opt %t/$model.mlir --part-append-loss="kind=$loss" --part-autodiff --part-optimizer="kind=adamw lr=1e-3" > %t/$model-step.mlir || exit 1; \
// RUN:   for m in dp:1 dp:2 dp:1,tp:2 dp:2,tp:2 dp:4,tp:2; do \
// RUN:     partition-opt %t/$model-step.mlir --part-spmd="mesh=$m" | partition-translate --part-to-plan -o %t/$model-$m.plan 2>/dev/null || exit 1; \
// RUN:     mkdir -p %t/$model-$m && \
// RUN:     partition-run %t/$model-$m.plan --backend cpu --steps 5 --weights %t/$model.safetensors $feed --output-dir %t/$model-$m > %t/$model-$m.log || exit 1; \
// RUN:   done; \
// RUN:   %python %S/Inputs/losses_agree.py 2e-5 2e-5 %t/$model-dp:1.log %t/$model-dp:2.log %t/$model-dp:1,tp:2.log %t/$model-dp:2,tp:2.log %t/$model-dp:4,tp:2.log || exit 1; \
// RUN:   %python %S/Inputs/compare_dirs.py 1e-5 1e-3 %t/$model-dp:1 %t/$model-dp:2 %t/$model-dp:1,tp:2 %t/$model-dp:2,tp:2 %t/$model-dp:4,tp:2 || exit 1; \
// RUN: done
// Plain data parallelism completes each gradient's sum over dp once (an
// all-reduce where backward produces it), not once per use in AdamW's
// update (both moments): as many all-reduces over dp as parameters, plus
// the loss's.
// RUN: for model in gpt mlp; do \
// RUN:   partition-opt %t/$model-step.mlir --part-spmd="mesh=dp:2,tp:2" -o %t/$model-dp2tp2.mlir 2>/dev/null || exit 1; \
// RUN:   p=$(grep -o 'part.role<parameter>' %t/$model-dp2tp2.mlir | wc -l); \
// RUN:   r=$(grep -c 'part.all_reduce .*axes \[[^]]*"dp"' %t/$model-dp2tp2.mlir); \
// RUN:   [ "$r" -eq $((p + 1)) ] || { echo "$model: $r all-reduces over dp for $p parameters"; exit 1; }; \
// RUN: done
// The loss falls:
// RUN: %python %S/Inputs/losses_agree.py --falling %t/gpt-dp:2,tp:2.log
// Sequence parallelism (Megatron's: the residual stream split by sequence
// between blocks, its backward choosing the layouts the forward pass
// already has) trains the GPT to the single-rank losses and weights, with
// ZeRO-3 too. SGD, so weights compare as tightly as the losses (see
// train-uneven.mlir).
// RUN: partition-opt %t/gpt.mlir --part-append-loss="kind=cross-entropy" --part-autodiff --part-optimizer="kind=sgd lr=0.1" -o %t/gpt-sgd.mlir
// RUN: for c in "1 mesh=dp:1" "2 mesh=dp:2,tp:2 sequence-parallel=true" "3 mesh=dp:2,tp:2 sequence-parallel=true zero=3" "4 mesh=tp:4 sequence-parallel=true"; do \
// RUN:   n=$(echo "$c" | cut -d" " -f1); \
// RUN:   partition-opt %t/gpt-sgd.mlir --part-spmd="${c#* }" | partition-translate --part-to-plan -o %t/sp$n.plan || exit 1; \
// RUN:   mkdir -p %t/sp$n && \
// RUN:   partition-run %t/sp$n.plan --backend cpu --steps 3 --weights %t/gpt.safetensors --input tokens=%t/tokens.npy --input labels=%t/labels.npy --output-dir %t/sp$n > %t/sp$n.log || exit 1; \
// RUN: done
// RUN: %python %S/Inputs/losses_agree.py 0 1e-5 %t/sp1.log %t/sp2.log %t/sp3.log %t/sp4.log
// RUN: %python %S/Inputs/compare_dirs.py 1e-6 1e-5 %t/sp1 %t/sp2 %t/sp3 %t/sp4
