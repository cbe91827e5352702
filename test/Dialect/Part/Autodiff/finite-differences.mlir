// Every vector-Jacobian product rule against central finite differences of a
// float64 numpy implementation of its op, through part-autodiff, part-spmd
// (one device), the plan and the CPU backend: for each case of
// Inputs/fd_check.py, loss = reduce_sum(op(params, inputs) * w) with random
// parameters away from kinks and random weights w. The tolerance,
// 2e-4 s + 1e-3 |fd| (s: the gradient's largest magnitude, at least 1), and
// why it bounds both the f32 backward pass and the difference's truncation
// error, are in fd_check.py; measured errors stay under 2e-6 s (but for the
// f16 cast, which rounds to 4.9e-4), while a
// broken rule (tanh's derivative with the wrong sign, attention's backward
// without its causal mask) is off by O(s) and fails.
// Ties of max, min and reduce_max, where no derivative exists, are checked
// against the convention (the cotangent split evenly among tied elements).
// The driver also checks that every op declared with VjpOpInterface in
// PartOps.td has a case.
//
// The same cases run again partitioned over two devices (part-spmd with
// mesh dp:2 splits every `input` argument, the weights w among them, by
// its first dimension), where the cases' shapes allow it: the backward ops'
// sharding rules (pad, scatter_add and compare among them) and the
// collectives they imply must give the same gradients, gathered whole.
//
// RUN: rm -rf %t
// RUN: %python %S/Inputs/fd_check.py --bin %partition_obj_root/bin --work %t/dp1 --ops-td %partition_src_root/include/partition/Dialect/Part/IR/PartOps.td | FileCheck %s
// RUN: %python %S/Inputs/fd_check.py --bin %partition_obj_root/bin --work %t/dp2 --mesh dp:2 | FileCheck %s --check-prefix=DP2
//
// CHECK: every op with a rule has a case
// CHECK-NOT: MISMATCH
// CHECK-NOT: FAILED
// CHECK: cases on mesh dp:1
// CHECK-NEXT: all gradients ok
//
// DP2-NOT: MISMATCH
// DP2-NOT: FAILED
// DP2: 47 cases on mesh dp:2
// DP2-NEXT: all gradients ok
