//===- Padding.h - padding dimensions a split does not divide ----*- C++ -*-===//
//
// Where a mesh axis does not divide a dimension it should split (a
// vocabulary, a batch, an MLP width), the dimension is padded to a multiple
// of the shard count, with every dimension linked to it through ops' factors,
// and the ops that would read across the padding are masked or rewritten
// (docs/design/2026-12-03-sharding-analysis.md, "Uneven shards"). The
// data- and tensor-parallel passes pad before they annotate, so every
// sharding the rest of the pipeline sees divides its dimension.
//
//===----------------------------------------------------------------------===//

#ifndef PARTITION_DIALECT_PART_TRANSFORMS_PADDING_H
#define PARTITION_DIALECT_PART_TRANSFORMS_PADDING_H

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <optional>
#include <string>

namespace partition::part {

/// Dimension `dim` of `value` is to be split into `shards` blocks.
struct PadRequest {
  mlir::Value value;
  int64_t dim;
  int64_t shards;
};

/// Why a dimension cannot be padded: the op that reads it so, and why.
struct PadBlocker {
  mlir::Operation *op;
  std::string reason;
};

/// Whether the request's dimension, with every dimension linked to it, can
/// be padded; the first op that cannot have it padded otherwise. Changes
/// nothing.
std::optional<PadBlocker> checkPadding(mlir::func::FuncOp function,
                                       const PadRequest &request);

/// Pads the requested dimensions (and the dimensions linked to them) to the
/// next multiple of their shard counts, masks what would read the padding,
/// and records each padded argument's and result's unpadded shape in
/// `part.logical_shape`. Fails, with a diagnostic naming the op, where a
/// dimension cannot be padded.
mlir::LogicalResult padForSplits(mlir::func::FuncOp function,
                                 llvm::ArrayRef<PadRequest> requests);

/// "dimension 0 of argument 3 (\"wte\")", "dimension 1 of the result of
/// part.matmul at loc", for diagnostics.
std::string describeDimension(mlir::func::FuncOp function, mlir::Value value,
                              int64_t dim);

} // namespace partition::part

#endif // PARTITION_DIALECT_PART_TRANSFORMS_PADDING_H
