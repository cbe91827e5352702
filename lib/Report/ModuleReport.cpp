//===- ModuleReport.cpp - the HTML report of a partitioned module ----------===//
//
// Reads what the passes wrote into a module of per-device programs and fills
// the page: the analysis library answers memory (residentBytes), collectives
// (collectiveCost) and time (the cost model); the IR itself answers meshes,
// shardings, layers and schedules.
//
//===----------------------------------------------------------------------===//

#include "partition/Report/ModuleReport.h"

#include "partition/Dialect/Part/Analysis/Cost.h"
#include "partition/Dialect/Part/Analysis/FragmentTable.h"
#include "partition/Dialect/Part/Analysis/CostModel.h"
#include "partition/Dialect/Part/Analysis/PipelineSchedule.h"
#include "partition/Dialect/Part/IR/PartOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Location.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <map>
#include <set>

using namespace mlir;
using namespace partition;
using namespace partition::part;
namespace pl = partition::part::pipeline;
using report::Cell;

namespace {

/// The most rows a table of collectives or parameters lists.
constexpr size_t kMaxRows = 400;

struct Program {
  func::FuncOp function;
  MeshOp mesh;
  int64_t firstRank = 0;
  std::optional<int64_t> stage;
};

std::string shapeText(ArrayRef<int64_t> shape) {
  std::string s = "[";
  for (auto [i, d] : llvm::enumerate(shape))
    s += (i ? ", " : "") + std::to_string(d);
  return s + "]";
}

std::string attrText(Attribute attr) {
  std::string s;
  llvm::raw_string_ostream os(s);
  attr.print(os);
  return s;
}

/// "file:12" of a location, or "" for an unknown one.
std::string locationText(Location loc) {
  if (auto file = dyn_cast<FileLineColLoc>(loc))
    return file.getFilename().str() + ":" + std::to_string(file.getLine());
  if (auto name = dyn_cast<NameLoc>(loc))
    return name.getName().str();
  if (auto fused = dyn_cast<FusedLoc>(loc))
    for (Location l : fused.getLocations())
      if (std::string t = locationText(l); !t.empty())
        return t;
  return "";
}

std::string rankRange(int64_t first, int64_t count) {
  return count == 1 ? "rank " + std::to_string(first)
                    : "ranks " + std::to_string(first) + "-" +
                          std::to_string(first + count - 1);
}

/// The layer an op (or, for an argument, its first user that has one)
/// belongs to; -1 for none.
int64_t layerOf(Operation *op) {
  if (auto layer = op->getAttrOfType<IntegerAttr>(
          PartDialect::getLayerAttrName()))
    return layer.getInt();
  return -1;
}

int64_t layerOfArgument(BlockArgument arg) {
  for (Operation *user : arg.getUsers())
    if (int64_t l = layerOf(user); l >= 0)
      return l;
  // A pipeline stage's argument is read in its fragments ("arg:N").
  Operation *owner = arg.getOwner()->getParentOp();
  std::string slot = "arg:" + std::to_string(arg.getArgNumber());
  for (auto [part, runs] : getProgramParts(owner)) {
    auto fragment = dyn_cast<func::FuncOp>(part);
    if (part == owner || !fragment || fragment.isDeclaration())
      continue;
    for (BlockArgument a : fragment.getArguments())
      if (auto s = fragment.getArgAttrOfType<StringAttr>(
              a.getArgNumber(), PartDialect::getSlotAttrName());
          s && s.getValue() == slot)
        if (int64_t l = layerOfArgument(a); l >= 0)
          return l;
  }
  return -1;
}

std::string axesText(ArrayRef<StringAttr> axes) {
  SmallVector<std::string> names;
  for (StringAttr a : axes)
    names.push_back("\"" + a.getValue().str() + "\"");
  return llvm::join(names, ", ");
}

std::string argAnchor(StringRef function, unsigned index) {
  return "arg-" + function.str() + "-" + std::to_string(index);
}

/// The origin as a cell's text, each "argument N of @f" it names linked to
/// that argument's row ("annotation on argument 6 of @gpt2").
Cell originCell(StringRef origin) {
  Cell c(origin.str());
  static constexpr StringLiteral kArgument = "argument ";
  size_t from = 0;
  while ((from = origin.find(kArgument, from)) != StringRef::npos) {
    StringRef rest = origin.substr(from + kArgument.size());
    StringRef digits = rest.take_while(llvm::isDigit);
    unsigned index;
    if (digits.empty() || digits.getAsInteger(10, index)) {
      from += kArgument.size();
      continue;
    }
    rest = rest.drop_front(digits.size());
    if (!rest.consume_front(" of @")) {
      from += kArgument.size();
      continue;
    }
    StringRef function = rest.take_while([](char ch) {
      return llvm::isAlnum(ch) || ch == '_' || ch == '.' || ch == '$';
    });
    size_t length = kArgument.size() + digits.size() + strlen(" of @") +
                    function.size();
    c.links.push_back({from, length, "#" + argAnchor(function, index)});
    from += length;
  }
  return c;
}

} // namespace

std::optional<report::Report>
partition::buildModuleReport(ModuleOp module, const runtime::Cluster &cluster,
                             std::string *error) {
  FirstRanks firstRanks = firstRanksOf(module);
  std::vector<Program> programs;
  for (auto function : module.getOps<func::FuncOp>()) {
    FlatSymbolRefAttr meshRef = getSpmdMesh(function);
    if (!meshRef || function.isDeclaration())
      continue;
    MeshOp mesh = lookupMesh(function, meshRef);
    if (!mesh)
      continue;
    Program p{function, mesh, firstRanks.lookup(mesh.getSymName()), {}};
    if (auto stage = function->getAttrOfType<IntegerAttr>("part.stage"))
      p.stage = stage.getInt();
    programs.push_back(p);
  }
  if (programs.empty()) {
    if (error)
      *error = "the module has no per-device program (part.spmd): run "
               "part-spmd (or part-partition) before the report";
    return std::nullopt;
  }

  report::Report page;
  std::string estimateError;
  std::optional<StepEstimate> estimate =
      estimateStep(module, cluster, &estimateError);

  // --- summary ---------------------------------------------------------------
  std::set<std::string> meshNames;
  int64_t devices = 0;
  for (Program &p : programs)
    if (meshNames.insert(p.mesh.getSymName().str()).second)
      devices += p.mesh.getMesh().getNumDevices();
  std::string functions;
  for (Program &p : programs)
    functions += (functions.empty() ? "@" : ", @") +
                 p.function.getName().str();
  page.title = "partition report: " + functions;
  page.subtitle = std::to_string(programs.size()) + " per-device program" +
                  (programs.size() == 1 ? "" : "s") + " on " +
                  std::to_string(devices) + " devices; predicted on " +
                  runtime::printableName(cluster.name) + " (" +
                  std::to_string(cluster.nodes) + " x " +
                  std::to_string(cluster.devicesPerNode) + " " +
                  runtime::printableName(cluster.deviceName) + ", " +
                  report::formatBytes(cluster.memoryBytes) + " each)";
  page.summary.push_back({"devices", std::to_string(devices)});
  if (estimate) {
    page.summary.push_back(
        {"predicted step", report::formatSeconds(estimate->seconds)});
    page.summary.push_back(
        {"compute (busiest)", report::formatSeconds(estimate->compute)});
    page.summary.push_back(
        {"exposed communication",
         report::formatSeconds(estimate->exposedCommunication)});
    if (estimate->schedule)
      page.summary.push_back(
          {"pipeline bubble", report::formatSeconds(estimate->bubble)});
  } else {
    page.notes.push_back("no time prediction: " + estimateError);
  }
  if (devices > cluster.devices())
    page.notes.push_back("the module's " + std::to_string(devices) +
                         " devices are more than the cluster's " +
                         std::to_string(cluster.devices()) +
                         ": nodes are numbered on past the last");

  // --- meshes ----------------------------------------------------------------
  std::map<std::string, std::vector<std::string>> programsOnMesh;
  for (Program &p : programs)
    programsOnMesh[p.mesh.getSymName().str()].push_back(
        "@" + p.function.getName().str());
  std::set<std::string> drawn;
  for (Program &p : programs) {
    std::string name = p.mesh.getSymName().str();
    if (!drawn.insert(name).second)
      continue;
    MeshAttr mesh = p.mesh.getMesh();
    report::MeshView view;
    view.name = "@" + name;
    for (auto [axis, size] :
         llvm::zip(mesh.getAxisNames(), mesh.getAxisSizes()))
      view.axes.push_back({cast<StringAttr>(axis).getValue().str(), size});
    for (int64_t i = 0; i < mesh.getNumDevices(); ++i) {
      view.ranks.push_back(p.firstRank + i);
      view.nodes.push_back((p.firstRank + i) /
                           std::max<int64_t>(1, cluster.devicesPerNode));
    }
    view.role = llvm::join(programsOnMesh[name], ", ");
    page.meshes.push_back(std::move(view));
  }

  // --- memory ----------------------------------------------------------------
  int64_t globalParameters = 0;
  for (Program &p : programs) {
    MeshAttr mesh = p.mesh.getMesh();
    ResidentBytes r = residentBytes(p.function, mesh);
    globalParameters += r.globalParameterElements;
    report::MemoryRole role;
    role.role = "@" + p.function.getName().str();
    if (p.stage)
      role.role += " (stage " + std::to_string(*p.stage) + ")";
    role.devices = rankRange(p.firstRank, mesh.getNumDevices());
    role.bytes = {
        {"parameters", double(r.parameters)},
        {"gradients", double(r.gradients)},
        {"optimizer state", double(r.state)},
        {"activations", double(std::max<int64_t>(0, r.livePeak - r.gradients))},
        {"inputs", double(r.inputs)},
    };
    role.capacity = cluster.memoryBytes;
    page.memory.push_back(std::move(role));
  }
  page.summary.push_back(
      {"parameters (model)", std::to_string(globalParameters)});

  // --- timeline: the pipeline's schedule under the predicted step costs ------
  if (estimate && estimate->schedule && estimate->timeline) {
    const pl::Schedule &schedule = *estimate->schedule;
    const pl::Timeline &timeline = *estimate->timeline;
    report::Timeline t;
    t.title = "Pipeline schedule: " + std::to_string(schedule.stages) +
              " stages, " + std::to_string(schedule.microBatches) +
              " micro-batches" +
              (schedule.chunks > 1
                   ? ", " + std::to_string(schedule.chunks) + " chunks"
                   : "");
    t.unit = "ms";
    for (int64_t s = 0; s < schedule.stages; ++s) {
      const ProgramEstimate &program =
          estimate->programs[estimate->stagePrograms[s]];
      report::Lane lane;
      lane.name = "stage " + std::to_string(s);
      for (auto [i, step] : llvm::enumerate(schedule.steps[s])) {
        std::string label = pl::stepText(step, schedule.chunks);
        auto it = program.steps.find(label);
        double seconds = it == program.steps.end() ? 0 : it->second;
        lane.spans.push_back({label, pl::actionName(step.action),
                              timeline.start[s][i] * 1e3, seconds * 1e3});
      }
      char note[64];
      std::snprintf(note, sizeof(note), "idle %.1f%%",
                    100 * timeline.bubble[s]);
      lane.note = note;
      t.lanes.push_back(std::move(lane));
    }
    char caption[200];
    std::snprintf(caption, sizeof(caption),
                  "Each step's time is the cost model's for that stage's "
                  "ops labelled with it; the schedule runs in %s before the "
                  "optimizer's update.",
                  report::formatSeconds(timeline.makespan).c_str());
    t.caption = caption;
    page.timelines.push_back(std::move(t));
  }

  // --- predicted time per program --------------------------------------------
  if (estimate) {
    report::BarChart chart;
    chart.id = "programs";
    chart.title = "Predicted time per program";
    chart.unit = "ms";
    for (const ProgramEstimate &p : estimate->programs) {
      report::Bar bar;
      bar.label = "@" + p.function;
      bar.parts = {{"compute", p.whole.compute * 1e3},
                   {"communication", p.whole.communication * 1e3}};
      bar.total = report::formatSeconds(p.seconds) + " (two lanes)";
      chart.bars.push_back(std::move(bar));
    }
    chart.caption = "Compute and communication summed over each program's "
                    "ops; the program's time overlaps them on two lanes.";
    page.charts.push_back(std::move(chart));
  }

  // --- collectives -------------------------------------------------------------
  report::Table byKind;
  byKind.id = "collectives-by-kind";
  byKind.title = "Collectives by kind";
  byKind.columns = {"program",     "kind",       "axes",
                    "count",       "bytes/device", "predicted time"};
  report::Table all;
  all.id = "collectives";
  all.title = "Collectives";
  all.columns = {"#",     "program",        "kind",  "axes",  "devices",
                 "bytes/device", "predicted time", "origin", "at"};
  all.caption = "bytes/device: what one device sends with ring algorithms "
                "(all-reduce 2(n-1)/n of its buffer, all-gather and "
                "reduce-scatter (n-1)/n). The origin says which op needed "
                "the collective and which annotations gave it its sharding "
                "(a link goes to that argument's row under Arguments).";
  int64_t collectiveCount = 0;
  double collectiveBytes = 0;
  for (Program &p : programs) {
    MeshAttr mesh = p.mesh.getMesh();
    struct Row {
      int64_t count = 0;
      double bytes = 0, seconds = 0;
    };
    std::map<std::pair<std::string, std::string>, Row> rows;
    // A pipeline stage's fragments, each as often as its table runs it.
    int64_t times = 1;
    auto visit = [&](Operation *op) {
      std::string kind, axes;
      double bytes = 0;
      int64_t group = 1;
      if (auto send = dyn_cast<SendOp>(op)) {
        kind = "send";
        axes = "to " + send.getTo().str();
        bytes = double(getTensorBytes(
                           cast<RankedTensorType>(send.getInput().getType()))
                           .value_or(0));
        group = 2;
      } else if (std::optional<CollectiveCost> cost =
                     collectiveCost(op, mesh)) {
        if (isa<AllSliceOp, AxisIndexOp>(op))
          return;
        kind = cost->kind;
        axes = axesText(cost->axes);
        bytes = double(cost->movedBytes);
        group = cost->groupSize;
      } else {
        return;
      }
      double seconds =
          estimateOp(op, mesh, p.firstRank, cluster, &firstRanks)
              .communication;
      Row &row = rows[{kind, axes}];
      row.count += times;
      row.bytes += bytes * times;
      row.seconds += seconds * times;
      ++collectiveCount;
      collectiveBytes += bytes * times;
      if (all.rows.size() >= kMaxRows) {
        ++all.omitted;
        return;
      }
      auto origin =
          op->getAttrOfType<StringAttr>(PartDialect::getOriginAttrName());
      Cell index = Cell::number(std::to_string(collectiveCount));
      index.id = "collective-" + std::to_string(collectiveCount);
      all.rows.push_back(
          {index, "@" + p.function.getName().str(), kind, axes,
           Cell::number(std::to_string(group)),
           Cell::number(report::formatBytes(bytes)),
           Cell::number(report::formatSeconds(seconds)),
           origin ? originCell(origin.getValue())
                  : Cell(kind == "send" ? "a pipeline transfer"
                                        : "(written by hand)"),
           locationText(op->getLoc())});
    };
    for (auto [part, runs] : getProgramParts(p.function)) {
      times = runs;
      part->walk(visit);
    }
    std::vector<std::pair<std::pair<std::string, std::string>, Row>> sorted(
        rows.begin(), rows.end());
    llvm::stable_sort(sorted, [](const auto &a, const auto &b) {
      return a.second.seconds > b.second.seconds;
    });
    for (auto &[key, row] : sorted)
      byKind.rows.push_back({"@" + p.function.getName().str(), key.first,
                             key.second,
                             Cell::number(std::to_string(row.count)),
                             Cell::number(report::formatBytes(row.bytes)),
                             Cell::number(report::formatSeconds(row.seconds))});
  }
  byKind.caption = "Sorted by predicted time, per program: the collectives "
                   "that dominate come first.";
  page.summary.push_back({"collectives", std::to_string(collectiveCount)});
  page.summary.push_back(
      {"bytes moved per device", report::formatBytes(collectiveBytes)});
  page.tables.push_back(std::move(byKind));
  page.tables.push_back(std::move(all));

  // --- parameters and their shardings, by layer -------------------------------
  report::Table params;
  params.id = "parameters";
  params.title = "Arguments by layer";
  params.columns = {"layer",       "program",  "argument",    "role",
                    "name",        "global shape", "sharding", "local shape",
                    "bytes/device"};
  struct ParamRow {
    int64_t layer;
    std::vector<Cell> cells;
  };
  std::vector<ParamRow> paramRows;
  for (Program &p : programs) {
    MeshAttr mesh = p.mesh.getMesh();
    for (BlockArgument arg : p.function.getArguments()) {
      unsigned i = arg.getArgNumber();
      auto role = p.function.getArgAttrOfType<ArgRoleAttr>(
          i, PartDialect::getRoleAttrName());
      auto type = cast<RankedTensorType>(arg.getType());
      auto sharding = p.function.getArgAttrOfType<ShardingAttr>(
          i, PartDialect::getShardingAttrName());
      SmallVector<int64_t> global(type.getShape());
      if (sharding)
        global = SmallVector<int64_t>(
            sharding.getGlobalShape(type.getShape(), mesh));
      auto name = p.function.getArgAttrOfType<StringAttr>(
          i, PartDialect::getNameAttrName());
      int64_t layer = layerOfArgument(arg);
      // Optimizer state goes with the parameter it is the state of.
      if (auto of = p.function.getArgAttrOfType<IntegerAttr>(
              i, PartDialect::getStateOfAttrName());
          of && layer < 0 && of.getInt() >= 0 &&
          of.getInt() < int64_t(p.function.getNumArguments()))
        layer = layerOfArgument(p.function.getArgument(of.getInt()));
      Cell argument("%arg" + std::to_string(i));
      argument.id = argAnchor(p.function.getName(), i);
      std::string shardingText = "replicated";
      if (sharding && !sharding.isFullyReplicated())
        shardingText = attrText(sharding);
      paramRows.push_back(
          {layer,
           {Cell(layer >= 0 ? std::to_string(layer) : "-"),
            "@" + p.function.getName().str(), argument,
            role ? stringifyArgRole(role.getValue()).str() : "input",
            name ? name.getValue().str() : "", shapeText(global), shardingText,
            shapeText(type.getShape()),
            Cell::number(report::formatBytes(double(
                getTensorBytes(type).value_or(0))))}});
    }
  }
  // Layers in order; the ops outside every layer (embedding, head) first.
  llvm::stable_sort(paramRows, [](const ParamRow &a, const ParamRow &b) {
    return a.layer < b.layer;
  });
  for (ParamRow &row : paramRows) {
    if (params.rows.size() >= kMaxRows) {
      ++params.omitted;
      continue;
    }
    params.rows.push_back(std::move(row.cells));
  }
  params.caption = "An argument's layer is that of the first op reading it "
                   "(part.layer), optimizer state's that of its parameter; "
                   "\"-\" for arguments outside the layers. "
                   "Sharding: per dimension, the mesh axes it is split over.";
  page.tables.push_back(std::move(params));
  return page;
}
