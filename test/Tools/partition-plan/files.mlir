// partition-plan reads the model as an untrusted file and checks --json and
// --html before the search: /dev/zero or a FIFO as the model, a FIFO nobody
// reads as an output (which blocked forever), --json /dev/full (an LLVM
// fatal error), an output onto the model, the cluster file or the other
// output: one line each, exit 1, never a hang (`timeout 20`).
//
// RUN: rm -rf %t && mkdir -p %t && cd %t
// RUN: partition-import --model gpt --layers 2 --hidden 64 --heads 4 --vocab 128 --seq 16 --batch 8 --shapes-only -o gpt.mlir
// RUN: cp gpt.mlir gpt.orig && cp %S/Inputs/small-node.json cluster.json && mkfifo fifo
// RUN: for args in "/dev/zero" "fifo" "gpt.mlir --json fifo" "gpt.mlir --html fifo" \
// RUN:     "gpt.mlir --json /dev/full" "gpt.mlir --html /dev/full" "gpt.mlir --html gpt.mlir" \
// RUN:     "gpt.mlir --json ./cluster.json" "gpt.mlir --json out --html ./out"; do \
// RUN:   echo "== $args"; timeout 20 partition-plan $args --cluster cluster.json --devices 8 --fix tp=2,pp=1 2>&1 >/dev/null; echo "exit $?"; \
// RUN: done > errors.log
// RUN: FileCheck %s < errors.log
// RUN: cmp gpt.mlir gpt.orig && cmp cluster.json %S/Inputs/small-node.json && test -p fifo
// RUN: not ls out
//
// CHECK-LABEL: == /dev/zero
// CHECK-NEXT: partition-plan: /dev/zero: the model is a character device, not a regular file
// CHECK-NEXT: exit 1
// CHECK-LABEL: == fifo
// CHECK-NEXT: partition-plan: fifo: the model is a FIFO, not a regular file
// CHECK-NEXT: exit 1
// CHECK-LABEL: == gpt.mlir --json fifo
// CHECK-NEXT: partition-plan: cannot write fifo (--json): it is a FIFO that no process reads (writing it would wait forever)
// CHECK-NEXT: exit 1
// CHECK-LABEL: == gpt.mlir --html fifo
// CHECK-NEXT: partition-plan: cannot write fifo (--html): it is a FIFO that no process reads (writing it would wait forever)
// CHECK-NEXT: exit 1
// CHECK-LABEL: == gpt.mlir --json /dev/full
// CHECK-NEXT: partition-plan: cannot write /dev/full (--json): No space left on device
// CHECK-NEXT: exit 1
// CHECK-LABEL: == gpt.mlir --html /dev/full
// CHECK-NEXT: partition-plan: cannot write /dev/full (--html): No space left on device
// CHECK-NEXT: exit 1
// CHECK-LABEL: == gpt.mlir --html gpt.mlir
// CHECK-NEXT: partition-plan: --html gpt.mlir and the model gpt.mlir name the same file
// CHECK-NEXT: exit 1
// CHECK-LABEL: == gpt.mlir --json ./cluster.json
// CHECK-NEXT: partition-plan: --json ./cluster.json and --cluster cluster.json name the same file
// CHECK-NEXT: exit 1
// CHECK-LABEL: == gpt.mlir --json out --html ./out
// CHECK-NEXT: partition-plan: --json out and --html ./out name the same file
// CHECK-NEXT: exit 1
//
// A FIFO that a process reads is written into.
// RUN: %python %S/../../Import/onnx/Inputs/read_fifo.py fifo from-fifo.json -- timeout 20 partition-plan gpt.mlir --cluster cluster.json --devices 8 --fix tp=2,pp=1 --json fifo
// RUN: FileCheck %s --check-prefix=JSON < from-fifo.json
// JSON: "format": "partition-plan/1"
