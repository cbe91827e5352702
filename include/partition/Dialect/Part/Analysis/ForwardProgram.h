//===- ForwardProgram.h - the ops a step's plain results need ---*- C++ -*-===//
//
// The forward program of a function: the ops its plain results (the loss,
// or an inference's outputs) are computed from. Gradients (part.grad_of),
// optimizer updates (part.updates) and what only they need -- backward,
// recomputed copies, the update -- are not.
//
//===----------------------------------------------------------------------===//

#ifndef PARTITION_DIALECT_PART_ANALYSIS_FORWARDPROGRAM_H
#define PARTITION_DIALECT_PART_ANALYSIS_FORWARDPROGRAM_H

#include "partition/Dialect/Part/IR/PartDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseSet.h"

namespace partition::part {

inline llvm::DenseSet<mlir::Operation *>
forwardProgram(mlir::func::FuncOp function) {
  llvm::DenseSet<mlir::Operation *> forward;
  llvm::SmallVector<mlir::Value> work;
  auto ret = llvm::cast<mlir::func::ReturnOp>(
      function.getBody().front().getTerminator());
  for (auto [i, v] : llvm::enumerate(ret.getOperands()))
    if (!function.getResultAttr(i, PartDialect::getGradOfAttrName()) &&
        !function.getResultAttr(i, PartDialect::getUpdatesAttrName()))
      work.push_back(v);
  while (!work.empty()) {
    mlir::Operation *def = work.pop_back_val().getDefiningOp();
    if (def && forward.insert(def).second)
      work.append(def->operand_begin(), def->operand_end());
  }
  return forward;
}

} // namespace partition::part

#endif // PARTITION_DIALECT_PART_ANALYSIS_FORWARDPROGRAM_H
