// partition-plan on a mixture-of-experts model (a generated Mixtral: 4
// layers, 4 experts, top-2, batch 8): ep is searched beside dp, tp and pp
// (the ep column, the model's experts named), every plan uses the devices
// and the batch exactly (tp x pp x dp x ep devices, mbs x mb x dp x ep
// sequences) and some split the experts; the layers are alike (the
// load-balancing loss reads every router after the layers), so three are
// probed. --fix ep= holds, and says what cannot hold.
//
// RUN: rm -rf %t && mkdir -p %t
// RUN: partition-import --model mixtral --layers 4 --hidden 32 --heads 4 --kv-heads 2 --ffn 48 --experts 4 --top-k 2 --vocab 64 --seq 16 --batch 8 --capacity-factor 1 -o %t/m.mlir --weights %t/m.safetensors
// RUN: partition-plan %t/m.mlir --cluster %S/../../e2e/Inputs/cpu-4.json --devices 4 --precision f32 --top 400 --json %t/all.json | FileCheck %s --check-prefix=SEARCH
// RUN: %python %S/Inputs/check_plans.py %t/all.json 4 8 1e12 400 --ep | FileCheck %s --check-prefix=JSON
// SEARCH: model: 4 layers (alike: probed on 3), {{.*}} parameters (4 experts per layer); global batch 8
// SEARCH: # tp pp dp ep vpp mbs mb schedule
// JSON: json ok
//
// The plans the planner chooses with ep fixed (the best, one with a
// pipeline, one with ZeRO) train 3 steps equal to one device.
// RUN: for fix in ep=2 ep=4 ep=2,pp=2 ep=2,dp=2,zero=1; do \
// RUN:   partition-plan %t/m.mlir --cluster %S/../../e2e/Inputs/cpu-4.json --devices 4 --precision f32 --top 1 --fix $fix --json %t/p.json > %t/plan-$fix.txt || exit 1; \
// RUN:   %python -c "import json, sys; o = json.load(open(sys.argv[1]))['plans'][0]['spmd_options']; print(o.split('\"')[1]); print(o.split('\"', 2)[2].strip())" %t/p.json > %t/args || exit 1; \
// RUN:   partition-check %t/m.mlir --mesh "$(sed -n 1p %t/args)" --spmd-options "$(sed -n 2p %t/args)" --steps 3 --weights %t/m.safetensors > %t/check-$fix.log || exit 1; \
// RUN: done
// RUN: cat %t/check-*.log | FileCheck %s --check-prefix=TRAIN
// RUN: cat %t/plan-ep=2,pp=2.txt | FileCheck %s --check-prefix=PIPELINE
// TRAIN-COUNT-4: PASS
// PIPELINE: 1 1 2 1 2
//
// What --fix ep= cannot have.
// RUN: not partition-plan %t/m.mlir --cluster %S/../../e2e/Inputs/cpu-4.json --devices 4 --precision f32 --fix ep=8 2>&1 | FileCheck %s --check-prefix=DEVICES
// RUN: not partition-plan %t/m.mlir --cluster %S/Inputs/small-node.json --devices 8 --fix ep=8 2>&1 | FileCheck %s --check-prefix=EXPERTS
// RUN: not partition-plan %t/m.mlir --cluster %S/../../e2e/Inputs/cpu-4.json --devices 4 --precision f32 --fix dp=4,ep=2 2>&1 | FileCheck %s --check-prefix=PRODUCT
// RUN: not partition-plan %t/m.mlir --cluster %S/../../e2e/Inputs/cpu-4.json --devices 4 --precision f32 --fix dp=1,ep=1,zero=1 2>&1 | FileCheck %s --check-prefix=ZERO
// RUN: not partition-plan %t/m.mlir --cluster %S/../../e2e/Inputs/cpu-4.json --devices 4 --global-batch 2 --precision f32 --fix ep=4 2>&1 | FileCheck %s --check-prefix=BATCH
// RUN: partition-import --model gpt --layers 2 --hidden 32 --heads 4 --vocab 64 --seq 16 --batch 8 --shapes-only -o %t/gpt.mlir
// RUN: not partition-plan %t/gpt.mlir --cluster %S/../../e2e/Inputs/cpu-4.json --devices 4 --precision f32 --fix ep=2 2>&1 | FileCheck %s --check-prefix=DENSE
// DEVICES: partition-plan: no plan fits: ep=8 does not divide the 4 devices
// EXPERTS: partition-plan: no plan fits: ep=8 does not divide the model's 4 experts
// PRODUCT: partition-plan: no plan fits: dp=4 x ep=2 does not divide the 4 devices
// ZERO: partition-plan: no plan fits: zero=1 needs dp or ep above 1
// BATCH: partition-plan: no plan fits: ep=4 does not divide the global batch 2
// DENSE: partition-plan: no plan fits: ep=2 needs a mixture-of-experts model (part.expert_dispatch); this one has no experts
