// Pipeline stages of a training step (part-pipeline, through part-spmd's pp
// axis): a 2-layer GPT on pp:2 with 2 micro-batches.
// RUN: rm -rf %t && mkdir -p %t
// RUN: partition-import --model gpt --layers 2 --hidden 32 --heads 4 --vocab 64 --seq 8 --batch 4 --shapes-only --loss cross-entropy -o %t/gpt.mlir
// RUN: partition-opt %t/gpt.mlir --part-autodiff --part-optimizer="kind=sgd lr=0.1" -o %t/step.mlir
// RUN: partition-opt %t/step.mlir --part-spmd="mesh=pp:2 micro-batches=2 schedule=1f1b unroll=true" | FileCheck %s
// RUN: partition-opt %t/step.mlir --part-spmd="mesh=pp:2 micro-batches=4 schedule=gpipe unroll=true" | FileCheck %s --check-prefix=GPIPE
//
// Each stage on its own mesh (the micro-batch axis is gone), with its steps.
// CHECK-DAG: part.mesh @mesh_pp0 = <[]>
// CHECK-DAG: part.mesh @mesh_pp1 = <[]>
// CHECK-NOT: part.mesh @mesh =
// Stage 0 holds the embedding and receives the batch whole (4 rows), slicing
// each micro-batch (2 rows) from it.
// CHECK-LABEL: func.func @gpt_stage0(%arg0: tensor<4x8xi32> {part.name = "tokens"
// CHECK-SAME: part.schedule = "F0 F1 B0 B1"
// CHECK-SAME: part.spmd = @mesh_pp0
// CHECK-SAME: part.stage = 0
// CHECK: part.slice %arg0 offsets [0, 0] {part.step = "F0"} : tensor<4x8xi32> -> tensor<2x8xi32>
// CHECK: part.gather
// CHECK: part.send %{{.*}} to @mesh_pp1 channel 0 {part.step = "F0"} : tensor<2x8x32xf32>
// CHECK: part.slice %arg0 offsets [2, 0] {part.step = "F1"} : tensor<4x8xi32> -> tensor<2x8xi32>
// CHECK: part.send %{{.*}} to @mesh_pp1 channel 1 {part.step = "F1"} : tensor<2x8x32xf32>
// Backward of micro-batch 0: a layer's backward runs on the layer's stage
// (part-autodiff labels it with the layer), so one value crosses back --
// the gradient of the activation the stage sent, as in Megatron -- and the
// labels' masks are computed on the last stage, not sent.
// CHECK: part.recv from @mesh_pp1 channel 2 {part.step = "B0"} : tensor<2x8x32xf32>
// CHECK-NOT: part.recv from {{.*}}"B0"
// CHECK: return
// Stage 1 has the last layer, the head and the loss: the step's loss is the
// mean of the micro-batches' mean losses (each scaled by 1/2, then summed),
// which is the loss of the whole batch.
// CHECK-LABEL: func.func @gpt_stage1(
// CHECK-SAME: part.schedule = "F0 B0 F1 B1"
// CHECK: part.recv from @mesh_pp0 channel 0 {part.step = "F0"} : tensor<2x8x32xf32>
// CHECK: %[[L0:.*]] = part.softmax_cross_entropy
// CHECK-NEXT: %[[HALF:.*]] = part.constant {part.step = "F0"} dense<5.000000e-01> : tensor<f32>
// CHECK-NEXT: %[[S0:.*]] = part.mul %[[L0]], %[[HALF]]
// CHECK: part.send %{{.*}} to @mesh_pp0 channel 2 {part.step = "B0"} : tensor<2x8x32xf32>
// CHECK: part.recv from @mesh_pp0 channel 1 {part.step = "F1"} : tensor<2x8x32xf32>
// CHECK: %[[L1:.*]] = part.softmax_cross_entropy
// CHECK-NEXT: %[[S1:.*]] = part.mul %[[L1]], %[[HALF]]
// CHECK-NEXT: %[[LOSS:.*]] = part.add %[[S0]], %[[S1]] {part.step = "F1"} : (tensor<f32>, tensor<f32>) -> tensor<f32>
// CHECK: return %[[LOSS]],
//
// Per micro-batch, one activation forward and one gradient back; and the
// tied table's gradient once per step each way: 2 x 2 + 2 sends.
// RUN: partition-opt %t/step.mlir --part-spmd="mesh=pp:2 micro-batches=2 schedule=1f1b unroll=true" | grep -c "part.send" | FileCheck %s --check-prefix=SENDS
// SENDS: {{^}}6{{$}}
// Likewise with sequence parallelism: the collectives the partitioner makes
// for a layer's op carry the layer, so the all-gather of a gradient runs on
// the stage that reads it and only the sequence-split gradient crosses.
// RUN: partition-opt %t/step.mlir --part-spmd="mesh=pp:2,tp:2 micro-batches=2 sequence-parallel=true unroll=true" | grep -c "part.send" | FileCheck %s --check-prefix=SENDS
//
// With tensor parallelism the activation between stages is the same on
// every device of a tp group: each sends its half and the receivers
// all-gather it (Megatron's scatter/gather), forward and backward.
// RUN: partition-opt %t/step.mlir --part-spmd="mesh=pp:2,tp:2 micro-batches=2 schedule=1f1b unroll=true" | FileCheck %s --check-prefix=SCATTER
// SCATTER-LABEL: func.func @gpt_stage0(
// SCATTER: %[[HALF0:.*]] = part.all_slice %{{.*}} on @mesh_pp0 axes ["tp"] dim 0 {part.origin = "pipeline transfer{{.*}}", part.step = "F0"} : tensor<2x8x32xf32> -> tensor<1x8x32xf32>
// SCATTER-NEXT: part.send %[[HALF0]] to @mesh_pp1 channel 0 {part.step = "F0"} : tensor<1x8x32xf32>
// SCATTER: %[[GRAD:.*]] = part.recv from @mesh_pp1 channel 2 {part.step = "B0"} : tensor<1x8x32xf32>
// SCATTER-NEXT: part.all_gather %[[GRAD]] on @mesh_pp0 axes ["tp"] dim 0 {{.*}} : tensor<1x8x32xf32> -> tensor<2x8x32xf32>
// SCATTER-LABEL: func.func @gpt_stage1(
// SCATTER: %[[IN:.*]] = part.recv from @mesh_pp0 channel 0 {part.step = "F0"} : tensor<1x8x32xf32>
// SCATTER-NEXT: part.all_gather %[[IN]] on @mesh_pp1 axes ["tp"] dim 0 {{.*}} : tensor<1x8x32xf32> -> tensor<2x8x32xf32>
// SCATTER: part.all_slice {{.*}} {part.origin = "pipeline transfer{{.*}}", part.step = "B0"} : tensor<2x8x32xf32> -> tensor<1x8x32xf32>
// SCATTER-NEXT: part.send {{.*}} to @mesh_pp0 channel 2 {part.step = "B0"} : tensor<1x8x32xf32>
//
// GPipe: every forward first.
// GPIPE: part.schedule = "F0 F1 F2 F3 B0 B1 B2 B3"
// GPIPE: part.schedule = "F0 F1 F2 F3 B0 B1 B2 B3"
// GPIPE: part.softmax_cross_entropy
// GPIPE-NEXT: part.constant {part.step = "F0"} dense<2.500000e-01> : tensor<f32>
//
// The tied embedding and head: each stage accumulates its own term of the
// table's gradient, and each stage's sum crosses to the other once per step
// (after the stage's schedule, behind every micro-batch transfer to that
// stage: a direction's transfers are matched in order), never per
// micro-batch: one send of the table's size per stage.
// RUN: partition-opt %t/step.mlir --part-spmd="mesh=pp:2 micro-batches=4 unroll=true" | FileCheck %s --check-prefix=TIED
// TIED-LABEL: func.func @gpt_stage0(
// TIED: part.send %{{.*}} to @mesh_pp1 channel {{[0-9]+}} {part.step = "U"} : tensor<64x32xf32>
// TIED: part.recv from @mesh_pp1 channel {{[0-9]+}} {part.step = "U"} : tensor<64x32xf32>
// TIED-LABEL: func.func @gpt_stage1(
// TIED: part.send %{{.*}} to @mesh_pp0 channel {{[0-9]+}} {part.step = "U"} : tensor<64x32xf32>
// TIED: part.recv from @mesh_pp0 channel {{[0-9]+}} {part.step = "U"} : tensor<64x32xf32>
// RUN: partition-opt %t/step.mlir --part-spmd="mesh=pp:2 micro-batches=4 unroll=true" | grep -c "part.send .*: tensor<64x32xf32>" | FileCheck %s --check-prefix=ONCE
// ONCE: {{^}}2{{$}}
//
// Zero-bubble (ZB-H1): backward split into the input gradient (Bi), which
// the previous stage waits for, and the weight gradients (W), which fill
// the bubble; the weight-gradient matmuls are in W.
// RUN: partition-opt %t/step.mlir --part-spmd="mesh=pp:2 micro-batches=4 schedule=zero-bubble unroll=true" | FileCheck %s --check-prefix=ZB
// ZB: part.schedule = "F0 F1 Bi0 W0 Bi1 F2 W1 F3 Bi2 W2 Bi3 W3"
// ZB: part.matmul {{.*}}part.step = "W0"}
// ZB: part.schedule = "F0 Bi0 F1 Bi1 W0 W1 F2 Bi2 F3 Bi3 W2 W3"
//
// --part-explain: each stage's transfers beside its collectives, and the
// schedule as a timeline under unit costs with each stage's idle share --
// 1F1B's (p - 1) / (m + p - 1) = 1/3 here -- and micro-batches in flight.
// RUN: partition-opt %t/step.mlir --part-spmd="mesh=pp:2 micro-batches=2" --part-explain -o /dev/null 2>/dev/null | FileCheck %s --check-prefix=EXPLAIN
// Stage 0 sends two micro-batches' activations (2x8x32 f32, 2,048 bytes
// each) and its term of the tied table's gradient (64x32 f32, 8,192).
// EXPLAIN: func @gpt_stage0 on @mesh_pp0: 0 collectives, 3 transfers to other stages, 12288 bytes per device
// EXPLAIN: send  to mesh_pp1
// EXPLAIN: func @gpt_stage1 on @mesh_pp1:
// EXPLAIN: send  to mesh_pp0
// EXPLAIN: pipeline: 2 stages, 2 micro-batches; timeline under unit costs (F 1, B 2, Bi and W 1; . idle):
// EXPLAIN-NEXT: stage 0 |F0  F1  .   .   B0  B0  .   B1  B1  | idle 0.33, at most 2 micro-batches in flight
// EXPLAIN-NEXT: stage 1 |.   F0  B0  B0  F1  B1  B1  .   .   | idle 0.33, at most 1 micro-batch in flight
//
// Stages balanced by FLOPs with the embedding and the head counted: GPT-2
// (12 layers, hidden 768, vocabulary 50304) on 4 stages. The head's matmul
// alone is about 3.7 layers' FLOPs, so the last stage takes one layer.
// RUN: partition-import --model gpt --layers 12 --hidden 768 --heads 12 --vocab 50304 --seq 1024 --batch 8 --shapes-only --loss cross-entropy -o %t/gpt2.mlir
// RUN: partition-opt %t/gpt2.mlir --part-autodiff --part-optimizer | partition-opt --part-spmd="mesh=pp:4 micro-batches=4 unroll=true" | FileCheck %s --check-prefix=BALANCE
// (Forward ops of a layer run in F steps; an invariant op of a layer, such
// as a weight's reshape, goes wherever it is read.)
// BALANCE-LABEL: func.func @gpt_stage0(
// BALANCE: part.layer = 3 : i64, part.step = "F0"
// BALANCE-NOT: part.layer = 4 : i64, part.step = "F
// BALANCE-LABEL: func.func @gpt_stage1(
// BALANCE-LABEL: func.func @gpt_stage3(
// BALANCE-NOT: part.layer = 10 : i64, part.step = "F
// BALANCE: part.layer = 11 : i64, part.step = "F0"
// BALANCE-NOT: part.layer = 10 : i64, part.step = "F
//
// Balanced by memory instead (balance=memory): each stage's parameters,
// gradients and optimizer state plus its layers' saved activations times
// the micro-batches the schedule keeps in flight there -- 1F1B on 4 stages
// keeps 4, 3, 2 and 1 -- so the first stage takes fewer layers than the
// last, and the largest stage's total in the memory report drops (here
// 171 MB -> 133 MB): GPT, 12 layers of hidden 256, 8 micro-batches.
// RUN: partition-import --model gpt --layers 12 --hidden 256 --heads 8 --vocab 4096 --seq 256 --batch 16 --shapes-only --loss cross-entropy -o %t/m12.mlir
// RUN: partition-opt %t/m12.mlir --part-autodiff --part-optimizer="kind=adamw" -o %t/m12s.mlir
// RUN: partition-opt %t/m12s.mlir --part-spmd="mesh=pp:4 micro-batches=8" | partition-translate --part-to-plan --part-memory-report -o /dev/null 2> %t/by-flops.txt
// RUN: partition-opt %t/m12s.mlir --part-spmd="mesh=pp:4 micro-batches=8 balance=memory unroll=true" -o %t/by-memory.mlir
// RUN: partition-translate --part-to-plan --part-memory-report %t/by-memory.mlir -o /dev/null 2> %t/by-memory.txt
// RUN: FileCheck %s --check-prefix=MEMORY < %t/by-memory.mlir
// MEMORY-LABEL: func.func @gpt_stage0(
// MEMORY: part.layer = 1 : i64, part.step = "F0"
// MEMORY-NOT: part.layer = 2 : i64, part.step = "F0"
// MEMORY-LABEL: func.func @gpt_stage1(
// MEMORY-LABEL: func.func @gpt_stage3(
// MEMORY-NOT: part.layer = 7 : i64, part.step = "F0"
// MEMORY: part.layer = 8 : i64, part.step = "F0"
// RUN: %python -c "import re, sys; peak = lambda p: max(int(x) for x in re.findall(r'^  total +([0-9]+)', open(p).read(), re.M)); a, b = peak('%t/by-flops.txt'), peak('%t/by-memory.txt'); print(a, b); sys.exit(0 if b < a else 1)"
// RUN: not partition-opt %t/step.mlir --part-spmd="mesh=pp:2 balance=time" -o /dev/null 2>&1 | FileCheck %s --check-prefix=BALANCE-ERROR
// BALANCE-ERROR: error: part-pipeline: balance=time is neither flops nor memory
// RUN: not partition-opt %t/step.mlir --part-spmd="mesh=pp:2 balance=memory stage-layers=0,1" -o /dev/null 2>&1 | FileCheck %s --check-prefix=BALANCE-BOTH
// BALANCE-BOTH: error: part-pipeline: stage-layers cuts the layers by hand and balance=memory chooses the cut; give one of them
//
// Layers the stages do not divide: 5 on 2 stages run 3 and 2 (the head and
// the loss weigh on the last); on 4 stages, 1, 2, 1 and 1. The stage
// functions' parameters say where each layer runs.
// RUN: partition-import --model gpt --layers 5 --hidden 32 --heads 4 --vocab 64 --seq 8 --batch 4 --shapes-only --loss cross-entropy -o %t/gpt5.mlir
// RUN: partition-opt %t/gpt5.mlir --part-autodiff --part-optimizer="kind=sgd lr=0.1" -o %t/step5.mlir
// RUN: partition-opt %t/step5.mlir --part-spmd="mesh=pp:2 micro-batches=4" | grep -E 'func.func @gpt_stage[0-9]\(' | grep -o -E 'func.func @gpt_stage[0-9]|"h\.[0-9]+\.ln_1\.weight"' | FileCheck %s --check-prefix=UNEVEN2
// UNEVEN2:      func.func @gpt_stage0
// UNEVEN2-NEXT: "h.0.ln_1.weight"
// UNEVEN2-NEXT: "h.1.ln_1.weight"
// UNEVEN2-NEXT: "h.2.ln_1.weight"
// UNEVEN2-NEXT: func.func @gpt_stage1
// UNEVEN2-NEXT: "h.3.ln_1.weight"
// UNEVEN2-NEXT: "h.4.ln_1.weight"
// UNEVEN2-NOT:  ln_1
// RUN: partition-opt %t/step5.mlir --part-spmd="mesh=pp:4 micro-batches=4" | grep -E 'func.func @gpt_stage[0-9]\(' | grep -o -E 'func.func @gpt_stage[0-9]|"h\.[0-9]+\.ln_1\.weight"' | FileCheck %s --check-prefix=UNEVEN4
// UNEVEN4:      func.func @gpt_stage0
// UNEVEN4-NEXT: "h.0.ln_1.weight"
// UNEVEN4-NEXT: func.func @gpt_stage1
// UNEVEN4-NEXT: "h.1.ln_1.weight"
// UNEVEN4-NEXT: "h.2.ln_1.weight"
// UNEVEN4-NEXT: func.func @gpt_stage2
// UNEVEN4-NEXT: "h.3.ln_1.weight"
// UNEVEN4-NEXT: func.func @gpt_stage3
// UNEVEN4-NEXT: "h.4.ln_1.weight"
// UNEVEN4-NOT:  ln_1
//
// More groups than layers: the embedding and the head take a group each, as
// Megatron-Core's account_for_embedding/loss_in_pipeline_split and Llama 3
// 405B's 126 layers in 128 chunks. 2 stages of 2 chunks for this 2-layer
// GPT: the embedding alone in chunk 0 of stage 0, layer 0 in chunk 0 of
// stage 1, layer 1 in chunk 1 of stage 0, the head and the loss in chunk 1
// of stage 1. One activation crosses each cut per micro-batch, either way:
// the final norm's backward runs with its forward (it reads the input the
// group before made), the embedding's gradient scatters by the token ids on
// the embedding's stage.
// RUN: partition-opt %t/step.mlir --part-spmd="mesh=pp:2 micro-batches=2 schedule=interleaved-1f1b unroll=true" -o %t/ends.mlir
// RUN: FileCheck %s --check-prefix=ENDS < %t/ends.mlir
// RUN: grep -c "part.recv from .*\"[FB]0\.[01]\"" %t/ends.mlir | FileCheck %s --check-prefix=ENDS-RECV
// ENDS-LABEL: func.func @gpt_stage0(
// ENDS: part.gather {{.*}}part.step = "F0.0"
// ENDS-NOT: part.layer = {{.*}}"F0.0"
// ENDS: part.send {{.*}}part.step = "F0.0"
// ENDS: part.layer = 1 : i64, part.step = "F0.1"
// ENDS: part.scatter_add {{.*}}part.step = "B0.0"
// ENDS-LABEL: func.func @gpt_stage1(
// ENDS: part.layer = 0 : i64, part.step = "F0.0"
// ENDS: part.layer_norm {{.*}}part.step = "F0.1"
// ENDS: part.softmax_cross_entropy {{.*}}part.step = "F0.1"
// ENDS-NOT: part.layer = {{.*}}"F0.1"
// ENDS: part.send {{.*}}part.step = "B0.1"
// ENDS-NOT: part.send {{.*}}"B0.1"
// ENDS: part.recv {{.*}}part.step = "F1.1"
// Micro-batch 0 crosses the three cuts once forward and once backward: 6
// receives (8 when the norm's backward ran a group early: three tensors).
// ENDS-RECV: {{^}}6{{$}}
// By hand: "none" is an end's group.
// RUN: partition-opt %t/step.mlir --part-spmd="mesh=pp:3 micro-batches=4 stage-layers=none,0,1 unroll=true" | FileCheck %s --check-prefix=NONE
// NONE-LABEL: func.func @gpt_stage0(
// NONE-NOT: part.layer =
// NONE-LABEL: func.func @gpt_stage1(
//
// Errors.
// RUN: not partition-opt %t/step.mlir --part-spmd="mesh=pp:5 micro-batches=4" -o /dev/null 2>&1 | FileCheck %s --check-prefix=LAYERS
// LAYERS: error: part-pipeline: 5 stages need at least 3 layers (ops marked part.layer in the forward program; the ops before the first layer and after the last fill a group each), and the step has 2
// RUN: not partition-opt %t/step.mlir --part-spmd="mesh=pp:2 micro-batches=2 schedule=interleaved-1f1b virtual-stages=3" -o /dev/null 2>&1 | FileCheck %s --check-prefix=CHUNKS
// CHUNKS: error: part-pipeline: 2 stages of 3 chunks need at least 4 layers (ops marked part.layer in the forward program; the ops before the first layer and after the last fill a group each), and the step has 2
// RUN: not partition-opt %t/step.mlir --part-spmd="mesh=pp:3 micro-batches=4 stage-layers=0,none,1" -o /dev/null 2>&1 | FileCheck %s --check-prefix=MIDDLE
// MIDDLE: error: part-pipeline: stage-layers gives group 1 no layers; only the first (the ops before the first layer) or the last (those after the last) may have none
// RUN: partition-import --model gpt --layers 4 --hidden 32 --heads 4 --vocab 64 --seq 8 --batch 4 --shapes-only --loss cross-entropy -o %t/gpt4.mlir
// RUN: partition-opt %t/gpt4.mlir --part-autodiff --part-optimizer="kind=sgd lr=0.1" -o %t/step4.mlir
// RUN: partition-opt %t/step4.mlir --part-spmd="mesh=pp:2 micro-batches=2 schedule=interleaved-1f1b unroll=true" | FileCheck %s --check-prefix=INTERLEAVED
// Chunk c of stage s holds layer group c * 2 + s: stage 0 layers 0 and 2.
// INTERLEAVED-LABEL: func.func @gpt_stage0(
// INTERLEAVED-SAME: part.schedule = "F0.0 F1.0 F0.1 F1.1 B0.1 B1.1 B0.0 B1.0"
// INTERLEAVED: part.layer = 0 : i64, part.step = "F0.0"
// INTERLEAVED: part.layer = 2 : i64, part.step = "F0.1"
// INTERLEAVED-LABEL: func.func @gpt_stage1(
// INTERLEAVED-SAME: part.schedule = "F0.0 F1.0 F0.1 B0.1 F1.1 B1.1 B0.0 B1.0"
// INTERLEAVED: part.layer = 1 : i64, part.step = "F0.0"
// INTERLEAVED: part.layer = 3 : i64, part.step = "F0.1"
// RUN: partition-import --model gpt --layers 4 --hidden 32 --heads 4 --vocab 64 --seq 8 --batch 6 --shapes-only --loss cross-entropy -o %t/gpt4b6.mlir
// RUN: partition-opt %t/gpt4b6.mlir --part-autodiff --part-optimizer="kind=sgd lr=0.1" | not partition-opt --part-spmd="mesh=pp:2 micro-batches=3 schedule=interleaved-1f1b" -o /dev/null 2>&1 | FileCheck %s --check-prefix=MULTIPLE
// MULTIPLE: error: part-pipeline: the interleaved schedule needs a number of micro-batches that is a multiple of the 2 stages, got 3
// RUN: not partition-opt %t/step4.mlir --part-spmd="mesh=pp:2 virtual-stages=2" -o /dev/null 2>&1 | FileCheck %s --check-prefix=VIRTUAL
// VIRTUAL: error: part-pipeline: virtual-stages=2 needs schedule=interleaved-1f1b
// RUN: not partition-opt %t/step.mlir --part-spmd="mesh=pp:2 schedule=round-robin" -o /dev/null 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// UNKNOWN: error: part-pipeline: unknown schedule "round-robin"; known: gpipe, 1f1b, interleaved-1f1b, zero-bubble
// RUN: not partition-opt %t/step.mlir --part-spmd="mesh=pp:2 stage-layers=0-1,x" -o /dev/null 2>&1 | FileCheck %s --check-prefix=RANGE
// RANGE: error: part-pipeline: stage-layers "0-1,x": "x" is not a layer range such as 0-11
// RUN: not partition-opt %t/step.mlir --part-spmd="mesh=pp:2 stage-layers=0-1,1" -o /dev/null 2>&1 | FileCheck %s --check-prefix=TWICE
// TWICE: error: part-pipeline: stage-layers puts layer 1 in stages 0 and 1
// RUN: not partition-opt %t/step.mlir --part-spmd="mesh=pp:3 micro-batches=4 stage-layers=0,5,1" -o /dev/null 2>&1 | FileCheck %s --check-prefix=EMPTY
// EMPTY: error: part-pipeline: stage 1 has no forward work
// RUN: not partition-opt %t/step.mlir --part-spmd="mesh=pp:2 micro-batches=3" -o /dev/null 2>&1 | FileCheck %s --check-prefix=DIVIDE
// DIVIDE: error: argument 0 has a batch of 4, which the micro-batches (3) do not divide
// An inference function is not a training step.
// RUN: not partition-opt %t/gpt.mlir --part-spmd="mesh=pp:2" -o /dev/null 2>&1 | FileCheck %s --check-prefix=INFERENCE
// INFERENCE: error: part-pipeline: @gpt is not a training step (no result updates a parameter): pipeline stages cut training steps (run part-autodiff and part-optimizer first); for inference, partition without pp

// The default form: each stage as fragments over one micro-batch (P once,
// then one function per kind of step) and the stage function, which runs
// the update once after its table. A transfer's channel is the value's; the
// micro-batch is the step's. Slots name what crosses between steps.
// RUN: partition-opt %t/step.mlir --part-spmd="mesh=pp:2 micro-batches=2 schedule=1f1b" -o %t/fragments.mlir
// RUN: FileCheck %s --check-prefix=FRAG < %t/fragments.mlir
// FRAG: func.func private @gpt_stage0_P() -> (tensor<32xf32> {part.slot = "acc:0"}
// FRAG-SAME: attributes {part.fragment = "P", part.stage = 0 : i64}
// FRAG: part.broadcast
// FRAG: func.func private @gpt_stage0_F({{.*}}tensor<2x8xi32> {part.slot = "arg:0"}
// FRAG-SAME: -> (tensor<2x8x128xf32> {part.slot = "stash:0"}
// FRAG-SAME: attributes {part.fragment = "F", part.stage = 0 : i64}
// FRAG: part.send %{{.*}} to @mesh_pp1 channel 0 : tensor<2x8x32xf32>
// FRAG: func.func private @gpt_stage0_B(%arg0: tensor<32xf32> {part.slot = "acc:0"}
// FRAG-SAME: {part.slot = "stash:0"}
// FRAG: part.recv from @mesh_pp1 channel 1 : tensor<2x8x32xf32>
// FRAG: part.add %arg0,
// FRAG-NOT: @gpt_stage0_B_final
// FRAG: func.func @gpt_stage0(%arg0: tensor<4x8xi32> {part.micro_batches = 2 : i64, part.name = "tokens"
// FRAG-SAME: part.fragments = [@gpt_stage0_P, @gpt_stage0_F, @gpt_stage0_B], part.schedule = "F0 F1 B0 B1", part.schedule_kind = "1f1b", part.spmd = @mesh_pp0, part.stage = 0 : i64
// FRAG: func.func private @gpt_stage1_F(
// FRAG: part.recv from @mesh_pp0 channel 0 : tensor<2x8x32xf32>
// FRAG: part.softmax_cross_entropy
// FRAG: func.func @gpt_stage1(
// FRAG-SAME: part.fragments = [@gpt_stage1_P, @gpt_stage1_F, @gpt_stage1_B]
// FRAG-SAME: part.schedule = "F0 B0 F1 B1"
// FRAG-NOT: part.softmax_cross_entropy
// FRAG: return

// A kind of step that adds to sums has a final fragment for its last step in
// the table, which completes them there: the dp all_reduce of each gradient
// (of the loss, in the last stage's forward) overlaps the rest of that
// backward, and the update reads the sums complete. Without dp (above) a
// sum is complete as added: no final fragments.
// RUN: partition-opt %t/step.mlir --part-spmd="mesh=pp:2,dp:2 micro-batches=2 schedule=1f1b" -o %t/final.mlir
// RUN: FileCheck %s --check-prefix=FINAL < %t/final.mlir
// FINAL: func.func private @gpt_stage0_B(
// FINAL-NOT: part.all_reduce
// FINAL: func.func private @gpt_stage0_B_final(
// FINAL-SAME: attributes {part.final, part.fragment = "B", part.stage = 0 : i64}
// FINAL: %[[SUM:.*]] = part.add %arg0,
// FINAL-NEXT: part.all_reduce %[[SUM]] on @mesh_pp0 axes ["dp"] sum
// FINAL: func.func @gpt_stage0(
// FINAL-NOT: part.all_reduce
// FINAL: func.func private @gpt_stage1_F_final(
// FINAL-SAME: part.final, part.fragment = "F"
// FINAL: part.softmax_cross_entropy
// FINAL: part.all_reduce {{.*}} axes ["dp"]
// FINAL: func.func private @gpt_stage1_B_final(
// FINAL: func.func @gpt_stage1(
// FINAL-SAME: part.fragments = [@gpt_stage1_P, @gpt_stage1_F, @gpt_stage1_B, @gpt_stage1_F_final, @gpt_stage1_B_final]
// FINAL-NOT: part.all_reduce
// FINAL: return
// RUN: partition-translate --part-to-plan %t/final.mlir -o %t/final.plan
// grad-sync=step (ZeRO-1/2): each micro-batch's whole gradient is summed and
// the sum reduce-scattered once, in the final backward; the update reads the
// shard ("done:K"). The default reduce-scatters every micro-batch's.
// RUN: partition-opt %t/step.mlir --part-spmd="mesh=pp:2,dp:2 micro-batches=2 zero=1 grad-sync=step" -o %t/sync.mlir
// RUN: FileCheck %s --check-prefix=SYNC < %t/sync.mlir
// SYNC: func.func private @gpt_stage0_P() -> (tensor<32xf32> {part.slot = "acc:0"}
// SYNC: func.func private @gpt_stage0_B(
// SYNC-NOT: part.reduce_scatter
// SYNC: func.func private @gpt_stage0_B_final(
// SYNC: %[[SUM:.*]] = part.add %arg0, {{.*}} -> tensor<32xf32>
// SYNC-NEXT: part.reduce_scatter %[[SUM]] on @mesh_pp0 axes ["dp"] dim 0 sum {{.*}} : tensor<32xf32> -> tensor<16xf32>
// SYNC: func.func @gpt_stage0(
// SYNC-SAME: tensor<16xf32> {part.slot = "done:0"}
// Per step, half the reduce-scatters and their bytes of two micro-batches'.
// RUN: partition-opt %t/step.mlir --part-spmd="mesh=pp:2,dp:2 micro-batches=2 zero=1" --part-explain -o /dev/null 2>/dev/null | FileCheck %s --check-prefix=SYNC-EACH
// SYNC-EACH: func @gpt_stage0
// SYNC-EACH: reduce_scatter  "dp"         36     60032
// RUN: partition-opt %t/sync.mlir --part-explain -o /dev/null 2>/dev/null | FileCheck %s --check-prefix=SYNC-ONCE
// SYNC-ONCE: func @gpt_stage0
// SYNC-ONCE: reduce_scatter  "dp"         18     30016
// RUN: not partition-opt %t/step.mlir --part-spmd="mesh=pp:2,dp:2 zero=1 grad-sync=often" -o /dev/null 2>&1 | FileCheck %s --check-prefix=SYNC-BAD
// SYNC-BAD: error: part-pipeline: grad-sync=often is neither micro-batch nor step
// RUN: not partition-opt %t/step.mlir --part-spmd="mesh=dp:2 zero=1 grad-sync=step" -o /dev/null 2>&1 | FileCheck %s --check-prefix=SYNC-NOPP
// RUN: not partition-opt %t/step.mlir --part-spmd="mesh=pp:2,dp:2 grad-sync=step" -o /dev/null 2>&1 | FileCheck %s --check-prefix=SYNC-NOPP
// SYNC-NOPP: error: part-spmd: grad-sync=step reduce-scatters ZeRO's gradients once per step of a pipeline; it needs a pp axis and zero=1, 2 or 3
//
// Its size does not depend on the micro-batches: 2 and 4 give the same
// ops (the unrolled form has a copy per micro-batch at 4).
// RUN: partition-opt %t/step.mlir --part-spmd="mesh=pp:2 micro-batches=4" -o %t/fragments8.mlir
// RUN: partition-opt %t/step.mlir --part-spmd="mesh=pp:2 micro-batches=4 unroll=true" -o %t/unrolled8.mlir
// RUN: %python -c "import sys; n = lambda p: sum(' = part.' in l or 'part.send' in l for l in open(p)); a, b, c = n('%t/fragments.mlir'), n('%t/fragments8.mlir'), n('%t/unrolled8.mlir'); print(a, b, c); sys.exit(0 if a == b and c > 1.5 * b else 1)"
//
// The V schedules: two chunks per stage in a V, so stage 1 runs chunk 0's
// last layers and then, at once, chunk 1's first (virtual stages 1 and 2).
// RUN: partition-opt %t/step4.mlir --part-spmd="mesh=pp:2 micro-batches=4 schedule=zb-v" --part-explain -o /dev/null 2>/dev/null | FileCheck %s --check-prefix=ZBV
// ZBV: pipeline: 2 stages, 4 micro-batches
// ZBV: stage 0 |F0.0  F1.0  F2.0  F0.1  Bi0.1 W0.1
// ZBV: stage 1 |.     F0.0  F0.1  F1.0  F1.1  Bi0.1 W0.1
// RUN: not partition-opt %t/step4.mlir --part-spmd="mesh=pp:2 micro-batches=2 schedule=zb-v" -o /dev/null 2>&1 | FileCheck %s --check-prefix=ZBV-FEW
// ZBV-FEW: error: part-pipeline: the zb-v schedule needs at least 2 * stages - 1 = 3 micro-batches for 2 stages (its first stage's warm-up runs that many forwards), got 2
