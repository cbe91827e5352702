//===- PartitionContext.h - what an op's own partitioning may ask -*- C++ -*-===//
//
// Most ops are partitioned the same way, from their sharding rule: operands
// resharded to the rule's layouts, the op rebuilt on local shapes. An op
// that knows better for some layouts (a lookup in a table split along the
// looked-up rows, cross-entropy or softmax over split classes) implements
// ShardingRuleOpInterface::partition and builds its per-device form itself
// through this context, which the partitioner provides.
//
//===----------------------------------------------------------------------===//

#ifndef PARTITION_DIALECT_PART_IR_PARTITIONCONTEXT_H
#define PARTITION_DIALECT_PART_IR_PARTITIONCONTEXT_H

#include "partition/Dialect/Part/IR/Layout.h"

#include "mlir/IR/Builders.h"

namespace partition::part {

class PartitionContext {
public:
  virtual ~PartitionContext() = default;

  /// The per-device value standing for the global value `global`.
  virtual mlir::Value lookup(mlir::Value global) = 0;
  /// The layout of the per-device value `local`.
  virtual const Layout &layoutOf(mlir::Value local) = 0;
  /// Reshards `local` (operand `operand` of `user`, the global op) to
  /// `target`, with collectives that name `user` and `why` ("operand N" when
  /// empty) as the reason.
  virtual mlir::FailureOr<mlir::Value>
  reshard(mlir::OpBuilder &b, mlir::Value local, const Layout &target,
          mlir::Operation *user, unsigned operand,
          llvm::StringRef why = "") = 0;
  /// Records that `local`, laid out as `layout`, stands for the global
  /// result `global`.
  virtual void map(mlir::Value global, mlir::Value local,
                   const Layout &layout) = 0;
  /// Records the layout of a per-device value an op's partition made
  /// (that stands for no global value), so that it can be resharded.
  virtual void setLayout(mlir::Value local, const Layout &layout) = 0;
  /// The mesh the program is partitioned for, and its size over `axes`.
  virtual mlir::FlatSymbolRefAttr mesh() = 0;
  virtual int64_t groupSize(llvm::ArrayRef<mlir::StringAttr> axes) = 0;
};

} // namespace partition::part

#endif // PARTITION_DIALECT_PART_IR_PARTITIONCONTEXT_H
