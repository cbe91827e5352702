//===- Explain.cpp - why each collective is there and what it costs -------===//

#include "partition/Dialect/Part/Analysis/Cost.h"
#include "partition/Dialect/Part/Analysis/FragmentTable.h"
#include "partition/Dialect/Part/Analysis/PipelineSchedule.h"
#include "partition/Dialect/Part/IR/PartOps.h"
#include "partition/Dialect/Part/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <map>

#define DEBUG_TYPE "part-explain"

namespace partition::part {
#define GEN_PASS_DEF_PARTEXPLAINPASS
#include "partition/Dialect/Part/Transforms/Passes.h.inc"
} // namespace partition::part

using namespace mlir;
using namespace partition::part;

/// The routing op whose capacity buffer the all-to-all `op` moves: the
/// dispatch that made its operand, or the combine that reads its result
/// (through reshapes), or null.
static Operation *routingOf(Operation *op) {
  if (!isa<AllToAllOp>(op))
    return nullptr;
  Value v = op->getOperand(0);
  while (auto reshape = v.getDefiningOp<ReshapeOp>())
    v = reshape.getInput();
  if (auto dispatch = v.getDefiningOp<ExpertDispatchOp>())
    return dispatch;
  for (v = op->getResult(0); v.hasOneUse();) {
    Operation *user = *v.getUsers().begin();
    if (isa<ExpertCombineOp>(user))
      return user;
    if (!isa<ReshapeOp>(user))
      break;
    v = user->getResult(0);
  }
  return nullptr;
}

/// "; to the experts: C slots per expert for each group of S tokens
/// routed to K experts each (capacity factor F)" for an all-to-all of a
/// capacity buffer, else "".
static std::string routingNote(Operation *op) {
  Operation *routing = routingOf(op);
  if (!routing)
    return "";
  auto buffer = cast<RankedTensorType>(
      (isa<ExpertDispatchOp>(routing) ? routing->getResult(0)
                                      : routing->getOperand(0))
          .getType());
  ArrayRef<int64_t> indices =
      cast<RankedTensorType>(routing->getOperand(1).getType()).getShape();
  int64_t experts = buffer.getDimSize(0), capacity = buffer.getDimSize(2);
  double factor = double(capacity * experts) / double(indices[1] * indices[2]);
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "; " << (isa<ExpertDispatchOp>(routing) ? "to" : "from")
     << " the experts: " << capacity << " slots per expert for each group of "
     << indices[1] << " tokens routed to " << indices[2]
     << " experts each (capacity factor " << llvm::format("%.3g", factor)
     << ")";
  return text;
}

namespace {

struct PartExplainPass
    : public partition::part::impl::PartExplainPassBase<PartExplainPass> {
  void runOnOperation() override {
    for (auto function : getOperation().getOps<func::FuncOp>()) {
      // Attention tensor parallelism left whole (part-tensor-parallel says
      // why in part.replicated).
      SmallVector<StringRef> replicated;
      function.walk([&](Operation *op) {
        if (auto why = op->getAttrOfType<StringAttr>(
                PartDialect::getReplicatedAttrName())) {
          op->emitRemark() << why.getValue();
          replicated.push_back(why.getValue());
        }
      });
      for (StringRef why : replicated)
        llvm::outs() << "func @" << function.getName() << ": " << why << "\n";
      FlatSymbolRefAttr meshName = getSpmdMesh(function);
      if (!meshName)
        continue;
      MeshAttr mesh = lookupMesh(function, meshName).getMesh();
      // (kind, axes) -> (count, bytes per device)
      std::map<std::pair<std::string, std::string>, std::pair<int64_t, int64_t>>
          table;
      int64_t total = 0, count = 0, transfers = 0;
      // A pipeline stage's fragments, each as often as its table runs it.
      int64_t times = 1;
      auto visit = [&](Operation *op) {
        // Transfers between pipeline stages.
        if (auto send = dyn_cast<SendOp>(op)) {
          int64_t bytes = *getTensorBytes(send.getInput().getType());
          auto step = op->getAttrOfType<StringAttr>("part.step");
          op->emitRemark() << "send of " << bytes << " bytes to "
                           << send.getTo() << " (channel " << send.getChannel()
                           << (step ? ", step " + step.getValue().str() : "")
                           << ")";
          auto &row = table[{"send", "to " + send.getTo().str()}];
          row.first += times;
          row.second += bytes * times;
          total += bytes * times;
          transfers += times;
          return;
        }
        std::optional<CollectiveCost> cost = collectiveCost(op, mesh);
        if (!cost)
          return;
        SmallVector<std::string> names;
        for (StringAttr axis : cost->axes)
          names.push_back("\"" + axis.getValue().str() + "\"");
        std::string axesText = llvm::join(names, ", ");
        auto origin =
            op->getAttrOfType<StringAttr>(PartDialect::getOriginAttrName());
        op->emitRemark() << cost->kind << " over " << axesText << " ("
                         << cost->groupSize << " devices) of "
                         << cost->operandBytes << " bytes moves "
                         << cost->movedBytes << " bytes per device; needed by "
                         << (origin ? origin.getValue()
                                    : StringRef("(written by hand)"))
                         << routingNote(op);
        auto &row = table[{cost->kind, axesText}];
        row.first += times;
        row.second += cost->movedBytes * times;
        total += cost->movedBytes * times;
        count += times;
      };
      for (auto [part, runs] : getProgramParts(function)) {
        times = runs;
        part->walk(visit);
      }
      llvm::raw_ostream &os = llvm::outs();
      os << "func @" << function.getName() << " on " << meshName << ": "
         << count << " collective" << (count == 1 ? "" : "s") << ", ";
      if (transfers)
        os << transfers << " transfer" << (transfers == 1 ? "" : "s")
           << " to other stages, ";
      os << total << " bytes per device\n";
      if (table.empty())
        continue;
      size_t kindWidth = 4, axesWidth = 4;
      for (auto &[key, row] : table) {
        kindWidth = std::max(kindWidth, key.first.size());
        axesWidth = std::max(axesWidth, key.second.size());
      }
      os << "  " << llvm::left_justify("kind", kindWidth + 2)
         << llvm::left_justify("axes", axesWidth + 2)
         << "count  bytes/device\n";
      for (auto &[key, row] : table)
        os << "  " << llvm::left_justify(key.first, kindWidth + 2)
           << llvm::left_justify(key.second, axesWidth + 2)
           << llvm::left_justify(std::to_string(row.first), 7) << row.second
           << "\n";
    }
    explainPipeline();
    markAllAnalysesPreserved();
  }

  /// The stages' schedules as a timeline under unit costs (F 1, B 2, Bi and
  /// W 1), as the compiler simulated them, with each stage's idle share.
  void explainPipeline() {
    SmallVector<std::pair<int64_t, StringRef>> stages;
    pipeline::Schedule schedule;
    for (auto function : getOperation().getOps<func::FuncOp>()) {
      auto stage = function->getAttrOfType<IntegerAttr>("part.stage");
      auto steps = function->getAttrOfType<StringAttr>("part.schedule");
      if (stage && steps)
        stages.push_back({stage.getInt(), steps.getValue()});
      if (auto kind = function->getAttrOfType<StringAttr>("part.schedule_kind"))
        if (auto parsed = pipeline::parseScheduleKind(kind.getValue().str()))
          schedule.placement = pipeline::placementOf(*parsed);
    }
    if (stages.empty())
      return;
    llvm::sort(stages);
    schedule.stages = stages.size();
    int64_t microBatches = 0;
    for (auto &[stage, text] : stages) {
      SmallVector<StringRef> parts;
      text.split(parts, ' ', -1, /*KeepEmpty=*/false);
      std::vector<pipeline::Step> steps;
      for (StringRef part : parts) {
        std::optional<pipeline::Step> step =
            pipeline::parseStepText(part.str());
        if (!step)
          return;
        microBatches = std::max(microBatches, step->microBatch + 1);
        schedule.chunks = std::max(schedule.chunks, step->chunk + 1);
        steps.push_back(*step);
      }
      schedule.steps.push_back(std::move(steps));
    }
    schedule.microBatches = microBatches;
    std::string error;
    std::optional<pipeline::Timeline> timeline =
        pipeline::simulate(schedule, &error);
    llvm::raw_ostream &os = llvm::outs();
    if (!timeline) {
      os << "pipeline schedule: " << error << "\n";
      return;
    }
    auto cost = [](pipeline::Action a) {
      return a == pipeline::Action::Backward ? 2 : 1;
    };
    int64_t span = int64_t(timeline->makespan);
    os << "pipeline: " << schedule.stages << " stages, " << microBatches
       << " micro-batches; timeline under unit costs (F 1, B 2, Bi and W 1; "
          ". idle):\n";
    for (int64_t s = 0; s < schedule.stages; ++s) {
      std::vector<std::string> cells(span, ".");
      for (auto [i, step] : llvm::enumerate(schedule.steps[s])) {
        int64_t begin = int64_t(timeline->start[s][i]);
        std::string label = pipeline::stepText(step, schedule.chunks);
        for (int64_t t = begin; t < begin + cost(step.action) && t < span; ++t)
          cells[t] = label;
      }
      os << "  stage " << s << " |";
      for (const std::string &cell : cells)
        os << llvm::left_justify(cell, schedule.chunks > 1 ? 6 : 4);
      os << "| idle " << llvm::format("%.2f", timeline->bubble[s])
         << ", at most " << timeline->peakInFlight[s] << " micro-batch"
         << (timeline->peakInFlight[s] == 1 ? "" : "es") << " in flight\n";
    }
  }
};
} // namespace
