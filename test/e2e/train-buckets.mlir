// Gradient buckets end to end: the generated GPT, its AdamW step built with
// part-optimizer's default `interleave=true` (each update right after its
// gradient),
// partitioned for dp:2 and dp:2,tp:2 and run for 5 steps by partition-run,
// with and without `--part-grad-buckets="bytes=4096"` after part-spmd. Every
// run must give the per-step losses and final weights and optimizer state of
// the single-rank run of the step with its updates at the end
// (`interleave=false`).
//
// Tolerance as in train.mlir: losses 2e-5 + 2e-5 |ref|; weights and state
// 1e-5 + 1e-3 |ref|. Bucketing only concatenates the operands of the sums
// over dp and slices the results back, so the sums are the same numbers
// (bit for bit on the CPU backend); the tolerance covers the partitioned
// runs' reordered f32 sums against the single-rank run. A slice at a wrong
// offset or a use left on the wrong piece moves weights by ~lr.
//
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python %S/Inputs/train_data.py %t 4 8 64
// RUN: partition-import --model gpt --layers 2 --hidden 32 --heads 4 --vocab 64 --seq 8 --batch 4 --seed 3 -o %t/gpt.mlir --weights %t/gpt.safetensors
// RUN: partition-opt %t/gpt.mlir --part-append-loss="kind=cross-entropy" --part-autodiff --part-optimizer="kind=adamw lr=1e-3" -o %t/step.mlir
// The reference: the step with its updates at the end (no interleave), one rank.
// RUN: partition-opt %t/gpt.mlir --part-append-loss="kind=cross-entropy" --part-autodiff --part-optimizer="kind=adamw lr=1e-3 interleave=false" | partition-opt --part-spmd="mesh=dp:1" | partition-translate --part-to-plan -o %t/ref.plan 2>/dev/null
// RUN: mkdir -p %t/ref && partition-run %t/ref.plan --backend cpu --steps 5 --weights %t/gpt.safetensors --input tokens=%t/tokens.npy --input labels=%t/labels.npy --output-dir %t/ref > %t/ref.log
// RUN: feed="--input tokens=%t/tokens.npy --input labels=%t/labels.npy"; \
// RUN: runs=""; \
// RUN: for m in dp:1 dp:2 dp:2,tp:2; do \
// RUN:   for bk in plain buckets; do \
// RUN:     n=$m-$bk; extra=""; [ $bk = buckets ] && extra='--part-grad-buckets=bytes=4096'; \
// RUN:     partition-opt %t/step.mlir --part-spmd="mesh=$m" | partition-opt $extra -o %t/$n.mlir || exit 1; \
// RUN:     partition-translate --part-to-plan %t/$n.mlir -o %t/$n.plan 2>/dev/null || exit 1; \
// RUN:     mkdir -p %t/$n && \
// RUN:     partition-run %t/$n.plan --backend cpu --steps 5 --weights %t/gpt.safetensors $feed --output-dir %t/$n > %t/$n.log || exit 1; \
// RUN:     runs="$runs $n"; \
// RUN:   done; \
// RUN: done; \
// RUN: %python %S/Inputs/losses_agree.py 2e-5 2e-5 %t/ref.log $(for r in $runs; do echo %t/$r.log; done) && \
// RUN: %python %S/Inputs/compare_dirs.py 1e-5 1e-3 %t/ref $(for r in $runs; do echo %t/$r; done)
// RUN: FileCheck %s < %t/dp:2-buckets.mlir
// RUN: FileCheck %s --check-prefix=DPTP < %t/dp:2,tp:2-buckets.mlir
// RUN: FileCheck %s --check-prefix=PLAIN < %t/dp:2-plain.mlir
//
// With buckets the reductions over dp run inside backward: buckets of
// concatenated gradients, the first before the last backward matmul (the
// gradient of the token embedding's first consumer).
// CHECK-LABEL: func.func @gpt
// CHECK: part.concat
// CHECK-NEXT: part.all_reduce {{.*}} axes ["dp"] sum {part.origin = "bucket of
// CHECK: part.matmul
// CHECK: return
// DPTP-LABEL: func.func @gpt
// DPTP: part.all_reduce {{.*}} axes ["dp"] sum {part.origin = "bucket of
// DPTP: part.matmul
// DPTP: return
// Without buckets (but interleaved updates) each gradient's own all_reduce
// is already inside backward:
// PLAIN-LABEL: func.func @gpt
// PLAIN-NOT: part.concat
// PLAIN: part.all_reduce {{.*}} axes ["dp"] sum
// PLAIN: part.matmul
// PLAIN: return
