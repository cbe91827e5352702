//===- Check.h - does a partitioned model compute what the model does -*- C++ -*-===//
//
// partition-check's engine: partitions a model for a mesh with part-spmd,
// lowers the partitioned and the unpartitioned (one device) programs to
// plans, runs both on CPU ranks (threads, Gloo) with the same weights and
// inputs, and compares every output (with training steps: the loss of each
// step and the weights after the last) against stated tolerances. On a
// mismatch it bisects the forward model to the first op whose partitioned
// result differs (docs/design/2026-12-04-report-check-progress.md).
//
//===----------------------------------------------------------------------===//

#ifndef PARTITION_CHECK_CHECK_H
#define PARTITION_CHECK_CHECK_H

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <string>

namespace partition::check {

/// The exit codes of partition-check.
enum ExitCode : int {
  kPass = 0,      ///< every comparison within its tolerance
  kMismatch = 1,  ///< some output, loss or weight differs
  kError = 2,     ///< bad usage, a model that does not compile, a failed run
  kNonFinite = 3, ///< some output, loss or weight is NaN or infinite
};

/// The most devices a mesh may have: each is a thread of partition-check
/// (with a Gloo connection to every other), and the check is meant for the
/// small meshes that show a partitioning rule wrong.
constexpr int64_t kMaxRanks = 64;

/// What to check and how.
struct CheckOptions {
  /// The mesh, as part-spmd's `mesh` option: "dp:2,tp:2".
  std::string mesh;
  /// More part-spmd options ("zero=1 sequence-parallel=true").
  std::string spmdOptions;
  /// Training steps; 0 checks the forward model.
  int steps = 0;
  /// part-optimizer's options for training. SGD by default: AdamW divides
  /// each gradient by its running RMS, so a gradient that is zero up to
  /// rounding moves its weight by a whole learning rate either way, while
  /// SGD's weights differ by the learning rate times the gradients' rounding.
  std::string optimizer = "kind=sgd lr=0.01";
  /// A safetensors file with every parameter; empty for random weights.
  std::string weights;
  /// --random-weights: partition-run's function of (seed, name, index).
  /// In [-1, 1) by default rather than partition-run's [-0.1, 0.1): small
  /// weights leave a small model's outputs near their initial uniform
  /// values, where a wrong partition can hide under the tolerance.
  uint64_t weightSeed = 1;
  float weightScale = 1.0f;
  /// Seed of the random inputs.
  uint64_t inputSeed = 0;
  /// |partitioned - reference| <= atol + rtol * |reference| for outputs and
  /// losses; weights after training use weightRtol.
  double atol = 1e-5, rtol = 1e-4, weightRtol = 1e-3;
  /// Bisect a mismatch to the first differing op.
  bool bisect = true;
  /// Deadline of each collective wait, in seconds.
  int timeoutSeconds = 60;
  /// TEST ONLY: partition with part-partition's test-drop-matmul-reduction,
  /// a deliberately wrong sharding rule.
  bool testDropMatmulReduction = false;
  /// TEST ONLY: the rank whose thread fails to start (-1: none), as when a
  /// limit on threads is reached.
  int testFailThread = -1;
};

/// Checks `model` (parsed from `modelPath`, whose lines the report quotes)
/// and prints the report to `os` and errors, one line each, to `errs`.
/// Returns an ExitCode.
int runCheck(mlir::ModuleOp model, llvm::StringRef modelPath,
             const CheckOptions &options, llvm::raw_ostream &os,
             llvm::raw_ostream &errs);

} // namespace partition::check

#endif // PARTITION_CHECK_CHECK_H
