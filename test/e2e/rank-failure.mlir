// A rank that fails makes its peers fail too, at once, instead of leaving
// them waiting in a collective: rank 2 stops before its first step, so rank 3
// (its partner in the "tp" all_reduce) must report the broken collective;
// ranks 0 and 1 form another group and finish. Both as threads and as
// processes; --timeout bounds the wait even if the peer were not told. The
// plan keeps one kernel per op (no fusion), so the instruction numbers below
// are those of the ops in Inputs/mlp-2x2.mlir.
//
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python %S/Inputs/mlp_data.py %t
// RUN: partition-translate --part-to-plan --part-fuse-elementwise=false %S/Inputs/mlp-2x2.mlir -o %t/4.plan
// RUN: not partition-run %t/4.plan --weights %t/weights.safetensors --input x=%t/x.npy --fail-rank 2 --timeout 20 2>&1 | FileCheck %s
// RUN: not partition-run %t/4.plan --processes --weights %t/weights.safetensors --input x=%t/x.npy --fail-rank 2 --timeout 20 2>&1 | FileCheck %s
//
// CHECK-NOT: rank 0: {{.*}}error
// CHECK-DAG: rank 2: aborted: failing on purpose (--fail-rank 2)
// CHECK-DAG: rank 3: {{.*}}instruction 4 ({{.*}}mlp-2x2.mlir:18:8): all-reduce

// --fail-step K: rank 2 fails in the middle of its second step (before
// instruction 3 of 6), while its peers are inside that step, as threads and
// as processes; --fail-mode kill makes it die by SIGKILL, which the parent
// reports at once, naming the rank.
//
// RUN: not partition-run %t/4.plan --weights %t/weights.safetensors --input x=%t/x.npy --steps 3 --fail-rank 2 --fail-step 2 --timeout 20 2>&1 | FileCheck %s --check-prefix=STEP
// RUN: not partition-run %t/4.plan --processes --weights %t/weights.safetensors --input x=%t/x.npy --steps 3 --fail-rank 2 --fail-step 2 --timeout 20 2>&1 | FileCheck %s --check-prefix=STEP
// RUN: not partition-run %t/4.plan --processes --weights %t/weights.safetensors --input x=%t/x.npy --steps 3 --fail-rank 2 --fail-step 2 --fail-mode kill --timeout 20 2>&1 | FileCheck %s --check-prefix=KILL
//
// STEP-NOT: rank 0: {{.*}}error
// STEP-DAG: rank 2: aborted: rank 2: instruction 3 ({{.*}}mlp-2x2.mlir:17:8): failing on purpose (--fail-rank 2 --fail-step 2){{ }}
// STEP-DAG: rank 3: {{.*}}instruction 4 ({{.*}}mlp-2x2.mlir:18:8): all-reduce
//
// KILL: partition-run: rank 2 was killed by signal 9 (Killed); killed the other ranks

// --fail-instruction I moves the failure: before instruction 5, after the
// all-reduce (instruction 4), rank 3 finishes step 2 and stops in step 3's.
//
// RUN: not partition-run %t/4.plan --weights %t/weights.safetensors --input x=%t/x.npy --steps 3 --fail-rank 2 --fail-step 2 --fail-instruction 5 --timeout 20 2>&1 | FileCheck %s --check-prefix=INST
//
// INST-NOT: rank 0: {{.*}}error
// INST-DAG: rank 2: aborted: rank 2: instruction 5 ({{.*}}mlp-2x2.mlir:19:8): failing on purpose (--fail-rank 2 --fail-step 2){{ }}
// INST-DAG: rank 3: {{.*}}instruction 4 ({{.*}}mlp-2x2.mlir:18:8): all-reduce

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
// RUN: not partition-run %t/4.plan --fail-rank 1 --fail-instruction 2 2>&1 | FileCheck %s --check-prefix=ARGS6
// ARGS6: partition-run: --fail-instruction needs --fail-step K
// RUN: not partition-run %t/4.plan --fail-rank 1 --fail-step 1 --fail-instruction -1 2>&1 | FileCheck %s --check-prefix=ARGS7
// ARGS7: partition-run: --fail-instruction needs an instruction number (0 or more), got "-1"
// RUN: not partition-run %t/4.plan --weights %t/weights.safetensors --input x=%t/x.npy --fail-rank 1 --fail-step 1 --fail-instruction 6 2>&1 | FileCheck %s --check-prefix=ARGS8
// ARGS8: rank 1: invalid argument: --fail-instruction 6 is not an instruction of rank 1's program (it has 6: 0 to 5)
