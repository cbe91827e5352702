// The planner's composed step against part-estimate on the program it
// compiles, where the probe is the whole model (three layers, so the
// composition adds nothing but its rules): tensor parallelism with
// sequence parallelism and chunked collectives (tp-comm-overlap), whose
// forward keeps values for backward (the all-gathered input of each
// chunk) among its own ops. Backward's untagged ops (the head's) must be
// the head's, not the last layer's: counted as the last layer's, the
// composed step came out 30% short.
//
// RUN: rm -rf %t && mkdir -p %t
// RUN: partition-import --model gpt --layers 3 --hidden 256 --heads 4 --vocab 8192 --seq 512 --batch 2 --shapes-only -o %t/gpt.mlir
// RUN: partition-plan %t/gpt.mlir --cluster dgx-a100 --devices 2 --fix tp=2,pp=1,dp=1,mbs=2,zero=0,recompute=none,sp=1,tp-overlap=4 --json %t/plan.json > /dev/null
// RUN: %python -c "import json; p = json.load(open('%t/plan.json'))['plans'][0]; print('passes', p['spmd_options'], '|', p['after_spmd'])" | FileCheck %s --check-prefix=PASSES
// PASSES: passes mesh="tp:2" sequence-parallel=true tp-comm-overlap=4 |
// PASSES-NOT: part-
// RUN: partition-opt %t/gpt.mlir --part-append-loss --part-mixed-precision --part-autodiff --part-optimizer --part-spmd='mesh="tp:2" sequence-parallel=true tp-comm-overlap=4' --part-estimate=cluster=dgx-a100 -o /dev/null > %t/estimate.txt
// RUN: %python %S/Inputs/step_ratio.py %t/plan.json %t/estimate.txt 0.97 1.03 | FileCheck %s
// CHECK: composed / compiled
