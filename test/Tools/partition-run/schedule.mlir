// A plan of format 13 whose schedule table runs a stage's fragments once per
// micro-batch (Inputs/schedule-plan.json, written by hand and built with
// flatc): partition-run lists the fragments and the named steps, runs it on
// the CPU backend to numpy's result, with trace origins that name each step,
// and rejects a step past the inputs' micro-batches.
//
// RUN: rm -rf %t && mkdir -p %t && cd %t
// RUN: flatc -b --size-prefixed %partition_src_root/runtime/plan/plan.fbs %S/Inputs/schedule-plan.json
// RUN: %python %S/Inputs/schedule_check.py checksum schedule-plan.plan s.plan
// RUN: partition-run s.plan --dump | FileCheck %s --check-prefix=DUMP
// RUN: %python %S/Inputs/schedule_check.py inputs %t
// RUN: partition-run s.plan --backend cpu --input x=x.npy --input c=c.npy --output-dir out --trace t.json
// RUN: %python %S/Inputs/schedule_check.py check %t | FileCheck %s --check-prefix=SUM
// RUN: FileCheck %s --check-prefix=TRACE < t.json
// RUN: sed 's/fragment: 1, micro_batch: 3/fragment: 1, micro_batch: 4/' %S/Inputs/schedule-plan.json > bad.json
// RUN: flatc -b --size-prefixed %partition_src_root/runtime/plan/plan.fbs bad.json
// RUN: %python %S/Inputs/schedule_check.py checksum bad.plan bad-checked.plan
// RUN: not partition-run bad-checked.plan --dump 2>&1 | FileCheck %s --check-prefix=BAD
//
// DUMP: plan format 13
// DUMP: memory per device: arena 384 bytes, parameters and constants 0 bytes, inputs 144 bytes
// DUMP: input "x" %0 : f32[2, 3] of global [8, 3] sharded [{}, {}] in 4 micro-batches
// DUMP: fragment 1 F: instructions [1, 2)
// DUMP-NEXT: %3 = Mul(%0, %0) : f32[2, 3] @arena+64 x2 slots
// DUMP: fragment 2 B: instructions [2, 5)
// DUMP: schedule: (program 0, P, micro-batch 0) (program 0, F0, micro-batch 0) (program 0, F1, micro-batch 1) (program 0, B0, micro-batch 0)
// DUMP-SAME: (program 0, B3, micro-batch 3) (program 0, U, micro-batch 0)
//
// SUM: sum [690.0, 1072.0, 1590.0] expected [690.0, 1072.0, 1590.0]
//
// TRACE: "origin":"P schedule.mlir:1:1"
// TRACE: "origin":"F0 schedule.mlir:2:1"
// TRACE: "origin":"F1 schedule.mlir:2:1"
// TRACE: "origin":"B0 schedule.mlir:3:1"
// TRACE: "origin":"B3 schedule.mlir:5:1"
// TRACE: "origin":"U schedule.mlir:6:1"
//
// BAD: schedule step 6 (program 0 (stage)): micro-batch 4 of input "x", which has 4 micro-batches
