// A bucket holds at most `bytes` of gradients: zero or less cannot hold one.
// RUN: not partition-opt %s --part-grad-buckets="bytes=-1" 2>&1 | FileCheck %s --check-prefix=NEG
// NEG: error: part-grad-buckets: bytes must be positive (the most bytes of gradients one all-reduce carries), got -1
// RUN: not partition-opt %s --part-grad-buckets="bytes=0" 2>&1 | FileCheck %s --check-prefix=ZERO
// ZERO: error: part-grad-buckets: bytes must be positive (the most bytes of gradients one all-reduce carries), got 0

part.mesh @mesh = <["dp"=2]>

// The type gradients are reduced in: bf16 or f16.
// RUN: not partition-opt %s --part-grad-buckets="dtype=f8" 2>&1 | FileCheck %s --check-prefix=DTYPE
// DTYPE: error: part-grad-buckets: dtype must be bf16 or f16 (the type gradients are reduced in; empty: their own), got "f8"
