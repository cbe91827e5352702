// The mesh and every numeric option are checked before anything runs: one
// line on stderr, exit code 2.
//
// RUN: for args in "--mesh dp:4096" "--mesh dp:1048576" "--mesh dp:65" \
// RUN:     "--mesh dp:4096,tp:4096,pp:4096,dp:4096,tp:4096,pp:4096" \
// RUN:     "--mesh dp:2 --rtol=inf" "--mesh dp:2 --rtol=nan" "--mesh dp:2 --rtol=-1" \
// RUN:     "--mesh dp:2 --atol=-1e-9" "--mesh dp:2 --atol=inf" "--mesh dp:2 --weight-rtol=nan" \
// RUN:     "--mesh dp:2 --random-scale 1e300" "--mesh dp:2 --random-scale 0" "--mesh dp:2 --random-scale nan" \
// RUN:     "--mesh dp:2 --random-weights -3" "--mesh dp:2 --input-seed -1" \
// RUN:     "--mesh dp:2 --timeout 0" "--mesh dp:2 --timeout 1000000" "--mesh dp:2 --steps 1000000" \
// RUN:     "--mesh dp:2 --test-fail-thread 1"; do \
// RUN:   echo "== $args"; timeout 60 partition-check %s $args 2>&1 >/dev/null; echo "exit $?"; \
// RUN: done > %t.log
// RUN: FileCheck %s < %t.log
//
// Each device is a thread: at most 64, the product checked without overflow.
// CHECK-LABEL: == --mesh dp:4096
// CHECK-NEXT: partition-check: error: --mesh "dp:4096" has 4096 devices; partition-check runs each as a thread of this process, at most 64
// CHECK-NEXT: exit 2
// CHECK-LABEL: == --mesh dp:1048576
// CHECK-NEXT: has 1048576 devices
// CHECK-NEXT: exit 2
// CHECK-LABEL: == --mesh dp:65
// CHECK-NEXT: has 65 devices
// CHECK-NEXT: exit 2
// CHECK-LABEL: == --mesh dp:4096,tp:4096,pp:4096,dp:4096,tp:4096,pp:4096
// CHECK-NEXT: has more than 2^63 devices
// CHECK-NEXT: exit 2
// CHECK-LABEL: == --mesh dp:2 --rtol=inf
// CHECK-NEXT: partition-check: error: --rtol infinity is out of range (0 to 1)
// CHECK-NEXT: exit 2
// CHECK-LABEL: == --mesh dp:2 --rtol=nan
// CHECK-NEXT: partition-check: error: --rtol NaN is out of range (0 to 1)
// CHECK-NEXT: exit 2
// CHECK-LABEL: == --mesh dp:2 --rtol=-1
// CHECK-NEXT: partition-check: error: --rtol -1 is out of range (0 to 1)
// CHECK-NEXT: exit 2
// CHECK-LABEL: == --mesh dp:2 --atol=-1e-9
// CHECK-NEXT: partition-check: error: --atol -1e-09 is out of range (0 to 1e+06)
// CHECK-NEXT: exit 2
// CHECK-LABEL: == --mesh dp:2 --atol=inf
// CHECK-NEXT: partition-check: error: --atol infinity is out of range (0 to 1e+06)
// CHECK-NEXT: exit 2
// CHECK-LABEL: == --mesh dp:2 --weight-rtol=nan
// CHECK-NEXT: partition-check: error: --weight-rtol NaN is out of range (0 to 1)
// CHECK-NEXT: exit 2
// CHECK-LABEL: == --mesh dp:2 --random-scale 1e300
// CHECK-NEXT: partition-check: error: --random-scale 1e+300 is out of range (0 to 1000)
// CHECK-NEXT: exit 2
// CHECK-LABEL: == --mesh dp:2 --random-scale 0
// CHECK-NEXT: partition-check: error: --random-scale 0 must be positive
// CHECK-NEXT: exit 2
// CHECK-LABEL: == --mesh dp:2 --random-scale nan
// CHECK-NEXT: partition-check: error: --random-scale NaN must be positive
// CHECK-NEXT: exit 2
// CHECK-LABEL: == --mesh dp:2 --random-weights -3
// CHECK-NEXT: partition-check: error: --random-weights -3 is not a seed (0 or more)
// CHECK-NEXT: exit 2
// CHECK-LABEL: == --mesh dp:2 --input-seed -1
// CHECK-NEXT: partition-check: error: --input-seed -1 is not a seed (0 or more)
// CHECK-NEXT: exit 2
// CHECK-LABEL: == --mesh dp:2 --timeout 0
// CHECK-NEXT: partition-check: error: --timeout 0 is out of range (1 to 86400)
// CHECK-NEXT: exit 2
// CHECK-LABEL: == --mesh dp:2 --timeout 1000000
// CHECK-NEXT: partition-check: error: --timeout 1e+06 is out of range (1 to 86400)
// CHECK-NEXT: exit 2
// CHECK-LABEL: == --mesh dp:2 --steps 1000000
// CHECK-NEXT: partition-check: error: --steps 1e+06 is out of range (0 to 10000)
// CHECK-NEXT: exit 2
// A rank's thread that cannot be started is an error naming it (the ranks
// already running are cancelled at once, not after --timeout), never
// std::terminate:
// CHECK-LABEL: == --mesh dp:2 --test-fail-thread 1
// CHECK-NEXT: partition-check: error: the partitioned run failed: cannot start rank 1 of 2 as a thread: Resource temporarily unavailable
// CHECK-NEXT: exit 2

func.func @main(%x: tensor<4x8xf32> {part.role = #part.role<input>, part.name = "x"},
                %w: tensor<8x8xf32> {part.role = #part.role<parameter>, part.name = "w"}) -> tensor<4x8xf32> {
  %h = part.matmul %x, %w : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  return %h : tensor<4x8xf32>
}
