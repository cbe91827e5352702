//===- DimensionClasses.h - dimensions split together ---------*- C++ -*-===//
//
// The dimensions of a function's values joined through its ops' sharding
// rules: two dimensions are in one class when a factor leads both (a split
// of that factor splits both first). Data parallelism finds the batch with
// it (the class of the labels' first dimension), expert parallelism the
// experts' weights (the class of a dispatch buffer's expert dimension).
//
//===----------------------------------------------------------------------===//

#ifndef PARTITION_DIALECT_PART_ANALYSIS_DIMENSIONCLASSES_H
#define PARTITION_DIALECT_PART_ANALYSIS_DIMENSIONCLASSES_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/IntEqClasses.h"

#include <optional>

namespace partition::part {

class DimensionClasses {
public:
  explicit DimensionClasses(mlir::func::FuncOp function);

  /// The class of dimension `dim` of `value`, or nullopt when no op's rule
  /// maps it.
  std::optional<unsigned> classOf(mlir::Value value, unsigned dim) const;
  /// How many dimensions of values are in class `c`.
  unsigned size(unsigned c) const { return sizes.lookup(c); }

private:
  llvm::DenseMap<std::pair<mlir::Value, unsigned>, unsigned> nodes;
  llvm::IntEqClasses classes;
  llvm::DenseMap<unsigned, unsigned> sizes;
};

} // namespace partition::part

#endif // PARTITION_DIALECT_PART_ANALYSIS_DIMENSIONCLASSES_H
