// partition-check reads the model and the weights as untrusted files:
// /dev/zero (which exhausted memory), a FIFO (which blocked) or a folder is
// one line, exit 2, never a hang (`timeout 20`).
//
// RUN: rm -rf %t && mkdir -p %t && cd %t
// RUN: cp %s in.mlir && mkfifo fifo && mkdir dir
// RUN: for args in "/dev/zero" "fifo" "dir" "in.mlir --weights /dev/zero" "in.mlir --weights fifo" \
// RUN:     "in.mlir --weights dir"; do \
// RUN:   echo "== $args"; timeout 20 partition-check $args --mesh dp:2 2>&1 >/dev/null; echo "exit $?"; \
// RUN: done > errors.log
// RUN: FileCheck %s < errors.log
//
// CHECK-LABEL: == /dev/zero
// CHECK-NEXT: partition-check: error: /dev/zero: the model is a character device, not a regular file
// CHECK-NEXT: exit 2
// CHECK-LABEL: == fifo
// CHECK-NEXT: partition-check: error: fifo: the model is a FIFO, not a regular file
// CHECK-NEXT: exit 2
// CHECK-LABEL: == dir
// CHECK-NEXT: partition-check: error: dir: the model is a directory, not a regular file
// CHECK-NEXT: exit 2
// CHECK-LABEL: == in.mlir --weights /dev/zero
// CHECK-NEXT: partition-check: error: --weights /dev/zero: the weights file is a character device, not a regular file
// CHECK-NEXT: exit 2
// CHECK-LABEL: == in.mlir --weights fifo
// CHECK-NEXT: partition-check: error: --weights fifo: the weights file is a FIFO, not a regular file
// CHECK-NEXT: exit 2
// CHECK-LABEL: == in.mlir --weights dir
// CHECK-NEXT: partition-check: error: --weights dir: the weights file is a directory, not a regular file
// CHECK-NEXT: exit 2

func.func @main(%x: tensor<4x8xf32> {part.role = #part.role<input>, part.name = "x"},
                %w: tensor<8x8xf32> {part.role = #part.role<parameter>, part.name = "w"}) -> tensor<4x8xf32> {
  %h = part.matmul %x, %w : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  return %h : tensor<4x8xf32>
}
