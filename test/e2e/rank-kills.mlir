// Ranks of `partition-run --processes` killed (SIGKILL), stopped (SIGSTOP)
// at random times, or partition-run itself terminated: 20 trials on a
// 4-rank plan that runs far longer than a trial. Each run must end within
// twice --timeout with an error naming the rank (in practice within a
// second: the parent sees the death at once and kills the others), and no
// process of the run may be left.
//
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python %S/Inputs/mlp_data.py %t
// RUN: partition-translate --part-to-plan %S/Inputs/mlp-2x2.mlir -o %t/4.plan
// RUN: %python %S/Inputs/kill_ranks.py 7 20 10 -- partition-run %t/4.plan --processes --weights %t/weights.safetensors --input x=%t/x.npy --steps 1000000 --timeout 10 | FileCheck %s
//
// CHECK: trials: 20 ok
