// partition-run's training output: the loss lines on stdout, a progress
// line per logged step on stderr (a bar redrawn in place on a terminal),
// the summary line, and --metrics FILE.jsonl, one JSON object per logged
// step. The model is train.mlir's GPT (2 layers, hidden 32, 4 heads, vocab
// 64, 4 sequences of 8 tokens: 32 tokens per step).
//
// (a) dp:2,tp:2 on 4 ranks, 5 steps, --cluster h200: a loss line and a
//     progress line per step, the summary (32 tokens per step, MFU against
//     h200) before the "trained" line, and every --metrics line parses with
//     the documented fields and sane values (check_metrics.py). The model
//     FLOPs of a step are the model's, whatever the partitioning: the same
//     count on dp:1 (part-spmd counts them on the global program; see
//     train-model-flops.mlir). A run of milliseconds prints them ("12ms").
// (b) --log-every 2 without --cluster: steps 2, 4 and the last (5) logged,
//     on stdout, stderr and in the file, with a null MFU.
// (c) 4 ranks as processes: the printing rank's process writes the file.
// (d) A resumed run numbers its steps on: [3/4] and [4/4].
// (e) On a terminal (a pty, stdout and stderr both): one bar redrawn in
//     place, taken off the line before every loss line and the summary.
// (f) Errors, each one line and a non-zero exit: --metrics into a missing
//     folder or onto a folder, --log-every 0, an unknown --cluster.
//
// RUN: rm -rf %t && mkdir -p %t && cd %t
// RUN: %python %S/Inputs/train_data.py %t 4 8 64
// RUN: partition-import --model gpt --layers 2 --hidden 32 --heads 4 --vocab 64 --seq 8 --batch 4 --seed 3 -o gpt.mlir --weights gpt.safetensors
// RUN: partition-opt gpt.mlir --part-append-loss="kind=cross-entropy" --part-autodiff --part-optimizer="kind=adamw lr=1e-3" -o step.mlir
// RUN: partition-opt step.mlir --part-spmd="mesh=dp:1" | partition-translate --part-to-plan -o 1.plan
// RUN: partition-opt step.mlir --part-spmd="mesh=dp:2,tp:2" | partition-translate --part-to-plan -o 4.plan
//
// (a)
// RUN: partition-run 4.plan --backend cpu --weights gpt.safetensors --input tokens=tokens.npy --input labels=labels.npy --steps 5 --cluster h200 --metrics all.jsonl > all.out 2> all.err
// RUN: FileCheck %s --check-prefix=ALL < all.out
// RUN: FileCheck %s --check-prefix=ALL-ERR < all.err
// RUN: %python %S/Inputs/check_metrics.py all.jsonl --steps 1,2,3,4,5 --mfu
// RUN: partition-run 1.plan --backend cpu --weights gpt.safetensors --input tokens=tokens.npy --input labels=labels.npy --steps 2 > one.out 2>&1
// RUN: grep -o "[^ ]* model FLOP per step" all.out > all.flops
// RUN: grep -o "[^ ]* model FLOP per step" one.out | diff all.flops -
//
// ALL:      step 1: loss
// ALL-NEXT: step 2: loss
// ALL-NEXT: step 3: loss
// ALL-NEXT: step 4: loss
// ALL-NEXT: step 5: loss
// ALL-NEXT: summary: 5 steps in {{[0-9.]+m?s}}, mean step {{[0-9.]+}} ms (leaving out the first), {{[0-9.e+]+}} tokens/s (32 tokens per step), {{[0-9.e+]+}} model FLOP per step, MFU {{[0-9.e-]+}}% (h200), peak memory {{[0-9.]+}} {{k|M}}B ({{[0-9]+}} bytes)
// ALL:      trained 5 steps (steps 1 to 5)
//
// ALL-ERR:      [1/5] loss {{[0-9.]+}} | {{[0-9.]+}} ms | {{[0-9.e+]+}} tokens/s | MFU {{[0-9.e-]+}}% | peak {{[0-9.]+}} {{k|M}}B | ETA {{[0-9.]+m?s}}
// ALL-ERR-NEXT: [2/5] loss
// ALL-ERR-NEXT: [3/5] loss
// ALL-ERR-NEXT: [4/5] loss
// ALL-ERR-NEXT: [5/5] loss {{.*}} | ETA 0s
//
// (b)
// RUN: partition-run 4.plan --backend cpu --weights gpt.safetensors --input tokens=tokens.npy --input labels=labels.npy --steps 5 --log-every 2 --metrics every2.jsonl > every2.out 2> every2.err
// RUN: FileCheck %s --check-prefix=EVERY2 < every2.out
// RUN: FileCheck %s --check-prefix=EVERY2-ERR < every2.err
// RUN: %python %S/Inputs/check_metrics.py every2.jsonl --steps 2,4,5 --no-mfu
//
// EVERY2-NOT:  step 1:
// EVERY2:      step 2: loss
// EVERY2-NEXT: step 4: loss
// EVERY2-NEXT: step 5: loss
// EVERY2-NEXT: summary: 5 steps in {{.*}}, MFU -, peak memory
//
// EVERY2-ERR-NOT:  [1/5]
// EVERY2-ERR:      [2/5] loss {{.*}} | MFU - |
// EVERY2-ERR-NEXT: [4/5] loss
// EVERY2-ERR-NEXT: [5/5] loss
//
// (c)
// RUN: partition-run 4.plan --backend cpu --weights gpt.safetensors --input tokens=tokens.npy --input labels=labels.npy --steps 2 --processes --metrics processes.jsonl > processes.out 2>&1
// RUN: %python %S/Inputs/check_metrics.py processes.jsonl --steps 1,2 --no-mfu
// RUN: FileCheck %s --check-prefix=PROCESSES < processes.out
// PROCESSES: summary: 2 steps
//
// (d)
// RUN: partition-run 1.plan --backend cpu --weights gpt.safetensors --input tokens=tokens.npy --input labels=labels.npy --steps 2 --checkpoint ck > first.out 2>&1
// RUN: partition-run 1.plan --backend cpu --resume ck --input tokens=tokens.npy --input labels=labels.npy --steps 2 --metrics resumed.jsonl > resumed.out 2> resumed.err
// RUN: FileCheck %s --check-prefix=RESUMED-ERR < resumed.err
// RUN: %python %S/Inputs/check_metrics.py resumed.jsonl --steps 3,4 --no-mfu
// RESUMED-ERR:      [3/4] loss
// RESUMED-ERR-NEXT: [4/4] loss
//
// (e)
// RUN: %python %S/Inputs/progress_bar.py 3 partition-run 4.plan --backend cpu --weights gpt.safetensors --input tokens=tokens.npy --input labels=labels.npy --steps 3
//
// (f)
// RUN: mkdir -p folder
// RUN: not partition-run 1.plan --backend cpu --weights gpt.safetensors --input tokens=tokens.npy --input labels=labels.npy --steps 2 --metrics missing/m.jsonl > missing.out 2>&1
// RUN: not partition-run 1.plan --backend cpu --weights gpt.safetensors --input tokens=tokens.npy --input labels=labels.npy --steps 2 --metrics folder > folder.out 2>&1
// RUN: not partition-run 1.plan --backend cpu --weights gpt.safetensors --input tokens=tokens.npy --input labels=labels.npy --steps 2 --log-every 0 > every0.out 2>&1
// RUN: not partition-run 1.plan --backend cpu --weights gpt.safetensors --input tokens=tokens.npy --input labels=labels.npy --steps 2 --cluster no-such-cluster --metrics unwritten.jsonl > cluster.out 2>&1
// RUN: cat missing.out folder.out every0.out cluster.out > errors.out
// RUN: FileCheck %s --check-prefix=ERRORS < errors.out
// RUN: count 4 < errors.out
// RUN: test ! -e unwritten.jsonl
//
// ERRORS:      partition-run: invalid argument: cannot write missing/m.jsonl (--metrics): its directory missing: No such file or directory
// ERRORS-NEXT: partition-run: invalid argument: cannot write folder (--metrics): it is a directory
// ERRORS-NEXT: partition-run: --log-every needs a positive integer, got "0"
// ERRORS-NEXT: partition-run: --cluster: invalid argument: "no-such-cluster" is neither a cluster preset (dgx-a100, dgx-h100, h200) nor a cluster file
