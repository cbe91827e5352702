// A rank that fails makes its peers fail too, at once, instead of leaving
// them waiting in a collective: rank 2 stops before its first step, so rank 3
// (its partner in the "tp" all_reduce) must report the broken collective;
// ranks 0 and 1 form another group and finish. Both as threads and as
// processes; --timeout bounds the wait even if the peer were not told.
//
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python %S/Inputs/mlp_data.py %t
// RUN: partition-translate --part-to-plan %S/Inputs/mlp-2x2.mlir -o %t/4.plan
// RUN: not partition-run %t/4.plan --weights %t/weights.safetensors --input x=%t/x.npy --fail-rank 2 --timeout 20 2>&1 | FileCheck %s
// RUN: not partition-run %t/4.plan --processes --weights %t/weights.safetensors --input x=%t/x.npy --fail-rank 2 --timeout 20 2>&1 | FileCheck %s
//
// CHECK-NOT: rank 0: {{.*}}error
// CHECK-DAG: rank 2: aborted: failing on purpose (--fail-rank 2)
// CHECK-DAG: rank 3: {{.*}}instruction 4 ({{.*}}mlp-2x2.mlir:18:8): all-reduce

// --fail-step K: rank 2 fails at its second step, while its peers are in
// that step, as threads and as processes; --fail-mode kill makes it die by
// SIGKILL, which the parent reports at once, naming the rank.
//
// RUN: not partition-run %t/4.plan --weights %t/weights.safetensors --input x=%t/x.npy --steps 3 --fail-rank 2 --fail-step 2 --timeout 20 2>&1 | FileCheck %s --check-prefix=STEP
// RUN: not partition-run %t/4.plan --processes --weights %t/weights.safetensors --input x=%t/x.npy --steps 3 --fail-rank 2 --fail-step 2 --timeout 20 2>&1 | FileCheck %s --check-prefix=STEP
// RUN: not partition-run %t/4.plan --processes --weights %t/weights.safetensors --input x=%t/x.npy --steps 3 --fail-rank 2 --fail-step 2 --fail-mode kill --timeout 20 2>&1 | FileCheck %s --check-prefix=KILL
//
// STEP-NOT: rank 0: {{.*}}error
// STEP-DAG: rank 2: aborted: failing on purpose (--fail-rank 2 --fail-step 2)
// STEP-DAG: rank 3: {{.*}}instruction 4 ({{.*}}mlp-2x2.mlir:18:8): all-reduce
//
// KILL: partition-run: rank 2 was killed by signal 9 (Killed); killed the other ranks

// The failure options are checked.
//
// RUN: not partition-run %t/4.plan --fail-step 1 2>&1 | FileCheck %s --check-prefix=ARGS1
// ARGS1: partition-run: --fail-step and --fail-mode need --fail-rank R
// RUN: not partition-run %t/4.plan --fail-rank 1 --fail-step 3 --steps 2 2>&1 | FileCheck %s --check-prefix=ARGS2
// ARGS2: partition-run: --fail-step 3 is after the last step (--steps 2)
// RUN: not partition-run %t/4.plan --fail-rank 1 --fail-mode kill 2>&1 | FileCheck %s --check-prefix=ARGS3
// ARGS3: partition-run: --fail-mode kill would kill every rank when they are threads; use it with --processes or a launcher
// RUN: not partition-run %t/4.plan --fail-rank 4 2>&1 | FileCheck %s --check-prefix=ARGS4
// ARGS4: partition-run: invalid argument: --fail-rank 4 is outside the plan's world of 4 ranks (0 to 3)
// RUN: not partition-run %t/4.plan --fail-rank 1 --fail-mode stop 2>&1 | FileCheck %s --check-prefix=ARGS5
// ARGS5: partition-run: --fail-mode needs error or kill, got "stop"
