// partition-plan ranks the plans of a small generated GPT on a cluster of
// two nodes of four 2 MB devices: the table, --explain, --fix, --json, and
// the clear order of two plans -- pure data parallelism without ZeRO, which
// holds the whole model and its Adam state on every device and does not
// fit, against tp 4 x pp 2, which does.
//
// RUN: rm -rf %t && mkdir -p %t
// RUN: partition-import --model gpt --layers 4 --hidden 64 --heads 4 --vocab 128 --seq 16 --batch 8 --shapes-only -o %t/gpt.mlir
// RUN: partition-plan %t/gpt.mlir --cluster %S/Inputs/small-node.json --devices 8 --explain --top 3 --json %t/plans.json | FileCheck %s
// RUN: %python %S/Inputs/check_plans.py %t/plans.json 8 8 2e6 3 | FileCheck %s --check-prefix=JSON
// RUN: not partition-plan %t/gpt.mlir --cluster %S/Inputs/small-node.json --devices 8 --fix dp=8,zero=0 2>&1 | FileCheck %s --check-prefix=PUREDP
//
// Gradients reduced in bf16 where the plan buckets them: the JSON names the
// passes after part-spmd the plan is costed as compiled with (ZeRO-3: flat
// gathers, reduce-scatters in buckets of the 25 MB minimum, in bf16), and
// the halved bytes make the step shorter; another type is refused.
// RUN: partition-plan %t/gpt.mlir --cluster %S/Inputs/small-node.json --devices 8 --fix tp=1,pp=1,dp=8,mbs=1,zero=3 --top 1 --json %t/z3.json > %t/z3.txt
// RUN: partition-plan %t/gpt.mlir --cluster %S/Inputs/small-node.json --devices 8 --fix tp=1,pp=1,dp=8,mbs=1,zero=3 --grad-reduce-dtype bf16 --top 1 --json %t/z3bf16.json > %t/z3bf16.txt
// RUN: FileCheck %s --check-prefix=AFTER < %t/z3bf16.json
// AFTER: "after_spmd": "part-grad-buckets{bytes=32000000 dtype=bf16},part-zero-prefetch"
// RUN: %python -c "import json,sys; s=[json.load(open(f))['plans'][0]['step_seconds'] for f in sys.argv[1:]]; sys.exit(0 if s[1] < s[0] else 1)" %t/z3.json %t/z3bf16.json
// dp-overlap=0 (Megatron's DDP without --overlap-grad-reduce): the same
// plan with its gradients' reductions after backward, a pipeline's too
// (part-grad-buckets overlap=false), so the step is longer.
// RUN: partition-plan %t/gpt.mlir --cluster %S/Inputs/small-node.json --devices 8 --fix tp=2,pp=2,dp=2,zero=0 --top 1 --json %t/ov.json > %t/ov.txt
// RUN: partition-plan %t/gpt.mlir --cluster %S/Inputs/small-node.json --devices 8 --fix tp=2,pp=2,dp=2,zero=0,dp-overlap=0 --top 1 --json %t/after.json > %t/after.txt
// RUN: FileCheck %s --check-prefix=DPOVTABLE < %t/after.txt
// DPOVTABLE: dp-overlap=0: the gradients reduced over dp after backward (part-grad-buckets overlap=false)
// RUN: FileCheck %s --check-prefix=DPOV < %t/after.json
// DPOV: "after_spmd": "part-grad-buckets{bytes=25000000 overlap=false}"
// DPOV: "dp_overlap": false
// RUN: %python -c "import json,sys; s=[json.load(open(f))['plans'][0]['step_seconds'] for f in sys.argv[1:]]; sys.exit(0 if s[1] > s[0] else 1)" %t/ov.json %t/after.json
// RUN: not partition-plan %t/gpt.mlir --cluster %S/Inputs/small-node.json --devices 8 --grad-reduce-dtype f8 2>&1 | FileCheck %s --check-prefix=REDUCE
// REDUCE: partition-plan: --grad-reduce-dtype f8 is not f32 or bf16
// RUN: partition-plan %t/gpt.mlir --cluster %S/Inputs/small-node.json --devices 8 --fix tp=4,pp=2,mbs=4,schedule=1f1b,zero=0,recompute=none,sp=0 | FileCheck %s --check-prefix=FIXED
// The batch of the model is free: a global batch of 64 on the same model.
// RUN: partition-plan %t/gpt.mlir --cluster dgx-a100 --devices 8 --global-batch 64 --top 1 | FileCheck %s --check-prefix=BATCH
//
// Inference: the forward pass only, no pipeline (part-pipeline cuts
// training steps), one micro-batch.
// RUN: partition-plan %t/gpt.mlir --cluster dgx-a100 --devices 8 --inference --top 1 | FileCheck %s --check-prefix=INFER
// --help lists the tool's own options, not the libraries'.
// RUN: partition-plan --help | FileCheck %s --check-prefix=HELP
// ZeRO-1 under a pipeline with the gradients reduce-scattered once per step
// (sync=step; the table marks the zero stage "1s"); its gradients are held
// whole, and their shard.
// RUN: partition-plan %t/gpt.mlir --cluster %S/Inputs/small-node.json --devices 8 --fix tp=2,pp=2,dp=2,mbs=2,schedule=1f1b,zero=1,recompute=none,sp=0,sync=step --explain | FileCheck %s --check-prefix=SYNC
// SYNC: 1   2   2     2   1    2     2 1f1b               1s none
// SYNC-NEXT: zero 1s: the gradients summed over the micro-batches and reduce-scattered once per step (part-spmd grad-sync=step)
// SYNC: gradients 325 KiB
// Tensor-parallel collectives in chunks (tp-overlap, part-spmd
// tp-comm-overlap): the table marks sp "1o"; without tp there is nothing to
// split.
// RUN: partition-plan %t/gpt.mlir --cluster %S/Inputs/small-node.json --devices 8 --fix tp=2,dp=4,mbs=2,zero=1,recompute=none,sp=1,tp-overlap=2 --json %t/overlap.json | FileCheck %s --check-prefix=OVERLAP
// OVERLAP: 1   2   1     4   1    2     1 none                1 none      1o
// OVERLAP-NEXT: sp 1o: each tensor-parallel collective split with its matmul into chunks that overlap (part-spmd tp-comm-overlap)
// RUN: %python -c "import json; p = json.load(open('%t/overlap.json'))['plans'][0]; assert p['tp_overlap'] == 2 and 'tp-comm-overlap=2' in p['spmd_options'], p"
// RUN: not partition-plan %t/gpt.mlir --cluster %S/Inputs/small-node.json --devices 8 --fix tp=1,tp-overlap=2 2>&1 | FileCheck %s --check-prefix=OVERLAP-TP1
// OVERLAP-TP1: tp-overlap=2 needs tp above 1 (it splits tensor-parallel collectives)
// A pp that does not divide the layers cuts them as part-pipeline does (by
// FLOPs, the embedding and the head on the first and last stage): 5 layers
// on 2 stages, as Llama 3 405B ran 126 layers on 16.
// RUN: partition-import --model gpt --layers 5 --hidden 64 --heads 4 --vocab 128 --seq 16 --batch 8 --shapes-only -o %t/gpt5.mlir
// RUN: partition-plan %t/gpt5.mlir --cluster %S/Inputs/small-node.json --devices 8 --fix tp=2,pp=2,mbs=1,schedule=1f1b,zero=0,recompute=none,sp=0 | FileCheck %s --check-prefix=UNEVEN
// UNEVEN: model: 5 layers
// UNEVEN: evaluated 1 plans
// UNEVEN: 1   2   2     2   1    1     4 1f1b                0 none       0
// Chunks are cut as part-pipeline cuts them (by FLOPs), not evenly: 5
// layers run as 2 x 2 chunks, interleaved or in a V (both compiled forms
// equal one device: test/e2e/uneven-chunks.mlir).
// RUN: partition-plan %t/gpt5.mlir --cluster %S/Inputs/small-node.json --devices 8 --fix tp=2,pp=2,mbs=1,schedule=interleaved-1f1b,vpp=2,zero=0,recompute=none,sp=0 | FileCheck %s --check-prefix=UNEVEN-VPP
// UNEVEN-VPP: 1   2   2     2   2    1     4 interleaved-1f1b    0 none
// RUN: partition-plan %t/gpt5.mlir --cluster %S/Inputs/small-node.json --devices 8 --fix tp=2,pp=2,mbs=1,schedule=v-half,zero=0,recompute=none,sp=0 | FileCheck %s --check-prefix=UNEVEN-V
// UNEVEN-V: 1   2   2     2   2    1     4 v-half
// RUN: not partition-plan %t/gpt.mlir --cluster %S/Inputs/small-node.json --devices 8 --fix sync=often 2>&1 | FileCheck %s --check-prefix=SYNC-BAD
// SYNC-BAD: partition-plan: --fix: sync=often is not step or micro-batch
// RUN: not partition-plan %t/gpt.mlir --cluster %S/Inputs/small-node.json --devices 8 --fix pp=2,zero=2,sync=step 2>&1 | FileCheck %s --check-prefix=SYNC-ZERO
// SYNC-ZERO: partition-plan: no plan fits: sync=step is ZeRO-1's gradients reduce-scattered once per step, not zero=2
//
// Bad input: each names what is wrong.
// RUN: not partition-plan %t/gpt.mlir --cluster %S/Inputs/small-node.json --devices 8 --fix tp=4,xp=2 2>&1 | FileCheck %s --check-prefix=KEY
// RUN: not partition-plan %t/gpt.mlir --cluster %S/Inputs/small-node.json --devices 8 --fix zero=5 2>&1 | FileCheck %s --check-prefix=ZERO
// RUN: not partition-plan %t/gpt.mlir --cluster %S/Inputs/small-node.json --devices 0 2>&1 | FileCheck %s --check-prefix=DEVICES
// RUN: not partition-plan %t/gpt.mlir --cluster %t/none.json --devices 8 2>&1 | FileCheck %s --check-prefix=CLUSTER
// RUN: not partition-plan %t/gpt.mlir --cluster %S/Inputs/small-node.json --devices 8 --fix tp=8 2>&1 | FileCheck %s --check-prefix=HEADS
// RUN: not partition-plan %t/none.mlir --cluster dgx-a100 --devices 8 2>&1 | FileCheck %s --check-prefix=MODEL
//
// CHECK: model: 4 layers (alike: probed on 3), 217.5K parameters; global batch 8; small, 8 devices (4 per node)
// CHECK-NEXT: searched {{[0-9]+}} plans ({{[0-9]+}} probes) in {{.*}} s; {{[0-9]+}} fit
// CHECK-NEXT: # tp pp dp vpp mbs mb schedule zero recompute sp step compute exp. comm bubble memory TFLOP/s MFU
// CHECK-NEXT: 1 {{.*}}
// CHECK-NEXT: 2 {{.*}}
// CHECK-NEXT: 3 {{.*}}
// (a footnote line on the zero forms shown may come first)
// CHECK: why #1 beats #2 ({{.*}} against {{.*}}): {{.*}} per step
// CHECK-NEXT: #1's memory on its fullest stage ({{[0-9]+}}): parameters {{.*}}, gradients {{.*}}, optimizer state {{.*}}, activations {{.*}}, workspace {{.*}}, of 2 MiB
// CHECK-NEXT: left out: {{[0-9]+}} of {{[0-9]+}}
// CHECK: plans need more than the device's 2 MiB
//
// JSON: json ok
//
// PUREDP: partition-plan: no plan fits: 3 considered; 3 pruned by memory
//
// Two probes: tp 4, and tp 1 for the model's own FLOPs.
// FIXED: evaluated 1 plans (2 probes)
// FIXED-NEXT: # tp
// FIXED-NEXT: 1 4 2 1 1 4 2 1f1b 0 none 0
//
// BATCH: global batch 64; dgx-a100, 8 devices
// BATCH: 1 {{.*}}
//
// INFER: # tp
// INFER-NEXT: 1 {{[0-9]+}} 1 {{[0-9]+}} 1 {{[0-9]+}} 1 none 0 none
//
// HELP: partition-plan options:
// HELP: --cluster=
// HELP: --devices=
// HELP: --explain
// HELP: --fix=
// HELP: --global-batch=
// HELP-NOT: --mlir-
//
// KEY: partition-plan: --fix: unknown key "xp" (known: dp tp pp cp ep vpp mbs schedule zero recompute sp sync tp-overlap dp-overlap)
// ZERO: partition-plan: --fix: zero=5 is not a ZeRO stage (0-3)
// DEVICES: partition-plan: --devices and --top must be at least 1
// CLUSTER: partition-plan: {{.*}}none.json
// HEADS: partition-plan: no plan fits: 0 considered; {{[0-9]+}} pruned by tp=8 sp: {{.*}}; {{[0-9]+}} pruned by tp=8: 'part.reshape' op splits features into 4 heads, which tp (size 8) does not divide
// MODEL: partition-plan: {{.*}}none.mlir
