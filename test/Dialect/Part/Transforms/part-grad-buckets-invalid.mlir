// A bucket holds at most `bytes` of gradients: zero or less cannot hold one.
// RUN: not partition-opt %s --part-grad-buckets="bytes=-1" 2>&1 | FileCheck %s --check-prefix=NEG
// NEG: error: part-grad-buckets: bytes must be positive (the most bytes of gradients one all-reduce carries), got -1
// RUN: not partition-opt %s --part-grad-buckets="bytes=0" 2>&1 | FileCheck %s --check-prefix=ZERO
// ZERO: error: part-grad-buckets: bytes must be positive (the most bytes of gradients one all-reduce carries), got 0

part.mesh @mesh = <["dp"=2]>
