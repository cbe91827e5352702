//===- ShardingProjection.h - layouts onto an op's factors and back -*- C++ -*-===//
//
// The one projection of a value's layout onto the factors of an op's
// sharding rule (ShardingRule.h), and of factor axes back onto the op's
// operands and results, used by propagation, partitioning and
// tensor-parallel detection. In the spirit of Shardy's ShardingProjection.
//
//===----------------------------------------------------------------------===//

#ifndef PARTITION_DIALECT_PART_ANALYSIS_SHARDINGPROJECTION_H
#define PARTITION_DIALECT_PART_ANALYSIS_SHARDINGPROJECTION_H

#include "partition/Dialect/Part/IR/Layout.h"
#include "partition/Dialect/Part/IR/ShardingRule.h"

#include "llvm/ADT/STLFunctionalExtras.h"

namespace partition::part {

/// Mesh axes per factor of a rule.
using FactorAxes = llvm::SmallVector<llvm::SmallVector<mlir::StringAttr>, 4>;

/// What one value's layout gives the factors of an op.
struct ValueProjection {
  /// Per factor: the axes the value's dimensions give it (empty for the
  /// factors the value does not map, and for need-replication factors,
  /// whose axes are consumed but never given).
  FactorAxes factorAxes;
  /// Per dimension: the axes no factor could take (they do not split the
  /// dimension's factors evenly, major to minor).
  llvm::SmallVector<llvm::SmallVector<mlir::StringAttr>, 4> leftover;

  bool hasLeftover() const {
    return llvm::any_of(leftover, [](const auto &axes) { return !axes.empty(); });
  }
};

/// Projects `layout`, the layout of a value that `mapping` maps onto the
/// factors of `rule`, onto those factors. A dimension's axes go to its
/// factors major to minor: a factor takes the next axes while the product
/// of their sizes divides the factor's size; once a factor is not split
/// completely, the dimension's remaining axes stop there (leftover).
ValueProjection
projectOntoFactors(const ShardingRule &rule,
                   const ShardingRule::ValueMapping &mapping,
                   const Layout &layout,
                   llvm::function_ref<int64_t(mlir::StringAttr)> axisSize);

/// Drops from `factorAxes` the axes that no layout can express: in a
/// dimension of an operand or result of `rule` made of several factors
/// (a reshape's merged dimensions), a factor may carry axes only when every
/// factor before it (more major) is split completely. Otherwise each device
/// would hold a strided part of the dimension, not a block: [8, 16] split
/// over "dp" on its 16 is not [128] split over "dp", whose blocks are 64
/// consecutive rows. Repeats until every dimension of every value agrees.
/// Returns whether it dropped any axis.
bool dropStridedSplits(const ShardingRule &rule, FactorAxes &factorAxes,
                       llvm::function_ref<int64_t(mlir::StringAttr)> axisSize);

/// The layout of a value that `mapping` maps onto the factors of `rule`
/// when the factors carry `factorAxes`: each dimension split by its factors'
/// axes, major to minor. A result (`isResult`) is also a pending sum over the
/// axes of the rule's reduction factors. `factorAxes` must have no strided
/// split (dropStridedSplits): the axes of a minor factor after a major one
/// split partly would be taken for a block split of the dimension.
Layout layoutFromFactors(const ShardingRule &rule,
                         const ShardingRule::ValueMapping &mapping,
                         const FactorAxes &factorAxes, bool isResult);

} // namespace partition::part

#endif // PARTITION_DIALECT_PART_ANALYSIS_SHARDINGPROJECTION_H
