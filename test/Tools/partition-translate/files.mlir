// partition-translate reads the model as an untrusted file and checks -o
// before any work (mlirTranslateMain read /dev/zero until memory ran out and
// blocked on a FIFO): one line each, exit 1, never a hang (`timeout 20`).
//
// RUN: rm -rf %t && mkdir -p %t && cd %t
// RUN: cp %s in.mlir && mkfifo fifo
// RUN: for args in "/dev/zero" "fifo" "in.mlir -o fifo" "in.mlir -o /dev/full" \
// RUN:     "in.mlir -o in.mlir" "in.mlir -o ./in.mlir"; do \
// RUN:   echo "== $args"; timeout 20 partition-translate --part-to-plan $args 2>&1 >/dev/null; echo "exit $?"; \
// RUN: done > errors.log
// RUN: FileCheck %s < errors.log
// RUN: diff %s in.mlir
//
// CHECK-LABEL: == /dev/zero
// CHECK-NEXT: partition-translate: /dev/zero: the model is a character device, not a regular file
// CHECK-NEXT: exit 1
// CHECK-LABEL: == fifo
// CHECK-NEXT: partition-translate: fifo: the model is a FIFO, not a regular file
// CHECK-NEXT: exit 1
// CHECK-LABEL: == in.mlir -o fifo
// CHECK-NEXT: partition-translate: cannot write fifo (-o): it is a FIFO that no process reads (writing it would wait forever)
// CHECK-NEXT: exit 1
// CHECK-LABEL: == in.mlir -o /dev/full
// CHECK-NEXT: partition-translate: cannot write /dev/full (-o): No space left on device
// CHECK-NEXT: exit 1
// CHECK-LABEL: == in.mlir -o in.mlir
// CHECK-NEXT: partition-translate: -o in.mlir and the model in.mlir name the same file
// CHECK-NEXT: exit 1
// CHECK-LABEL: == in.mlir -o ./in.mlir
// CHECK-NEXT: partition-translate: -o ./in.mlir and the model in.mlir name the same file
// CHECK-NEXT: exit 1
//
// A plan through a FIFO that a process reads, and into a file:
// RUN: %python %S/../../Import/onnx/Inputs/read_fifo.py fifo from-fifo.plan -- timeout 20 partition-translate --part-to-plan in.mlir -o fifo
// RUN: timeout 20 partition-translate --part-to-plan in.mlir -o out.plan
// RUN: cmp from-fifo.plan out.plan

part.mesh @mesh = <["dp"=2]>
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> attributes {part.spmd = @mesh} {
  %0 = part.add %x, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
