//===- InitAll.h - register every partition dialect and pass ----*- C++ -*-===//
//
// The one place that lists what partition's tools load: every tool and test
// registers through these functions.
//
//===----------------------------------------------------------------------===//

#ifndef PARTITION_INITALL_H
#define PARTITION_INITALL_H

#include "partition/Dialect/Part/IR/PartDialect.h"
#include "partition/Dialect/Part/Transforms/Passes.h"
#include "partition/Planner/Planner.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Transforms/Passes.h"

namespace partition {

/// Adds the dialects partition's IR is made of to `registry`.
inline void registerAllDialects(mlir::DialectRegistry &registry) {
  registry.insert<part::PartDialect, mlir::func::FuncDialect>();
}

/// Registers partition's passes and the upstream passes its pipelines use.
inline void registerAllPasses() {
  part::registerPartPasses();
  part::registerSpmdPipeline();
  planner::registerAutoPartitionPass();
  mlir::registerCanonicalizerPass();
  mlir::registerCSEPass();
  mlir::registerSymbolDCEPass();
}

} // namespace partition

#endif // PARTITION_INITALL_H
