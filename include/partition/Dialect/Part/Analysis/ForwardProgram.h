//===- ForwardProgram.h - the ops a step's plain results need ---*- C++ -*-===//
//
// Slices of a training step. The forward program of a function: the ops its
// plain results (the loss, or an inference's outputs) are computed from.
// Gradients (part.grad_of), optimizer updates (part.updates) and what only
// they need -- backward, recomputed copies, the update -- are not. And the
// split of a backward into the input's and the weights' gradients.
//
//===----------------------------------------------------------------------===//

#ifndef PARTITION_DIALECT_PART_ANALYSIS_FORWARDPROGRAM_H
#define PARTITION_DIALECT_PART_ANALYSIS_FORWARDPROGRAM_H

#include "partition/Dialect/Part/IR/PartDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseSet.h"

namespace partition::part {

/// The ops the results of `function` that `wanted` selects (by index) are
/// computed from.
inline llvm::DenseSet<mlir::Operation *>
opsFeedingResults(mlir::func::FuncOp function,
                  llvm::function_ref<bool(unsigned)> wanted) {
  llvm::DenseSet<mlir::Operation *> ops;
  llvm::SmallVector<mlir::Value> work;
  auto ret = llvm::cast<mlir::func::ReturnOp>(
      function.getBody().front().getTerminator());
  for (auto [i, v] : llvm::enumerate(ret.getOperands()))
    if (wanted(i))
      work.push_back(v);
  while (!work.empty()) {
    mlir::Operation *def = work.pop_back_val().getDefiningOp();
    if (def && ops.insert(def).second)
      work.append(def->operand_begin(), def->operand_end());
  }
  return ops;
}

inline llvm::DenseSet<mlir::Operation *>
forwardProgram(mlir::func::FuncOp function) {
  return opsFeedingResults(function, [&](unsigned i) {
    return !function.getResultAttr(i, PartDialect::getGradOfAttrName()) &&
           !function.getResultAttr(i, PartDialect::getUpdatesAttrName());
  });
}

/// Zero-bubble's split of a backward into what the previous stage waits for
/// (Bi) and the weight gradients (W): walking `block` backwards, an op that
/// `isBackward` is a weight-gradient op when it has readers and each of them
/// either ends a gradient (`endsGradient`: its accumulation, the update,
/// the return) or is a weight-gradient op of the same `groupOf` (stage or
/// layer). part-pipeline splits its stages' backwards by this, and the
/// planner's probe costs the split the same way.
inline llvm::DenseSet<mlir::Operation *>
weightGradientOps(mlir::Block &block,
                  llvm::function_ref<bool(mlir::Operation *)> isBackward,
                  llvm::function_ref<bool(mlir::Operation *)> endsGradient,
                  llvm::function_ref<int64_t(mlir::Operation *)> groupOf) {
  llvm::DenseSet<mlir::Operation *> weight;
  for (mlir::Operation &op : llvm::reverse(block.without_terminator())) {
    if (!isBackward(&op) || op.use_empty())
      continue;
    bool onlyWeights = llvm::all_of(op.getUsers(), [&](mlir::Operation *user) {
      return endsGradient(user) ||
             (weight.contains(user) && groupOf(user) == groupOf(&op));
    });
    if (onlyWeights)
      weight.insert(&op);
  }
  return weight;
}

} // namespace partition::part

#endif // PARTITION_DIALECT_PART_ANALYSIS_FORWARDPROGRAM_H
