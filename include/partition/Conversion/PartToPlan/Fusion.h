//===- Fusion.h - elementwise chains lowered as one kernel ------*- C++ -*-===//
//
// Groups the elementwise float ops of a per-device program that part-to-plan
// lowers to one Fused kernel each (plan.fbs): a chain such as AdamW's update
// of one tensor (about 17 ops) then reads its operands and writes its
// results once, instead of writing and reading every intermediate. See
// docs/design/2026-12-03-elementwise-fusion.md.
//
//===----------------------------------------------------------------------===//

#ifndef PARTITION_CONVERSION_PARTTOPLAN_FUSION_H
#define PARTITION_CONVERSION_PARTTOPLAN_FUSION_H

#include "mlir/IR/Block.h"
#include "mlir/IR/Operation.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SmallVector.h"

#include <cstddef>
#include <vector>

namespace partition {

/// Ops lowered together as one Fused kernel.
struct FusionGroup {
  /// The members in block order; the kernel runs where the last one was.
  llvm::SmallVector<mlir::Operation *> ops;
  /// The values the members read that no member defines, in order of first
  /// use: the kernel's operands.
  llvm::SmallVector<mlir::Value> operands;
  /// The members' results read by anything outside the group (the return
  /// included): the kernel's results. The others never reach memory.
  llvm::SmallVector<mlir::Value> results;
};

/// The limits of one group (the runtime's kMaxFused*).
struct FusionLimits {
  size_t steps = 64, operands = 32, results = 16;
};

/// The groups of two or more ops of `block` that `fusible` admits. Members
/// of a group have results of one shape; a member reads another member's
/// result whole, and any other operand whole, as one element, or repeating
/// along leading dimensions (a trailing-shape broadcast). A group stops
/// where running it at its last member would move a member past an op that
/// reads its result (no op outside a group runs later than before) or past
/// an op that is neither elementwise nor a scalar (no operand's life grows
/// across a matmul, a reduction or a collective). Time and memory are
/// linear in the block's size.
/// With `startsSegment`, an op for which it holds starts a segment no group
/// crosses (a pipeline fragment: its ops run apart from the others'). With
/// `kept`, a value for which it holds is a result of its group even where
/// no op of the block reads it (a pipeline slot that a later step of the
/// schedule reads).
/// Adds to `values` the results of `group`'s members that nothing outside
/// it reads: the values its kernel keeps on chip, which get no arena bytes.
void addInternalValues(const FusionGroup &group,
                       llvm::DenseSet<mlir::Value> &values);

std::vector<FusionGroup>
findFusionGroups(mlir::Block &block,
                 llvm::function_ref<bool(mlir::Operation *)> fusible,
                 FusionLimits limits = {},
                 llvm::function_ref<bool(mlir::Operation *)> startsSegment =
                     nullptr,
                 llvm::function_ref<bool(mlir::Value)> kept = nullptr);

/// Whether `operand`'s elements repeat into `result`'s shape as the fused
/// kernel reads them: the same shape, one element, or a trailing-shape
/// broadcast (leading ones dropped, what is left is result's last
/// dimensions).
/// True if part-to-plan can run `op` as a step of a fused kernel (an
/// elementwise float op of the plan's fused-step table): what its fusion
/// groups are made of, and what the planner's probe counts as never
/// reaching memory inside them.
bool isFusedKernelOp(mlir::Operation *op);

bool isCyclicBroadcast(llvm::ArrayRef<int64_t> operand,
                       llvm::ArrayRef<int64_t> result);

} // namespace partition

#endif // PARTITION_CONVERSION_PARTTOPLAN_FUSION_H
