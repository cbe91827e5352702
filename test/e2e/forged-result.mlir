// A rank's result in the store that is forged (by a process that knows the
// job's token) or malformed gives rank 0 a diagnostic naming the key and the
// rank, never an abort or an out-of-bounds read while assembling outputs.
// Rank 3 is the forger here, so rank 2, its partner, times out as well.
//
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python %S/Inputs/mlp_data.py %t
// RUN: partition-translate --part-to-plan %S/Inputs/mlp-2x2.mlir -o %t/4.plan
// RUN: %python %S/Inputs/launch_by_hand.py torchrun 4 --forge-rank 3=huge -- \
// RUN:   partition-run %t/4.plan --weights %t/weights.safetensors --input x=%t/x.npy --timeout 8 2>&1 \
// RUN:   | FileCheck %s --check-prefix=HUGE
// RUN: %python %S/Inputs/launch_by_hand.py torchrun 4 --forge-rank 3=shape -- \
// RUN:   partition-run %t/4.plan --weights %t/weights.safetensors --input x=%t/x.npy --timeout 8 2>&1 \
// RUN:   | FileCheck %s --check-prefix=SHAPE
//
// HUGE: partition-run: rank 3: invalid argument: store value 'result/3' from rank 3 is malformed: coordinate count is 1152921504606846976, but only 0 bytes remain
// HUGE: rank 0: exit 1
//
// SHAPE: partition-run: rank 3: invalid argument: store value 'result/3' from rank 3: output "y" is f32[1], but the plan's block is f32[4, 12]
// SHAPE: rank 0: exit 1
