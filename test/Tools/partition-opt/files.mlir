// The model is read as an untrusted file and every output is checked before
// any work: /dev/zero, a FIFO or a folder as the model, a FIFO nobody reads
// as an output (which blocked forever), /dev/full (an LLVM fatal error), an
// output onto the model or onto another output (compared by file identity,
// through links and `./`): one line each, exit 1. `timeout 20` turns a
// regression into a failure rather than a hang.
//
// RUN: rm -rf %t && mkdir -p %t && cd %t
// RUN: cp %s in.mlir && mkfifo fifo && mkdir dir && ln -s in.mlir link.mlir
// RUN: for args in "/dev/zero" "fifo" "dir" "in.mlir -o fifo" "in.mlir --part-report fifo" \
// RUN:     "in.mlir -o /dev/full" "in.mlir -o in.mlir" "in.mlir -o link.mlir" "in.mlir -o ./in.mlir" \
// RUN:     "in.mlir --part-report in.mlir" "in.mlir -o out.mlir --part-report ./out.mlir" \
// RUN:     "in.mlir -o dir"; do \
// RUN:   echo "== $args"; timeout 20 partition-opt $args 2>&1 >/dev/null; echo "exit $?"; \
// RUN: done > errors.log
// RUN: echo "== stdin /dev/zero" >> errors.log
// RUN: timeout 20 partition-opt < /dev/zero 2>> errors.log >/dev/null; echo "exit $?" >> errors.log
// RUN: FileCheck %s < errors.log
// RUN: test -p fifo && test -d dir && test -L link.mlir && diff %s in.mlir
// RUN: not ls out.mlir
//
// CHECK-LABEL: == /dev/zero
// CHECK-NEXT: partition-opt: /dev/zero: the model is a character device, not a regular file
// CHECK-NEXT: exit 1
// CHECK-LABEL: == fifo
// CHECK-NEXT: partition-opt: fifo: the model is a FIFO, not a regular file
// CHECK-NEXT: exit 1
// CHECK-LABEL: == dir
// CHECK-NEXT: partition-opt: dir: the model is a directory, not a regular file
// CHECK-NEXT: exit 1
// CHECK-LABEL: == in.mlir -o fifo
// CHECK-NEXT: partition-opt: cannot write fifo (-o): it is a FIFO that no process reads (writing it would wait forever)
// CHECK-NEXT: exit 1
// CHECK-LABEL: == in.mlir --part-report fifo
// CHECK-NEXT: partition-opt: cannot write fifo (--part-report): it is a FIFO that no process reads (writing it would wait forever)
// CHECK-NEXT: exit 1
// CHECK-LABEL: == in.mlir -o /dev/full
// CHECK-NEXT: partition-opt: cannot write /dev/full (-o): No space left on device
// CHECK-NEXT: exit 1
// CHECK-LABEL: == in.mlir -o in.mlir
// CHECK-NEXT: partition-opt: -o in.mlir and the model in.mlir name the same file
// CHECK-NEXT: exit 1
// CHECK-LABEL: == in.mlir -o link.mlir
// CHECK-NEXT: partition-opt: -o link.mlir and the model in.mlir name the same file
// CHECK-NEXT: exit 1
// CHECK-LABEL: == in.mlir -o ./in.mlir
// CHECK-NEXT: partition-opt: -o ./in.mlir and the model in.mlir name the same file
// CHECK-NEXT: exit 1
// CHECK-LABEL: == in.mlir --part-report in.mlir
// CHECK-NEXT: partition-opt: --part-report in.mlir and the model in.mlir name the same file
// CHECK-NEXT: exit 1
// CHECK-LABEL: == in.mlir -o out.mlir --part-report ./out.mlir
// CHECK-NEXT: partition-opt: -o out.mlir and --part-report ./out.mlir name the same file
// CHECK-NEXT: exit 1
// CHECK-LABEL: == in.mlir -o dir
// CHECK-NEXT: partition-opt: cannot write dir (-o): it is a directory
// CHECK-NEXT: exit 1
// CHECK-LABEL: == stdin /dev/zero
// CHECK-NEXT: partition-opt: standard input is a device, not a model; give the model as a file or through a pipe
// CHECK-NEXT: exit 1
//
// A FIFO that a process reads is written into (and stays a FIFO), as are
// /dev/null and the report:
// RUN: %python %S/../../Import/onnx/Inputs/read_fifo.py fifo from-fifo.mlir -- timeout 20 partition-opt in.mlir -o fifo
// RUN: test -p fifo && FileCheck %s --check-prefix=FIFO < from-fifo.mlir
// FIFO: func.func @f
// RUN: %python %S/../../Import/onnx/Inputs/read_fifo.py fifo from-fifo.html -- timeout 20 partition-opt in.mlir -o /dev/null --part-report fifo
// RUN: FileCheck %s --check-prefix=HTML < from-fifo.html
// HTML: <html

part.mesh @mesh = <["dp"=2]>
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> attributes {part.spmd = @mesh} {
  %0 = part.add %x, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
