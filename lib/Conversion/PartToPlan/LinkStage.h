//===- LinkStage.h - a pipeline stage's fragments as one program -*- C++ -*-===//
//
// part-to-plan writes a pipeline stage that part-pipeline wrote as
// fragments (docs/design/2026-12-05-pipeline-schedule-as-data.md) as one
// program whose instructions are cut into fragments, with the stage's
// schedule table as the plan's steps. linkStage lays the fragments out one
// after the other in a temporary function -- P, the kinds of step, the
// update -- where what crosses between steps ("stash:K", "acc:K",
// "hold:K") is an ordinary value, so the program is lowered as any other;
// the values of each slot then share one place in the arena (a stash one
// copy per micro-batch in flight).
//
//===----------------------------------------------------------------------===//

#ifndef PARTITION_CONVERSION_PARTTOPLAN_LINKSTAGE_H
#define PARTITION_CONVERSION_PARTTOPLAN_LINKSTAGE_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace partition {

struct LinkedStage {
  /// The fragments one after the other, then the update; in the module
  /// while it is lowered (the caller erases it).
  mlir::func::FuncOp linked;
  /// Each op of `linked`: the index of its fragment in `fragmentNames`.
  llvm::DenseMap<mlir::Operation *, unsigned> fragmentOf;
  /// The first op of each fragment (fusion does not cross them).
  llvm::DenseSet<mlir::Operation *> firstOps;
  /// "P", the kinds of step ("F", "B.1"), the final ones ("B+reduce",
  /// runtime::kFinalFragmentSuffix), "U".
  std::vector<std::string> fragmentNames;
  /// A value that lives from one step to another: every version of it
  /// (an accumulator's zeros and each step's sum) shares one place, with
  /// `slots` copies (a stash: one per micro-batch in flight).
  struct Slot {
    std::string key;
    llvm::SmallVector<mlir::Value> values;
    int64_t slots = 1;
  };
  std::vector<Slot> slots;
  /// The stage's steps: (fragment index, micro-batch), P first, U last.
  std::vector<std::pair<unsigned, uint32_t>> steps;
  int64_t microBatches = 1;
};

/// Links `stage` (a function with `part.fragments`) into a new function
/// built with `top`; errors name the fragment and slot.
mlir::FailureOr<LinkedStage> linkStage(mlir::func::FuncOp stage,
                                       mlir::OpBuilder &top);

} // namespace partition

#endif // PARTITION_CONVERSION_PARTTOPLAN_LINKSTAGE_H
