// partition-translate's command line: --help lists this tool's and MLIR's
// options, not the hundreds the LLVM libraries register; a successful
// translation prints nothing on stderr unless a report is asked for.
// RUN: partition-translate --help > %t.help
// RUN: wc -l < %t.help | %python -c "import sys; n = int(sys.stdin.read()); print('short' if n < 80 else 'long: %d lines' % n)" | FileCheck %s --check-prefix=SHORT
// RUN: FileCheck %s --check-prefix=HELP < %t.help
// SHORT: short
// HELP: --part-memory-report
// HELP: --part-to-plan
// HELP-NOT: --x86-
// HELP-NOT: --polly
// RUN: partition-translate --part-to-plan %s -o %t.plan 2> %t.stderr
// RUN: count 0 < %t.stderr
// RUN: partition-translate --part-to-plan %s -o %t.plan --part-memory-report 2>&1 | FileCheck %s --check-prefix=REPORT
// REPORT: remark: per-device memory of @f
// REPORT: memory report of @f on @mesh (2 devices)

part.mesh @mesh = <["dp"=2]>
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> attributes {part.spmd = @mesh} {
  %0 = part.add %x, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// An error at a function with a long signature shows an excerpt of it.
// RUN: %python -c "print('part.mesh @mesh = <[\"dp\"=1]>\nfunc.func @big(' + ', '.join('%%a' + str(i) + ': tensor<4xf32>' for i in range(2000)) + ', %%m: tensor<4xi1>) attributes {part.spmd = @mesh} { return }')" > %t.big.mlir
// RUN: not partition-translate --part-to-plan %t.big.mlir -o %t.big.plan 2> %t.big.err
// RUN: FileCheck %s --check-prefix=LONG < %t.big.err
// RUN: wc -c < %t.big.err | %python -c "import sys; n = int(sys.stdin.read()); print('bounded' if n < 1024 else 'unbounded: ' + str(n))" | FileCheck %s --check-prefix=SIZE
// LONG: big.mlir:2:1: error: the runtime cannot hold a value of type 'tensor<4xi1>'
// LONG-NEXT: {{^}}func.func @big(%a0: tensor<4xf32>, {{.*}}...{{$}}
// SIZE: bounded
