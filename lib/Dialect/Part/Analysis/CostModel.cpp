//===- CostModel.cpp - predicted time of a partitioned step ---------------===//

#include "partition/Dialect/Part/Analysis/CostModel.h"
#include "partition/Dialect/Part/Analysis/Cost.h"
#include "partition/Dialect/Part/Analysis/FragmentTable.h"
#include "partition/Dialect/Part/Analysis/PipelineSchedule.h"
#include "partition/Dialect/Part/IR/PartOps.h"

#include "mlir/IR/SymbolTable.h"

#include <algorithm>
#include <limits>
#include <set>

using namespace mlir;
using namespace partition::part;
using partition::runtime::Cluster;
using partition::runtime::Link;
namespace pl = partition::part::pipeline;

namespace {

int64_t bytesOf(Value v) {
  auto t = dyn_cast<RankedTensorType>(v.getType());
  return t ? getTensorBytes(t).value_or(0) : 0;
}

/// Whether every device of `ranks` is in one node.
bool oneNode(const std::set<int64_t> &ranks, const Cluster &cluster) {
  std::set<int64_t> nodes;
  for (int64_t r : ranks)
    nodes.insert(r / std::max<int64_t>(1, cluster.devicesPerNode));
  return nodes.size() <= 1;
}

/// The world ranks of the group over `axes` that device 0 of `mesh` is in.
std::set<int64_t> groupOfFirst(MeshAttr mesh, ArrayRef<StringAttr> axes,
                               int64_t firstRank) {
  std::set<int64_t> ranks;
  SmallVector<int64_t> coordinates(mesh.getNumAxes(), 0);
  SmallVector<unsigned> along;
  for (StringAttr a : axes)
    if (auto i = mesh.getAxisIndex(a.getValue()))
      along.push_back(*i);
  // Every combination of coordinates along `along`.
  std::function<void(size_t)> visit = [&](size_t k) {
    if (k == along.size()) {
      ranks.insert(firstRank + mesh.getDeviceId(coordinates));
      return;
    }
    for (int64_t c = 0; c < mesh.getAxisSizes()[along[k]]; ++c) {
      coordinates[along[k]] = c;
      visit(k + 1);
    }
    coordinates[along[k]] = 0;
  };
  visit(0);
  return ranks;
}

/// Whether the runtime runs `op` on its communication lane.
bool communicates(Operation *op, MeshAttr mesh) {
  return isa<SendOp, RecvOp>(op) ||
         (!isa<AllSliceOp, AxisIndexOp>(op) && collectiveCost(op, mesh));
}


} // namespace

double partition::part::peakFlopsFor(Operation *op, const Cluster &cluster) {
  std::string dtype = "f32";
  if (op->getNumResults())
    if (auto t = dyn_cast<RankedTensorType>(op->getResult(0).getType())) {
      Type e = t.getElementType();
      if (e.isBF16())
        dtype = "bf16";
      else if (e.isF16())
        dtype = "f16";
    }
  // Its dtype's peak or f32's, never another dtype's (Cluster::peakFor);
  // cluster files always name f32.
  return cluster.peakFor(dtype);
}

/// The share of the scores a causal mask of `window` keys (0: all before
/// the query) keeps of [sq, sk]: query i keeps min(i + 1, window, sk).
static double keptShare(int64_t sq, int64_t sk, int64_t window) {
  if (sq <= 0 || sk <= 0)
    return 1;
  double w = double(window > 0 ? std::min(window, sk) : sk);
  double rows = double(sq);
  // Rows below w keep i + 1 keys, the rest w.
  double ramp = std::min(rows, w);
  double kept = ramp * (ramp + 1) / 2 + (rows - ramp) * w;
  return std::min(1.0, kept / (rows * double(sk)));
}

KernelWork partition::part::kernelWorkOf(Operation *op,
                                         const Cluster &cluster) {
  KernelWork w;
  w.flops = double(flopsOf(op));
  w.bytes = double(memoryBytesOf(op, cluster.fusion));
  bool attention = isa<AttentionOp, AttentionBlockOp, AttentionGradOp>(op);
  if (isa<MatmulOp, BatchMatmulOp>(op) ||
      (attention && cluster.attention <= 0))
    w.kind = runtime::KernelKind::Gemm;
  if (!attention || cluster.attention <= 0)
    return w;
  w.kind = runtime::KernelKind::Attention;
  w.bytes -= double(attentionScratchBytes(op));
  auto q = cast<RankedTensorType>(op->getOperand(0).getType());
  auto k = cast<RankedTensorType>(op->getOperand(1).getType());
  if (op->hasAttr("causal")) {
    auto window = op->getAttrOfType<IntegerAttr>("window");
    // With positions (part-context-parallel's queries: a device's chunks
    // of the sequence in the balanced order, against all of its keys) the
    // rows are not the first Sq of the sequence: the balanced chunks keep
    // as many scores per query as the whole sequence's average row (and a
    // ring's blocks, over its steps, as many as the whole).
    bool positions = isa<AttentionBlockOp>(op);
    if (auto a = dyn_cast<AttentionOp>(op))
      positions = static_cast<bool>(a.getQueryPositions());
    if (auto g = dyn_cast<AttentionGradOp>(op))
      positions = static_cast<bool>(g.getQueryPositions());
    int64_t sk = k.getShape()[2];
    w.flops *= keptShare(positions ? sk : q.getShape()[2], sk,
                         window ? window.getInt() : 0);
  }
  return w;
}

FirstRanks partition::part::firstRanksOf(ModuleOp module) {
  FirstRanks ranks;
  int64_t next = 0;
  for (MeshOp mesh : module.getOps<MeshOp>()) {
    ranks[mesh.getSymName()] = next;
    next += mesh.getMesh().getNumDevices();
  }
  return ranks;
}

TimeEstimate partition::part::estimateOp(Operation *op, MeshAttr mesh,
                                         int64_t firstRank,
                                         const Cluster &cluster,
                                         const FirstRanks *ranks,
                                         double scale) {
  TimeEstimate t;
  if (isa<ReshapeOp, ConstantOp, AxisIndexOp>(op))
    return t;
  if (std::optional<CollectiveCost> c = collectiveCost(op, mesh)) {
    if (c->groupSize <= 1 || c->movedBytes == 0)
      return t;
    std::set<int64_t> group = groupOfFirst(mesh, c->axes, firstRank);
    const Link &link =
        oneNode(group, cluster) ? cluster.intraNode : cluster.interNode;
    t.communication =
        cluster.linkSeconds(link, scale * double(c->movedBytes), c->steps);
    return t;
  }
  if (isa<SendOp, RecvOp>(op)) {
    // The peer: device 0 of the other mesh (device i talks to device i;
    // only the node matters).
    auto peerMesh = op->getAttrOfType<FlatSymbolRefAttr>(
        isa<SendOp>(op) ? "to" : "from");
    int64_t peerFirst = firstRank;
    if (ranks && peerMesh)
      peerFirst = ranks->lookup(peerMesh.getValue());
    const Link &link = oneNode({firstRank, peerFirst}, cluster)
                           ? cluster.intraNode
                           : cluster.interNode;
    Value v = isa<SendOp>(op) ? op->getOperand(0) : op->getResult(0);
    // Each end pays half: together one transfer.
    t.communication =
        cluster.linkSeconds(link, scale * double(bytesOf(v)), 1) / 2;
    return t;
  }
  KernelWork work = kernelWorkOf(op, cluster);
  t.compute = cluster.kernelSeconds(scale * work.flops, scale * work.bytes,
                                    peakFlopsFor(op, cluster), work.kind);
  return t;
}

ProgramEstimate partition::part::estimateProgram(
    func::FuncOp function, MeshAttr mesh, int64_t firstRank,
    const Cluster &cluster, const FirstRanks *ranks,
    llvm::function_ref<bool(Operation *)> include,
    llvm::function_ref<double(Operation *)> scaleOf) {
  ProgramEstimate p;
  p.function = function.getName().str();
  p.devices = mesh.getNumDevices();
  double computeFree = 0, commFree = 0;
  llvm::DenseMap<Value, double> ready;
  std::map<std::string, std::pair<double, double>> spans; // label: start, end
  std::map<std::string, TimeEstimate> sums;               // label: work
  for (Operation &op : function.getBody().front().without_terminator()) {
    if (include && !include(&op))
      continue;
    TimeEstimate t = estimateOp(&op, mesh, firstRank, cluster, ranks,
                                scaleOf ? scaleOf(&op) : 1.0);
    p.whole += t;
    double start = 0;
    for (Value v : op.getOperands())
      start = std::max(start, ready.lookup(v));
    bool onLane = communicates(&op, mesh);
    double &lane = onLane ? commFree : computeFree;
    start = std::max(start, lane);
    double end = start + (onLane ? t.communication : t.compute);
    lane = end;
    for (Value r : op.getResults())
      ready[r] = end;
    // A step spans from its first op's start to its last op's end, except
    // that a receive, which reads nothing here, could start as soon as the
    // lane is free: when its value comes is the pipeline simulation's
    // business, so it only extends the step's end.
    if (auto step = op.getAttrOfType<StringAttr>("part.step")) {
      sums[step.getValue().str()] += t;
      double from = isa<RecvOp>(op) ? std::numeric_limits<double>::infinity()
                                     : start;
      auto [it, fresh] =
          spans.try_emplace(step.getValue().str(), std::make_pair(from, end));
      if (!fresh) {
        it->second.first = std::min(it->second.first, from);
        it->second.second = std::max(it->second.second, end);
      }
    }
  }
  // Communication the timeline hid behind compute costs (1 - overlap) of
  // its time after all, where the two take the same resources.
  auto withOverlap = [&](double span, const TimeEstimate &work) {
    double hidden = std::max(
        0.0, work.communication - std::max(0.0, span - work.compute));
    return span + (1 - cluster.overlap) * hidden;
  };
  p.seconds = withOverlap(std::max(computeFree, commFree), p.whole);
  for (auto &[label, span] : spans)
    p.steps[label] = withOverlap(
        std::max(0.0, span.second - std::min(span.first, span.second)),
        sums[label]);
  return p;
}

/// A pipeline stage written as fragments and a table: `stage` (the
/// estimate of its update) gets each step of its table timed as the
/// fragment that runs it, "U" as the update (with P, once per step), and
/// their work counted as often as the table runs them. False when a
/// fragment cannot be found.
static bool addFragmentSteps(func::FuncOp function, MeshOp mesh,
                             int64_t firstRank, const Cluster &cluster,
                             const FirstRanks &ranks, ProgramEstimate &stage) {
  FailureOr<std::optional<FragmentTable>> table = readFragmentTable(
      function, [](Operation *) { return InFlightDiagnostic(); });
  if (failed(table))
    return false;
  if (!*table)
    return true;
  std::vector<ProgramEstimate> fragments;
  for (const FragmentTable::Fragment &f : (*table)->fragments)
    fragments.push_back(estimateProgram(f.function, mesh.getMesh(), firstRank,
                                        cluster, &ranks));
  double prologue = 0;
  if (int p = (*table)->prologue; p >= 0) {
    prologue = fragments[p].seconds;
    stage.whole += fragments[p].whole;
  }
  stage.steps["U"] = stage.seconds + prologue;
  for (const FragmentTable::Step &step : (*table)->steps) {
    const ProgramEstimate &f = fragments[step.fragment];
    stage.steps[step.text] = f.seconds;
    stage.whole += f.whole;
    stage.seconds += f.seconds;
  }
  stage.seconds += prologue;
  return true;
}

std::optional<StepEstimate>
partition::part::estimateStep(ModuleOp module, const Cluster &cluster,
                              std::string *error) {
  auto fail = [&](const std::string &why) -> std::optional<StepEstimate> {
    if (error)
      *error = why;
    return std::nullopt;
  };
  StepEstimate e;
  // Stage functions by stage, with their schedules.
  std::map<int64_t, std::pair<size_t, std::vector<pl::Step>>> stages;
  int64_t chunks = 1, microBatches = 0;
  pl::Placement placement = pl::Placement::Interleaved;
  FirstRanks ranks = firstRanksOf(module);
  for (auto function : module.getOps<func::FuncOp>()) {
    FlatSymbolRefAttr meshRef = getSpmdMesh(function);
    if (!meshRef || function.isDeclaration())
      continue;
    MeshOp mesh = lookupMesh(function, meshRef);
    if (!mesh)
      continue;
    auto stage = function->getAttrOfType<IntegerAttr>("part.stage");
    e.programs.push_back(estimateProgram(function, mesh.getMesh(),
                                         ranks.lookup(mesh.getSymName()),
                                         cluster, &ranks));
    if (!stage)
      continue;
    if (!addFragmentSteps(function, mesh, ranks.lookup(mesh.getSymName()),
                          cluster, ranks, e.programs.back()))
      return fail("@" + function.getName().str() +
                  ": its part.fragments are not fragment functions");
    auto schedule = function->getAttrOfType<StringAttr>("part.schedule");
    if (!schedule)
      return fail("@" + function.getName().str() +
                  " is a pipeline stage without part.schedule");
    std::vector<pl::Step> steps;
    SmallVector<StringRef> words;
    schedule.getValue().split(words, ' ', -1, /*KeepEmpty=*/false);
    for (StringRef w : words) {
      std::optional<pl::Step> step = pl::parseStepText(w.str());
      if (!step)
        return fail("@" + function.getName().str() + ": \"" + w.str() +
                    "\" in part.schedule is not a step");
      chunks = std::max(chunks, step->chunk + 1);
      microBatches = std::max(microBatches, step->microBatch + 1);
      steps.push_back(*step);
    }
    stages[stage.getInt()] = {e.programs.size() - 1, std::move(steps)};
    if (auto kind = function->getAttrOfType<StringAttr>("part.schedule_kind"))
      if (auto parsed = pl::parseScheduleKind(kind.getValue().str()))
        placement = pl::placementOf(*parsed);
  }
  if (e.programs.empty())
    return fail("the module has no per-device program (part.spmd): run "
                "part-spmd first");
  if (stages.empty()) {
    // SPMD programs, every device of each alike: the slowest.
    for (const ProgramEstimate &p : e.programs)
      if (p.seconds >= e.seconds) {
        e.seconds = p.seconds;
        e.compute = p.whole.compute;
        e.exposedCommunication = std::max(0.0, p.seconds - p.whole.compute);
      }
    return e;
  }
  pl::Schedule schedule;
  schedule.stages = int64_t(stages.size());
  schedule.microBatches = microBatches;
  schedule.chunks = chunks;
  schedule.placement = placement;
  for (int64_t s = 0; s < schedule.stages; ++s) {
    auto it = stages.find(s);
    if (it == stages.end())
      return fail("pipeline stage " + std::to_string(s) + " is missing");
    schedule.steps.push_back(it->second.second);
  }
  auto stepCost = [&](int64_t s, const pl::Step &step) {
    const ProgramEstimate &p = e.programs[stages[s].first];
    auto it = p.steps.find(pl::stepText(step, chunks));
    return it == p.steps.end() ? 0.0 : it->second;
  };
  std::string why;
  std::optional<pl::Timeline> timeline = pl::simulate(schedule, &why, stepCost);
  if (!timeline)
    return fail("the stages' schedules do not run: " + why);
  // The update after the schedule: each stage's "U", and the step ends
  // with the slowest stage.
  double step = 0, busiest = -1;
  for (auto &[s, entry] : stages) {
    const ProgramEstimate &p = e.programs[entry.first];
    auto u = p.steps.find("U");
    double update = u == p.steps.end() ? 0 : u->second;
    step = std::max(step, timeline->makespan + update);
    if (p.whole.compute > busiest) {
      busiest = p.whole.compute;
      e.compute = p.whole.compute;
      e.bubble = timeline->makespan * timeline->bubble[s];
    }
  }
  e.seconds = step;
  e.exposedCommunication = std::max(0.0, step - e.compute - e.bubble);
  for (auto &[s, entry] : stages)
    e.stagePrograms.push_back(entry.first);
  e.schedule = std::move(schedule);
  e.timeline = std::move(timeline);
  return e;
}
