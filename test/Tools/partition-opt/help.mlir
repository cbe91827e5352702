// partition-opt registers exactly partition's passes and pipelines and the
// upstream passes they use; --help lists each with its summary.
// RUN: partition-opt --help | FileCheck %s
// CHECK: --canonicalize
// CHECK: --cse
// CHECK: --part-data-parallel
// CHECK: --part-define-mesh
// CHECK: --part-explain
// CHECK: --part-partition
// CHECK: --part-print-sharding-rules
// CHECK: --part-propagate-shardings
// CHECK: --part-sharding-report
// CHECK: --part-strip-sharding
// CHECK: --part-tensor-parallel
// CHECK: --symbol-dce
// Pipelines come after the passes.
// CHECK: --part-spmd
