//===- partition-plan.cpp - the automatic partitioner's tool ---------------===//
//
// partition-plan MODEL.mlir --cluster C --devices N [--global-batch B]
//   [--top K] [--json FILE] [--html FILE] [--explain] [--fix tp=8,pp=8,...]
//
// Ranks the plans of a forward model on a cluster by predicted step time
// (Planner.h) and prints them; --fix evaluates given choices instead of
// searching them; --explain says why the first beats the second and what
// was left out; --html writes the ranking and the first plan as a page
// (Report/PlanReport.h).
//
//===----------------------------------------------------------------------===//

#include "partition/InitAll.h"
#include "partition/Planner/Planner.h"
#include "partition/Report/PlanReport.h"
#include "partition/Tools/ToolSupport.h"
#include "partition/runtime/Files.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/Path.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"

#include <chrono>
#include <optional>

using namespace mlir;
using namespace partition::planner;
namespace cl = llvm::cl;

namespace {

cl::OptionCategory category("partition-plan options");
cl::opt<std::string> inputFile(cl::Positional, cl::desc("<model.mlir>"),
                               cl::cat(category));
cl::opt<std::string>
    clusterName("cluster",
                cl::desc("a preset (dgx-a100, dgx-h100, h200) or a file from "
                         "partition-run --calibrate"),
                cl::Required, cl::cat(category));
cl::opt<int64_t> devices("devices", cl::desc("devices to partition over"),
                         cl::init(0), cl::cat(category));
cl::opt<bool> printCluster(
    "print-cluster",
    cl::desc("write --cluster (a preset or a file, checked) as a cluster "
             "file on standard output and exit: a start for one's own "
             "cluster file; no model or --devices needed"),
    cl::cat(category));
cl::opt<int64_t> globalBatch(
    "global-batch",
    cl::desc("sequences per step (default: the model's batch)"), cl::init(0),
    cl::cat(category));
cl::opt<int64_t> top("top", cl::desc("plans to print (default 5)"),
                     cl::init(5), cl::cat(category));
cl::opt<std::string> jsonFile("json",
                              cl::desc("also write the ranking as JSON"),
                              cl::cat(category));
cl::opt<std::string> htmlFile(
    "html",
    cl::desc("also write the ranking and the first plan (devices, memory "
             "per stage, schedule) as a self-contained HTML page"),
    cl::value_desc("report.html"), cl::cat(category));
cl::opt<bool> explain("explain",
                      cl::desc("why the first plan beats the second, and "
                               "what was left out"),
                      cl::cat(category));
cl::opt<std::string>
    fix("fix",
        cl::desc("fixed choices: dp, tp, pp, cp (each sequence split over cp "
                 "devices: a model with attention whose sequence 2 x cp "
                 "divides; searched unfixed for sequences of 16384 tokens "
                 "and more), ep (experts split over ep "
                 "devices: a mixture-of-experts model), vpp, mbs, schedule, "
                 "zero, "
                 "recompute (none|selective|full), sp (0|1), sync "
                 "(step|micro-batch: ZeRO-1/2 gradients reduce-scattered once "
                 "per step or per micro-batch), tp-overlap (0, or chunks: "
                 "tensor-parallel collectives split with their matmuls to "
                 "overlap, part-spmd tp-comm-overlap), dp-overlap (1, or 0: "
                 "the gradients' reductions after backward, as Megatron "
                 "without --overlap-grad-reduce; part-grad-buckets "
                 "overlap=false); e.g. "
                 "tp=8,pp=8,mbs=1,schedule=1f1b"),
        cl::cat(category));
cl::opt<std::string> optimizer("optimizer",
                               cl::desc("part-optimizer's options "
                                        "(default kind=adamw)"),
                               cl::init("kind=adamw"), cl::cat(category));
cl::opt<std::string> precision("precision",
                               cl::desc("bf16 (mixed, default) or f32"),
                               cl::init("bf16"), cl::cat(category));
cl::opt<std::string> gradReduceDtype(
    "grad-reduce-dtype",
    cl::desc("the type f32 gradients are reduced in where the plan buckets "
             "them: f32 (default) or bf16 (half the bytes, bf16's rounding; "
             "part-grad-buckets dtype)"),
    cl::init("f32"), cl::cat(category));
cl::opt<bool> progress(
    "progress",
    cl::desc("report the search's progress on stderr: probes compiled, "
             "combinations evaluated, schedules simulated (the default when "
             "stderr is a terminal)"),
    cl::cat(category));
cl::opt<bool> inference("inference",
                        cl::desc("plan the forward pass only (no training)"),
                        cl::cat(category));

/// Prints the search's progress on stderr. On a terminal each stage is one
/// line redrawn in place (at most ten times a second); otherwise a line per
/// probe, per tenth of the combinations and one for the simulations, so
/// that a log holds a few lines and tests can read them.
class ProgressPrinter {
public:
  explicit ProgressPrinter(bool terminal) : terminal_(terminal) {}

  void operator()(const SearchProgress &p) {
    // The last report of a stage has done == total (0 == 0 for a search
    // that simulates nothing).
    bool last = p.done == p.total;
    std::string line;
    switch (p.stage) {
    case SearchProgress::Stage::Probe:
      line = llvm::formatv("probes compiled {0}/{1} ({2}, {3:F1} s)", p.done,
                           p.total, p.detail, p.seconds)
                 .str();
      break;
    case SearchProgress::Stage::Evaluate:
      if (!terminal_ && !last && p.done * 10 / p.total ==
                                     (p.done - 1) * 10 / p.total)
        return;
      line = llvm::formatv("combinations evaluated {0}/{1} ({2:F1} s)",
                           p.done, p.total, p.seconds)
                 .str();
      break;
    case SearchProgress::Stage::Simulate:
      if (!terminal_ && !last)
        return;
      line = llvm::formatv("schedules simulated {0} ({1:F1} s)", p.done,
                           p.seconds)
                 .str();
      break;
    }
    if (!terminal_) {
      llvm::errs() << "partition-plan: " << line << "\n";
      return;
    }
    auto now = std::chrono::steady_clock::now();
    bool stageChanged = p.stage != stage_;
    if (stageChanged && drawn_)
      llvm::errs() << "\n";
    if (!last && !stageChanged && now - drawnAt_ < std::chrono::milliseconds(100))
      return;
    llvm::errs() << "\r\033[Kpartition-plan: " << line;
    if (last)
      llvm::errs() << "\n";
    llvm::errs().flush();
    drawn_ = !last;
    drawnAt_ = now;
    stage_ = p.stage;
  }

  /// Ends a line left open (a stage that never reported its last step).
  ~ProgressPrinter() {
    if (drawn_)
      llvm::errs() << "\n";
  }

private:
  bool terminal_;
  bool drawn_ = false;
  std::optional<SearchProgress::Stage> stage_;
  std::chrono::steady_clock::time_point drawnAt_;
};

/// "61.2 GiB", "310 MiB", "12 KiB".
std::string gib(double bytes) {
  if (bytes >= double(1ull << 30))
    return llvm::formatv("{0:F1} GiB", bytes / double(1ull << 30)).str();
  if (bytes >= double(1ull << 20))
    return llvm::formatv("{0:F0} MiB", bytes / double(1ull << 20)).str();
  return llvm::formatv("{0:F0} KiB", bytes / 1024.0).str();
}

std::string secs(double s) {
  if (s >= 1)
    return llvm::formatv("{0:F3} s", s).str();
  if (s >= 1e-3)
    return llvm::formatv("{0:F3} ms", s * 1e3).str();
  return llvm::formatv("{0:F1} us", s * 1e6).str();
}

void printTable(llvm::raw_ostream &os, const SearchResult &r, size_t count) {
  // A cp column where a plan splits the sequence, an ep column for a model
  // with experts.
  bool context = llvm::any_of(
      r.plans, [](const PlanEstimate &e) { return e.config.cp > 1; });
  bool experts = r.model.experts > 0;
  os << llvm::format("%3s %3s %3s %5s", "#", "tp", "pp", "dp");
  if (context)
    os << llvm::format(" %3s", "cp");
  if (experts)
    os << llvm::format(" %3s", "ep");
  os << llvm::format(" %3s %4s %5s %-16s %4s %-9s %2s %11s "
                     "%11s %11s %11s %9s %8s %5s\n",
                     "vpp", "mbs", "mb", "schedule",
                     "zero", "recompute", "sp", "step", "compute",
                     "exp. comm", "bubble", "memory", "TFLOP/s", "MFU");
  bool perStep = false, overlapped = false, afterBackward = false;
  for (size_t i = 0; i < count && i < r.plans.size(); ++i) {
    const PlanEstimate &e = r.plans[i];
    const PlanConfig &c = e.config;
    // "1s": ZeRO's gradients reduce-scattered once per step.
    std::string zero = std::to_string(c.zero) + (c.syncPerStep ? "s" : "");
    perStep |= c.syncPerStep;
    // "1o": tensor-parallel collectives in chunks beside their matmuls.
    std::string sp = std::string(c.sequenceParallel ? "1" : "0") +
                     (c.tpOverlap ? "o" : "");
    overlapped |= c.tpOverlap > 0;
    afterBackward |= !c.dpOverlap && c.dp > 1;
    os << llvm::format("%3zu %3lld %3lld %5lld", i + 1, (long long)c.tp,
                       (long long)c.pp, (long long)c.dp);
    if (context)
      os << llvm::format(" %3lld", (long long)c.cp);
    if (experts)
      os << llvm::format(" %3lld", (long long)c.ep);
    os << llvm::format(
        " %3lld %4lld %5lld %-16s %4s %-9s %2s %11s "
        "%11s %11s %11s %9s %8.1f %4.1f%%\n",
        (long long)c.virtualStages, (long long)c.microBatchSize,
        (long long)c.microBatches, c.schedule.c_str(), zero.c_str(),
        recomputeName(c.recompute), sp.c_str(),
        secs(e.seconds).c_str(), secs(e.compute).c_str(),
        secs(e.exposedCommunication).c_str(), secs(e.bubble).c_str(),
        gib(e.memory.total()).c_str(), e.tflopsPerDevice, 100 * e.mfu);
  }
  if (perStep)
    os << "zero 1s: the gradients summed over the micro-batches and "
          "reduce-scattered once per step (part-spmd grad-sync=step)\n";
  if (overlapped)
    os << "sp 1o: each tensor-parallel collective split with its matmul into "
          "chunks that overlap (part-spmd tp-comm-overlap)\n";
  if (afterBackward)
    os << "dp-overlap=0: the gradients reduced over dp after backward "
          "(part-grad-buckets overlap=false)\n";
}

/// The choices two plans differ in, as "tp 8 -> 4".
std::string differences(const PlanConfig &a, const PlanConfig &b) {
  std::string out;
  auto note = [&](const char *name, const std::string &x,
                  const std::string &y) {
    if (x != y)
      out += (out.empty() ? "" : ", ") + std::string(name) + " " + x +
             " against " + y;
  };
  auto n = [](int64_t v) { return std::to_string(v); };
  note("tp", n(a.tp), n(b.tp));
  note("pp", n(a.pp), n(b.pp));
  note("dp", n(a.dp), n(b.dp));
  note("cp", n(a.cp), n(b.cp));
  note("ep", n(a.ep), n(b.ep));
  note("vpp", n(a.virtualStages), n(b.virtualStages));
  note("micro-batch size", n(a.microBatchSize), n(b.microBatchSize));
  note("schedule", a.schedule, b.schedule);
  note("zero", n(a.zero), n(b.zero));
  note("recompute", recomputeName(a.recompute), recomputeName(b.recompute));
  note("sp", n(a.sequenceParallel), n(b.sequenceParallel));
  note("tp-overlap", n(a.tpOverlap), n(b.tpOverlap));
  note("dp-overlap", n(a.dpOverlap), n(b.dpOverlap));
  auto sync = [](bool step) {
    return std::string(step ? "once per step" : "per micro-batch");
  };
  note("gradient reduce-scatter", sync(a.syncPerStep), sync(b.syncPerStep));
  return out;
}

void printExplanation(llvm::raw_ostream &os, const SearchResult &r,
                      const partition::runtime::Cluster &cluster) {
  const PlanEstimate &first = r.plans.front();
  if (r.plans.size() > 1) {
    const PlanEstimate &second = r.plans[1];
    os << "why #1 beats #2 (" << differences(first.config, second.config)
       << "): " << secs(first.seconds) << " against "
       << secs(second.seconds) << " per step";
    auto part = [&](const char *name, double a, double b) {
      if (std::abs(a - b) > 1e-3 * std::max(first.seconds, 1e-12))
        os << "; " << name << " " << secs(a) << " against " << secs(b);
    };
    part("compute", first.compute, second.compute);
    part("exposed communication", first.exposedCommunication,
         second.exposedCommunication);
    part("bubble", first.bubble, second.bubble);
    os << "; peak memory " << gib(first.memory.total()) << " against "
       << gib(second.memory.total()) << "\n";
  } else {
    os << "one plan fits\n";
  }
  const MemoryEstimate &m = first.memory;
  os << "#1's memory on its fullest stage (" << first.memoryStage
     << "): parameters " << gib(m.parameters) << ", gradients "
     << gib(m.gradients) << ", optimizer state " << gib(m.optimizerState)
     << ", activations " << gib(m.activations) << ", workspace "
     << gib(m.workspace) << ", of " << gib(cluster.memoryBytes) << "\n";
  int64_t prunedTotal = 0;
  for (auto &[why, n] : r.pruned)
    prunedTotal += n;
  os << "left out: " << prunedTotal << " of "
     << r.considered + prunedTotal - (r.pruned.count("memory") ? r.pruned.at("memory") : 0)
     << "\n";
  for (auto &[why, n] : r.pruned) {
    if (why == "memory")
      os << "  " << n << " plans need more than the device's "
         << gib(cluster.memoryBytes) << "\n";
    else
      os << "  " << n << " by: " << why << "\n";
  }
}

llvm::json::Object planJson(const PlanEstimate &e) {
  const PlanConfig &c = e.config;
  // Per pipeline stage: one micro-batch's forward and backward, the update
  // once per step, the bytes held at the peak.
  llvm::json::Array stages;
  for (size_t i = 0; i < e.stageForward.size(); ++i)
    stages.push_back(llvm::json::Object{
        {"forward_seconds", e.stageForward[i]},
        {"backward_seconds", e.stageBackward[i]},
        {"update_seconds", e.stageUpdate[i]},
        {"memory_bytes", i < e.stageMemory.size() ? e.stageMemory[i].total()
                                                  : 0.0}});
  return llvm::json::Object{
      {"stages", std::move(stages)},
      {"tp", c.tp},
      {"pp", c.pp},
      {"dp", c.dp},
      {"cp", c.cp},
      {"ep", c.ep},
      {"virtual_stages", c.virtualStages},
      {"micro_batch_size", c.microBatchSize},
      {"micro_batches", c.microBatches},
      {"schedule", c.schedule},
      {"zero", c.zero},
      {"recompute", recomputeName(c.recompute)},
      {"sequence_parallel", c.sequenceParallel},
      {"tp_overlap", c.tpOverlap},
      {"dp_overlap", c.dpOverlap},
      {"grad_sync", c.syncPerStep ? "step" : "micro-batch"},
      {"step_seconds", e.seconds},
      {"compute_seconds", e.compute},
      {"exposed_communication_seconds", e.exposedCommunication},
      {"bubble_seconds", e.bubble},
      {"memory_bytes",
       llvm::json::Object{{"parameters", e.memory.parameters},
                          {"gradients", e.memory.gradients},
                          {"optimizer_state", e.memory.optimizerState},
                          {"activations", e.memory.activations},
                          {"workspace", e.memory.workspace},
                          {"total", e.memory.total()}}},
      {"model_flops_per_step", e.modelFlops},
      {"tflops_per_device", e.tflopsPerDevice},
      {"mfu", e.mfu},
      {"schedule_simulated", e.simulated},
      {"spmd_options", c.spmdOptions()},
      // The passes after part-spmd the plan is costed as compiled with.
      {"after_spmd", afterSpmdPipeline(!inference, c.dataParallel(), c.zero,
                                       gradReduceDtype, c.dpOverlap)},
  };
}

/// The search the flags ask for, checked against their bounds and the
/// cluster before the model is read (search checks them again); false with
/// `error` saying what is wrong.
static bool searchOptionsFromFlags(const partition::runtime::Cluster &cluster,
                                   SearchOptions &options,
                                   std::string &error) {
  options.cluster = cluster;
  options.devices = devices;
  options.globalBatch = globalBatch;
  options.training.train = !inference;
  options.training.optimizer = optimizer;
  options.training.precision = precision;
  if (precision != "bf16" && precision != "f32") {
    error = "--precision " + precision + " is not bf16 or f32";
    return false;
  }
  options.training.gradReduce = gradReduceDtype;
  if (gradReduceDtype != "f32" && gradReduceDtype != "bf16") {
    error = "--grad-reduce-dtype " + gradReduceDtype + " is not f32 or bf16";
    return false;
  }
  if (devices < 1 || globalBatch < 0 || top < 1) {
    error = "--devices and --top must be at least 1, --global-batch at "
            "least 0";
    return false;
  }
  if (!fix.empty()) {
    auto constraint = PlanConstraint::parse(fix, &error);
    if (!constraint)
      return false;
    options.constraint = *constraint;
  }
  if (top > kMaxDevices) {
    error = "--top " + std::to_string(static_cast<long long>(top)) +
            " is too large (at most " +
            std::to_string(static_cast<long long>(kMaxDevices)) + ")";
    return false;
  }
  return checkSearchOptions(options, &error);
}

/// The --html page: the ranked plans and the explanation of the choice.
static bool writeHtml(const partition::runtime::OutputFile &file,
                      const SearchResult &result, const SearchOptions &options,
                      const partition::runtime::Cluster &cluster) {
  std::string text;
  llvm::raw_string_ostream why(text);
  printExplanation(why, result, cluster);
  std::vector<std::string> notes;
  for (llvm::StringRef line : llvm::split(llvm::StringRef(text).trim(), '\n'))
    notes.push_back(line.trim().str());
  partition::report::Report page = partition::buildPlanReport(
      result, options, llvm::sys::path::filename(inputFile).str(),
      size_t(top), notes);
  partition::runtime::Status written = partition::runtime::writeOutputFile(
      file, partition::report::renderHtml(page));
  if (!written.isOk()) {
    llvm::errs() << "partition-plan: " << written.message() << "\n";
    return false;
  }
  return true;
}

/// The --json document (format partition-plan/1).
static bool writeJson(const partition::runtime::OutputFile &file,
                      const SearchResult &result,
                      const partition::runtime::Cluster &cluster,
                      int64_t batch) {
  const ModelSummary &m = result.model;
  llvm::json::Array plans;
  for (size_t i = 0; i < result.plans.size() && i < size_t(top); ++i)
    plans.push_back(planJson(result.plans[i]));
  llvm::json::Object pruned;
  for (auto &[why, n] : result.pruned)
    pruned[why] = n;
  llvm::json::Object doc{
      {"format", "partition-plan/1"},
      {"model", llvm::json::Object{{"layers", m.layers},
                                   {"parameters", m.parameters},
                                   {"batch", m.batch}}},
      {"cluster", cluster.name},
      {"devices", int64_t(devices)},
      {"global_batch", batch},
      {"considered", result.considered},
      {"probes", m.probes},
      {"search_seconds", result.seconds},
      {"pruned", std::move(pruned)},
      {"plans", std::move(plans)},
  };
  llvm::outs().flush(); // the table first when --json is standard output
  partition::runtime::Status written = partition::runtime::writeOutputFile(
      file, llvm::formatv("{0:2}\n", llvm::json::Value(std::move(doc))).str());
  if (!written.isOk()) {
    llvm::errs() << "partition-plan: " << written.message() << "\n";
    return false;
  }
  return true;
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  // Only this tool's options in --help (the libraries register hundreds).
  cl::HideUnrelatedOptions(category);
  cl::ParseCommandLineOptions(
      argc, argv,
      "partition-plan: ranks the ways to partition a model on a cluster by "
      "predicted step time\n");
  auto loaded = partition::runtime::Cluster::load(clusterName);
  if (!loaded.isOk()) {
    llvm::errs() << "partition-plan: " << loaded.status().message() << "\n";
    return 1;
  }
  if (printCluster) {
    llvm::outs() << loaded->toJson();
    return 0;
  }
  if (inputFile.empty() || devices.getNumOccurrences() == 0) {
    llvm::errs() << "partition-plan: "
                 << (inputFile.empty() ? "no model given (<model.mlir>)"
                                       : "--devices is not given")
                 << "; see --help\n";
    return 1;
  }
  SearchOptions options;
  if (std::string error; !searchOptionsFromFlags(*loaded, options, error)) {
    llvm::errs() << "partition-plan: " << error << "\n";
    return 1;
  }
  std::string error;

  // The outputs (neither the model, the cluster file nor each other) and
  // the model, read as an untrusted file, before any work.
  std::vector<partition::runtime::NamedPath> outputPaths;
  if (!jsonFile.empty())
    outputPaths.push_back({"--json", jsonFile});
  if (!htmlFile.empty())
    outputPaths.push_back({"--html", htmlFile});
  auto outputs = partition::runtime::checkOutputFiles(
      outputPaths, {{"the model", inputFile}, {"--cluster", clusterName}});
  if (!outputs.isOk()) {
    llvm::errs() << "partition-plan: " << outputs.status().message() << "\n";
    return 1;
  }
  auto outputFor = [&](const std::string &path) {
    for (const partition::runtime::OutputFile &file : *outputs)
      if (file.path == path)
        return &file;
    return static_cast<const partition::runtime::OutputFile *>(nullptr);
  };
  llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>> read =
      partition::readInputFile(inputFile, "model");
  if (!read) {
    llvm::errs() << "partition-plan: " << llvm::toString(read.takeError())
                 << "\n";
    return 1;
  }
  std::unique_ptr<llvm::MemoryBuffer> input = std::move(*read);
  if (!partition::checkNestingDepth(input->getBuffer(),
                                    input->getBufferIdentifier(), llvm::errs()))
    return 1;
  DialectRegistry registry;
  partition::registerAllDialects(registry);
  partition::registerAllPasses();
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  context.printOpOnDiagnostic(false);
  auto sourceMgr = std::make_shared<llvm::SourceMgr>();
  sourceMgr->AddNewSourceBuffer(std::move(input), llvm::SMLoc());
  SourceMgrDiagnosticHandler handler(*sourceMgr, &context);
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(*sourceMgr, &context);
  if (!module)
    return 1;

  std::optional<ProgressPrinter> printer;
  if (progress || llvm::sys::Process::StandardErrIsDisplayed()) {
    printer.emplace(llvm::sys::Process::StandardErrIsDisplayed());
    options.progress = [&](const SearchProgress &p) { (*printer)(p); };
  }
  std::optional<SearchResult> result = search(*module, options, &error);
  printer.reset();
  if (!result) {
    llvm::errs() << "partition-plan: " << error << "\n";
    return 1;
  }
  llvm::raw_ostream &os = llvm::outs();
  const ModelSummary &m = result->model;
  int64_t batch = globalBatch ? int64_t(globalBatch) : m.batch;
  os << "model: " << m.layers << " layers"
     << (m.layersAlike && m.layers > 3 ? " (alike: probed on 3)" : "") << ", "
     << partition::report::formatCount(m.parameters) << " parameters"
     << (m.experts ? " (" + std::to_string(m.experts) + " experts per layer)"
                   : std::string())
     << "; "
     << "global batch " << batch << "; "
     << partition::runtime::printableName(loaded->name) << ", " << devices
     << " devices (" << loaded->devicesPerNode << " per node)\n";
  int64_t prunedTotal = 0;
  for (auto &[why, n] : result->pruned)
    prunedTotal += n;
  os << (fix.empty() ? "searched " : "evaluated ") << result->considered
     << " plans (" << m.probes << " probes) in "
     << llvm::format("%.2f", result->seconds) << " s; "
     << result->plans.size() << " fit\n";
  printTable(os, *result, size_t(top));
  if (explain)
    printExplanation(os, *result, *loaded);

  if (!htmlFile.empty() &&
      !writeHtml(*outputFor(htmlFile), *result, options, *loaded))
    return 1;
  if (!jsonFile.empty() &&
      !writeJson(*outputFor(jsonFile), *result, *loaded, batch))
    return 1;
  return 0;
}
