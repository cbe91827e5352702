//===- AutoPartition.cpp - part-auto-partition ----------------------------===//
//
// Searches the plans of a forward model (Planner.h) and applies the best:
// the training passes and part-spmd with the chosen options run on the
// module, so that what follows (part-to-plan) sees a partitioned program.
//
//===----------------------------------------------------------------------===//

#include "partition/Planner/Planner.h"

#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/Support/Format.h"

using namespace mlir;

namespace {

struct AutoPartitionPass
    : public PassWrapper<AutoPartitionPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(AutoPartitionPass)

  AutoPartitionPass() = default;
  AutoPartitionPass(const AutoPartitionPass &other) : PassWrapper(other) {}

  StringRef getArgument() const override { return "part-auto-partition"; }
  StringRef getDescription() const override {
    return "chooses dp, tp, pp, cp, ep, micro-batching, schedule, ZeRO, "
           "recomputation and sequence parallelism for a forward model on a "
           "cluster by the cost model, then trains and partitions it so";
  }

  Option<std::string> cluster{
      *this, "cluster",
      llvm::cl::desc("a cluster preset (dgx-a100, dgx-h100, h200) or a file "
                     "from partition-run --calibrate")};
  Option<int64_t> devices{*this, "devices",
                          llvm::cl::desc("devices to partition over"),
                          llvm::cl::init(0)};
  Option<int64_t> globalBatch{
      *this, "global-batch",
      llvm::cl::desc("sequences per step (the model's batch if 0; the plan "
                     "is applied to the model, whose batch must equal it)"),
      llvm::cl::init(0)};
  Option<bool> train{*this, "train",
                     llvm::cl::desc("a training step (autodiff, optimizer)"),
                     llvm::cl::init(true)};
  Option<std::string> optimizer{
      *this, "optimizer", llvm::cl::desc("part-optimizer's options"),
      llvm::cl::init("kind=adamw")};
  Option<std::string> precision{*this, "precision",
                                llvm::cl::desc("bf16 (mixed) or f32"),
                                llvm::cl::init("bf16")};
  Option<std::string> fix{
      *this, "fix",
      llvm::cl::desc("fixed choices, as partition-plan --fix "
                     "(tp=2,pp=2,zero=1,...)")};

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto fail = [&](const Twine &message) {
      module.emitError() << "part-auto-partition: " << message;
      signalPassFailure();
    };
    if (cluster.empty())
      return fail("needs cluster=NAME or FILE (a preset: dgx-a100, dgx-h100, "
                  "h200; or a file from partition-run --calibrate)");
    if (devices < 1)
      return fail("needs devices=N (at least 1), got devices=" +
                  Twine(int64_t(devices)));
    if (precision != "bf16" && precision != "f32")
      return fail("precision=" + precision + " is not bf16 or f32");
    auto loaded = partition::runtime::Cluster::load(cluster);
    if (!loaded.isOk())
      return fail(loaded.status().message());
    partition::planner::SearchOptions options;
    options.cluster = *loaded;
    options.devices = devices;
    options.globalBatch = globalBatch;
    options.training.train = train;
    options.training.optimizer = optimizer;
    options.training.precision = precision;
    options.flags = false;
    std::string error;
    if (!fix.empty()) {
      auto constraint = partition::planner::PlanConstraint::parse(fix, &error);
      if (!constraint)
        return fail(error);
      options.constraint = *constraint;
    }
    auto result = partition::planner::search(module, options, &error);
    if (!result)
      return fail(error);
    if (globalBatch && globalBatch != result->model.batch)
      return fail("global-batch=" + Twine(int64_t(globalBatch)) +
                  " differs from the model's batch " +
                  Twine(result->model.batch) +
                  ", and the plan is applied to the model: import it with "
                  "that batch, or plan it with partition-plan");
    const partition::planner::PlanEstimate &best = result->plans.front();
    std::string text = partition::planner::planPipeline(
        module, options.training, best.config);
    OpPassManager pm(ModuleOp::getOperationName());
    std::string parseError;
    llvm::raw_string_ostream os(parseError);
    if (failed(parsePassPipeline(text, pm, os)))
      return fail("cannot build \"" + text + "\": " + parseError);
    std::string predicted;
    llvm::raw_string_ostream(predicted) << llvm::format("%.3g", best.seconds);
    module.emitRemark() << "part-auto-partition chose " << best.config.text()
                        << ": " << predicted << " s per step predicted on "
                        << partition::runtime::printableName(loaded->name)
                        << ", of " << result->plans.size()
                        << " plans that fit (" << result->considered
                        << " considered)";
    if (failed(runPipeline(pm, module)))
      return signalPassFailure();
  }
};

} // namespace

void partition::planner::registerAutoPartitionPass() {
  PassRegistration<AutoPartitionPass>();
}
