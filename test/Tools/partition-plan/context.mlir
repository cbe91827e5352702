// partition-plan with context parallelism: cp splits each sequence
// (part-context-parallel), not the batch; the devices are tp x pp x dp x cp
// x ep and the mesh part-spmd is given puts cp between dp and tp.
//
// A generated Llama (2 layers, GQA) of sequence 64 and batch 4 on 4
// devices: the search tries cp only for sequences of 16384 tokens and more
// (kMinContextTokens: each device keeps at least 8192), so it compiles the
// 21 probes of cp 1 alone; --fix cp=2 admits plans that split the sequence
// in two, and every one uses the devices and the batch exactly.
// RUN: rm -rf %t && mkdir -p %t
// RUN: partition-import --model llama --layers 2 --hidden 64 --heads 4 --kv-heads 2 --vocab 128 --seq 64 --batch 4 -o %t/short.mlir --weights %t/short.safetensors
// RUN: partition-plan %t/short.mlir --cluster %S/../../e2e/Inputs/cpu-4.json --devices 4 --precision f32 --top 1 | FileCheck %s --check-prefix=SHORT
// SHORT: searched {{[0-9]+}} plans (21 probes)
// SHORT-NEXT: # tp pp dp vpp mbs
// RUN: partition-plan %t/short.mlir --cluster %S/../../e2e/Inputs/cpu-4.json --devices 4 --precision f32 --fix cp=2 --top 40 --json %t/cp2.json | FileCheck %s --check-prefix=FIX
// RUN: %python %S/Inputs/check_plans.py %t/cp2.json 4 4 4e9 40 --cp=2 | FileCheck %s --check-prefix=JSON
// FIX: # tp pp dp cp vpp mbs mb schedule
// FIX-NEXT: 1 {{[12]}} 1 {{[12]}} 2 1
// JSON: json ok
// The HTML report: the plan's label, a cp column, the mesh's cp groups
// (consecutive ranks: cp inside dp).
// RUN: partition-plan %t/short.mlir --cluster %S/../../e2e/Inputs/cpu-4.json --devices 4 --precision f32 --fix cp=2 --top 3 --html %t/report.html > /dev/null
// RUN: FileCheck %s --check-prefix=HTML < %t/report.html
// HTML: data-label="#1 tp1 pp1 dp2 cp2 mbs2
// HTML: <code>cp</code>: 2 groups of 2: {0 1} {2 3}
// HTML: <th>dp</th><th>cp</th><th>vpp</th>
//
// The plans the planner chooses with cp fixed (the best, one with a
// pipeline, one with sequence parallelism inside each cp device's tokens,
// cp over all four) train 3 steps equal to one device.
// RUN: for fix in cp=2 cp=2,pp=2 cp=2,tp=2,sp=1 cp=4; do \
// RUN:   partition-plan %t/short.mlir --cluster %S/../../e2e/Inputs/cpu-4.json --devices 4 --precision f32 --top 1 --fix $fix --json %t/p.json > %t/plan-$fix.txt || exit 1; \
// RUN:   %python -c "import json, sys; o = json.load(open(sys.argv[1]))['plans'][0]['spmd_options']; print(o.split('\"')[1]); print(o.split('\"', 2)[2].strip())" %t/p.json > %t/args || exit 1; \
// RUN:   partition-check %t/short.mlir --mesh "$(sed -n 1p %t/args)" --spmd-options "$(sed -n 2p %t/args)" --steps 3 --weights %t/short.safetensors > %t/check-$fix.log || exit 1; \
// RUN: done
// RUN: cat %t/check-*.log | FileCheck %s --check-prefix=TRAIN
// RUN: cat %t/plan-cp=2,tp=2,sp=1.txt | FileCheck %s --check-prefix=SP
// TRAIN-COUNT-4: PASS
// SP: 1 2 1 1 2
//
// At sequence 16384 the search tries cp 2 beside cp 1 (each tensor-parallel
// probe compiled once more, on cp:2), and plans that split the sequence
// are among those that fit.
// RUN: partition-import --model llama --layers 2 --hidden 64 --heads 4 --kv-heads 2 --vocab 128 --seq 16384 --batch 1 --shapes-only -o %t/long.mlir
// RUN: partition-plan %t/long.mlir --cluster %S/../../e2e/Inputs/cpu-4.json --devices 4 --global-batch 4 --precision f32 --top 400 --json %t/long.json | FileCheck %s --check-prefix=LONG
// RUN: %python %S/Inputs/check_plans.py %t/long.json 4 4 4e9 400 --cp | FileCheck %s --check-prefix=JSON
// LONG: searched {{[0-9]+}} plans (33 probes)
// LONG-NEXT: # tp pp dp cp vpp mbs
//
// The activations a device keeps halve with each doubling of cp (the
// probe's program holds S / cp tokens of each sequence): dp 2 and cp 1, 2
// and 4 on the 2 MB devices of small-node, which refuse each and say what
// it needs.
// RUN: for c in 1 2 4; do \
// RUN:   not partition-plan %t/long.mlir --cluster %S/Inputs/small-node.json --devices $((2 * c)) --global-batch 2 --precision f32 --fix tp=1,pp=1,dp=2,mbs=1,zero=0,recompute=none,cp=$c 2>&1; \
// RUN: done | FileCheck %s --check-prefix=ACTIVATIONS
// ACTIVATIONS: (tp=1 pp=1 dp=2 mbs=1 {{.*}} activations 0.158,
// ACTIVATIONS: (tp=1 pp=1 dp=2 cp=2 mbs=1 {{.*}} activations 0.0811,
// ACTIVATIONS: (tp=1 pp=1 dp=2 cp=4 mbs=1 {{.*}} activations 0.0425,
//
// What --fix cp= cannot have: each error names the values.
// RUN: not partition-plan %t/short.mlir --cluster %S/../../e2e/Inputs/cpu-4.json --devices 4 --precision f32 --fix cp=8 2>&1 | FileCheck %s --check-prefix=DEVICES
// RUN: not partition-plan %t/short.mlir --cluster %S/../../e2e/Inputs/cpu-4.json --devices 4 --precision f32 --fix tp=4,cp=2 2>&1 | FileCheck %s --check-prefix=DIVIDE
// RUN: not partition-plan %t/short.mlir --cluster %S/../../e2e/Inputs/cpu-4.json --devices 4 --precision f32 --fix dp=1,tp=1,pp=1,cp=2 2>&1 | FileCheck %s --check-prefix=PRODUCT
// RUN: not partition-plan %t/short.mlir --cluster %S/../../e2e/Inputs/cpu-4.json --devices 4 --precision f32 --fix dp=1,cp=1,zero=1 2>&1 | FileCheck %s --check-prefix=ZERO
// RUN: partition-import --model llama --layers 2 --hidden 64 --heads 4 --kv-heads 2 --vocab 128 --seq 60 --batch 1 --shapes-only -o %t/odd.mlir
// RUN: not partition-plan %t/odd.mlir --cluster %S/../../e2e/Inputs/cpu-4.json --devices 4 --global-batch 4 --precision f32 --fix cp=4 2>&1 | FileCheck %s --check-prefix=SEQUENCE
// RUN: partition-import --model mlp --layers 2 --hidden 32 --batch 8 --shapes-only -o %t/mlp.mlir
// RUN: not partition-plan %t/mlp.mlir --cluster %S/../../e2e/Inputs/cpu-4.json --devices 4 --precision f32 --fix cp=2 2>&1 | FileCheck %s --check-prefix=ATTENTION
// DEVICES: partition-plan: no plan fits: cp=8 does not divide the 4 devices
// DIVIDE: partition-plan: no plan fits: tp=4 x cp=2 does not divide the 4 devices
// PRODUCT: partition-plan: no plan fits: dp=1 x tp=1 x pp=1 x cp=2 is 2 devices, not the 4 given
// ZERO: partition-plan: no plan fits: zero=1 needs dp or cp above 1
// SEQUENCE: partition-plan: no plan fits: cp=4 cuts each sequence into 2 x cp = 8 chunks (the balanced causal order), which do not divide the model's sequence of 60 tokens
// ATTENTION: partition-plan: no plan fits: cp=2 needs a model with attention (part.attention): context parallelism splits the sequence its attentions run over; this one has none
//
// Llama 3 405B's long-context phase (Dubey et al. 2024, Table 4): 126
// layers, hidden 16384, 128 heads, 8 kv heads, FFN 53248, vocabulary
// 128256, sequence 131,072, 16M tokens per step (128 sequences) on 16,384
// H100s with tp 8, pp 16 and cp 16, so dp 8. The plan fits the 80 GB part:
// each device holds 8192 tokens of a sequence (1024 between blocks, with
// sequence parallelism), its K/V all-gathered over the 16 cp ranks. The
// gradients are summed over dp x cp, 128 devices, and ZeRO shards the
// optimizer state over them: a few hundred MiB a device (over dp alone,
// 4.3 GiB).
// RUN: partition-import --model llama --layers 126 --hidden 16384 --heads 128 --kv-heads 8 --ffn 53248 --vocab 128256 --seq 131072 --batch 1 --shapes-only -o %t/llama405b.mlir
// RUN: partition-plan %t/llama405b.mlir --cluster dgx-h100 --devices 16384 --global-batch 128 --fix tp=8,pp=16,cp=16 --top 1 --explain --json %t/llama.json | FileCheck %s --check-prefix=LLAMA3
// RUN: %python %S/Inputs/check_plans.py %t/llama.json 16384 128 85520809984 1 --cp=16 | FileCheck %s --check-prefix=JSON
// LLAMA3: model: 126 layers (alike: probed on 3), 405.9B parameters; global batch 128; dgx-h100, 16384 devices (8 per node)
// LLAMA3: # tp pp dp cp vpp mbs mb schedule
// LLAMA3-NEXT: 1 8 16 8 16 {{[0-9]+}} 1 16
// LLAMA3: #1's memory on its fullest stage ({{[0-9]+}}): {{.*}}, optimizer state {{[0-9]+}} MiB, {{.*}}, of 79.6 GiB
