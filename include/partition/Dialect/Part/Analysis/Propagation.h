//===- Propagation.h - sharding propagation as an analysis ------*- C++ -*-===//
//
// Each value gets a sharding from the user's annotations, carried through
// every op by its sharding rule (one projection, ShardingProjection.h),
// forward and backward until nothing changes. A factor takes its mesh axes
// from the highest-priority value that carries some (a user annotation beats
// a propagated sharding; at equal priority a finer split of the same axes,
// then the larger value); values only ever gain axes, so the iteration ends.
// Need-replication factors never carry axes: the partitioner reshards their
// operands. Axes on a reduction factor make the result a pending sum over
// them. See docs/design/2026-12-02-sharding-propagation.md.
//
// compute() never changes the IR; write() records the result as
// `part.sharding` and `part.sharding_origin` (part-propagate-shardings).
//
//===----------------------------------------------------------------------===//

#ifndef PARTITION_DIALECT_PART_ANALYSIS_PROPAGATION_H
#define PARTITION_DIALECT_PART_ANALYSIS_PROPAGATION_H

#include "partition/Dialect/Part/IR/PartOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <memory>

namespace partition::part {

class ShardingPropagation {
public:
  /// Propagation over `function` on `mesh`, seeded by the function's
  /// annotations (argument and result shardings, sharding_constraint ops,
  /// shardings already on op results).
  ShardingPropagation(mlir::func::FuncOp function, MeshOp mesh);
  ~ShardingPropagation();

  /// Propagates to a fixed point. Errors, emitted on the op: a part op with
  /// no sharding rule, no convergence. Remarks name the axes a value cannot
  /// carry through an op.
  mlir::LogicalResult compute();
  /// The sharding `v` has after compute(); null when it got none.
  ShardingAttr shardingOf(mlir::Value v) const;
  /// Where `v`'s sharding came from (the annotations, joined by "; ").
  std::string originOf(mlir::Value v) const;
  /// Writes what propagation found onto the function: part.sharding and
  /// part.sharding_origin on arguments and op results.
  void write();

  class Impl;

private:
  std::unique_ptr<Impl> impl;
};

} // namespace partition::part

#endif // PARTITION_DIALECT_PART_ANALYSIS_PROPAGATION_H
