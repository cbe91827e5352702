// partition-plan and part-auto-partition bound every count they take and
// check it against the cluster: each out-of-bounds value is one line naming
// the option, the value and the bound, at once (2^63-1 devices or global
// batch hung in the search's divisors; a global batch of 2^40 allocated
// 12.6 GB for its schedule and aborted; more devices than the cluster has
// were planned on).
//
// RUN: rm -rf %t && mkdir -p %t
// RUN: partition-import --model gpt --layers 4 --hidden 64 --heads 4 --vocab 128 --seq 16 --batch 8 --shapes-only -o %t/gpt.mlir
// RUN: not partition-plan %t/gpt.mlir --cluster %S/Inputs/small-node.json --devices 9223372036854775807 2>&1 | FileCheck %s --check-prefix=DEVICES
// RUN: not partition-plan %t/gpt.mlir --cluster %S/Inputs/small-node.json --devices 8 --global-batch 9223372036854775807 2>&1 | FileCheck %s --check-prefix=BATCH
// RUN: not partition-plan %t/gpt.mlir --cluster %S/Inputs/small-node.json --devices 8 --global-batch 1099511627776 2>&1 | FileCheck %s --check-prefix=BATCH40
// RUN: not partition-plan %t/gpt.mlir --cluster %S/Inputs/small-node.json --devices 64 2>&1 | FileCheck %s --check-prefix=CLUSTER
// RUN: not partition-plan %t/gpt.mlir --cluster h200 --devices 30000 2>&1 | FileCheck %s --check-prefix=H200
// RUN: not partition-plan %t/gpt.mlir --cluster h200 --devices 1073741824 2>&1 | FileCheck %s --check-prefix=H200-HUGE
// RUN: not partition-plan %t/gpt.mlir --cluster h200 --devices 8 --top 9223372036854775807 2>&1 | FileCheck %s --check-prefix=TOP
// The model's own batch is bounded as the option is.
// RUN: partition-import --model gpt --layers 2 --hidden 64 --heads 4 --vocab 128 --seq 16 --batch 1099511627776 --shapes-only -o %t/big.mlir
// RUN: not partition-plan %t/big.mlir --cluster dgx-a100 --devices 8 2>&1 | FileCheck %s --check-prefix=MODEL-BATCH
// A global batch within the bound whose micro-batches would be too many for
// a schedule: those plans are left out, the others ranked.
// RUN: partition-plan %t/gpt.mlir --cluster dgx-a100 --devices 8 --global-batch 1048576 --top 1 --explain | FileCheck %s --check-prefix=MANY
// The same through the pass, its options named as the pass names them.
// RUN: not partition-opt %t/gpt.mlir --part-auto-partition="cluster=%S/Inputs/small-node.json devices=9223372036854775807" 2>&1 | FileCheck %s --check-prefix=PASS-DEVICES
// RUN: not partition-opt %t/gpt.mlir --part-auto-partition="cluster=%S/Inputs/small-node.json devices=64" 2>&1 | FileCheck %s --check-prefix=PASS-CLUSTER
// RUN: not partition-opt %t/gpt.mlir --part-auto-partition="cluster=%S/Inputs/small-node.json devices=8 global-batch=1099511627776" 2>&1 | FileCheck %s --check-prefix=PASS-BATCH
// RUN: not partition-opt %t/gpt.mlir --part-auto-partition="cluster=%S/Inputs/small-node.json devices=8 fix=tp=2,tp=4" 2>&1 | FileCheck %s --check-prefix=PASS-TWICE
//
// DEVICES: partition-plan: --devices 9223372036854775807 is too large (at most 16777216)
// BATCH: partition-plan: --global-batch 9223372036854775807 is too large (at most 16777216)
// BATCH40: partition-plan: --global-batch 1099511627776 is too large (at most 16777216)
// CLUSTER: partition-plan: --devices 64 is more than the 8 devices of cluster "small" (2 nodes of 4)
// H200: partition-plan: --devices 30000 is more than the 24576 devices of cluster "h200" (3072 nodes of 8)
// H200-HUGE: partition-plan: --devices 1073741824 is too large (at most 16777216)
// TOP: partition-plan: --top 9223372036854775807 is too large (at most 16777216)
// MODEL-BATCH: partition-plan: the model's batch 1099511627776 is too large for a global batch (at most 16777216); give the global batch
// MANY: global batch 1048576
// MANY: 1 {{.*}}
// MANY: by: more than 4096 micro-batches per step
// PASS-DEVICES: error: part-auto-partition: devices=9223372036854775807 is too large (at most 16777216)
// PASS-CLUSTER: error: part-auto-partition: devices=64 is more than the 8 devices of cluster "small" (2 nodes of 4)
// PASS-BATCH: error: part-auto-partition: global-batch=1099511627776 is too large (at most 16777216)
// PASS-TWICE: error: part-auto-partition: --fix: tp is given twice (tp=2, tp=4)
//
// A model whose attention has more FLOPs than int64 holds (a sequence of
// 2^22): the FLOP count overflowed (undefined behaviour); now it saturates
// and the planner names the op instead of costing it.
// RUN: partition-import --model gpt --layers 2 --hidden 4194304 --heads 4 --vocab 128 --seq 4194304 --batch 8 --shapes-only -o %t/huge.mlir
// RUN: not partition-plan %t/huge.mlir --cluster dgx-a100 --devices 8 2>&1 | FileCheck %s --check-prefix=HUGE-OP
// HUGE-OP: partition-plan: the model does not compile unpartitioned: 'part.{{[a-z_]+}}' moves or computes more than 2^63 bytes or FLOPs on one device, beyond what the cost model counts
