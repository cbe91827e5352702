// Pipeline parallelism end to end: a generated 4-layer GPT (cross-entropy,
// AdamW) partitioned with a pp axis -- GPipe, 1F1B, interleaved 1F1B and
// zero-bubble (ZB-H1), 2 and 4 stages,
// composed with dp, tp and ZeRO 1 to 3, ZeRO's gradients reduce-scattered
// per micro-batch or once per step -- and trained for 3 steps by
// partition-run, threads and --processes. Every plan must give the
// single-rank run's per-step losses and final weights and optimizer state.
//
// Tolerance, as train.mlir argues: losses 1e-5 relative; weights and state
// 1e-5 + 1e-3 |ref|. Micro-batching only splits the batch's f32 sums into
// per-micro-batch sums added afterwards (as dp does across devices). A
// micro-batch dropped or counted twice, a loss not scaled by 1/m, or a
// stage that misses a tied parameter's update moves losses by ~1e-2 and
// weights by a step of lr (1e-3) or more.
//
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python %S/Inputs/train_data.py %t 8 8 64
// RUN: partition-import --model gpt --layers 4 --hidden 32 --heads 4 --vocab 64 --seq 8 --batch 8 --seed 3 -o %t/gpt.mlir --weights %t/gpt.safetensors
// RUN: partition-opt %t/gpt.mlir --part-append-loss="kind=cross-entropy" --part-autodiff --part-optimizer="kind=adamw lr=1e-3" -o %t/step.mlir
// RUN: partition-opt %t/step.mlir --part-spmd="mesh=dp:1" | partition-translate --part-to-plan -o %t/ref.plan
// RUN: mkdir -p %t/ref && partition-run %t/ref.plan --backend cpu --steps 3 --weights %t/gpt.safetensors --input tokens=%t/tokens.npy --input labels=%t/labels.npy --output-dir %t/ref > %t/ref.log
// RUN: i=0; for m in "pp:2 micro-batches=2 schedule=gpipe" "pp:2 micro-batches=4" "pp:4 micro-batches=4" "pp:4 micro-batches=8 schedule=gpipe" "pp:2,dp:2 zero=1" "pp:2,tp:2" "pp:2,dp:2,tp:2 zero=3" "pp:4,dp:2 micro-batches=4" "pp:2 micro-batches=4 schedule=zero-bubble" "pp:4 micro-batches=8 schedule=zero-bubble" "pp:2,dp:2,tp:2 micro-batches=2 schedule=zero-bubble zero=1" "pp:2 micro-batches=4 schedule=interleaved-1f1b" "pp:2,dp:2 micro-batches=2 schedule=interleaved-1f1b zero=1" "pp:2,dp:2 micro-batches=2 schedule=gpipe zero=2" "pp:2,dp:2 micro-batches=2 schedule=zero-bubble zero=3" "pp:4 micro-batches=4 balance=memory" "pp:2 micro-batches=4 schedule=zb-v" "pp:2,dp:2 micro-batches=4 schedule=zb-v zero=1" "pp:2 micro-batches=4 schedule=v-half" "pp:2,tp:2 micro-batches=2 schedule=v-min zero=0" "pp:2 micro-batches=4 unroll=true" "pp:2,dp:2 zero=1 unroll=true" "pp:2 micro-batches=4 schedule=interleaved-1f1b unroll=true" "pp:4,dp:2 micro-batches=4 unroll=true" "pp:2,dp:2 micro-batches=4 zero=1 grad-sync=step" "pp:2,dp:2,tp:2 micro-batches=2 schedule=zero-bubble zero=2 grad-sync=step" "pp:2 micro-batches=4 schedule=interleaved-1f1b virtual-stages=3" "pp:5 micro-batches=8" "pp:3,dp:2 micro-batches=4 schedule=v-half zero=1" "pp:2,tp:2 micro-batches=2 schedule=interleaved-1f1b virtual-stages=3"; do \
// RUN:   i=$((i+1)); \
// RUN:   partition-opt %t/step.mlir --part-spmd="mesh=$m" | partition-translate --part-to-plan -o %t/p$i.plan || exit 1; \
// RUN:   mkdir -p %t/p$i && partition-run %t/p$i.plan --backend cpu --steps 3 --weights %t/gpt.safetensors --input tokens=%t/tokens.npy --input labels=%t/labels.npy --output-dir %t/p$i > %t/p$i.log || exit 1; \
// RUN:   %python %S/Inputs/losses_agree.py 0 1e-5 %t/ref.log %t/p$i.log || { echo "mesh=$m"; exit 1; }; \
// RUN:   %python %S/Inputs/compare_dirs.py 1e-5 1e-3 %t/ref %t/p$i || { echo "mesh=$m"; exit 1; }; \
// RUN: done
// The schedule as a table (the default) and unrolled give the same bits:
// the same losses and outputs (plans 21-24 are 2, 5, 12 and 8 unrolled; 8
// completes its gradients' dp all-reduce in the final backward fragment).
// Plans 25 and 26 reduce-scatter ZeRO's gradients once per step
// (grad-sync=step), in the last backward. Plans 27-30 have more groups than
// the 4 layers: the embedding and the head each in a group of their own
// (6 groups: 2 stages of 3 chunks, a V on 3 stages), or the head alone
// (pp:5).
// RUN: for pair in "2 21" "5 22" "12 23" "8 24"; do set -- $pair; \
// RUN:   %python %S/Inputs/compare_dirs.py 0 0 %t/p$1 %t/p$2 || exit 1; \
// RUN:   grep "^step" %t/p$1.log > %t/a.txt; grep "^step" %t/p$2.log > %t/b.txt; \
// RUN:   diff %t/a.txt %t/b.txt || exit 1; \
// RUN: done
//
// A plan whose receives do not match the sends on a channel between two
// programs is rejected when loaded, naming the first unmatched transfer (the
// runtime matches each channel's transfers in order, as NCCL does): here
// stage 1 receives micro-batch 0's activation on a channel no one sends on,
// in the unrolled form and in the fragment form.
// RUN: partition-opt %t/step.mlir --part-spmd="mesh=pp:2 micro-batches=2 unroll=true" -o %t/order.mlir
// RUN: sed -e 's/part.recv from @mesh_pp0 channel 0 /part.recv from @mesh_pp0 channel 77 /' %t/order.mlir | partition-translate --part-to-plan -o %t/order.plan
// RUN: not partition-run %t/order.plan --backend cpu --steps 1 --weights %t/gpt.safetensors --input tokens=%t/tokens.npy --input labels=%t/labels.npy 2>&1 | FileCheck %s --check-prefix=ORDER
// ORDER: order.plan: transfers from program 0 (gpt_stage0) to program 1 (gpt_stage1) on channel 0: 1 sends but 0 receives; the first unmatched send is instruction {{[0-9]+}} (F0 {{.*}}), channel 0, F32[4, 8, 32]
// RUN: partition-opt %t/step.mlir --part-spmd="mesh=pp:2 micro-batches=2" | sed -e 's/part.recv from @mesh_pp0 channel 0 /part.recv from @mesh_pp0 channel 77 /' | partition-translate --part-to-plan -o %t/order2.plan
// RUN: not partition-run %t/order2.plan --backend cpu --steps 1 --weights %t/gpt.safetensors --input tokens=%t/tokens.npy --input labels=%t/labels.npy 2>&1 | FileCheck %s --check-prefix=ORDER2
// ORDER2: order2.plan: transfers from program 0 (gpt_stage0) to program 1 (gpt_stage1) on channel 0: 2 sends but 0 receives; the first unmatched send is instruction {{[0-9]+}} ({{.*}}) of step F0 (micro-batch 0), channel 0, F32[4, 8, 32]
//
// As processes: the same losses.
// RUN: mkdir -p %t/proc && partition-run %t/p3.plan --backend cpu --processes --steps 3 --weights %t/gpt.safetensors --input tokens=%t/tokens.npy --input labels=%t/labels.npy --output-dir %t/proc > %t/proc.log
// RUN: %python %S/Inputs/losses_agree.py 0 1e-5 %t/ref.log %t/proc.log
//
// The loss is printed once, by the last stage's first rank.
// RUN: FileCheck %s --input-file %t/p3.log
// CHECK: step 1: loss
// CHECK-NOT: step 1: loss
// CHECK: step 3: loss
// CHECK: trained 3 steps (steps 1 to 3); 206 outputs
//
// A rank that fails in the middle of a step (the last stage, and the first)
// makes every other rank stop with an error, threads and processes, well
// within the timeout.
// RUN: for mode in "" --processes; do for r in 3 0; do \
// RUN:   not partition-run %t/p3.plan --backend cpu $mode --steps 3 --timeout 20 --fail-rank $r --fail-step 2 --weights %t/gpt.safetensors --input tokens=%t/tokens.npy --input labels=%t/labels.npy > %t/fail.log 2>&1 || exit 1; \
// RUN:   grep -q "failing on purpose (--fail-rank $r --fail-step 2)" %t/fail.log || exit 1; \
// RUN: done; done
//
// Stress: pp:4 interleaved 1F1B (2 chunks of layers per stage, so an 8-layer
// GPT) with 8 micro-batches as processes, 20 times, each equal to one rank
// and none hanging (each run has a 30 s timeout).
// RUN: partition-import --model gpt --layers 8 --hidden 32 --heads 4 --vocab 64 --seq 8 --batch 8 --seed 5 -o %t/gpt8.mlir --weights %t/gpt8.safetensors
// RUN: partition-opt %t/gpt8.mlir --part-append-loss="kind=cross-entropy" --part-autodiff --part-optimizer="kind=adamw lr=1e-3" -o %t/step8.mlir
// RUN: partition-opt %t/step8.mlir --part-spmd="mesh=dp:1" | partition-translate --part-to-plan -o %t/ref8.plan
// RUN: partition-run %t/ref8.plan --backend cpu --steps 2 --weights %t/gpt8.safetensors --input tokens=%t/tokens.npy --input labels=%t/labels.npy > %t/ref8.log
// RUN: partition-opt %t/step8.mlir --part-spmd="mesh=pp:4 micro-batches=8 schedule=interleaved-1f1b" | partition-translate --part-to-plan -o %t/stress.plan
// RUN: for i in $(seq 20); do \
// RUN:   partition-run %t/stress.plan --backend cpu --processes --steps 2 --timeout 30 --weights %t/gpt8.safetensors --input tokens=%t/tokens.npy --input labels=%t/labels.npy > %t/stress.log || exit 1; \
// RUN:   %python %S/Inputs/losses_agree.py 0 1e-5 %t/ref8.log %t/stress.log || exit 1; \
// RUN: done
//
// Memory: the memory report gives each stage's steps and the micro-batches
// it holds in flight -- GPipe all 8, 1F1B at most the stages after it (4,
// 3, 2, 1) -- and the arena, which holds their activations, is smaller.
// RUN: partition-opt %t/step.mlir --part-spmd="mesh=pp:4 micro-batches=8 schedule=gpipe" | partition-translate --part-to-plan --part-memory-report -o /dev/null 2> %t/gpipe.txt
// RUN: partition-opt %t/step.mlir --part-spmd="mesh=pp:4 micro-batches=8 schedule=1f1b" | partition-translate --part-to-plan --part-memory-report -o /dev/null 2> %t/1f1b.txt
// RUN: FileCheck %s --check-prefix=GPIPE --input-file %t/gpipe.txt
// RUN: FileCheck %s --check-prefix=ONEF --input-file %t/1f1b.txt
// GPIPE: memory report of @gpt_stage0
// GPIPE: stage       0: F0 F1 F2 F3 F4 F5 F6 F7 B0 B1 B2 B3 B4 B5 B6 B7
// GPIPE-NEXT: in flight   8 micro-batches
// ONEF: memory report of @gpt_stage0
// ONEF: stage       0: F0 F1 F2 F3 B0 F4 B1 F5 B2 F6 B3 F7 B4 B5 B6 B7
// ONEF-NEXT: in flight   4 micro-batches
// ONEF: in flight   3 micro-batches
// ONEF: in flight   2 micro-batches
// ONEF: in flight   1 micro-batches
// RUN: %python %S/Inputs/arenas_smaller.py %t/gpipe.txt %t/1f1b.txt
// Zero-bubble (ZB-H1) keeps 1F1B's peak: no stage holds more than p = 4
// micro-batches (the weight gradients it delays keep later stages' up to p).
// RUN: partition-opt %t/step.mlir --part-spmd="mesh=pp:4 micro-batches=8 schedule=zero-bubble" | partition-translate --part-to-plan --part-memory-report -o /dev/null 2> %t/zb.txt
// RUN: FileCheck %s --check-prefix=ZB --input-file %t/zb.txt
// ZB-COUNT-4: in flight   {{[1-4]}} micro-batches
// ZB-NOT: in flight
//
// --trace names each instruction's step: forward (F) and backward (B) of
// each micro-batch, and the update (U).
// RUN: partition-run %t/p1.plan --backend cpu --steps 1 --weights %t/gpt.safetensors --input tokens=%t/tokens.npy --input labels=%t/labels.npy --trace %t/trace.json > /dev/null
// RUN: FileCheck %s --check-prefix=TRACE --input-file %t/trace.json
// TRACE-DAG: "origin":"F0 {{.*}}"
// TRACE-DAG: "origin":"F1 {{.*}}"
// TRACE-DAG: "origin":"B0 {{.*}}"
// TRACE-DAG: "origin":"B1 {{.*}}"
// TRACE-DAG: "origin":"U {{.*}}"
// With dp, each gradient's all-reduce runs on the communication lane in the
// last micro-batch's backward, beside the backward of the layers before it
// (as Megatron overlaps the gradient reduction), not in the update.
// RUN: partition-run %t/p8.plan --backend cpu --steps 1 --weights %t/gpt.safetensors --input tokens=%t/tokens.npy --input labels=%t/labels.npy --trace %t/trace-dp.json > /dev/null
// RUN: FileCheck %s --check-prefix=TRACE-DP --input-file %t/trace-dp.json
// TRACE-DP: "name":"AllReduce","cat":"collective"{{.*}}"origin":"B3+reduce
// TRACE-DP-NOT: "name":"AllReduce","cat":"collective"{{.*}}"origin":"U
//
// The GPT imported from ONNX (its layers found from the node names), with
// SGD: there every weight is compared too (AdamW would turn the rounding
// noise in the fused QKV bias's key part, whose gradient is zero, into steps
// of size lr: see train-recompute.mlir). SGD moves a weight by lr times its
// gradient, which agrees to ~1e-6 relative: weights 1e-6 + 1e-5 |ref|.
// RUN: %python -c "import numpy as np; t = np.random.default_rng(0).integers(0, 96, size=(4, 9)); np.save('%t/ids.npy', t[:, :-1].astype(np.int64)); np.save('%t/ids-labels.npy', t[:, 1:].astype(np.int32))"
// RUN: partition-import %S/../Import/models/gpt-opset17.onnx --dim batch=4 --dim seq=8 --loss cross-entropy -o %t/onnx.mlir --weights %t/onnx.safetensors
// RUN: partition-opt %t/onnx.mlir --part-autodiff --part-optimizer="kind=sgd lr=0.1" -o %t/onnx-step.mlir
// RUN: i=0; for m in "dp:1" "pp:2" "pp:2,dp:2 zero=1" "pp:2,tp:2 micro-batches=4 schedule=gpipe"; do \
// RUN:   i=$((i+1)); \
// RUN:   partition-opt %t/onnx-step.mlir --part-spmd="mesh=$m" | partition-translate --part-to-plan -o %t/onnx$i.plan || exit 1; \
// RUN:   mkdir -p %t/onnx$i && partition-run %t/onnx$i.plan --backend cpu --steps 3 --weights %t/onnx.safetensors --input input_ids=%t/ids.npy --input labels=%t/ids-labels.npy --output-dir %t/onnx$i > %t/onnx$i.log || exit 1; \
// RUN: done
// RUN: %python %S/Inputs/losses_agree.py 0 1e-5 %t/onnx1.log %t/onnx2.log %t/onnx3.log %t/onnx4.log
// RUN: %python %S/Inputs/compare_dirs.py 1e-6 1e-5 %t/onnx1 %t/onnx2 %t/onnx3 %t/onnx4
//
// With recomputation (part-recompute: each layer's activations recomputed
// in backward, in the stage that holds the layer) and with bf16 mixed
// precision (f32 master weights; train-mixed.mlir's tolerances: losses 2e-3
// relative, weights and state 2e-2), on pp:2 x dp:2 with ZeRO-1, against
// the same step on one rank.
// RUN: partition-opt %t/gpt.mlir --part-append-loss="kind=cross-entropy" --part-autodiff --part-recompute --part-optimizer="kind=adamw lr=1e-3" -o %t/rc.mlir
// RUN: partition-opt %t/gpt.mlir --part-append-loss="kind=cross-entropy" --part-mixed-precision --part-autodiff --part-optimizer="kind=sgd lr=0.02 momentum=0.9" -o %t/mp.mlir
// RUN: for v in rc mp; do for m in "dp:1" "pp:2,dp:2 micro-batches=2 zero=1"; do \
// RUN:   d=%t/$v-$(echo $m | cut -c1-4); \
// RUN:   partition-opt %t/$v.mlir --part-spmd="mesh=$m" | partition-translate --part-to-plan -o $d.plan || exit 1; \
// RUN:   mkdir -p $d && partition-run $d.plan --backend cpu --steps 3 --weights %t/gpt.safetensors --input tokens=%t/tokens.npy --input labels=%t/labels.npy --output-dir $d > $d.log || exit 1; \
// RUN: done; done
// RUN: %python %S/Inputs/losses_agree.py 0 1e-5 %t/rc-dp:1.log %t/rc-pp:2.log
// RUN: %python %S/Inputs/compare_dirs.py 1e-5 1e-3 %t/rc-dp:1 %t/rc-pp:2
// RUN: %python %S/Inputs/losses_agree.py 0 2e-3 %t/mp-dp:1.log %t/mp-pp:2.log
// RUN: %python %S/Inputs/compare_dirs.py 2e-2 2e-2 %t/mp-dp:1 %t/mp-pp:2
