//===- PartAttrs.h - part attributes and enums ------------------*- C++ -*-===//
//
// Declares the mesh and sharding attributes and the dialect's enums.
//
//===----------------------------------------------------------------------===//

#ifndef PARTITION_DIALECT_PART_IR_PARTATTRS_H
#define PARTITION_DIALECT_PART_IR_PARTATTRS_H

#include "mlir/IR/Attributes.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Support/LLVM.h"

#include "partition/Dialect/Part/IR/PartEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "partition/Dialect/Part/IR/PartAttrs.h.inc"

#endif // PARTITION_DIALECT_PART_IR_PARTATTRS_H
