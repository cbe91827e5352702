// --fix: a key given twice is refused (tp=8,tp=4 took the last), a number
// beyond the bounds too; a fix that no plan can meet says which choice
// excluded everything (it said only "no plan fits: 0 considered").
// The model: 4 layers, 4 heads, a batch of 8, on 8 devices.
//
// RUN: rm -rf %t && mkdir -p %t
// RUN: partition-import --model gpt --layers 4 --hidden 64 --heads 4 --vocab 128 --seq 16 --batch 8 --shapes-only -o %t/gpt.mlir
// RUN: not partition-plan %t/gpt.mlir --cluster %S/Inputs/small-node.json --devices 8 --fix tp=8,tp=4 2>&1 | FileCheck %s --check-prefix=TWICE
// RUN: not partition-plan %t/gpt.mlir --cluster %S/Inputs/small-node.json --devices 8 --fix pp=2,mbs=1,pp=2 2>&1 | FileCheck %s --check-prefix=REPEAT
// RUN: not partition-plan %t/gpt.mlir --cluster %S/Inputs/small-node.json --devices 8 --fix tp=1099511627776 2>&1 | FileCheck %s --check-prefix=HUGE
// RUN: not partition-plan %t/gpt.mlir --cluster %S/Inputs/small-node.json --devices 8 --fix mbs=9223372036854775807 2>&1 | FileCheck %s --check-prefix=HUGE-MBS
// RUN: not partition-plan %t/gpt.mlir --cluster %S/Inputs/small-node.json --devices 8 --fix tp=3 2>&1 | FileCheck %s --check-prefix=TP
// RUN: not partition-plan %t/gpt.mlir --cluster %S/Inputs/small-node.json --devices 8 --fix tp=2,pp=2,dp=1 2>&1 | FileCheck %s --check-prefix=PRODUCT
// RUN: not partition-plan %t/gpt.mlir --cluster %S/Inputs/small-node.json --devices 8 --fix pp=8 2>&1 | FileCheck %s --check-prefix=PP-LAYERS
// RUN: not partition-plan %t/gpt.mlir --cluster %S/Inputs/small-node.json --devices 8 --fix pp=16 2>&1 | FileCheck %s --check-prefix=PP-DEVICES
// RUN: not partition-plan %t/gpt.mlir --cluster %S/Inputs/small-node.json --devices 8 --fix dp=8,mbs=3 2>&1 | FileCheck %s --check-prefix=MBS
// RUN: not partition-plan %t/gpt.mlir --cluster %S/Inputs/small-node.json --devices 8 --fix pp=2,vpp=4 2>&1 | FileCheck %s --check-prefix=VPP
// RUN: not partition-plan %t/gpt.mlir --cluster %S/Inputs/small-node.json --devices 8 --fix dp=1,zero=2 2>&1 | FileCheck %s --check-prefix=ZERO
// RUN: not partition-plan %t/gpt.mlir --cluster %S/Inputs/small-node.json --devices 8 --fix tp=1,sp=1 2>&1 | FileCheck %s --check-prefix=SP
// RUN: not partition-plan %t/gpt.mlir --cluster %S/Inputs/small-node.json --devices 8 --inference --fix recompute=full 2>&1 | FileCheck %s --check-prefix=INFER
// What no single rule above foresees: the values the plans left out had.
// RUN: not partition-plan %t/gpt.mlir --cluster %S/Inputs/small-node.json --devices 8 --fix pp=1,schedule=gpipe 2>&1 | FileCheck %s --check-prefix=SCHEDULE
// The compiler's own reason, as before.
// RUN: not partition-plan %t/gpt.mlir --cluster %S/Inputs/small-node.json --devices 8 --fix tp=8 2>&1 | FileCheck %s --check-prefix=HEADS
// The pass says the same.
// RUN: not partition-opt %t/gpt.mlir --part-auto-partition="cluster=%S/Inputs/small-node.json devices=8 fix=pp=8" 2>&1 | FileCheck %s --check-prefix=PASS
//
// TWICE: partition-plan: --fix: tp is given twice (tp=8, tp=4)
// REPEAT: partition-plan: --fix: pp is given twice (pp=2, pp=2)
// HUGE: partition-plan: --fix: tp=1099511627776 is too large (at most 16777216)
// HUGE-MBS: partition-plan: --fix: mbs=9223372036854775807 is too large (at most 16777216)
// TP: partition-plan: no plan fits: tp=3 does not divide the 8 devices
// PRODUCT: partition-plan: no plan fits: dp=1 x tp=2 x pp=2 is 4 devices, not the 8 given
// PP-LAYERS: partition-plan: no plan fits: pp=8 is more stages than the 4 layers and the embedding and the head fill
// PP-DEVICES: partition-plan: no plan fits: pp=16 does not divide the 8 devices
// MBS: partition-plan: no plan fits: mbs=3 does not divide the 1 sequences of a dp group's share of the global batch
// VPP: partition-plan: no plan fits: vpp=4 chunks on each of pp=2 stages need at least 6 layers (the embedding and the head may fill a chunk each), the model has 4
// ZERO: partition-plan: no plan fits: zero=2 needs dp above 1
// SP: partition-plan: no plan fits: sp=1 needs tp above 1 (sequence parallelism splits over tp)
// INFER: partition-plan: no plan fits: recompute=full needs a training step
// SCHEDULE: partition-plan: no plan fits: 0 considered; no plan has schedule=gpipe (the plans left out have schedule 1f1b, none)
// HEADS: partition-plan: no plan fits: 0 considered; {{[0-9]+}} pruned by tp=8 sp: {{.*}}; {{[0-9]+}} pruned by tp=8: 'part.reshape' op splits features into 4 heads, which tp (size 8) does not divide
// PASS: error: part-auto-partition: no plan fits: pp=8 is more stages than the 4 layers and the embedding and the head fill
