// partition-opt registers exactly partition's passes and the upstream ones its
// pipelines use.
// RUN: partition-opt --help | FileCheck %s
// CHECK: --canonicalize
// CHECK: --cse
// CHECK: --part-sharding-report
// CHECK: --part-strip-sharding
// CHECK: --symbol-dce
