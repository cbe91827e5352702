// --help lists partition-opt's passes and MLIR's options, not the hundreds of
// options the LLVM libraries register.
// RUN: partition-opt --help > %t.help
// RUN: wc -l < %t.help | %python -c "import sys; n = int(sys.stdin.read()); print('short' if n < 300 else 'long: %d lines' % n)" | FileCheck %s --check-prefix=SHORT
// RUN: FileCheck %s < %t.help
// SHORT: short
// CHECK: --mlir-print-op-on-diagnostic
// CHECK-NOT: --x86-
// CHECK-NOT: --polly
