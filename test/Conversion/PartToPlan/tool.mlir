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
