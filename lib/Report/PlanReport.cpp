//===- PlanReport.cpp - the HTML report of partition-plan's search ---------===//

#include "partition/Report/PlanReport.h"

#include "partition/Dialect/Part/Analysis/PipelineSchedule.h"

#include <algorithm>
#include <cstdio>

using namespace partition;
using namespace partition::planner;
namespace pl = partition::part::pipeline;
using report::Cell;

namespace {

std::string fixed(double v, const char *format) {
  char buffer[64];
  std::snprintf(buffer, sizeof(buffer), format, v);
  return buffer;
}

std::string planLabel(size_t rank, const PlanConfig &c) {
  std::string s = "#" + std::to_string(rank) + " tp" + std::to_string(c.tp) +
                  " pp" + std::to_string(c.pp) + " dp" + std::to_string(c.dp);
  if (c.cp > 1)
    s += " cp" + std::to_string(c.cp);
  if (c.ep > 1)
    s += " ep" + std::to_string(c.ep);
  if (c.virtualStages > 1)
    s += " vpp" + std::to_string(c.virtualStages);
  s += " mbs" + std::to_string(c.microBatchSize);
  if (c.pp > 1)
    s += " " + c.schedule;
  if (c.zero)
    s += " zero" + std::to_string(c.zero);
  if (c.recompute != Recompute::None)
    s += std::string(" recompute=") + recomputeName(c.recompute);
  if (c.sequenceParallel)
    s += " sp";
  if (c.tpOverlap)
    s += " tp-overlap=" + std::to_string(c.tpOverlap);
  if (!c.dpOverlap)
    s += " dp-overlap=0";
  return s;
}

std::vector<std::pair<std::string, double>> memoryParts(const MemoryEstimate &m) {
  return {{"parameters", m.parameters},
          {"gradients", m.gradients},
          {"optimizer state", m.optimizerState},
          {"activations", m.activations},
          {"workspace", m.workspace}};
}

/// Steps of a schedule the page draws at the most (stages x micro-batches
/// x chunks).
constexpr int64_t kMaxDrawnSteps = 1 << 14;
/// Devices of the first plan's mesh the page draws at the most.
constexpr int64_t kMaxDrawnDevices = 4096;

/// The first plan's schedule under its composed step costs, as
/// part-pipeline would write it.
std::optional<report::Timeline> scheduleTimeline(const PlanEstimate &e,
                                                 size_t rank) {
  const PlanConfig &c = e.config;
  if (c.pp <= 1 || e.stageForward.size() != size_t(c.pp))
    return std::nullopt;
  // A schedule too long to draw (each step is a span on the page) is left
  // out; the ranking and the stages still show the plan.
  if (double(c.pp) * double(c.microBatches) * double(c.virtualStages) >
      double(kMaxDrawnSteps))
    return std::nullopt;
  std::optional<pl::ScheduleKind> kind = pl::parseScheduleKind(c.schedule);
  if (!kind)
    return std::nullopt;
  std::string why;
  std::optional<pl::Schedule> schedule =
      pl::makeSchedule(*kind, c.pp, c.microBatches, c.virtualStages, &why);
  if (!schedule)
    return std::nullopt;
  auto cost = [&](int64_t stage, const pl::Step &step) {
    auto of = [&](const std::vector<std::vector<double>> &v) {
      return size_t(stage) < v.size() ? v[stage] : std::vector<double>();
    };
    return chunkStepSeconds(
        e.stageForward[stage], e.stageBackward[stage],
        size_t(stage) < e.stageWeight.size() ? e.stageWeight[stage] : 0.0,
        of(e.stageForwardShare), of(e.stageBackwardShare), stage,
        c.virtualStages, step);
  };
  std::optional<pl::Timeline> timeline = pl::simulate(*schedule, &why, cost);
  if (!timeline)
    return std::nullopt;
  report::Timeline t;
  t.title = "Pipeline schedule of #" + std::to_string(rank) + ": " +
            std::to_string(c.pp) + " stages, " +
            std::to_string(c.microBatches) + " micro-batches, " + c.schedule +
            (c.virtualStages > 1
                 ? " (" + std::to_string(c.virtualStages) + " chunks)"
                 : "");
  t.unit = "ms";
  for (int64_t s = 0; s < c.pp; ++s) {
    report::Lane lane;
    lane.name = "stage " + std::to_string(s);
    for (auto [i, step] : llvm::enumerate(schedule->steps[s]))
      lane.spans.push_back({pl::stepText(step, schedule->chunks),
                            pl::actionName(step.action),
                            timeline->start[s][i] * 1e3,
                            cost(s, step) * 1e3});
    lane.note = "idle " + fixed(100 * timeline->bubble[s], "%.1f%%");
    t.lanes.push_back(std::move(lane));
  }
  t.caption = "Each step takes its stage's composed forward or backward "
              "time for one micro-batch (the probes' per-op costs); the "
              "schedule ends at " +
              report::formatSeconds(timeline->makespan) +
              ", then each stage updates its parameters.";
  return t;
}

} // namespace

report::Report partition::buildPlanReport(const SearchResult &result,
                                          const SearchOptions &options,
                                          const std::string &model,
                                          size_t top,
                                          const std::vector<std::string> &notes) {
  const runtime::Cluster &cluster = options.cluster;
  report::Report page;
  page.title = "partition-plan: " + model;
  int64_t batch =
      options.globalBatch ? options.globalBatch : result.model.batch;
  page.subtitle = std::to_string(result.model.layers) + " layers, " +
                  report::formatCount(result.model.parameters) +
                  " parameters, global batch " + std::to_string(batch) + "; " +
                  std::to_string(options.devices) + " devices of " +
                  runtime::printableName(cluster.name) + " (" +
                  std::to_string(cluster.devicesPerNode) + " " +
                  runtime::printableName(cluster.deviceName) + " per node, " +
                  report::formatBytes(cluster.memoryBytes) + " each)";
  page.notes = notes;
  int64_t prunedTotal = 0;
  for (auto &[why, n] : result.pruned)
    prunedTotal += n;
  page.summary.push_back({"plans searched", std::to_string(result.considered)});
  page.summary.push_back({"plans that fit", std::to_string(result.plans.size())});
  page.summary.push_back({"left out", std::to_string(prunedTotal)});
  page.summary.push_back(
      {"search time", fixed(result.seconds, "%.2f s") + " (" +
                          std::to_string(result.model.probes) + " probes)"});
  if (result.plans.empty())
    return page;
  const PlanEstimate &first = result.plans.front();
  page.summary.push_back({"#1", planLabel(1, first.config).substr(3)});
  page.summary.push_back({"predicted step", report::formatSeconds(first.seconds)});
  page.summary.push_back({"MFU", fixed(100 * first.mfu, "%.1f%%")});
  page.summary.push_back(
      {"TFLOP/s per device", fixed(first.tflopsPerDevice, "%.1f")});
  page.summary.push_back(
      {"peak memory", report::formatBytes(first.memory.total()) + " (stage " +
                          std::to_string(first.memoryStage) + ")"});
  page.summary.push_back({"part-spmd options", first.config.spmdOptions()});

  // --- the ranked plans ---------------------------------------------------
  report::BarChart ranked;
  ranked.id = "ranked";
  ranked.title = "Ranked plans: predicted step";
  ranked.unit = "ms";
  report::Table table;
  table.id = "plans";
  table.title = "Ranked plans";
  table.columns = {"#",        "tp",      "pp",        "dp",     "vpp",
                   "mbs",      "mb",      "schedule",  "zero",   "recompute",
                   "sp",       "step",    "compute",   "exposed comm.",
                   "bubble",   "memory",  "TFLOP/s",   "MFU"};
  // A cp column where a plan splits the sequence, an ep column for a model
  // with experts (after dp, in the mesh's order).
  bool context = llvm::any_of(
      result.plans, [](const PlanEstimate &e) { return e.config.cp > 1; });
  bool experts = result.model.experts > 0;
  if (experts)
    table.columns.insert(table.columns.begin() + 4, "ep");
  if (context)
    table.columns.insert(table.columns.begin() + 4, "cp");
  for (size_t i = 0; i < result.plans.size() && i < top; ++i) {
    const PlanEstimate &e = result.plans[i];
    const PlanConfig &c = e.config;
    report::Bar bar;
    bar.label = planLabel(i + 1, c);
    bar.parts = {{"compute", e.compute * 1e3},
                 {"exposed communication", e.exposedCommunication * 1e3},
                 {"bubble", e.bubble * 1e3}};
    bar.total = report::formatSeconds(e.seconds) + ", MFU " +
                fixed(100 * e.mfu, "%.1f%%") + ", " +
                report::formatBytes(e.memory.total());
    bar.highlight = i == 0;
    ranked.bars.push_back(std::move(bar));
    auto n = [](int64_t v) { return Cell::number(std::to_string(v)); };
    std::vector<Cell> row =
        {n(int64_t(i + 1)), n(c.tp), n(c.pp), n(c.dp), n(c.virtualStages),
         n(c.microBatchSize), n(c.microBatches), c.schedule, n(c.zero),
         recomputeName(c.recompute),
         std::string(c.sequenceParallel ? "1" : "0") + (c.tpOverlap ? "o" : ""),
         Cell::number(report::formatSeconds(e.seconds)),
         Cell::number(report::formatSeconds(e.compute)),
         Cell::number(report::formatSeconds(e.exposedCommunication)),
         Cell::number(report::formatSeconds(e.bubble)),
         Cell::number(report::formatBytes(e.memory.total())),
         Cell::number(fixed(e.tflopsPerDevice, "%.1f")),
         Cell::number(fixed(100 * e.mfu, "%.1f%%"))};
    if (experts)
      row.insert(row.begin() + 4, n(c.ep));
    if (context)
      row.insert(row.begin() + 4, n(c.cp));
    table.rows.push_back(std::move(row));
  }
  ranked.caption = "The busiest stage's compute, the communication compute "
                   "does not hide, and the pipeline's idle time; after each "
                   "bar: step time, MFU and the fullest stage's memory.";
  page.charts.push_back(std::move(ranked));

  // --- the first plan drawn -----------------------------------------------
  const PlanConfig &c = first.config;
  report::MeshView mesh;
  mesh.name = "#1";
  mesh.role = "pp outermost, tp innermost: a tp group on consecutive ranks";
  for (auto [name, size] : {std::pair<const char *, int64_t>{"pp", c.pp},
                            {"dp", c.dp},
                            {"cp", c.cp},
                            {"ep", c.ep},
                            {"tp", c.tp}})
    if (size > 1 || std::string(name) == "tp")
      mesh.axes.push_back({name, size});
  int64_t devices = c.devices();
  // Each device is drawn: a mesh larger than the largest preset's is not.
  if (devices <= kMaxDrawnDevices) {
    for (int64_t r = 0; r < devices; ++r) {
      mesh.ranks.push_back(r);
      mesh.nodes.push_back(r / std::max<int64_t>(1, cluster.devicesPerNode));
    }
    page.meshes.push_back(std::move(mesh));
  }

  report::Table stages;
  stages.id = "stages";
  stages.title = "Stages of #1";
  stages.columns = {"stage",  "ranks",   "layers", "forward / micro-batch",
                    "backward / micro-batch", "update", "memory"};
  int64_t perStage = c.pp > 0 ? result.model.layers / c.pp : 0;
  for (size_t s = 0; s < first.stageMemory.size(); ++s) {
    report::MemoryRole role;
    role.role = "#1 stage " + std::to_string(s);
    int64_t perStageDevices = c.devices() / c.pp;
    role.devices = "ranks " + std::to_string(s * perStageDevices) + "-" +
                   std::to_string((s + 1) * perStageDevices - 1);
    role.bytes = memoryParts(first.stageMemory[s]);
    role.capacity = cluster.memoryBytes;
    std::string layers =
        std::to_string(s * perStage) + "-" +
        std::to_string((s + 1) * perStage - 1) +
        (s == 0 ? " + embedding" : "") +
        (s + 1 == first.stageMemory.size() ? " + head" : "");
    stages.rows.push_back(
        {Cell::number(std::to_string(s)), role.devices, layers,
         Cell::number(report::formatSeconds(first.stageForward[s])),
         Cell::number(report::formatSeconds(first.stageBackward[s])),
         Cell::number(report::formatSeconds(first.stageUpdate[s])),
         Cell::number(report::formatBytes(first.stageMemory[s].total()))});
    page.memory.push_back(std::move(role));
  }
  // The first plan's schedule; when it has no pipeline, the schedule of the
  // best ranked plan that has one.
  for (size_t i = 0; i < result.plans.size() && i < top; ++i) {
    if (result.plans[i].config.pp <= 1)
      continue;
    if (std::optional<report::Timeline> t =
            scheduleTimeline(result.plans[i], i + 1)) {
      if (i > 0)
        t->caption = "#1 runs no pipeline; this is the best ranked plan "
                     "that does. " + t->caption;
      page.timelines.push_back(std::move(*t));
    }
    break;
  }

  page.tables.push_back(std::move(table));
  if (!stages.rows.empty())
    page.tables.push_back(std::move(stages));
  report::Table pruned;
  pruned.id = "left-out";
  pruned.title = "Left out";
  pruned.columns = {"reason", "plans"};
  for (auto &[why, n] : result.pruned)
    pruned.rows.push_back(
        {why == "memory" ? "needs more than the device's " +
                               report::formatBytes(cluster.memoryBytes)
                         : why,
         Cell::number(std::to_string(n))});
  if (!pruned.rows.empty())
    page.tables.push_back(std::move(pruned));
  return page;
}
