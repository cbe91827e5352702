//===- Passes.h - part dialect passes ---------------------------*- C++ -*-===//
//
// Declares the passes of the `part` dialect and their registration.
//
//===----------------------------------------------------------------------===//

#ifndef PARTITION_DIALECT_PART_TRANSFORMS_PASSES_H
#define PARTITION_DIALECT_PART_TRANSFORMS_PASSES_H

#include "partition/Dialect/Part/IR/PartDialect.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace partition::part {

#define GEN_PASS_DECL
#include "partition/Dialect/Part/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "partition/Dialect/Part/Transforms/Passes.h.inc"

} // namespace partition::part

#endif // PARTITION_DIALECT_PART_TRANSFORMS_PASSES_H
