// Collectives that overlap compute give the results of synchronous ones, bit
// for bit: the generated GPT's AdamW step (`interleave=true`), partitioned
// for dp:2 and dp:2,tp:2 with `--part-grad-buckets="bytes=4096"`, trained
// for 5 steps by partition-run with its default asynchronous collectives and
// with --sync-collectives, ranks as threads and (dp:2) as processes. The
// per-step losses must print identically and every output (weights and
// optimizer state) must be the same bytes: the executor runs the same
// kernels and collectives on the same bytes, only in an order that no
// instruction can observe.
//
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python %S/Inputs/train_data.py %t 4 8 64
// RUN: partition-import --model gpt --layers 2 --hidden 32 --heads 4 --vocab 64 --seq 8 --batch 4 --seed 3 -o %t/gpt.mlir --weights %t/gpt.safetensors
// RUN: partition-opt %t/gpt.mlir --part-append-loss="kind=cross-entropy" --part-autodiff --part-optimizer="kind=adamw lr=1e-3 interleave=true" -o %t/step.mlir
// RUN: feed="--backend cpu --steps 5 --weights %t/gpt.safetensors --input tokens=%t/tokens.npy --input labels=%t/labels.npy"; \
// RUN: for m in dp:2 dp:2,tp:2; do \
// RUN:   partition-opt %t/step.mlir --part-spmd="mesh=$m" | partition-opt --part-grad-buckets=bytes=4096 | partition-translate --part-to-plan -o %t/$m.plan 2>/dev/null || exit 1; \
// RUN:   for mode in async sync; do \
// RUN:     flag=""; [ $mode = sync ] && flag=--sync-collectives; \
// RUN:     mkdir -p %t/$m-$mode && partition-run %t/$m.plan $feed $flag --output-dir %t/$m-$mode > %t/$m-$mode.log || exit 1; \
// RUN:   done; \
// RUN:   grep '^step' %t/$m-async.log > %t/$m-async.steps && grep '^step' %t/$m-sync.log > %t/$m-sync.steps || exit 1; \
// RUN:   diff %t/$m-async.steps %t/$m-sync.steps || exit 1; \
// RUN:   for f in %t/$m-sync/*.npy; do cmp $f %t/$m-async/$(basename $f) || exit 1; done; \
// RUN: done
// RUN: mkdir -p %t/proc && partition-run %t/dp:2.plan $feed --processes --output-dir %t/proc > %t/proc.log
// RUN: grep '^step' %t/proc.log | diff - %t/dp:2-sync.steps
// RUN: for f in %t/dp:2-sync/*.npy; do cmp $f %t/proc/$(basename $f) || exit 1; done
// RUN: cat %t/dp:2-async.steps | FileCheck %s
//
// CHECK: step 1: loss
// CHECK: step 5: loss
