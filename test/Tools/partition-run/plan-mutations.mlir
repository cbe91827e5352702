// Random one-byte mutations of a plan file: each is rejected (the plan's
// checksum, then its validation) or runs with the same results. Before plans
// carried a checksum, a changed shape, constant or attribute could load and
// run, giving other results silently.
//
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python %S/../../e2e/Inputs/mlp_data.py %t > /dev/null
// RUN: partition-translate --part-to-plan %S/../../e2e/Inputs/mlp-1x1.mlir -o %t/1.plan 2>/dev/null
// RUN: %python %S/Inputs/mutate_plan.py 500 7 %t %t/1.plan %partition_obj_root/bin/partition-run -- --backend cpu --weights %t/weights.safetensors --input x=%t/x.npy | FileCheck %s
// CHECK: rejected 500{{$}}
