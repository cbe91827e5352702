// partition-run trains over data: --data FILE.safetensors (an array
// [S, ...] of S batches per input and label binding; step k takes batch
// k mod S, each rank reading only its block) and --synthetic SEED (a random
// batch per step, a function of the seed, the step and each element's
// global index). Periodic checkpoints (--checkpoint-every) record the data
// position, and --resume continues the stream there.
//
// (a) What each rank is fed, exactly: Inputs/echo-batches.mlir returns its
//     inputs, so the assembled outputs are the batch of the last step: on
//     1 and 4 ranks (threads and processes), batch (5 - 1) mod 3 of the file,
//     bit for bit; the synthetic stream the same on 1 and 4 ranks, another
//     batch every step, integers within --vocab; and a run resumed from a
//     checkpoint after 2 steps sees batch 3 of a straight run.
// (b) Linear regression (Inputs/linreg-grad.mlir, AdamW lr 0.01) over 4
//     batches for 6 steps (so the stream wraps around) on 1, 2 and 4
//     data-parallel ranks against a float64 numpy AdamW on the same batch
//     sequence: tolerance 1e-5 + 1e-5 |ref|, the bound and the argument of
//     optimizer.mlir (f32 losses and gradients carry a relative few 1e-7;
//     AdamW's update is lr * m / sqrt(v), so its error stays ~1e-8 per
//     step). A stream stuck on one batch, a rank reading another rank's
//     rows or a wrong wrap-around changes losses by 1 or more (the batches'
//     losses lie between 4 and 16).
// (c) Periodic checkpoints on the same plan: 3 steps with
//     --checkpoint-every 2 (step-2 and step-3) and a resume of the latest
//     for 3 more, or of step-2 for 4 more, equal 6 steps straight bit for
//     bit (losses, final weights and state); threads and --processes.
// (d) GPT (the model of train.mlir) over windows of a token stream, 5
//     batches, 6 steps: dp:1, dp:4 and dp:2,tp:2 agree with train.mlir's
//     tolerances (losses 2e-5 + 2e-5 |ref|, weights and state 1e-5 +
//     1e-3 |ref|, argued there), and 3 steps on dp:2,tp:2 + checkpoint +
//     3 resumed steps on dp:4 agree with 6 straight steps on dp:1, from the
//     file and from the synthetic stream.
//
// RUN: rm -rf %t && mkdir -p %t/echo %t/lin %t/gpt
//
// (a)
// RUN: cd %t/echo && %python %S/Inputs/train_data_stream.py echo . 3
// RUN: cd %t/echo && for m in 1 4; do \
// RUN:   partition-opt %S/Inputs/echo-batches.mlir --part-spmd="mesh=dp:$m" | partition-translate --part-to-plan -o $m.plan 2>/dev/null || exit 1; \
// RUN:   mkdir -p file$m syn$m syn2-$m && \
// RUN:   partition-run $m.plan --backend cpu --data echo.safetensors --steps 5 --output-dir file$m > file$m.log && \
// RUN:   partition-run $m.plan --backend cpu --synthetic 7 --vocab 50 --steps 3 --output-dir syn$m > syn$m.log && \
// RUN:   partition-run $m.plan --backend cpu --synthetic 7 --vocab 50 --steps 2 --output-dir syn2-$m > syn2-$m.log || exit 1; \
// RUN: done
// RUN: cd %t/echo && mkdir -p file4p && partition-run 4.plan --backend cpu --data echo.safetensors --steps 5 --output-dir file4p --processes > file4p.log
// RUN: cd %t/echo && %python %S/Inputs/train_data_stream.py seen echo.safetensors 1 file1 file4 file4p
// RUN: cd %t/echo && %python %S/Inputs/compare_dirs.py 0 0 syn1 syn4
// RUN: cd %t/echo && %python %S/Inputs/compare_dirs.py 0 0 syn2-1 syn2-4
// RUN: cd %t/echo && %python %S/Inputs/train_data_stream.py distinct syn1 syn2-1
// RUN: cd %t/echo && %python %S/Inputs/train_data_stream.py range syn4 t 50
// RUN: cd %t/echo && mkdir -p resumed && \
// RUN: partition-run 4.plan --backend cpu --synthetic 7 --vocab 50 --steps 2 --checkpoint ck > first.log && \
// RUN: partition-run 1.plan --backend cpu --synthetic 7 --vocab 50 --steps 1 --resume ck --output-dir resumed > resumed.log
// RUN: cd %t/echo && %python %S/Inputs/compare_dirs.py 0 0 syn1 resumed
// RUN: FileCheck %s --check-prefix=ECHO-MANIFEST < %t/echo/ck/manifest.json
// ECHO-MANIFEST: "steps": 2,
// ECHO-MANIFEST-NEXT: "data": {"source": "synthetic 7", "position": 2},
//
// (b)
// RUN: cd %t/lin && %python %S/Inputs/train_data_stream.py linreg . 4 6 --lr 0.01
// RUN: cd %t/lin && partition-opt %S/Inputs/linreg-grad.mlir --part-optimizer="kind=adamw lr=0.01" > step.mlir
// RUN: cd %t/lin && for m in 1 2 4; do \
// RUN:   partition-opt step.mlir --part-spmd="mesh=dp:$m" | partition-translate --part-to-plan -o $m.plan 2>/dev/null || exit 1; \
// RUN:   mkdir -p out$m && \
// RUN:   partition-run $m.plan --backend cpu --steps 6 --weights weights.safetensors --data data.safetensors --output-dir out$m > $m.log || exit 1; \
// RUN: done
// RUN: cd %t/lin && %python %S/Inputs/losses_agree.py 1e-5 1e-5 losses.txt 1.log 2.log 4.log
// RUN: cd %t/lin && %python %S/Inputs/compare.py 1e-5 1e-5 w.npy out1/new.w.npy out2/new.w.npy out4/new.w.npy
// RUN: cd %t/lin && %python %S/Inputs/compare.py 1e-5 1e-5 b.npy out1/new.b.npy out2/new.b.npy out4/new.b.npy
//
// (c)
// RUN: cd %t/lin && mkdir -p latest from-2 latest-p && feed="--backend cpu --data data.safetensors" && \
// RUN: partition-run 2.plan $feed --steps 3 --weights weights.safetensors --checkpoint ck --checkpoint-every 2 > first.log && \
// RUN: partition-run 2.plan $feed --steps 3 --resume ck --output-dir latest > latest.log && \
// RUN: partition-run 2.plan $feed --steps 4 --resume ck/step-2 --output-dir from-2 > from-2.log && \
// RUN: partition-run 2.plan $feed --steps 3 --weights weights.safetensors --checkpoint ck-p --checkpoint-every 2 --processes > first-p.log && \
// RUN: partition-run 2.plan $feed --steps 3 --resume ck-p --output-dir latest-p --processes > latest-p.log
// RUN: cd %t/lin && cat first.log latest.log > split-latest.log && head -n 2 first.log | cat - from-2.log > split-from-2.log && cat first-p.log latest-p.log > split-p.log
// RUN: cd %t/lin && %python %S/Inputs/losses_agree.py 0 0 2.log split-latest.log split-from-2.log split-p.log
// RUN: cd %t/lin && %python %S/Inputs/compare_dirs.py 0 0 out2 latest from-2 latest-p
// RUN: FileCheck %s --check-prefix=PERIODIC < %t/lin/first.log
// RUN: FileCheck %s --check-prefix=LATEST < %t/lin/latest.log
// RUN: FileCheck %s --check-prefix=MANIFEST < %t/lin/ck/step-3/manifest.json
// RUN: ls %t/lin/ck %t/lin/ck-p | FileCheck %s --check-prefix=DIRS
// A step directory whose manifest is missing (its writing did not finish)
// is passed over for the latest whole one:
// RUN: cd %t/lin && cp -r ck ck-cut && rm ck-cut/step-3/manifest.json && \
// RUN: partition-run 2.plan --backend cpu --data data.safetensors --steps 1 --resume ck-cut | FileCheck %s --check-prefix=CUT
// CUT: step 3: loss
//
// PERIODIC: step 1: loss
// PERIODIC-NEXT: step 2: loss
// PERIODIC-NEXT: checkpoint ck/step-2: 7 tensors after step 2
// PERIODIC-NEXT: step 3: loss
// PERIODIC-NEXT: checkpoint ck/step-3: 7 tensors after step 3
// LATEST-NOT: step 3:
// LATEST: step 4: loss
// LATEST: step 6: loss
// MANIFEST: "steps": 3,
// MANIFEST-NEXT: "data": {"source": "data.safetensors", "position": 3},
// DIRS: ck:
// DIRS-NEXT: step-2
// DIRS-NEXT: step-3
// DIRS: ck-p:
// DIRS-NEXT: step-2
// DIRS-NEXT: step-3
//
// (d)
// RUN: cd %t/gpt && %python %S/Inputs/train_data_stream.py gpt . 5 4 8 64
// RUN: cd %t/gpt && partition-import --model gpt --layers 2 --hidden 32 --heads 4 --vocab 64 --seq 8 --batch 4 --seed 3 -o gpt.mlir --weights gpt.safetensors
// RUN: cd %t/gpt && partition-opt gpt.mlir --part-append-loss="kind=cross-entropy" --part-autodiff --part-optimizer="kind=adamw lr=1e-3" > step.mlir
// RUN: cd %t/gpt && for m in dp:1 dp:4 dp:2,tp:2; do \
// RUN:   partition-opt step.mlir --part-spmd="mesh=$m" | partition-translate --part-to-plan -o $m.plan 2>/dev/null || exit 1; \
// RUN: done
// RUN: cd %t/gpt && for s in data synthetic; do \
// RUN:   src="--data data.safetensors"; [ $s = synthetic ] && src="--synthetic 11 --vocab 64"; \
// RUN:   for m in dp:1 dp:4 dp:2,tp:2; do \
// RUN:     mkdir -p $s-$m && partition-run $m.plan --backend cpu $src --steps 6 --weights gpt.safetensors --output-dir $s-$m > $s-$m.log || exit 1; \
// RUN:   done; \
// RUN:   mkdir -p $s-resumed && \
// RUN:   partition-run dp:2,tp:2.plan --backend cpu $src --steps 3 --weights gpt.safetensors --checkpoint ck-$s --checkpoint-every 3 > $s-first.log && \
// RUN:   partition-run dp:4.plan --backend cpu $src --steps 3 --resume ck-$s --output-dir $s-resumed > $s-resumed.log && \
// RUN:   cat $s-first.log $s-resumed.log > $s-split.log && \
// RUN:   %python %S/Inputs/losses_agree.py 2e-5 2e-5 $s-dp:1.log $s-dp:4.log $s-dp:2,tp:2.log $s-split.log && \
// RUN:   %python %S/Inputs/compare_dirs.py 1e-5 1e-3 $s-dp:1 $s-dp:4 $s-dp:2,tp:2 $s-resumed || exit 1; \
// RUN: done
