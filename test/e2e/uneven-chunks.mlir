// Uneven chunks end to end: a 5-layer GPT on pp:2 with two chunks per stage
// (4 chunks for 5 layers: part-pipeline cuts them by FLOPs, one chunk
// holds two layers), interleaved and in a V (ZB-V, V-Half), trained 3 SGD
// steps by partition-check against one device: every step's loss and the
// final weights agree (partition-check's default tolerances). The planner
// searches these plans (test/Tools/partition-plan/plan.mlir UNEVEN-VPP).
//
// RUN: rm -rf %t && mkdir -p %t
// RUN: partition-import --model gpt --layers 5 --hidden 32 --heads 4 --vocab 64 --seq 8 --batch 4 --seed 3 -o %t/gpt5.mlir --weights %t/gpt5.safetensors
// RUN: for schedule in interleaved-1f1b zb-v v-half; do \
// RUN:   partition-check %t/gpt5.mlir --mesh pp:2 --spmd-options "micro-batches=4 schedule=$schedule virtual-stages=2" --steps 3 --weights %t/gpt5.safetensors > %t/$schedule.log 2>&1 || { cat %t/$schedule.log; exit 1; }; \
// RUN:   grep -q '^PASS' %t/$schedule.log || exit 1; \
// RUN: done
// RUN: FileCheck %s < %t/interleaved-1f1b.log
// CHECK: weights after step 3: 84 tensors agree
// CHECK: PASS
