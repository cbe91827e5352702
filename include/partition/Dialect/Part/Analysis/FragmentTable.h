//===- FragmentTable.h - a pipeline stage's fragments and table -*- C++ -*-===//
//
// A pipeline stage that part-pipeline wrote as fragments
// (docs/design/2026-12-05-pipeline-schedule-as-data.md) read back: its
// fragment functions (`part.fragments`) and, for each step of its table
// (`part.schedule`), the fragment that runs it. The one reader of that
// form: part-to-plan, part-estimate, --part-explain and the HTML report go
// through it.
//
// A step "B3.1" runs the fragment named "B.1"; the last step of a kind runs
// the kind's `part.final` fragment where there is one (it completes the
// accumulations the kind adds to).
//
//===----------------------------------------------------------------------===//

#ifndef PARTITION_DIALECT_PART_ANALYSIS_FRAGMENTTABLE_H
#define PARTITION_DIALECT_PART_ANALYSIS_FRAGMENTTABLE_H

#include "partition/Dialect/Part/Analysis/PipelineSchedule.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/SmallVector.h"

#include <cstdint>
#include <string>
#include <vector>

namespace partition::part {

struct FragmentTable {
  struct Fragment {
    mlir::func::FuncOp function;
    /// "P", "F", "B.1", "Bi", "W": its kind of step.
    std::string name;
    /// Runs the kind's last step (`part.final`).
    bool final = false;
  };
  /// In `part.fragments` order.
  std::vector<Fragment> fragments;
  struct Step {
    /// The step as the table writes it ("F3.1").
    std::string text;
    pipeline::Step step;
    /// Index into `fragments`.
    unsigned fragment;
  };
  /// The table's steps in order (P and the update, which run once per
  /// step, are not in it).
  std::vector<Step> steps;
  /// The index of P in `fragments` (-1: none).
  int prologue = -1;
  int64_t microBatches = 1;
  int64_t chunks = 1;

  /// How many times fragment `index` runs in one step.
  int64_t runs(unsigned index) const;
};

/// The fragments and table of `stage`; nullopt for a function that is not
/// a stage written as fragments (no `part.fragments`). A malformed one
/// (a missing fragment function, a step of no fragment) is an error
/// reported through `emitError`, naming the function and the step.
mlir::FailureOr<std::optional<FragmentTable>> readFragmentTable(
    mlir::func::FuncOp stage,
    llvm::function_ref<mlir::InFlightDiagnostic(mlir::Operation *)> emitError);

/// The functions per-device program `function` runs in one step, each with
/// how many times: the function itself once and, for a pipeline stage
/// written as fragments, each fragment as often as its table runs it (P
/// once). A malformed stage counts as the function alone.
llvm::SmallVector<std::pair<mlir::Operation *, int64_t>>
getProgramParts(mlir::Operation *function);

} // namespace partition::part

#endif // PARTITION_DIALECT_PART_ANALYSIS_FRAGMENTTABLE_H
