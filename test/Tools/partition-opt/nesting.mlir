// Brackets nested deeper than the tools accept are rejected before the
// parser recurses into them (100,000 `[` or 20,000 nested modules overflowed
// its stack), with the position of the first bracket over the limit.
// RUN: %python -c "print('func.func @f() attributes {a = ' + '[' * 100000 + ']' * 100000 + '} { return }')" > %t.brackets.mlir
// RUN: not partition-opt %t.brackets.mlir 2>&1 | FileCheck %s --check-prefix=BRACKETS
// RUN: not partition-translate --part-to-plan %t.brackets.mlir 2>&1 | FileCheck %s --check-prefix=BRACKETS
// BRACKETS: brackets.mlir:1:543: error: brackets nest more than 512 levels deep; the input is rejected before parsing
// RUN: %python -c "print('module {\n' * 20000 + '}\n' * 20000)" > %t.modules.mlir
// RUN: not partition-opt %t.modules.mlir 2>&1 | FileCheck %s --check-prefix=MODULES
// RUN: not partition-opt < %t.modules.mlir 2>&1 | FileCheck %s --check-prefix=STDIN
// MODULES: modules.mlir:513:8: error: brackets nest more than 512 levels deep
// STDIN: <stdin>:513:8: error: brackets nest more than 512 levels deep

// At the limit, and with brackets in strings, comments and arrows, which do
// not nest, the input parses.
// RUN: %python -c "print('// ' + '[' * 1000 + '\nfunc.func @f() -> () attributes {a = \"' + '(' * 1000 + '\", b = ' + '[' * 511 + ']' * 511 + '} { return }')" > %t.ok.mlir
// RUN: partition-opt %t.ok.mlir | FileCheck %s --check-prefix=OK
// OK: func.func @f()
