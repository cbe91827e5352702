// An error inside a large program prints its location, message and a
// bounded excerpt of the source line, not the whole enclosing function (1.2
// MB for this one) nor the whole signature line (37 KB).
// RUN: partition-import --model gpt --layers 24 --batch 8 --shapes-only -o %t.mlir
// RUN: not partition-opt %t.mlir --part-append-loss --part-autodiff --part-optimizer --part-autodiff -o /dev/null 2> %t.err
// RUN: FileCheck %s < %t.err
// RUN: wc -c < %t.err | %python -c "import sys; n = int(sys.stdin.read()); print('bounded' if n < 2048 else 'unbounded: %d bytes' % n)" | FileCheck %s --check-prefix=SIZE
// The message names a few of the step's 1166 result types, not all of them.
// CHECK: mlir:2:3: error: part-autodiff differentiates a function whose single result is a 0-d float loss, but @gpt returns (tensor<f32>, tensor<{{[^)]*}}, ... {{[0-9]+}} more)
// CHECK-NEXT: {{^}}  func.func @gpt(%arg0: tensor<8x16xi32>
// CHECK-SAME: ...{{$}}
// CHECK-NEXT: {{^}}  ^{{$}}
// SIZE: bounded
// The operation is printed on request.
// RUN: not partition-opt %t.mlir --part-append-loss --part-autodiff --part-optimizer --part-autodiff --mlir-print-op-on-diagnostic -o /dev/null 2>&1 | FileCheck %s --check-prefix=OP
// OP: note: see current operation
