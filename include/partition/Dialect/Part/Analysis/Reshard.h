//===- Reshard.h - the collectives that take one layout to another -*- C++ -*-===//
//
// The reshard planner of the sharding analysis library: from the layout a
// value has to the layout a use needs, the sequence of collectives the
// partitioner emits, in this order:
//  1. pending sums completed, over the axes the target does not keep
//     pending: a reduce_scatter where the target splits a
//     dimension by some of the pending axes next (each device gets only its
//     block of the sum), an all_reduce of the rest;
//  2. an axis moved from one dimension to another with an all_to_all, when
//     it is the minor axis of the first and the next axis the second needs
//     (one exchange of (n-1)/n of the data instead of a gather and a slice);
//  3. the axes that are not a prefix of the target's gathered (all_gather);
//  4. the target's remaining axes added by keeping each device's block
//     (all_slice, no communication).
//
//===----------------------------------------------------------------------===//

#ifndef PARTITION_DIALECT_PART_ANALYSIS_RESHARD_H
#define PARTITION_DIALECT_PART_ANALYSIS_RESHARD_H

#include "partition/Dialect/Part/IR/Layout.h"

#include "llvm/ADT/STLFunctionalExtras.h"
#include "mlir/Support/LLVM.h"

#include <string>

namespace partition::part {

/// One collective of a reshard.
struct ReshardStep {
  enum class Kind { ReduceScatter, AllReduce, AllToAll, AllGather, AllSlice };
  Kind kind;
  llvm::SmallVector<mlir::StringAttr> axes;
  /// The dimension scattered, gathered or sliced; for an all_to_all, the
  /// dimension split (the axis moves onto it).
  int64_t dim = -1;
  /// For an all_to_all: the dimension concatenated (the axis leaves it).
  int64_t concatDim = -1;
  /// One device's operand and result shapes.
  llvm::SmallVector<int64_t> operandShape, resultShape;
};

/// "reduce_scatter", "all_reduce", "all_to_all", "all_gather", "all_slice".
llvm::StringRef stringifyReshardKind(ReshardStep::Kind kind);

struct ReshardPlan {
  llvm::SmallVector<ReshardStep> steps;
  /// The layout the steps reach: the target's, except where a dimension
  /// does not divide for a reduce_scatter (then all_reduce and slice).
  Layout reached;
};

/// The collectives that take a value of one device's shape `localShape`,
/// laid out as `from`, to `to`. `groupSize` gives the devices a list of
/// axes spans. Fails (with `error` set) when `to` is a pending sum over an
/// axis that `from` is not: no collective makes one.
mlir::FailureOr<ReshardPlan> planReshard(
    const Layout &from, const Layout &to, llvm::ArrayRef<int64_t> localShape,
    llvm::function_ref<int64_t(llvm::ArrayRef<mlir::StringAttr>)> groupSize,
    std::string *error = nullptr);

/// Bytes one device sends with ring algorithms for the plan's collectives,
/// in the accounting of collectiveCost (Cost.h): an all-reduce 2(n-1)/n of
/// its operand, an all-gather (n-1)/n of its result, a reduce-scatter or
/// all-to-all (n-1)/n of its operand, an all-slice nothing.
int64_t reshardBytes(
    const ReshardPlan &plan, int64_t elementBytes,
    llvm::function_ref<int64_t(llvm::ArrayRef<mlir::StringAttr>)> groupSize);

} // namespace partition::part

#endif // PARTITION_DIALECT_PART_ANALYSIS_RESHARD_H
