//===- PartDialect.h - the part dialect -------------------------*- C++ -*-===//
//
// Declares the `part` dialect.
//
//===----------------------------------------------------------------------===//

#ifndef PARTITION_DIALECT_PART_IR_PARTDIALECT_H
#define PARTITION_DIALECT_PART_IR_PARTDIALECT_H

#include "mlir/IR/Dialect.h"

#include "partition/Dialect/Part/IR/PartOpsDialect.h.inc"

#endif // PARTITION_DIALECT_PART_IR_PARTDIALECT_H
