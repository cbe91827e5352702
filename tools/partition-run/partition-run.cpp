//===- partition-run.cpp - run an execution plan on N ranks ---------------===//
//
// Loads a plan, each rank's slices of the weights (safetensors) and inputs
// (.npy, or a batch per step from --data or --synthetic), runs the plan,
// assembles the outputs and writes them as .npy.
// Ranks are threads of this process by default, processes this tool starts
// (--processes), or processes an external launcher starts (RANK, WORLD_SIZE,
// MASTER_ADDR, MASTER_PORT in the environment). No MLIR here.
//
//===----------------------------------------------------------------------===//

#include "partition/runtime/Backends.h"
#include "partition/runtime/BatchSource.h"
#include "partition/runtime/Calibrate.h"
#include "partition/runtime/Checkpoint.h"
#include "partition/runtime/StoredShape.h"
#include "partition/runtime/Executor.h"
#include "partition/runtime/Files.h"
#include "partition/runtime/Launch.h"
#include "partition/runtime/Npy.h"
#include "partition/runtime/ParameterSources.h"
#include "partition/runtime/Plan.h"
#include "partition/runtime/Safetensors.h"
#include "partition/runtime/Sharding.h"
#include "partition/runtime/StepMetrics.h"
#include "partition/runtime/Stores.h"
#include "partition/runtime/TraceReport.h"
#include "partition/runtime/cpu/GlooCommunicator.h"
#ifdef PARTITION_HAVE_CUDA
#include "partition/runtime/cuda/CudaDevice.h"
#include "partition/runtime/cuda/NcclCommunicator.h"
#endif

#include <algorithm>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <mutex>
#include <netinet/in.h>
#include <set>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <thread>
#include <tuple>
#include <unistd.h>

using namespace partition::runtime;
using partition::runtime::cpu::GlooCommunicatorFactory;
using partition::runtime::cpu::GlooOptions;
namespace plan = partition::plan;

namespace {

const char *kUsage = R"(usage: partition-run PLAN [options]
       partition-run --calibrate -o FILE [--backend B] [--ranks N]
                     (measures this machine for the cost model; --calibrate
                     --help says more)

Runs a partition execution plan (written by partition-translate --part-to-plan).

  --dump                 print the plan (model FLOPs per step, meshes,
                         bindings, instructions, memory per device) and exit
  --ranks N              number of ranks (default: the plan's world size)
  --processes            run each rank in its own process (default: threads)
  --backend cpu|cuda     device backend (default: cuda when this build has it
                         and there is a GPU for every rank, else cpu); cuda
                         uses NCCL, cpu uses Gloo
  --weights FILE         safetensors file with every parameter, by name
  --random-weights SEED  instead of --weights: every parameter element is a
                         fixed function of (SEED, name, global index) in
                         [-SCALE, SCALE), so any partitioning of the same
                         plan gets the same weights; optimizer state starts
                         at its initial value (zero, or the parameter it
                         copies), as with --weights
  --random-scale SCALE   range of --random-weights (default 0.1)
  --input NAME=FILE.npy  the whole value of input NAME (repeatable), the
                         same every step
  --data FILE            instead of --input: a safetensors file with an
                         array NAME of shape [S, ...] (S batches of the
                         value) for every input and label NAME; step k
                         (counted over resumed runs too) takes batch k mod S,
                         and each rank reads only its block of it
  --synthetic SEED       instead of --input: a random batch per step, the
                         same under any partitioning (floats uniform in
                         [-1, 1), integers in [0, --vocab))
  --vocab N              range of --synthetic's integer inputs (token ids,
                         labels)
  --output-dir DIR       write each output as DIR/NAME.npy (bf16 ones as
                         DIR/NAME.safetensors); DIR is created before the
                         first step, and an output whose name is not a
                         plain file name (empty, '.', '..', '/', '\',
                         control characters) is an error
  --steps N              run the plan N times (default 1); times are per step
  --checkpoint DIR       after the last step, write every rank's blocks of
                         every parameter and state value to
                         DIR/rank-<r>.safetensors, then DIR/manifest.json
  --checkpoint-every K   with --checkpoint: write DIR/step-<n> instead, after
                         every step n that is a multiple of K and after the
                         last step (earlier ones are kept); once one is
                         whole, what interrupted ones left (*.tmp files,
                         older step folders without a manifest) is removed
                         and named
  --resume DIR           instead of --weights: load parameters and state
                         from the checkpoint DIR (written under any mesh),
                         or from DIR's latest whole step-<n> (a newer one
                         with a torn manifest is passed over with a
                         warning); each rank file's size and checksum are
                         checked against the manifest; steps are numbered
                         on from the checkpoint's, and --data or
                         --synthetic continue at its data position
  --log-every K          in a training run, print the loss line and the
                         progress line (and write the --metrics line) of
                         every K-th step and of the last (default 1)
  --metrics FILE.jsonl   write one JSON object per logged step to FILE
                         (created or emptied before the first step, flushed
                         after every line; by the rank that prints the
                         loss): "step"; each scalar output by name ("loss";
                         "output.NAME" for a name a fixed field has; null
                         when not finite); "step_ms" (mean time of the
                         steps since the previous logged one); "tokens_per_s"
                         (null when the plan has no token input); "mfu"
                         (model FLOP/s over the devices' peak; null without
                         --cluster); "peak_bytes" (that rank's device);
                         "eta_s"
  --cluster FILE|NAME    the devices' peak FLOP/s for MFU: a cluster file
                         (partition-run --calibrate writes one) or a preset
                         (dgx-a100, dgx-h100, h200)
  --memory-report        print, per rank, the bytes its executor allocated
                         by category (parameters, state, constants, inputs,
                         arena, scratch), after the last step
  --trace FILE.json      write a Chrome/Perfetto trace: a process per rank
                         with a compute and a communication track; every
                         instruction (named by opcode, with its origin),
                         each collective from issue to completion, and
                         each wait of compute for a collective
  --html FILE.html       trace the run (as --trace does) and write what the
                         trace shows as a self-contained page: the measured
                         timeline of the first step per rank (compute and
                         communication lanes), where each rank's time went
                         (kernels, collectives, waits, idle) and the time
                         by opcode
  --sync-collectives     run each collective to completion where it stands
                         in the program instead of on a communication
                         thread/stream that overlaps compute (the same
                         results, bit for bit; for comparisons)
  --timeout SECONDS      deadline of each collective wait (default 60)
  --fail-rank R          make rank R stop with an error before its first
                         step (to check that the other ranks then fail
                         within --timeout instead of hanging)
  --fail-step K          with --fail-rank: rank R fails in the middle of
                         step K (1 for the first) instead: before the
                         middle one of the instructions the step runs, so
                         that its peers are inside that step
  --fail-instruction I   with --fail-step: fail before instruction I (as
                         errors and --dump number them) instead
  --fail-mode error|kill with --fail-rank: return an error (default), or
                         kill the rank's process with SIGKILL (needs
                         --processes or a launcher)

Training runs (--steps N > 1, a checkpoint or a batch stream) print the
scalar outputs (the loss) after every step, or every K-th with --log-every
("step K: loss V"), stop with an error at a non-finite loss (a plan with
f16 loss scaling skips that step instead), and end with a summary; a single
run lists every output with its type. Their progress goes to stderr, so
that stdout stays the loss log: a line per logged step ("[K/N] loss V |
step time | tokens/s | MFU | peak memory | ETA"), or one bar that updates
in place when stderr is a terminal. After the last step a line on stdout
sums the run up ("summary: N steps in T, mean step M ms (leaving out the
first), tokens/s, model FLOP per step, MFU, peak memory"), before the line
that says which steps were trained. Tokens per step are the elements of the
first integer input named input_ids, tokens, token_ids or ids (else labels
or targets); model FLOPs are 2*M*N*K of every matmul and of attention's two
products of the global program, counted by partition-opt --part-spmd before
partitioning (so the same for every mesh; recomputation not counted) and
kept in the plan; a plan without that count (per-device programs written
by hand) counts every device's products ("counted from the per-device
programs": work a mesh repeats on several devices counts on each). MFU
takes them against the peak of the matmuls' dtype (f32 for a dtype the
cluster does not list) times the plan's devices.

With --processes, a rank killed by a signal or stopped ends the run at once:
the others are killed and the error names the rank. Ranks die with the
partition-run that started them.

An external launcher may start one process per rank instead. Recognised:
torchrun (RANK, WORLD_SIZE, LOCAL_RANK), Slurm (SLURM_PROCID, SLURM_NTASKS,
SLURM_LOCALID; ignored for one task) and Open MPI (OMPI_COMM_WORLD_RANK,
OMPI_COMM_WORLD_SIZE, OMPI_COMM_WORLD_LOCAL_RANK; ignored for one process).
Every rank also needs MASTER_ADDR and MASTER_PORT (where rank 0 serves the
store) and PARTITION_STORE_TOKEN, a secret shared by the ranks of the job
(the store refuses connections without it). Gloo listens on the interface
GLOO_SOCKET_IFNAME when set, else on the address that reaches MASTER_ADDR.
Every rank has --timeout to join (rank 0 to start serving the store); one
that has not is named, on every rank, when that passes. A rank that joined
and dies is named by every rank at once; one that stops (SIGSTOP) or hangs
within the stall limit, min(10 s, --timeout/2), after its last heartbeat
(sent every quarter of it), and so is rank 0 when its store stops answering
for as long: the run ends within --timeout (from --timeout 2 on).
)";

struct Options {
  std::string planPath;
  bool dump = false;
  bool memoryReport = false;
  int ranks = 0;
  bool processes = false;
  std::string backend; // empty: chosen by what is present
  std::string weights;
  int randomSeed = -1;
  float randomScale = 0.1f;
  std::vector<std::pair<std::string, std::string>> inputs;
  std::string dataPath;
  int64_t syntheticSeed = -1;
  int vocab = 0;
  /// The stream of --data or --synthetic, checked against the plan's
  /// inputs once before the ranks start; null with --input.
  std::shared_ptr<const BatchSource> batches;
  /// The stream position of this run's first step.
  int64_t firstBatch = 0;
  std::string outputDir;
  int steps = 1;
  std::string checkpointDir;
  int checkpointEvery = 0;
  std::string resumeDir;
  /// The manifest of --resume, read once before the ranks start.
  std::shared_ptr<const CheckpointManifest> resumed;
  std::string trace;
  /// --html: the trace summarised as a page.
  std::string html;
  /// --log-every: the loss line, progress and metrics of every K-th step.
  int logEvery = 1;
  /// --metrics: the JSONL file of per-step figures; empty for none.
  std::string metrics;
  /// --cluster, loaded once before the ranks start; null without it.
  std::string clusterSpec;
  std::shared_ptr<const Cluster> cluster;
  bool syncCollectives = false;
  int timeoutSeconds = 60;
  int failRank = -1;
  /// With failRank: the step (from 1) in which that rank fails; 0 before
  /// the first step.
  int failStep = 0;
  /// With failStep: the instruction (its index in the program, as errors
  /// and --dump number them) before which the rank fails; -1 for the middle
  /// one of the step.
  int failInstruction = -1;
  /// With failRank: return an error, or kill the process (SIGKILL).
  bool failByKill = false;
  /// Where Gloo listens (chosen under a launcher).
  GlooOptions gloo;
};

/// True when the run trains: several steps, a checkpoint, a resumed
/// checkpoint or a batch stream. Such runs print losses per step and a
/// summary at the end instead of one line per output.
bool isTraining(const Options &o) {
  return o.steps > 1 || !o.resumeDir.empty() || !o.checkpointDir.empty() ||
         !o.dataPath.empty() || o.syntheticSeed >= 0;
}

/// Parses the command line; returns an error message or "".
/// The options that name a file, a folder or a backend (`a` is the
/// option, `v` its value); returns what is wrong with the value, or "".
static std::string parseFileOption(const std::string &a, const char *v,
                                   Options &o) {
  if (a == "--backend") {
    if (!*v)
      return "--backend needs a name (cpu or cuda), got \"\"";
    o.backend = v;
  } else if (a == "--weights")
    o.weights = v;
  else if (a == "--output-dir")
    o.outputDir = v;
  else if (a == "--trace")
    o.trace = v;
  else if (a == "--html")
    o.html = v;
  else if (a == "--checkpoint")
    o.checkpointDir = v;
  else if (a == "--resume")
    o.resumeDir = v;
  else if (a == "--data")
    o.dataPath = v;
  else if (a == "--metrics") {
    if (!*v)
      return "--metrics needs a file name, got \"\"";
    o.metrics = v;
  } else if (a == "--cluster") {
    if (!*v)
      return "--cluster needs a cluster file or preset name, got \"\"";
    o.clusterSpec = v;
  } else {
    std::string s = v;
    size_t eq = s.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == s.size())
      return "--input needs NAME=FILE.npy, got \"" + s + "\"";
    for (const auto &[name, path] : o.inputs)
      if (name == s.substr(0, eq))
        return "--input " + name + " is given twice (" + path + " and " +
               s.substr(eq + 1) + ")";
    o.inputs.emplace_back(s.substr(0, eq), s.substr(eq + 1));
  }
  return "";
}

/// What is wrong with the options taken together (one excludes or needs
/// another), or "".
static std::string checkOptionCombinations(const Options &o) {
  if (o.planPath.empty())
    return "no plan given (see --help)";
  if (!o.resumeDir.empty() && (!o.weights.empty() || o.randomSeed >= 0))
    return "--resume loads the parameters; it excludes --weights and "
           "--random-weights";
  if (!o.dataPath.empty() && o.syntheticSeed >= 0)
    return "--data and --synthetic are two sources of batches; give one";
  if ((!o.dataPath.empty() || o.syntheticSeed >= 0) && !o.inputs.empty())
    return std::string(o.dataPath.empty() ? "--synthetic" : "--data") +
           " feeds every input; it excludes --input";
  if (o.vocab && o.syntheticSeed < 0)
    return "--vocab is the range of --synthetic's integers; it needs "
           "--synthetic";
  if (o.checkpointEvery && o.checkpointDir.empty())
    return "--checkpoint-every needs --checkpoint DIR";
  if ((o.failStep || o.failByKill) && o.failRank < 0)
    return "--fail-step and --fail-mode need --fail-rank R";
  if (o.failInstruction >= 0 && !o.failStep)
    return "--fail-instruction needs --fail-step K";
  if (o.failStep > o.steps)
    return "--fail-step " + std::to_string(o.failStep) +
           " is after the last step (--steps " + std::to_string(o.steps) + ")";
  return "";
}

std::string parseArgs(int argc, char **argv, Options &o) {
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&](const char *flag) -> const char * {
      if (i + 1 >= argc)
        return nullptr;
      (void)flag;
      return argv[++i];
    };
    auto number = [&](const char *flag, int &out) -> std::string {
      const char *v = value(flag);
      if (!v)
        return std::string(flag) + " needs a value";
      char *end = nullptr;
      long n = std::strtol(v, &end, 10);
      if (!*v || *end || n < 1 || n > 1 << 20)
        return std::string(flag) + " needs a positive integer, got \"" + v +
               "\"";
      out = int(n);
      return "";
    };
    std::string err;
    if (a == "--help" || a == "-h") {
      std::cout << kUsage;
      std::exit(0);
    } else if (a == "--dump") {
      o.dump = true;
    } else if (a == "--memory-report") {
      o.memoryReport = true;
    } else if (a == "--processes") {
      o.processes = true;
    } else if (a == "--sync-collectives") {
      o.syncCollectives = true;
    } else if (a == "--ranks") {
      err = number("--ranks", o.ranks);
    } else if (a == "--steps") {
      err = number("--steps", o.steps);
    } else if (a == "--timeout") {
      err = number("--timeout", o.timeoutSeconds);
    } else if (a == "--vocab") {
      err = number("--vocab", o.vocab);
    } else if (a == "--log-every") {
      err = number("--log-every", o.logEvery);
    } else if (a == "--checkpoint-every") {
      err = number("--checkpoint-every", o.checkpointEvery);
    } else if (a == "--synthetic") {
      const char *v = i + 1 < argc ? argv[i + 1] : nullptr;
      int seed = 0;
      if (v && std::string(v) == "0")
        ++i;
      else
        err = number("--synthetic", seed);
      o.syntheticSeed = seed;
    } else if (a == "--random-weights") {
      const char *v = i + 1 < argc ? argv[i + 1] : nullptr;
      if (v && std::string(v) == "0") {
        ++i;
        o.randomSeed = 0;
      } else {
        err = number("--random-weights", o.randomSeed);
      }
    } else if (a == "--random-scale") {
      const char *v = value("--random-scale");
      char *end = nullptr;
      float scale = v ? std::strtof(v, &end) : 0;
      if (!v || !*v || *end || !(scale > 0))
        return "--random-scale needs a positive number";
      o.randomScale = scale;
    } else if (a == "--fail-rank") {
      int r = 0;
      const char *v = i + 1 < argc ? argv[i + 1] : nullptr;
      if (v && std::string(v) == "0") {
        ++i;
        o.failRank = 0;
      } else {
        err = number("--fail-rank", r);
        o.failRank = r;
      }
    } else if (a == "--fail-step") {
      err = number("--fail-step", o.failStep);
    } else if (a == "--fail-instruction") {
      const char *v = value("--fail-instruction");
      char *end = nullptr;
      long n = v ? std::strtol(v, &end, 10) : -1;
      if (!v || !*v || *end || n < 0 || n >= 1 << 30)
        return "--fail-instruction needs an instruction number (0 or more), "
               "got \"" + std::string(v ? v : "") + "\"";
      o.failInstruction = int(n);
    } else if (a == "--fail-mode") {
      const char *v = value("--fail-mode");
      if (!v || (std::string(v) != "error" && std::string(v) != "kill"))
        return "--fail-mode needs error or kill, got \"" +
               std::string(v ? v : "") + "\"";
      o.failByKill = std::string(v) == "kill";
    } else if (a == "--backend" || a == "--weights" || a == "--output-dir" ||
               a == "--trace" || a == "--html" || a == "--input" ||
               a == "--checkpoint" ||
               a == "--resume" || a == "--data" || a == "--metrics" ||
               a == "--cluster") {
      const char *v = value(a.c_str());
      if (!v)
        return a + " needs a value";
      err = parseFileOption(a, v, o);
    } else if (!a.empty() && a[0] == '-') {
      return "unknown option " + a + " (see --help)";
    } else if (o.planPath.empty()) {
      o.planPath = a;
    } else {
      return "more than one plan given: " + o.planPath + " and " + a;
    }
    if (!err.empty())
      return err;
  }
  return checkOptionCombinations(o);
}

/// NaN and Inf elements in float memory of `dtype`.
int64_t countNonFinite(const void *data, DType dtype, int64_t count) {
  if (!isFloat(dtype))
    return 0;
  int64_t bad = 0;
  for (int64_t i = 0; i < count; ++i)
    bad += !std::isfinite(loadFloat(data, dtype, i));
  return bad;
}

/// Warns (on stderr) about NaN or Inf values in a weight or input, once per
/// tensor name for the whole process.
void warnNonFinite(const std::string &what, const std::string &name,
                   int64_t bad, int64_t count) {
  static std::mutex mutex;
  static std::set<std::string> warned;
  std::lock_guard<std::mutex> lock(mutex);
  if (!bad || !warned.insert(what + " " + name).second)
    return;
  std::fprintf(stderr,
               "partition-run: warning: %s \"%s\" holds %lld NaN or Inf "
               "values of %lld%s\n",
               what.c_str(), name.c_str(), (long long)bad, (long long)count,
               what == "parameter" ? " (in this rank's block)" : "");
}

/// A parameter source that warns about NaN or Inf in what it reads.
class CheckedSource final : public ParameterSource {
public:
  explicit CheckedSource(ParameterSource &inner) : inner_(inner) {}

  Status read(const std::string &name, DType dtype,
              const std::vector<int64_t> &globalShape,
              const std::vector<int64_t> &offsets,
              const std::vector<int64_t> &localShape, void *dst) override {
    PARTITION_RETURN_IF_ERROR(
        inner_.read(name, dtype, globalShape, offsets, localShape, dst));
    int64_t count = 1;
    for (int64_t d : localShape)
      count *= d;
    warnNonFinite("parameter", name, countNonFinite(dst, dtype, count), count);
    return Status::ok();
  }
  bool readsStoredShapes() const override {
    return inner_.readsStoredShapes();
  }

private:
  ParameterSource &inner_;
};

/// Reads every --input file (the whole values; each rank takes its block).
StatusOr<std::map<std::string, HostTensor>> readInputs(const Options &o) {
  std::map<std::string, HostTensor> inputs;
  for (const auto &[name, path] : o.inputs) {
    PARTITION_ASSIGN_OR_RETURN(NpyArray a, readNpy(path));
    int64_t count = int64_t(a.data.size()) / dtypeSize(a.dtype);
    warnNonFinite("input", name, countNonFinite(a.data.data(), a.dtype, count),
                  count);
    inputs[name] = HostTensor{a.dtype, a.shape,
                              std::vector<char>(a.data.begin(), a.data.end())};
  }
  return inputs;
}

/// What one rank hands back.
struct RankResult {
  Status status;
  /// The error as the rank reported it (process mode), when set.
  std::string errorText;
  double setupMs = 0, stepMs = 0;
  size_t peakBytes = 0;
  MemoryUse memory;
  std::vector<int64_t> coordinates;
  std::map<std::string, HostTensor> outputs;
  std::vector<TraceEvent> trace;
};

/// Prints "step DONE: NAME VALUE ..." with the scalar outputs `scalars`. A
/// non-finite value is an error naming the step and the output, unless the
/// plan scales its loss (`lossScaled`): then the optimizer skips that step
/// by design, and a warning says so. Every rank checks (so that all stop at
/// the same step instead of waiting for the one that stopped); only the
/// rank with `print` prints. The values go to `values` when it is given.
Status printLosses(Executor &ex, const std::vector<std::string> &scalars,
                   int64_t done, bool lossScaled, bool print,
                   std::vector<std::pair<std::string, double>> *values) {
  std::string line = "step " + std::to_string(done) + ":";
  if (values)
    values->clear();
  for (const std::string &name : scalars) {
    PARTITION_ASSIGN_OR_RETURN(HostTensor t, ex.output(name));
    float value = 0;
    if (t.dtype == DType::F32)
      std::memcpy(&value, t.data.data(), 4);
    else if (t.dtype == DType::F16)
      value = halfToFloat(*reinterpret_cast<const uint16_t *>(t.data.data()));
    else
      value = bf16ToFloat(*reinterpret_cast<const uint16_t *>(t.data.data()));
    if (values)
      values->emplace_back(name, value);
    line += " " + name;
    char buffer[64];
    std::snprintf(buffer, sizeof(buffer), " %.9g", value);
    line += buffer;
    if (std::isfinite(value))
      continue;
    if (!lossScaled) {
      if (print) {
        std::printf("%s\n", line.c_str());
        std::fflush(stdout);
      }
      return PARTITION_ERROR(
          InvalidArgument, "step ", done, ": output \"", name, "\" is ",
          buffer + 1,
          "; training diverged (or the weights or inputs hold NaN or Inf), "
          "so the run stops here");
    }
    if (print)
      std::fprintf(stderr,
                   "partition-run: warning: step %lld: output \"%s\" is %s; "
                   "the plan's loss scaling skips this step\n",
                   (long long)done, name.c_str(), buffer + 1);
  }
  if (print) {
    std::printf("%s\n", line.c_str());
    std::fflush(stdout);
  }
  return Status::ok();
}

/// Writes a checkpoint of every rank's values after `done` steps (`ran` of
/// them in this run) to `dir`: each rank its shard; then the lowest rank
/// that runs a program, once the store says every such rank has written
/// its shard, writes the manifest (so a directory with a manifest holds a
/// whole checkpoint) and prints a line.
Status checkpoint(const Options &o, const LoadedPlan &plan, Executor &ex,
                  int rank, Store &store, const std::string &dir, int64_t done,
                  int64_t ran) {
  StatusOr<CheckpointFile> written = writeCheckpointShard(dir, ex, rank);
  std::string key = "checkpoint/" + dir + "/" + std::to_string(rank) + "/";
  // "+BYTES CHECKSUM" for the manifest, or "!" and the error.
  std::string text = written.isOk()
                         ? "+" + std::to_string(written->bytes) + " " +
                               std::to_string(written->checksum)
                         : "!" + written.status().toString();
  PARTITION_RETURN_IF_ERROR(
      store.set(key, std::vector<char>(text.begin(), text.end())));
  PARTITION_RETURN_IF_ERROR(written.status());
  std::set<int> ranks;
  for (const plan::Program *program : *plan.root().programs())
    for (int32_t r : *plan.root().meshes()->Get(program->mesh())->ranks())
      ranks.insert(r);
  if (ranks.empty() || rank != *ranks.begin())
    return Status::ok();
  PARTITION_ASSIGN_OR_RETURN(CheckpointManifest manifest,
                             describeCheckpoint(plan.root(), done));
  for (int r : ranks) {
    PARTITION_ASSIGN_OR_RETURN(
        std::vector<char> bytes,
        store.get("checkpoint/" + dir + "/" + std::to_string(r) + "/",
                  std::chrono::seconds(o.timeoutSeconds + 30)));
    if (bytes.empty() || bytes[0] != '+')
      return PARTITION_ERROR(
          Aborted, "checkpoint ", dir, ": rank ", r,
          " did not write its shard: ",
          std::string(bytes.begin() + (bytes.empty() ? 0 : 1), bytes.end()));
    CheckpointFile file;
    std::istringstream fields(std::string(bytes.begin() + 1, bytes.end()));
    if (!(fields >> file.bytes >> file.checksum))
      return PARTITION_ERROR(Internal, "checkpoint ", dir, ": rank ", r,
                             " reported its shard as \"",
                             std::string(bytes.begin(), bytes.end()),
                             "\", not its size and checksum");
    manifest.files[checkpointFileName(r)] = file;
  }
  if (o.batches) {
    manifest.dataSource = o.batches->describe();
    manifest.dataPosition = o.firstBatch + ran;
  }
  PARTITION_RETURN_IF_ERROR(manifest.write(dir));
  std::printf("checkpoint %s: %zu tensors after step %lld\n", dir.c_str(),
              manifest.tensors.size(), (long long)done);
  // This checkpoint is whole: what interrupted ones left can go.
  std::vector<std::string> removed = removeCheckpointLeftovers(
      o.checkpointEvery ? o.checkpointDir : dir, o.checkpointEvery ? done : -1);
  for (const std::string &path : removed)
    std::printf("checkpoint %s: removed %s, left by an interrupted "
                "checkpoint\n",
                dir.c_str(), path.c_str());
  std::fflush(stdout);
  return Status::ok();
}

/// The failure --fail-rank asks for: an error, or death by SIGKILL.
/// The failure of --fail-rank: before the first step, or (called by the
/// executor, which names the instruction) inside step --fail-step.
Status failOnPurpose(const Options &o, int rank) {
  if (o.failByKill)
    ::raise(SIGKILL);
  std::string step =
      o.failStep ? " --fail-step " + std::to_string(o.failStep) : "";
  return PARTITION_ERROR(Aborted, "failing on purpose (--fail-rank ", rank,
                         step, ")");
}

/// Whether step `index` of this run (from 0) is logged (--log-every): its
/// loss line, progress line and --metrics line. The last step always is.
bool isLoggedStep(const Options &o, int index) {
  return (index + 1) % o.logEvery == 0 || index + 1 == o.steps;
}

/// The progress of a training run, kept by the rank that prints the loss:
/// a line per logged step on stderr (one bar updated in place when stderr
/// is a terminal), a JSON line per logged step in --metrics, and the
/// summary line on stdout at the end.
class Progress {
public:
  Progress(const Options &o, const LoadedPlan &plan, int64_t firstStep)
      : o_(o), firstStep_(firstStep), training_(isTraining(o)),
        flops_(modelStepFlops(plan.root())),
        tokens_(countStepTokens(plan.root())),
        bar_(training_ && ::isatty(STDERR_FILENO)) {
    if (o.cluster)
      peakSeconds_ = secondsAtPeak(flops_, *o.cluster, plan.worldSize());
  }
  ~Progress() {
    clear();
    if (metrics_)
      std::fclose(metrics_);
  }

  /// Creates or empties the --metrics file.
  Status open() {
    if (o_.metrics.empty())
      return Status::ok();
    PARTITION_ASSIGN_OR_RETURN(OutputFile file,
                               checkOutputFile(o_.metrics, "--metrics"));
    PARTITION_ASSIGN_OR_RETURN(int fd, openOutputStream(file));
    metrics_ = ::fdopen(fd, "w");
    if (!metrics_) {
      ::close(fd);
      return PARTITION_ERROR(InvalidArgument, "--metrics ", o_.metrics,
                             ": cannot create the file: ",
                             std::strerror(errno));
    }
    return Status::ok();
  }

  /// Takes the bar off the terminal before a line goes to stdout.
  void clear() {
    if (bar_ && drawn_) {
      std::fputs("\r\033[K", stderr);
      std::fflush(stderr);
      drawn_ = false;
    }
  }

  /// Step `index` of this run took `ms`; reports it when it is logged.
  Status step(int index, double ms,
              const std::vector<std::pair<std::string, double>> &scalars,
              uint64_t peakBytes) {
    stepMs_.push_back(ms);
    peakBytes_ = std::max<uint64_t>(peakBytes_, peakBytes);
    if (!isLoggedStep(o_, index))
      return Status::ok();
    StepFigures f;
    f.step = firstStep_ + index;
    f.ofSteps = firstStep_ + o_.steps - 1;
    f.scalars = scalars;
    double sum = 0;
    for (size_t i = lastLogged_; i < stepMs_.size(); ++i)
      sum += stepMs_[i];
    f.stepMs = sum / double(stepMs_.size() - lastLogged_);
    lastLogged_ = stepMs_.size();
    f.tokensPerS = rate(f.stepMs);
    f.mfu = mfu(f.stepMs);
    f.peakBytes = peakBytes_;
    f.etaS = double(o_.steps - index - 1) * meanStepMs(stepMs_) / 1000;
    if (metrics_) {
      std::string line = formatMetricsJson(f) + "\n";
      if (std::fputs(line.c_str(), metrics_) < 0 || std::fflush(metrics_))
        return PARTITION_ERROR(Internal, "--metrics ", o_.metrics,
                               ": cannot write: ", std::strerror(errno));
    }
    if (!training_)
      return Status::ok();
    std::string line = formatProgress(f);
    if (bar_) {
      line = barOf(index + 1) + " " + line;
      winsize size{};
      if (::ioctl(STDERR_FILENO, TIOCGWINSZ, &size) == 0 && size.ws_col > 1 &&
          line.size() >= size.ws_col)
        line.resize(size.ws_col - 1);
      std::fprintf(stderr, "\r\033[K%s", line.c_str());
      drawn_ = true;
    } else {
      std::fprintf(stderr, "%s\n", line.c_str());
    }
    std::fflush(stderr);
    return Status::ok();
  }

  /// Prints the summary line of a training run.
  void summarize() {
    clear();
    if (!training_ || stepMs_.empty())
      return;
    double total = 0;
    for (double ms : stepMs_)
      total += ms;
    double mean = meanStepMs(stepMs_);
    std::string line = "summary: " + std::to_string(stepMs_.size()) +
                       (stepMs_.size() == 1 ? " step" : " steps") + " in " +
                       formatDuration(total / 1000);
    char buffer[160];
    std::snprintf(buffer, sizeof(buffer), ", mean step %.4g ms%s", mean,
                  stepMs_.size() > 1 ? " (leaving out the first)" : "");
    line += buffer;
    if (!tokens_.input.empty()) {
      std::snprintf(buffer, sizeof(buffer), ", %.4g tokens/s (%lld %s per "
                    "step)", rate(mean), (long long)tokens_.tokens,
                    tokens_.input.c_str());
      line += buffer;
    }
    std::snprintf(buffer, sizeof(buffer), ", %.4g model FLOP per step%s",
                  flops_.total(),
                  flops_.ofGlobalProgram
                      ? ""
                      : " (counted from the per-device programs)");
    line += buffer;
    double u = mfu(mean);
    if (std::isfinite(u))
      std::snprintf(buffer, sizeof(buffer), ", MFU %.3g%% (%s)", u * 100,
                    printableName(o_.cluster->name).c_str());
    else
      std::snprintf(buffer, sizeof(buffer), ", MFU -");
    line += buffer;
    line += ", peak memory " + formatBytes(peakBytes_) + " (" +
            std::to_string(peakBytes_) + " bytes)";
    std::printf("%s\n", line.c_str());
    std::fflush(stdout);
  }

private:
  double rate(double ms) const {
    return tokens_.input.empty() || !(ms > 0)
               ? NAN
               : double(tokens_.tokens) / (ms / 1000);
  }
  double mfu(double ms) const {
    return peakSeconds_ && ms > 0 ? *peakSeconds_ / (ms / 1000) : NAN;
  }
  /// "[######------] " for `done` of this run's steps.
  std::string barOf(int done) const {
    const int width = 20;
    int full = int(int64_t(done) * width / std::max(1, o_.steps));
    return "[" + std::string(full, '#') + std::string(width - full, '-') + "]";
  }

  const Options &o_;
  int64_t firstStep_;
  bool training_;
  StepFlops flops_;
  StepTokens tokens_;
  std::optional<double> peakSeconds_;
  bool bar_;
  bool drawn_ = false;
  std::FILE *metrics_ = nullptr;
  std::vector<double> stepMs_;
  size_t lastLogged_ = 0;
  uint64_t peakBytes_ = 0;
};

/// Runs rank `rank` of the world: everything but output assembly.
RankResult runRank(const Options &o, const LoadedPlan &plan,
                   const std::map<std::string, HostTensor> &inputs, int rank,
                   int worldSize, std::shared_ptr<Store> store) {
  RankResult r;
  auto start = std::chrono::steady_clock::now();
  auto fail = [&](Status s) {
    r.status = s;
    return r;
  };
  // The GPU of a rank: LOCAL_RANK under a launcher, else the rank itself.
  const char *localRank = std::getenv("LOCAL_RANK");
  StatusOr<std::unique_ptr<Device>> device =
      createDevice(o.backend, localRank ? std::atoi(localRank) : rank);
  if (!device.isOk())
    return fail(device.status());
  std::unique_ptr<CommunicatorFactory> comms;
  if (o.backend == "cuda") {
#ifdef PARTITION_HAVE_CUDA
    cuda::NcclOptions nccl;
    nccl.timeout = std::chrono::seconds(o.timeoutSeconds);
    StatusOr<std::unique_ptr<CommunicatorFactory>> factory =
        cuda::createNcclCommunicatorFactory(*store, rank, worldSize, **device,
                                            nccl);
    if (!factory.isOk())
      return fail(factory.status());
    comms = std::move(*factory);
#endif
  } else {
    GlooOptions gloo = o.gloo;
    gloo.timeout = std::chrono::seconds(o.timeoutSeconds);
    comms =
        std::make_unique<GlooCommunicatorFactory>(rank, worldSize, store, gloo);
  }
  ExecutorOptions options;
  options.trace = !o.trace.empty() || !o.html.empty();
  options.asyncCollectives = !o.syncCollectives;
  // The injected failure of --fail-step, inside the step's instructions.
  if (rank == o.failRank && o.failStep) {
    options.faultRun = o.failStep - 1;
    options.faultInstruction = o.failInstruction;
    options.fault = [&o, rank] { return failOnPurpose(o, rank); };
  }
  StatusOr<std::unique_ptr<Executor>> executor =
      Executor::create(plan, rank, **device, *comms, options);
  if (!executor.isOk())
    return fail(executor.status());
  Executor &ex = **executor;
  if (options.fault && o.failInstruction >= int64_t(ex.instructionCount()))
    return fail(PARTITION_ERROR(
        InvalidArgument, "--fail-instruction ", o.failInstruction,
        " is not an instruction of rank ", rank, "'s program (it has ",
        ex.instructionCount(), ": 0 to ", ex.instructionCount() - 1, ")"));
  if (!ex.hasProgram())
    return r;
  r.coordinates = ex.coordinates();

  const plan::Program &program = *ex.program();
  bool needsWeights = false;
  std::set<std::string> state;
  if (program.params())
    for (const plan::Binding *b : *program.params()) {
      needsWeights |= b->role() != plan::Role::Constant;
      if (b->role() == plan::Role::State)
        state.insert(b->name()->str());
    }
  // Dynamic loss scaling (f16) keeps its scale as state "loss_scale".
  bool lossScaled = state.count("loss_scale") != 0;
  if (needsWeights && o.resumed) {
    CheckpointSource source(o.resumeDir, o.resumed);
    CheckedSource checked(source);
    if (Status s = ex.loadParameters(checked); !s.isOk())
      return fail(s);
  } else if (needsWeights && o.randomSeed >= 0) {
    RandomSource source(uint64_t(o.randomSeed), o.randomScale,
                        std::move(state));
    if (Status s = ex.loadParameters(source); !s.isOk())
      return fail(s);
  } else if (needsWeights) {
    if (o.weights.empty())
      return fail(PARTITION_ERROR(
          InvalidArgument, "the plan has parameters; give them with --weights "
                           "FILE.safetensors or --random-weights SEED"));
    StatusOr<SafetensorsReader> reader = SafetensorsReader::open(o.weights);
    if (!reader.isOk())
      return fail(reader.status());
    SafetensorsSource source(std::move(*reader));
    CheckedSource checked(source);
    if (Status s = ex.loadParameters(checked); !s.isOk())
      return fail(s);
  }
  // With a batch stream, each input binding's block of every batch is
  // read into a whole-shaped host value (zero outside the block: only the
  // block is read, and setInput takes the block back out of it).
  struct Feed {
    BatchSpec spec;
    std::vector<int64_t> offsets, localShape;
    std::vector<char> block;
    HostTensor whole;
  };
  std::vector<Feed> feeds;
  if (program.inputs() && o.batches)
    for (const plan::Binding *b : *program.inputs()) {
      const plan::Value &v = *program.values()->Get(b->value());
      Feed f;
      f.spec.name = b->name()->str();
      f.spec.dtype = toDType(v.dtype());
      f.spec.shape.assign(b->global_shape()->begin(), b->global_shape()->end());
      f.localShape.assign(v.shape()->begin(), v.shape()->end());
      f.offsets = shardOffsets(*ex.mesh(), *b->sharding(), ex.coordinates(),
                               f.localShape);
      // A padded batch: the rows past its end are not read (they stay
      // zero, and the program masks them).
      f.localShape = clippedShape(f.spec.shape, f.offsets, f.localShape);
      int64_t local = dtypeSize(f.spec.dtype), whole = local;
      for (int64_t d : f.localShape)
        local *= d;
      for (int64_t d : f.spec.shape)
        whole *= d;
      f.block.resize(local);
      f.whole =
          HostTensor{f.spec.dtype, f.spec.shape, std::vector<char>(whole, 0)};
      feeds.push_back(std::move(f));
    }
  auto feed = [&](int64_t batch) -> Status {
    for (Feed &f : feeds) {
      if (!f.block.empty())
        PARTITION_RETURN_IF_ERROR(o.batches->read(
            f.spec, batch, f.offsets, f.localShape, f.block.data()));
      int64_t count = int64_t(f.block.size()) / dtypeSize(f.spec.dtype);
      warnNonFinite("input", f.spec.name,
                    countNonFinite(f.block.data(), f.spec.dtype, count), count);
      insertBlock(f.whole.data.data(), f.spec.shape, f.block.data(),
                  f.localShape, f.offsets, dtypeSize(f.spec.dtype));
      PARTITION_RETURN_IF_ERROR(ex.setInput(f.spec.name, f.whole));
    }
    return Status::ok();
  };
  if (program.inputs() && !o.batches)
    for (const plan::Binding *b : *program.inputs()) {
      auto it = inputs.find(b->name()->str());
      if (it == inputs.end())
        return fail(PARTITION_ERROR(InvalidArgument, "input \"",
                                    b->name()->str(),
                                    "\" is missing; give it with --input ",
                                    b->name()->str(), "=FILE.npy"));
      if (Status s = ex.setInput(it->first, it->second); !s.isOk())
        return fail(s);
    }
  if (rank == o.failRank && !o.failStep)
    if (Status s = failOnPurpose(o, rank); !s.isOk())
      return fail(s);
  auto ready = std::chrono::steady_clock::now();
  r.setupMs = std::chrono::duration<double, std::milli>(ready - start).count();
  // Scalar outputs (a training step's loss) are printed after every step
  // by the first rank when there are several steps (or a checkpoint), and
  // checked by every rank.
  auto scalarsOf = [](const plan::Program &p) {
    std::vector<std::string> names;
    if (p.outputs())
      for (const plan::Binding *b : *p.outputs()) {
        const plan::Value *v = p.values()->Get(b->value());
        if (v->shape()->size() == 0 && isFloat(toDType(v->dtype())) &&
            b->updates() < 0 &&
            !(b->sharding()->unreduced() &&
              b->sharding()->unreduced()->size()))
          names.push_back(b->name()->str());
      }
    return names;
  };
  std::vector<std::string> scalars;
  bool training = isTraining(o);
  if (training)
    scalars = scalarsOf(program);
  // The printing rank: the first of the first program with scalar outputs
  // (rank 0 but for a pipeline, whose loss is the last stage's).
  int printer = 0;
  for (const plan::Program *p : *plan.root().programs())
    if (!scalarsOf(*p).empty()) {
      printer = plan.root().meshes()->Get(p->mesh())->ranks()->Get(0);
      break;
    }
  // The printing rank reports progress (and writes --metrics).
  std::unique_ptr<Progress> progress;
  if (rank == printer && (training || !o.metrics.empty())) {
    progress = std::make_unique<Progress>(
        o, plan, (o.resumed ? o.resumed->steps : 0) + 1);
    if (Status s = progress->open(); !s.isOk())
      return fail(s);
  }
  std::vector<std::pair<std::string, double>> values;
  // Time per step counts reading the batches, not writing checkpoints.
  std::chrono::steady_clock::duration checkpointTime{};
  for (int step = 0; step < o.steps; ++step) {
    auto stepStart = std::chrono::steady_clock::now();
    if (Status s = feed(o.firstBatch + step); !s.isOk())
      return fail(s);
    if (Status s = ex.run(); !s.isOk())
      return fail(s);
    int64_t done = (o.resumed ? o.resumed->steps : 0) + step + 1;
    bool last = step + 1 == o.steps;
    bool logged = isLoggedStep(o, step);
    if (progress && logged)
      progress->clear();
    if (!scalars.empty())
      if (Status s = printLosses(ex, scalars, done, lossScaled,
                                 rank == printer && logged, &values);
          !s.isOk())
        return fail(s);
    double stepMs = std::chrono::duration<double, std::milli>(
                        std::chrono::steady_clock::now() - stepStart)
                        .count();
    if (o.checkpointEvery && (done % o.checkpointEvery == 0 || last)) {
      if (progress)
        progress->clear();
      auto begin = std::chrono::steady_clock::now();
      if (Status s = checkpoint(o, plan, ex, rank, *store,
                                periodicCheckpointDir(o.checkpointDir, done),
                                done, step + 1);
          !s.isOk())
        return fail(s);
      checkpointTime += std::chrono::steady_clock::now() - begin;
    }
    if (progress)
      if (Status s = progress->step(step, stepMs, values,
                                    ex.device().peakAllocatedBytes());
          !s.isOk())
        return fail(s);
  }
  r.stepMs = std::chrono::duration<double, std::milli>(
                 std::chrono::steady_clock::now() - ready - checkpointTime)
                 .count() /
             o.steps;
  if (!o.checkpointDir.empty() && !o.checkpointEvery)
    if (Status s =
            checkpoint(o, plan, ex, rank, *store, o.checkpointDir,
                       (o.resumed ? o.resumed->steps : 0) + o.steps, o.steps);
        !s.isOk())
      return fail(s);
  if (progress)
    progress->summarize();
  if (program.outputs())
    for (const plan::Binding *b : *program.outputs()) {
      StatusOr<HostTensor> t = ex.output(b->name()->str());
      if (!t.isOk())
        return fail(t.status());
      r.outputs[b->name()->str()] = std::move(*t);
    }
  r.peakBytes = ex.device().peakAllocatedBytes();
  r.memory = ex.memoryUse();
  r.trace = ex.trace();
  return r;
}

/// Assembles output `b` of `program` from every rank's block.
StatusOr<HostTensor> assemble(const plan::Plan &root,
                              const plan::Program &program,
                              const plan::Binding &b,
                              const std::vector<RankResult> &results) {
  const plan::Mesh &mesh = *root.meshes()->Get(program.mesh());
  const plan::Value &v = *program.values()->Get(b.value());
  if (b.sharding()->unreduced() && b.sharding()->unreduced()->size())
    return PARTITION_ERROR(InvalidArgument, "output \"", b.name()->str(),
                           "\" is still a partial sum over some mesh axes; "
                           "the program must reduce it before returning it");
  HostTensor whole;
  whole.dtype = toDType(v.dtype());
  whole.shape.assign(b.global_shape()->begin(), b.global_shape()->end());
  int64_t elements = 1;
  for (int64_t d : whole.shape)
    elements *= d;
  whole.data.assign(elements * dtypeSize(whole.dtype), 0);
  for (int32_t rank : *mesh.ranks()) {
    const RankResult &r = results[rank];
    if (!isAssemblingDevice(mesh, *b.sharding(), r.coordinates))
      continue;
    const HostTensor &local = r.outputs.at(b.name()->str());
    insertBlock(whole.data.data(), whole.shape, local.data.data(), local.shape,
                shardOffsets(mesh, *b.sharding(), r.coordinates, local.shape),
                dtypeSize(whole.dtype));
  }
  // A parameter's new value or gradient in the layout its weights file has
  // (the same elements, transposed back where the file holds them so).
  if (b.stored_shape()) {
    whole.shape.assign(b.stored_shape()->begin(), b.stored_shape()->end());
    std::vector<int64_t> perm;
    if (b.stored_permutation())
      perm.assign(b.stored_permutation()->begin(),
                  b.stored_permutation()->end());
    whole.data = toStoredOrder(whole.data, whole.shape, perm,
                               dtypeSize(whole.dtype));
  }
  return whole;
}

/// A rank's outputs and figures as a store value (process mode).
std::vector<char> packResult(const RankResult &r) {
  RankReport report;
  report.coordinates = r.coordinates;
  report.setupMs = r.setupMs;
  report.stepMs = r.stepMs;
  report.peakBytes = r.peakBytes;
  report.memory = r.memory;
  report.outputs = r.outputs;
  report.trace = r.trace;
  return packRankReport(report);
}

/// Rank `rank`'s result from its store value `key`: its figures, the error
/// it reported, or the error of a malformed value.
RankResult unpackResult(const std::vector<char> &bytes, const std::string &key,
                        int rank) {
  RankResult r;
  StatusOr<RankMessage> message = unpackRankMessage(bytes, key, rank);
  if (!message.isOk()) {
    r.status = message.status();
  } else if (message->failed) {
    r.status = PARTITION_ERROR(Aborted, message->errorText);
    r.errorText = message->errorText;
  } else {
    RankReport &report = message->report;
    r.coordinates = std::move(report.coordinates);
    r.setupMs = report.setupMs;
    r.stepMs = report.stepMs;
    r.peakBytes = report.peakBytes;
    r.memory = report.memory;
    r.outputs = std::move(report.outputs);
    r.trace = std::move(report.trace);
  }
  return r;
}

/// "rank 2", or "ranks 0-3, 5" for several.
std::string formatRanks(const std::vector<int> &ranks) {
  std::string text = ranks.size() == 1 ? "rank " : "ranks ";
  for (size_t i = 0; i < ranks.size();) {
    size_t j = i;
    while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1)
      ++j;
    text += (i ? ", " : "") + std::to_string(ranks[i]);
    if (j > i)
      text += "-" + std::to_string(ranks[j]);
    i = j + 1;
  }
  return text;
}

/// Prints figures and writes outputs; returns the exit code.
int finish(const Options &o, const LoadedPlan &plan,
           const std::vector<RankResult> &results) {
  // Ranks that fail the same way are reported once: "ranks 0-3: ...".
  std::vector<std::pair<std::string, std::vector<int>>> errors;
  for (size_t rank = 0; rank < results.size(); ++rank) {
    const RankResult &r = results[rank];
    if (r.status.isOk())
      continue;
    std::string text = r.errorText.empty() ? r.status.toString() : r.errorText;
    auto same = std::find_if(errors.begin(), errors.end(),
                             [&](const auto &e) { return e.first == text; });
    if (same == errors.end())
      errors.push_back({text, {int(rank)}});
    else
      same->second.push_back(int(rank));
  }
  for (const auto &[text, ranks] : errors)
    std::cerr << "partition-run: " << formatRanks(ranks) << ": " << text
              << "\n";
  if (!errors.empty())
    return 1;
  for (size_t rank = 0; rank < results.size(); ++rank) {
    const RankResult &r = results[rank];
    std::printf("rank %zu: setup %.1f ms, %.3f ms per step, peak memory %zu "
                "bytes\n",
                rank, r.setupMs, r.stepMs, r.peakBytes);
  }
  if (o.memoryReport)
    for (size_t rank = 0; rank < results.size(); ++rank) {
      const MemoryUse &m = results[rank].memory;
      std::printf("rank %zu memory: parameters %lld, state %lld, constants "
                  "%lld, inputs %lld, arena %lld, scratch %lld, total %lld "
                  "bytes (%lld without scratch)\n",
                  rank, (long long)m.parameters, (long long)m.state,
                  (long long)m.constants, (long long)m.inputs,
                  (long long)m.arena, (long long)m.scratch,
                  (long long)m.total(), (long long)m.planned());
    }
  const plan::Plan &root = plan.root();
  bool training = isTraining(o);
  int64_t numOutputs = 0, bytesWritten = 0;
  std::map<std::string, std::vector<char>> writtenOutputs;
  for (const plan::Program *program : *root.programs()) {
    if (!program->outputs())
      continue;
    for (const plan::Binding *b : *program->outputs()) {
      StatusOr<HostTensor> whole = assemble(root, *program, *b, results);
      if (!whole.isOk()) {
        std::cerr << "partition-run: " << whole.status().toString() << "\n";
        return 1;
      }
      std::string name = b->name()->str();
      // An output of several programs (a parameter every pipeline stage
      // that holds it updates) is written once; the copies must agree.
      auto [first, isNew] = writtenOutputs.try_emplace(name, whole->data);
      if (!isNew) {
        if (first->second != whole->data) {
          std::cerr << "partition-run: output \"" << name
                    << "\" differs between the programs that return it "
                       "(pipeline stages holding the same parameter)\n";
          return 1;
        }
        continue;
      }
      ++numOutputs;
      bytesWritten += int64_t(whole->data.size());
      if (!training)
        std::printf("output %s: %s%s\n", name.c_str(), dtypeName(whole->dtype),
                    formatShape(whole->shape).c_str());
      if (!o.outputDir.empty()) {
        // .npy has no bf16: bf16 outputs go to a safetensors file holding
        // the one tensor.
        Status s;
        if (whole->dtype == DType::BF16) {
          SafetensorsWriter writer;
          s = writer.add(name, whole->dtype, whole->shape, whole->data.data());
          if (s.isOk())
            s = writer.write(o.outputDir + "/" + name + ".safetensors");
        } else {
          s = writeNpy(o.outputDir + "/" + name + ".npy", whole->dtype,
                       whole->shape, whole->data.data());
        }
        if (!s.isOk()) {
          std::cerr << "partition-run: " << s.toString() << "\n";
          return 1;
        }
      }
    }
  }
  if (training) {
    int64_t first = (o.resumed ? o.resumed->steps : 0) + 1;
    std::printf("trained %d step%s (steps %lld to %lld); ", o.steps,
                o.steps == 1 ? "" : "s", (long long)first,
                (long long)(first + o.steps - 1));
    if (o.outputDir.empty())
      std::printf("%lld output%s not written (give --output-dir DIR to "
                  "keep them)\n",
                  (long long)numOutputs, numOutputs == 1 ? "" : "s");
    else
      std::printf("%lld output%s (%lld bytes) written to %s\n",
                  (long long)numOutputs, numOutputs == 1 ? "" : "s",
                  (long long)bytesWritten,
                  o.outputDir.c_str());
  }
  if (!o.trace.empty() || !o.html.empty()) {
    std::vector<std::vector<TraceEvent>> traces;
    for (const RankResult &r : results)
      traces.push_back(r.trace);
    if (!o.trace.empty())
      if (Status s = writeChromeTrace(o.trace, traces); !s.isOk()) {
        std::cerr << "partition-run: " << s.toString() << "\n";
        return 1;
      }
    if (!o.html.empty()) {
      partition::report::Report page =
          traceReport(traces, std::filesystem::path(o.planPath).filename().string());
      StatusOr<OutputFile> file = checkOutputFile(o.html, "--html");
      Status written =
          file.isOk()
              ? writeOutputFile(*file, partition::report::renderHtml(page))
              : file.status();
      if (!written.isOk()) {
        std::cerr << "partition-run: " << written.message() << "\n";
        return 1;
      }
      std::printf("trace report written to %s\n", o.html.c_str());
    }
  }
  return 0;
}

/// A TCP socket listening on a free port of loopback (set in `port`), for
/// the store of --processes: inherited by the ranks (no close-on-exec).
/// -1 and errno on failure.
int listenOnFreePort(int &port) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof(addr);
  if (fd >= 0 && ::bind(fd, reinterpret_cast<sockaddr *>(&addr), len) == 0 &&
      ::listen(fd, 1024) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr *>(&addr), &len) == 0) {
    port = ntohs(addr.sin_port);
    return fd;
  }
  int error = errno;
  if (fd >= 0)
    ::close(fd);
  errno = error;
  return -1;
}

/// Checks that rank `rank`'s result (read from store value `key`) fits the
/// plan: the mesh coordinates of the rank and a block of every output of its
/// program with the plan's dtype and local shape, so that assembling the
/// outputs reads only what is there.
Status checkResultFitsPlan(const LoadedPlan &plan, int rank,
                           const std::string &key, const RankResult &r) {
  const plan::Plan &root = plan.root();
  for (const plan::Program *program : *root.programs()) {
    const plan::Mesh &mesh = *root.meshes()->Get(program->mesh());
    const auto *ranks = mesh.ranks();
    auto at = std::find(ranks->begin(), ranks->end(), rank);
    if (at == ranks->end())
      continue;
    std::vector<int64_t> expected = meshCoordinates(mesh, at - ranks->begin());
    if (r.coordinates != expected)
      return PARTITION_ERROR(InvalidArgument, "store value '", key,
                             "' from rank ", rank, " has mesh coordinates ",
                             formatShape(r.coordinates),
                             ", but the plan's are ", formatShape(expected));
    if (program->outputs())
      for (const plan::Binding *b : *program->outputs()) {
        const plan::Value &v = *program->values()->Get(b->value());
        std::string name = b->name()->str();
        DType dtype = toDType(v.dtype());
        std::vector<int64_t> shape(v.shape()->begin(), v.shape()->end());
        auto it = r.outputs.find(name);
        if (it == r.outputs.end())
          return PARTITION_ERROR(InvalidArgument, "store value '", key,
                                 "' from rank ", rank, " lacks output \"", name,
                                 "\"");
        if (it->second.dtype != dtype || it->second.shape != shape)
          return PARTITION_ERROR(
              InvalidArgument, "store value '", key, "' from rank ", rank,
              ": output \"", name, "\" is ", dtypeName(it->second.dtype),
              formatShape(it->second.shape), ", but the plan's block is ",
              dtypeName(dtype), formatShape(shape));
      }
    return Status::ok(); // A rank runs the first program whose mesh holds it.
  }
  return Status::ok();
}

/// How long a rank under a launcher may go without a heartbeat (and rank 0's
/// store without an answer) before the others take it for stopped or hung:
/// half of --timeout, at most 10 s, so that such a rank is named, and the
/// run ends, within --timeout.
std::chrono::milliseconds stallLimit(const Options &o) {
  return std::min<std::chrono::milliseconds>(std::chrono::seconds(10),
                                             std::chrono::milliseconds(500) *
                                                 o.timeoutSeconds);
}

/// The key a rank other than 0 sets when it leaves the job (it has read
/// "done", or it stops for another rank's failure), after it has stopped
/// watching rank 0's store.
std::string leftKey(int rank) { return "job/left/" + std::to_string(rank); }

/// Rank 0 serves the store: before it closes, it waits (up to `bound`) for
/// every other rank but `dead` to have left, so that none of them sees the
/// store go away and reports rank 0 as failed.
void awaitLeaving(Store &store, int worldSize, int dead,
                  std::chrono::milliseconds bound) {
  auto deadline = std::chrono::steady_clock::now() + bound;
  for (int r = 1; r < worldSize; ++r) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (r != dead &&
        !store.get(leftKey(r), std::max(left, std::chrono::milliseconds(0)))
             .isOk())
      return;
  }
}

/// One rank of a multi-process run; rank 0 gathers and reports.
int runAsProcess(const Options &o, const LoadedPlan &plan,
                 const std::map<std::string, HostTensor> &inputs,
                 const LaunchEnvironment &env) {
  int rank = env.rank, worldSize = env.worldSize;
  std::string self = "partition-run: rank " + std::to_string(rank) + ": ";
  bool supervised = std::getenv(kSupervisedVariable) != nullptr;
  auto timeout = std::chrono::seconds(o.timeoutSeconds);
  TcpStoreOptions storeOptions;
  storeOptions.token = env.token;
  // Rank 0 has --timeout to appear, as every rank has to join.
  storeOptions.connectTimeout = timeout;
  // A rank (rank 0: its store) silent for this long is stopped or hung.
  // Rank 0 serves its own store: it cannot stop apart from it, so it keeps
  // the default (its own gets were seen waiting 4 s on a loaded machine).
  if (rank != 0)
    storeOptions.answerTimeout = stallLimit(o);
  storeOptions.heartbeatLimit =
      supervised ? std::chrono::milliseconds(0) : stallLimit(o);
  // Under --processes, rank 0 serves on the socket its parent bound.
  if (const char *socket = std::getenv(kStoreSocketVariable)) {
    char *end = nullptr;
    long fd = std::strtol(socket, &end, 10);
    if (!*socket || *end || fd < 0 || fd > 1 << 20) {
      printLine(self + kStoreSocketVariable + "=\"" + socket +
                "\" is not a file descriptor");
      return 1;
    }
    if (rank == 0)
      storeOptions.listenFd = int(fd);
    else
      ::close(int(fd));
  }
  StatusOr<std::unique_ptr<TcpStore>> store = TcpStore::create(
      env.masterAddr, env.masterPort, /*serve=*/rank == 0, storeOptions);
  if (!store.isOk()) {
    printLine(self + (rank == 0 ? "" : "cannot join rank 0's store: ") +
              store.status().toString());
    return 1;
  }
  std::string key = "result/" + std::to_string(rank);
  // Under a launcher, each rank pledges its result as the first thing it
  // does on the store, and sends heartbeats: when one dies or stops before
  // handing it over, rank 0's store tells everyone, instead of the ranks
  // waiting out their timeouts in a collective. (--processes watches its
  // children itself, and names the signal.)
  if (rank != 0 && !supervised)
    if (Status s = (*store)->pledge(key); !s.isOk()) {
      printLine(self + s.toString());
      return 1;
    }
  std::shared_ptr<Store> shared(std::move(*store));
  // Rank 0 serves the store and gathers the results: when it dies, the
  // others cannot finish, so they stop at once instead of waiting out
  // their timeouts.
  auto onLost = [self, env](const Status &lost) {
    printLine(self + "rank 0 has failed: its store at " + env.masterAddr +
              ":" + std::to_string(env.masterPort) + " went away (" +
              lost.message() + ")");
    std::_Exit(1);
  };
  // A plain pointer: the watch that calls this lives no longer than `shared`.
  Store *storeOfWatch = shared.get();
  auto onBrokenPledge = [self, rank, worldSize, storeOfWatch,
                         bound =
                             stallLimit(o)](const std::vector<char> &pledged) {
    std::string dead(pledged.begin(), pledged.end());
    int deadRank = -1;
    if (dead.rfind("result/", 0) == 0) {
      deadRank = std::atoi(dead.c_str() + 7);
      dead = "rank " + dead.substr(7);
    }
    // Set before the pledge key, so it is there.
    StatusOr<std::vector<char>> why = storeOfWatch->get(
        TcpStore::kBrokenPledgeReasonKey, std::chrono::seconds(1));
    printLine(self + "stopping: " + dead +
              " has failed: it ended or stopped without handing over its "
              "result (" +
              (why.isOk() ? std::string(why->begin(), why->end())
                          : why.status().message()) +
              ")");
    if (rank == 0)
      awaitLeaving(*storeOfWatch, worldSize, deadRank, bound);
    else
      (void)storeOfWatch->set(leftKey(rank), {'1'});
    std::_Exit(1);
  };
  std::unique_ptr<StoreWatch> watch;
  if (!supervised)
    watch = std::make_unique<StoreWatch>(shared, "done", onLost,
                                         TcpStore::kBrokenPledgeKey,
                                         onBrokenPledge);
  else if (rank != 0)
    watch = std::make_unique<StoreWatch>(shared, "done", onLost);
  // A rank that leaves because others did not join keeps its pledge (an
  // error as its result), so that nobody takes it for dead.
  auto leave = [&] {
    watch.reset();
    (void)shared->set(key, packRankError("the job did not start"));
  };
  if (Status joined = joinRanks(*shared, rank, worldSize, timeout, leave);
      !joined.isOk()) {
    watch.reset();
    // Rank 0's store gone while this rank waited for the join's verdict
    // (rank 0 killed as it gave it): name rank 0, as the watch would have,
    // not the store key this rank was waiting on. A get of a key nobody
    // set answers at once from a live store.
    if (rank != 0) {
      StatusOr<std::vector<char>> probe =
          shared->get(key, std::chrono::milliseconds(0));
      if (!probe.isOk() &&
          probe.status().code() != StatusCode::DeadlineExceeded)
        onLost(probe.status());
    }
    printLine(self + joined.toString());
    return 1;
  }
  RankResult result = runRank(o, plan, inputs, rank, worldSize, shared);
  bool failed = !result.status.isOk();
  if (failed) {
    // Rank 0 reports every rank's error, in rank order; a rank prints its own
    // only when it cannot hand it over.
    // A store that is gone (its set fails) means rank 0 has failed: that
    // is the cause to name, as the watch would.
    if (Status s = shared->set(key, packRankError(result.status.toString()));
        !s.isOk() && rank != 0)
      onLost(s);
    else if (!s.isOk())
      printLine(self + result.status.toString());
  } else if (Status s = shared->set(key, packResult(result)); !s.isOk()) {
    printLine(self + s.toString());
    return 1;
  }
  if (rank != 0) {
    // Stay until rank 0 has read every result (it serves the store), then
    // stop watching it before saying so.
    (void)shared->get("done", std::chrono::seconds(o.timeoutSeconds + 30));
    watch.reset();
    (void)shared->set(leftKey(rank), {'1'});
    return failed ? 1 : 0;
  }
  std::vector<RankResult> results(worldSize);
  for (int r = 0; r < worldSize; ++r) {
    std::string key = "result/" + std::to_string(r);
    StatusOr<std::vector<char>> bytes =
        shared->get(key, std::chrono::seconds(o.timeoutSeconds + 30));
    if (!bytes.isOk())
      results[r].status = bytes.status();
    else
      results[r] = unpackResult(*bytes, key, r);
    if (results[r].status.isOk())
      results[r].status = checkResultFitsPlan(plan, r, key, results[r]);
  }
  int code = finish(o, plan, results);
  (void)shared->set("done", {'1'});
  awaitLeaving(*shared, worldSize, -1, stallLimit(o));
  return code;
}

/// Checks the options that depend on the plan, and creates and checks
/// --output-dir and the folder of --trace, all before any rank starts: a bad
/// name or path fails at once, not after the last step.
Status prepareRun(const Options &o, const LoadedPlan &plan) {
  const plan::Plan &root = plan.root();
  if (o.failRank >= plan.worldSize())
    return PARTITION_ERROR(InvalidArgument, "--fail-rank ", o.failRank,
                           " is outside the plan's world of ", plan.worldSize(),
                           " ranks (0 to ", plan.worldSize() - 1, ")");
  std::vector<std::string> inputNames;
  for (const plan::Program *program : *root.programs())
    if (program->inputs())
      for (const plan::Binding *b : *program->inputs())
        if (std::find(inputNames.begin(), inputNames.end(), b->name()->str()) ==
            inputNames.end())
          inputNames.push_back(b->name()->str());
  for (const auto &[name, path] : o.inputs)
    if (std::find(inputNames.begin(), inputNames.end(), name) ==
        inputNames.end()) {
      std::string known;
      for (const std::string &n : inputNames)
        known += (known.empty() ? "" : ", ") + n;
      return PARTITION_ERROR(InvalidArgument, "--input ", name, "=", path,
                             ": the plan has no input \"", name, "\" (its ",
                             "inputs: ", known.empty() ? "none" : known, ")");
    }
  namespace fs = std::filesystem;
  auto makeFolder = [](const std::string &dir,
                       const std::string &option) -> Status {
    std::error_code error;
    fs::create_directories(dir, error);
    if (error || !fs::is_directory(dir, error))
      return PARTITION_ERROR(InvalidArgument, option, " ", dir,
                             ": cannot create the folder",
                             error ? ": " + error.message() : std::string());
    if (::access(dir.c_str(), W_OK | X_OK) != 0)
      return PARTITION_ERROR(
          InvalidArgument, option, " ", dir,
          ": the folder is not writable: ", std::strerror(errno));
    return Status::ok();
  };
  std::vector<NamedPath> outputs;
  if (!o.outputDir.empty()) {
    PARTITION_RETURN_IF_ERROR(makeFolder(o.outputDir, "--output-dir"));
    // Output names come from the model: each must stay one file name
    // inside the folder (and its file is checked with the other outputs).
    std::set<std::string> names;
    for (const plan::Program *program : *root.programs())
      if (program->outputs())
        for (const plan::Binding *b : *program->outputs()) {
          std::string name = b->name()->str();
          PARTITION_RETURN_IF_ERROR(checkFileNameComponent(
              name, "--output-dir: output \"" + name + "\""));
          bool bf16 = toDType(program->values()->Get(b->value())->dtype()) ==
                      DType::BF16;
          if (names.insert(name).second)
            outputs.push_back(
                {"--output-dir",
                 o.outputDir + "/" + name + (bf16 ? ".safetensors" : ".npy")});
        }
  }
  for (auto [flag, path, example] :
       {std::tuple<const char *, const std::string *, const char *>{
            "--trace", &o.trace, "trace.json"},
        {"--html", &o.html, "trace.html"}}) {
    if (path->empty())
      continue;
    fs::path parent = fs::path(*path).parent_path();
    if (!parent.empty())
      PARTITION_RETURN_IF_ERROR(makeFolder(parent.string(), flag));
    std::error_code error;
    if (fs::is_directory(*path, error))
      return PARTITION_ERROR(InvalidArgument, flag, " ", *path,
                             ": is a folder; give a file name such as ",
                             (fs::path(*path) / example).string());
  }
  // Each output file (a FIFO nobody reads, a socket, one path twice, or an
  // output onto an input: runtime/Files.h).
  std::vector<NamedPath> inputs{{"the plan", o.planPath},
                                {"--weights", o.weights},
                                {"--data", o.dataPath}};
  for (auto [flag, path] :
       {std::pair<const char *, const std::string *>{"--trace", &o.trace},
        {"--html", &o.html},
        {"--metrics", &o.metrics}})
    if (!path->empty())
      outputs.push_back({flag, *path});
  for (const auto &[name, path] : o.inputs)
    inputs.push_back({"--input " + name, path});
  return checkOutputFiles(outputs, inputs).status();
}

/// Checks that --metrics names a file that can be written, without emptying
/// it (every rank's process checks; the printing rank empties it).
Status checkMetricsPath(const Options &o) {
  if (o.metrics.empty())
    return Status::ok();
  namespace fs = std::filesystem;
  std::error_code error;
  if (fs::is_directory(o.metrics, error))
    return PARTITION_ERROR(InvalidArgument, "--metrics ", o.metrics,
                           ": is a folder; give a file name such as ",
                           (fs::path(o.metrics) / "metrics.jsonl").string());
  return checkOutputFile(o.metrics, "--metrics").status();
}

/// Opens --data or --synthetic and checks it against every input and label
/// binding of the plan; sets where this run starts in the stream.
Status openBatches(Options &o, const LoadedPlan &plan) {
  if (o.dataPath.empty() && o.syntheticSeed < 0)
    return Status::ok();
  std::vector<BatchSpec> specs;
  std::set<std::string> seen;
  for (const plan::Program *program : *plan.root().programs())
    if (program->inputs())
      for (const plan::Binding *b : *program->inputs()) {
        if (!seen.insert(b->name()->str()).second)
          continue;
        BatchSpec spec;
        spec.name = b->name()->str();
        spec.dtype = toDType(program->values()->Get(b->value())->dtype());
        spec.shape.assign(b->global_shape()->begin(), b->global_shape()->end());
        if (o.syntheticSeed >= 0 && !isFloat(spec.dtype) && !o.vocab)
          return PARTITION_ERROR(
              InvalidArgument, "--synthetic: input \"", spec.name, "\" is ",
              dtypeName(spec.dtype), formatShape(spec.shape),
              "; give the range of its values with --vocab N");
        specs.push_back(std::move(spec));
      }
  std::unique_ptr<BatchSource> source;
  if (o.syntheticSeed >= 0) {
    source =
        std::make_unique<SyntheticBatches>(uint64_t(o.syntheticSeed), o.vocab);
  } else {
    PARTITION_ASSIGN_OR_RETURN(source, SafetensorsBatches::open(o.dataPath));
  }
  PARTITION_RETURN_IF_ERROR(source->check(specs));
  // A checkpoint of a run with fixed inputs has no data position: its steps
  // are the batches a stream would have handed out.
  if (o.resumed)
    o.firstBatch = o.resumed->dataSource.empty() ? o.resumed->steps
                                                 : o.resumed->dataPosition;
  o.batches = std::move(source);
  return Status::ok();
}

} // namespace

const char *kCalibrateUsage =
    R"(usage: partition-run --calibrate -o FILE [--backend cpu|cuda] [--ranks N]
                     [--seconds S]

Measures this machine for the cost model and writes a cluster file
(partition-cluster/1, docs/design/2026-12-03-cost-model.md): f32 GEMM
throughput by size on one device (the peak is the best measured; the
efficiency curve each size's fraction of it), elementwise memory bandwidth,
and all-reduce latency and bus bandwidth over N ranks (default 2; threads
of this process: Gloo on cpu, NCCL on cuda) as the node's links; every rank
measures at once, as a plan's ranks share the machine. Each point runs for
S seconds (default 0.2). The file is named local-<backend> and describes
one node of N devices.
)";

/// partition-run --calibrate: returns the exit code.
namespace {
/// What --calibrate is asked to do.
struct CalibrateArgs {
  std::string out, backend;
  int ranks = 2;
  CalibrationOptions options;
};

/// What one rank of a calibration measured.
struct RankMeasurements {
  std::vector<Measurement> gemm, allReduce;
  double bandwidth = 0, overlap = 1, memory = 0;
  std::string deviceName;
};
} // namespace

/// Reads --calibrate's options; returns -1 to go on, or the exit code
/// (0 after --help, 2 after a message).
static int parseCalibrateArgs(int argc, char **argv, CalibrateArgs &c) {
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--calibrate")
      continue;
    if (a == "--help" || a == "-h") {
      std::cout << kCalibrateUsage;
      return 0;
    }
    if (a != "-o" && a != "--backend" && a != "--ranks" && a != "--seconds") {
      std::cerr << "partition-run: --calibrate takes -o FILE, --backend, "
                   "--ranks and --seconds, not "
                << a << "\n";
      return 2;
    }
    const char *v = i + 1 < argc ? argv[++i] : nullptr;
    if (!v || !*v) {
      std::cerr << "partition-run: " << a << " needs a value\n";
      return 2;
    }
    char *end = nullptr;
    if (a == "-o") {
      c.out = v;
    } else if (a == "--backend") {
      c.backend = v;
    } else if (a == "--ranks") {
      long n = std::strtol(v, &end, 10);
      if (*end || n < 1 || n > 64) {
        std::cerr << "partition-run: --ranks needs 1 to 64, got \"" << v
                  << "\"\n";
        return 2;
      }
      c.ranks = int(n);
    } else {
      double seconds = std::strtod(v, &end);
      if (*end || !(seconds > 0) || seconds > 60) {
        std::cerr << "partition-run: --seconds needs a number in (0, 60], "
                     "got \""
                  << v << "\"\n";
        return 2;
      }
      c.options.secondsPerPoint = seconds;
    }
  }
  if (c.out.empty()) {
    std::cerr << "partition-run: --calibrate needs -o FILE (the cluster file "
                 "to write)\n";
    return 2;
  }
  return -1;
}

/// Rank `rank`'s measurements: GEMM and memory bandwidth, then (with more
/// than one rank) the all-reduce and how much of it compute hides.
static Status measureRank(const CalibrateArgs &c, int rank,
                          const std::shared_ptr<InProcessStore> &store,
                          RankMeasurements &m) {
  PARTITION_ASSIGN_OR_RETURN(std::unique_ptr<Device> d,
                             createDevice(c.backend, rank));
  std::unique_ptr<CommunicatorFactory> comms;
  std::unique_ptr<Communicator> comm;
  if (c.ranks > 1) {
#ifdef PARTITION_HAVE_CUDA
    if (c.backend == "cuda") {
      PARTITION_ASSIGN_OR_RETURN(
          comms, cuda::createNcclCommunicatorFactory(*store, rank, c.ranks, *d,
                                                     cuda::NcclOptions()));
    }
#endif
    if (!comms)
      comms = std::make_unique<GlooCommunicatorFactory>(rank, c.ranks, store,
                                                        GlooOptions());
    std::vector<int> all(c.ranks);
    for (int r = 0; r < c.ranks; ++r)
      all[r] = r;
    PARTITION_ASSIGN_OR_RETURN(comm, comms->create(all, "calibrate"));
  }
  PARTITION_ASSIGN_OR_RETURN(m.gemm, measureGemm(*d, c.options));
  PARTITION_ASSIGN_OR_RETURN(m.bandwidth, measureElementwise(*d, c.options));
  if (comm) {
    PARTITION_ASSIGN_OR_RETURN(
        m.allReduce, measureAllReduce(*d, *comm, c.options, /*busy=*/true));
    PARTITION_ASSIGN_OR_RETURN(m.overlap, measureOverlap(*d, *comm, c.options));
  }
  m.deviceName = d->name();
  m.memory = double(d->memoryCapacity());
  if (c.backend == "cpu") // the ranks share the machine's memory
    m.memory /= c.ranks;
  return Status::ok();
}

int calibrateMain(int argc, char **argv) {
  CalibrateArgs c;
  if (int code = parseCalibrateArgs(argc, argv, c); code >= 0)
    return code;
  // Checked before the measurements (a FIFO nobody reads, a folder).
  StatusOr<OutputFile> outFile = checkOutputFile(c.out, "-o");
  if (!outFile.isOk()) {
    std::cerr << "partition-run: " << outFile.status().message() << "\n";
    return 2;
  }
  if (c.backend.empty()) {
    c.backend = "cpu";
#ifdef PARTITION_HAVE_CUDA
    if (cuda::cudaDeviceCount() >= c.ranks)
      c.backend = "cuda";
#endif
  }
  // Every rank measures at once, as the ranks of a plan share the machine:
  // GEMM and memory bandwidth under that load, then the all-reduce.
  std::printf("calibrating %d %s rank%s: GEMM, memory bandwidth%s ...\n",
              c.ranks, c.backend.c_str(), c.ranks == 1 ? "" : "s",
              c.ranks > 1 ? ", all-reduce" : "");
  std::fflush(stdout);
  auto store = std::make_shared<InProcessStore>();
  std::vector<Status> statuses(c.ranks);
  std::vector<RankMeasurements> measured(c.ranks);
  std::vector<std::thread> threads;
  for (int rank = 0; rank < c.ranks; ++rank)
    threads.emplace_back([&, rank] {
      statuses[rank] = measureRank(c, rank, store, measured[rank]);
    });
  for (std::thread &t : threads)
    t.join();
  for (const Status &s : statuses)
    if (!s.isOk()) {
      std::cerr << "partition-run: calibration: " << s.toString() << "\n";
      return 1;
    }
  const RankMeasurements &m = measured[0];
  Cluster cluster = clusterFromMeasurements(
      "local-" + c.backend, m.deviceName, c.ranks, m.memory, m.gemm,
      m.bandwidth, m.allReduce, m.overlap);
  // What calibration writes is held to the reader's ranges: a measurement
  // beyond them is an error here, not a file the planner refuses later.
  if (StatusOr<Cluster> checked = Cluster::parse(cluster.toJson(), c.out);
      !checked.isOk()) {
    std::cerr << "partition-run: --calibrate measured a cluster outside the "
                 "cluster file's ranges: "
              << checked.status().message() << "\n";
    return 1;
  }
  if (Status s = writeOutputFile(*outFile, cluster.toJson()); !s.isOk()) {
    std::cerr << "partition-run: " << s.message() << "\n";
    return 1;
  }
  std::printf("GEMM n x n x n    FLOP/s   efficiency\n");
  for (size_t i = 0; i < m.gemm.size(); ++i)
    std::printf("  n = %-8.0f %10.3g %8.3f\n", std::cbrt(m.gemm[i].size / 2),
                m.gemm[i].size / m.gemm[i].seconds, cluster.gemm[i].second);
  std::printf("elementwise: %.4g bytes/s\n", m.bandwidth);
  for (const Measurement &a : m.allReduce)
    std::printf("all-reduce %10.0f bytes: %10.3g s\n", a.size, a.seconds);
  std::printf("links: latency %.3g s, bus bandwidth %.4g bytes/s\n",
              cluster.intraNode.latency, cluster.intraNode.bandwidth);
  std::printf("communication hidden behind compute: %.2f\n", cluster.overlap);
  std::printf("wrote %s (%s: 1 node of %d devices)\n", c.out.c_str(),
              cluster.name.c_str(), c.ranks);
  return 0;
}

/// Reads the checkpoint --resume names into `o` (its directory and
/// manifest) after checking that it can be resumed for `o.steps`; prints
/// why not and returns false otherwise.
static bool resumeCheckpoint(Options &o) {
  std::vector<std::string> warnings;
  StatusOr<std::string> dir = findCheckpoint(o.resumeDir, &warnings);
  for (const std::string &w : warnings)
    std::cerr << "partition-run: warning: " << w << "\n";
  StatusOr<CheckpointManifest> manifest =
      dir.isOk() ? CheckpointManifest::read(*dir)
                 : StatusOr<CheckpointManifest>(dir.status());
  if (!manifest.isOk()) {
    std::cerr << "partition-run: " << manifest.status().toString() << "\n";
    return false;
  }
  if (Status room = checkResumable(*manifest, o.steps); !room.isOk()) {
    std::cerr << "partition-run: " << room.withContext(*dir).toString()
              << "\n";
    return false;
  }
  o.resumeDir = *dir;
  o.resumed = std::make_shared<const CheckpointManifest>(std::move(*manifest));
  // Under a launcher every rank would say it: only rank 0 does.
  const char *rankEnv = std::getenv("RANK");
  if (!rankEnv || std::string(rankEnv) == "0") {
    std::printf("resuming from checkpoint %s after step %lld\n",
                o.resumeDir.c_str(), (long long)o.resumed->steps);
    std::fflush(stdout);
  }
  return true;
}

/// Everything main does between loading the plan and starting ranks: the
/// run's files and options checked, the cluster, the checkpoint to resume
/// and the batches read, the backend chosen (CUDA where this build has it
/// and enough devices, else CPU) and checked to be in this build. Prints
/// what is wrong and returns false.
static bool prepareMain(Options &o, const LoadedPlan &plan) {
  auto fail = [](const Status &s, const char *context = "") {
    std::cerr << "partition-run: " << context << s.toString() << "\n";
    return false;
  };
  if (Status s = prepareRun(o, plan); !s.isOk())
    return fail(s);
  if (!o.clusterSpec.empty()) {
    StatusOr<Cluster> cluster = Cluster::load(o.clusterSpec);
    if (!cluster.isOk())
      return fail(cluster.status(), "--cluster: ");
    o.cluster = std::make_shared<const Cluster>(std::move(*cluster));
  }
  if (Status s = checkMetricsPath(o); !s.isOk())
    return fail(s);
  if (!o.resumeDir.empty() && !resumeCheckpoint(o))
    return false;
  if (Status s = openBatches(o, plan); !s.isOk())
    return fail(s);
  if (o.backend.empty()) {
    o.backend = "cpu";
#ifdef PARTITION_HAVE_CUDA
    if (cuda::cudaDeviceCount() >= plan.worldSize())
      o.backend = "cuda";
#endif
  }
  std::vector<std::string> compiled = compiledBackends();
  if (std::find(compiled.begin(), compiled.end(), o.backend) ==
      compiled.end()) {
    std::cerr << "partition-run: backend \"" << o.backend
              << "\" is not in this build (it has:";
    for (const std::string &b : compiled)
      std::cerr << " " << b;
    std::cerr << ")\n";
    return false;
  }
  return true;
}

/// One rank of a run that a launcher (or --processes) started.
static int runLaunchedRank(Options &o, const LoadedPlan &plan,
                           const LaunchEnvironment &env) {
  int worldSize = plan.worldSize();
  if (env.worldSize != worldSize) {
    std::cerr << "partition-run: rank " << env.rank << " of " << env.worldSize
              << " (" << env.launcher << ") does not fit the plan, which needs "
              << worldSize << " ranks\n";
    return 1;
  }
  if (o.backend == "cpu") {
    const char *ifname = std::getenv("GLOO_SOCKET_IFNAME");
    StatusOr<GlooOptions> gloo =
        cpu::chooseGlooAddress(env.masterAddr, ifname ? ifname : "", o.gloo);
    if (!gloo.isOk()) {
      std::cerr << "partition-run: rank " << env.rank << ": "
                << gloo.status().toString() << "\n";
      return 1;
    }
    o.gloo = *gloo;
  }
  StatusOr<std::map<std::string, HostTensor>> inputs = readInputs(o);
  if (!inputs.isOk()) {
    std::cerr << "partition-run: " << inputs.status().toString() << "\n";
    return 1;
  }
  return runAsProcess(o, plan, *inputs, env);
}

/// --processes: this process supervises one child process per rank, rank 0
/// serving the store on a socket bound here and inherited, so that no other
/// process can take the port before rank 0 listens on it.
static int superviseProcessRanks(const Options &o, int worldSize, int argc,
                                 char **argv) {
  int port = 0;
  int listener = listenOnFreePort(port);
  if (listener < 0) {
    std::cerr << "partition-run: cannot listen on loopback for the store: "
              << std::strerror(errno) << "\n";
    return 1;
  }
  StatusOr<std::string> token = makeStoreToken();
  if (!token.isOk()) {
    std::cerr << "partition-run: " << token.status().toString() << "\n";
    ::close(listener);
    return 1;
  }
  std::vector<std::string> args(argv, argv + argc);
  SupervisorOptions supervision;
  // Rank 0 waits up to --timeout + 30 s for the result of a rank that
  // failed; give it that long to report before stopping everyone.
  supervision.afterError = std::chrono::seconds(o.timeoutSeconds + 35);
  // Once rank 0 has it, only rank 0 may hold the listening socket: with
  // rank 0 gone, connections must be refused, not wait in a backlog.
  supervision.started = [&listener] {
    ::close(listener);
    listener = -1;
  };
  StatusOr<SupervisedRun> run = superviseRanks(
      "/proc/self/exe", args, worldSize,
      [&](int rank) -> std::vector<std::pair<std::string, std::string>> {
        return {{"RANK", std::to_string(rank)},
                {"LOCAL_RANK", std::to_string(rank)},
                {"WORLD_SIZE", std::to_string(worldSize)},
                {"MASTER_ADDR", "127.0.0.1"},
                {"MASTER_PORT", std::to_string(port)},
                {kStoreTokenVariable, *token},
                {kStoreSocketVariable, std::to_string(listener)},
                {kSupervisedVariable, "1"}};
      },
      supervision);
  if (listener >= 0) // A rank failed to start.
    ::close(listener);
  if (!run.isOk()) {
    std::cerr << "partition-run: " << run.status().toString() << "\n";
    return 1;
  }
  if (!run->failure.empty())
    printLine("partition-run: " + run->failure);
  return run->exitCode;
}

/// Every rank as a thread of this process.
static int runThreadRanks(const Options &o, const LoadedPlan &plan) {
  StatusOr<std::map<std::string, HostTensor>> inputs = readInputs(o);
  if (!inputs.isOk()) {
    std::cerr << "partition-run: " << inputs.status().toString() << "\n";
    return 1;
  }
  int worldSize = plan.worldSize();
  auto store = std::make_shared<InProcessStore>();
  std::vector<RankResult> results(worldSize);
  std::vector<std::thread> threads;
  for (int rank = 0; rank < worldSize; ++rank)
    threads.emplace_back([&, rank] {
      results[rank] = runRank(o, plan, *inputs, rank, worldSize, store);
    });
  for (std::thread &t : threads)
    t.join();
  return finish(o, plan, results);
}

int main(int argc, char **argv) {
  for (int i = 1; i < argc; ++i)
    if (std::string(argv[i]) == "--calibrate")
      return calibrateMain(argc, argv);
  Options o;
  if (std::string err = parseArgs(argc, argv, o); !err.empty()) {
    std::cerr << "partition-run: " << err << "\n";
    return 2;
  }
  StatusOr<LoadedPlan> plan = LoadedPlan::fromFile(o.planPath);
  if (!plan.isOk()) {
    std::cerr << "partition-run: " << plan.status().toString() << "\n";
    return 1;
  }
  if (o.dump) {
    std::cout << plan->dump();
    return 0;
  }
  if (!prepareMain(o, *plan))
    return 1;
  // Launched by an external launcher (or by --processes): one rank here.
  StatusOr<std::optional<LaunchEnvironment>> launch =
      readLaunchEnvironment([](const char *name) { return std::getenv(name); });
  if (!launch.isOk()) {
    std::cerr << "partition-run: " << launch.status().message() << "\n";
    return 1;
  }
  int worldSize = plan->worldSize();
  if (o.failByKill && !o.processes && !*launch) {
    std::cerr << "partition-run: --fail-mode kill would kill every rank when "
                 "they are threads; use it with --processes or a launcher\n";
    return 2;
  }
  if (*launch)
    return runLaunchedRank(o, *plan, **launch);
  if (o.ranks && o.ranks != worldSize) {
    std::cerr << "partition-run: the plan needs " << worldSize
              << " ranks (its meshes hold " << worldSize
              << " devices), but --ranks " << o.ranks << " was given\n";
    return 1;
  }
  if (o.processes)
    return superviseProcessRanks(o, worldSize, argc, argv);
  return runThreadRanks(o, *plan);
}
