// Random one-byte mutations of a plan file (two AdamW steps of a linear
// regression: kernels, constants, float attributes, in-place updates): each
// is rejected (the plan's checksum, then its validation) or runs with the
// same results. Before plans carried a checksum, about 4% of mutations (a
// changed constant, learning rate or attribute) loaded, ran and gave other
// results silently.
//
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python %S/../../e2e/Inputs/linreg_reference.py %t adamw 2 --lr 0.01
// RUN: partition-opt %S/../../e2e/Inputs/linreg-grad.mlir --part-optimizer="kind=adamw lr=0.01" | partition-opt --part-spmd="mesh=dp:1" | partition-translate --part-to-plan -o %t/1.plan 2>/dev/null
// RUN: %python %S/Inputs/mutate_plan.py 500 7 %t %t/1.plan %partition_obj_root/bin/partition-run -- --backend cpu --steps 2 --weights %t/weights.safetensors --input x=%t/x.npy --input y=%t/y.npy | FileCheck %s
// CHECK: rejected 500{{$}}
