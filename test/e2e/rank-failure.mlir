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
