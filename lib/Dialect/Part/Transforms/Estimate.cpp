//===- Estimate.cpp - predicted step time on a cluster --------------------===//
//
// part-estimate prints what the cost model (Analysis/CostModel.h) predicts
// for the module's per-device programs on a cluster description.
//
//===----------------------------------------------------------------------===//

#include "partition/Dialect/Part/Analysis/CostModel.h"
#include "partition/Dialect/Part/Transforms/Passes.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

namespace partition::part {
#define GEN_PASS_DEF_PARTESTIMATEPASS
#include "partition/Dialect/Part/Transforms/Passes.h.inc"
} // namespace partition::part

using namespace mlir;
using namespace partition::part;

namespace {

/// "2.76 ms", "1.3 s", "85 us".
std::string seconds(double s) {
  std::string out;
  llvm::raw_string_ostream os(out);
  if (s >= 1)
    os << llvm::format("%.3g s", s);
  else if (s >= 1e-3)
    os << llvm::format("%.3g ms", s * 1e3);
  else
    os << llvm::format("%.3g us", s * 1e6);
  return out;
}

struct PartEstimatePass
    : public partition::part::impl::PartEstimatePassBase<PartEstimatePass> {
  using PartEstimatePassBase::PartEstimatePassBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (cluster.empty()) {
      module.emitError() << "part-estimate needs cluster=NAME or FILE (a "
                            "preset: dgx-a100, dgx-h100, h200; or a file "
                            "from partition-run --calibrate)";
      return signalPassFailure();
    }
    auto loaded = partition::runtime::Cluster::load(cluster);
    if (!loaded.isOk()) {
      module.emitError() << "part-estimate: " << loaded.status().message();
      return signalPassFailure();
    }
    std::string error;
    std::optional<StepEstimate> step = estimateStep(module, *loaded, &error);
    if (!step) {
      module.emitError() << "part-estimate: " << error;
      return signalPassFailure();
    }
    llvm::raw_ostream &os = llvm::outs();
    const auto &peaks = loaded->peakFlops;
    auto f32 = peaks.find("f32");
    os << "estimate on " << partition::runtime::printableName(loaded->name)
       << " (" << loaded->nodes << " node" << (loaded->nodes == 1 ? "" : "s")
       << " of " << loaded->devicesPerNode << " devices";
    if (f32 != peaks.end())
      os << llvm::format(", f32 peak %.3g FLOP/s", f32->second);
    os << "):\n";
    for (const ProgramEstimate &p : step->programs)
      os << "  @" << p.function << " on " << p.devices << " device"
         << (p.devices == 1 ? "" : "s") << ": compute "
         << seconds(p.whole.compute) << ", communication "
         << seconds(p.whole.communication) << ", both lanes "
         << seconds(p.seconds) << "\n";
    os << "  step " << seconds(step->seconds) << ": compute "
       << seconds(step->compute) << ", exposed communication "
       << seconds(step->exposedCommunication);
    if (step->programs.size() > 1)
      os << ", bubble " << seconds(step->bubble);
    os << "\n";
  }
};

} // namespace
