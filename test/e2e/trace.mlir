// partition-run --trace on a data-parallel training run with gradient
// buckets: the generated GPT, AdamW with `interleave=true`, partitioned for
// dp:2 with `--part-grad-buckets="bytes=4096"` (as in train-buckets.mlir),
// two steps. The trace must be valid Chrome trace JSON with a compute and a
// communication track per rank, every instruction named by its opcode with
// its origin, every collective issued before it starts, and at least one
// bucket's all_reduce overlapped: a backward kernel started after it was
// issued and before the wait for it ended (check_overlap.py compares the
// order of events on a rank's compute thread, never durations). Ranks as
// threads and as processes.
//
// With --sync-collectives nothing overlaps and the same check must fail.
//
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python %S/Inputs/train_data.py %t 4 8 64
// RUN: partition-import --model gpt --layers 2 --hidden 32 --heads 4 --vocab 64 --seq 8 --batch 4 --seed 3 -o %t/gpt.mlir --weights %t/gpt.safetensors
// RUN: partition-opt %t/gpt.mlir --part-append-loss="kind=cross-entropy" --part-autodiff --part-optimizer="kind=adamw lr=1e-3 interleave=true" | partition-opt --part-spmd="mesh=dp:2" | partition-opt --part-grad-buckets=bytes=4096 -o %t/dp2.mlir
// RUN: partition-translate --part-to-plan %t/dp2.mlir -o %t/dp2.plan 2>/dev/null
// RUN: partition-run %t/dp2.plan --backend cpu --steps 2 --weights %t/gpt.safetensors --input tokens=%t/tokens.npy --input labels=%t/labels.npy --trace %t/trace.json > %t/run.log
// RUN: %python %S/Inputs/check_overlap.py %t/trace.json 2 | FileCheck %s
// RUN: %python %S/Inputs/check_trace.py %t/trace.json 2 Matmul Concat AllReduce wait
// Ranks as processes: each hands its events to rank 0 with its results.
// RUN: partition-run %t/dp2.plan --processes --backend cpu --steps 2 --weights %t/gpt.safetensors --input tokens=%t/tokens.npy --input labels=%t/labels.npy --trace %t/processes.json > %t/processes.log
// RUN: %python %S/Inputs/check_overlap.py %t/processes.json 2 | FileCheck %s
// RUN: partition-run %t/dp2.plan --backend cpu --steps 2 --weights %t/gpt.safetensors --input tokens=%t/tokens.npy --input labels=%t/labels.npy --trace %t/sync.json --sync-collectives > %t/sync.log
// RUN: not %python %S/Inputs/check_overlap.py %t/sync.json 2 | FileCheck %s --check-prefix=SYNC
//
// CHECK: {{[0-9]+}} events, {{[1-9][0-9]*}} bucket all_reduces overlapped by compute
// SYNC: BAD:
