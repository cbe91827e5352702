//===- Check.cpp - compare a partitioned model with the model ------------===//
//
// The model is partitioned by the passes a user runs (part-spmd, and for
// training the passes of planPipeline in Planner.h), the partitioned and the
// one-device programs are lowered with lowerToPlan and run by the runtime's
// Executor on ranks that are threads of this process (Gloo over an
// in-process store, as partition-run does), and their outputs compared.
//
//===----------------------------------------------------------------------===//

#include "partition/Check/Check.h"

#include "partition/Planner/Planner.h"
#include "partition/Tools/ToolSupport.h"

#include "partition/Conversion/PartToPlan/PartToPlan.h"
#include "partition/Dialect/Part/IR/PartDialect.h"
#include "partition/Dialect/Part/IR/PartOps.h"
#include "partition/Dialect/Part/Transforms/Passes.h"
#include "partition/runtime/Backends.h"
#include "partition/runtime/Executor.h"
#include "partition/runtime/ParameterSources.h"
#include "partition/runtime/Plan.h"
#include "partition/runtime/Safetensors.h"
#include "partition/runtime/Sharding.h"
#include "partition/runtime/Stores.h"
#include "partition/runtime/StoredShape.h"
#include "partition/runtime/cpu/GlooCommunicator.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/Support/CheckedArithmetic.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"

#include <atomic>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <functional>
#include <map>
#include <optional>
#include <pthread.h>
#include <set>

using namespace mlir;
using namespace partition;
using namespace partition::part;
using namespace partition::check;
namespace rt = partition::runtime;
namespace fbplan = partition::plan;

namespace {

//===----------------------------------------------------------------------===//
// Compiling
//===----------------------------------------------------------------------===//

/// "file:line:col" of a location, or "" when it has none.
std::string formatLoc(Location loc) {
  if (auto l = loc->findInstanceOf<FileLineColLoc>())
    return llvm::formatv("{0}:{1}:{2}", l.getFilename().getValue(),
                         l.getLine(), l.getColumn())
        .str();
  return "";
}

/// Records the first error diagnostic as one line ("loc: error: message").
class FirstError {
public:
  explicit FirstError(MLIRContext *ctx)
      : handler(ctx, [this](Diagnostic &d) {
          if (d.getSeverity() == DiagnosticSeverity::Error && text.empty()) {
            std::string where = formatLoc(d.getLocation());
            text = (where.empty() ? "" : where + ": ") + "error: " + d.str();
          }
          return success();
        }) {}
  std::string take(llvm::StringRef fallback) {
    return text.empty() ? fallback.str() : text;
  }

private:
  std::string text;
  ScopedDiagnosticHandler handler;
};

/// The model's function (the first with a body).
func::FuncOp mainFunction(ModuleOp module) {
  for (auto f : module.getOps<func::FuncOp>())
    if (!f.isDeclaration())
      return f;
  return {};
}

/// How a clone of a module is compiled: adds passes to `pm`, or fails with
/// a message.
using PassBuilder =
    std::function<LogicalResult(OpPassManager &pm, std::string &error)>;

/// Runs the passes of `build` on a clone of `module`.
FailureOr<OwningOpRef<ModuleOp>> compile(ModuleOp module,
                                         const PassBuilder &build,
                                         std::string &error) {
  OwningOpRef<ModuleOp> clone(module.clone());
  PassManager pm(module.getContext());
  if (failed(build(pm, error)))
    return failure();
  FirstError first(module.getContext());
  if (failed(pm.run(*clone))) {
    error = first.take("the passes failed");
    return failure();
  }
  return clone;
}

/// Adds a textual pipeline (without builtin.module) to `pm`.
LogicalResult addPasses(OpPassManager &pm, llvm::StringRef text,
                        std::string &error) {
  if (text.empty())
    return success();
  std::string message;
  llvm::raw_string_ostream os(message);
  if (failed(parsePassPipeline(text, pm, os))) {
    error = "cannot build the passes \"" + text.str() + "\": " + message;
    return failure();
  }
  return success();
}

/// Lowers a per-device module to a loaded plan.
FailureOr<rt::LoadedPlan> lower(ModuleOp module, llvm::StringRef what,
                                std::string &error) {
  std::vector<uint8_t> bytes;
  FirstError first(module.getContext());
  if (failed(lowerToPlan(module, bytes))) {
    error = first.take("cannot lower the " + what.str() + " program");
    return failure();
  }
  rt::StatusOr<rt::LoadedPlan> plan =
      rt::LoadedPlan::fromBytes(std::move(bytes), what.str() + " plan");
  if (!plan.isOk()) {
    error = plan.status().message();
    return failure();
  }
  return std::move(*plan);
}

//===----------------------------------------------------------------------===//
// Weights and inputs
//===----------------------------------------------------------------------===//

/// The binding name PartToPlan gives argument `i` of `f`.
std::string argName(func::FuncOp f, unsigned i) {
  if (auto name =
          f.getArgAttrOfType<StringAttr>(i, PartDialect::getNameAttrName()))
    return name.getValue().str();
  return "arg" + std::to_string(i);
}

/// For each integer input of the one-device program, the number of rows of
/// what it indexes: an embedding table's rows (part.gather), the classes of
/// a cross-entropy's labels. Values flow through ops with integer results.
std::map<std::string, int64_t> integerRanges(ModuleOp reference) {
  std::map<std::string, int64_t> ranges;
  for (auto f : reference.getOps<func::FuncOp>()) {
    if (f.isDeclaration())
      continue;
    for (BlockArgument arg : f.getArguments()) {
      auto type = dyn_cast<RankedTensorType>(arg.getType());
      if (!type || !type.getElementType().isInteger())
        continue;
      int64_t bound = 0;
      auto note = [&](int64_t b) {
        if (b > 0 && (!bound || b < bound))
          bound = b;
      };
      SmallVector<Value> work{arg};
      llvm::DenseSet<Value> seen{arg};
      while (!work.empty()) {
        Value v = work.pop_back_val();
        for (OpOperand &use : v.getUses()) {
          Operation *user = use.getOwner();
          if (auto g = dyn_cast<GatherOp>(user)) {
            if (use.getOperandNumber() == 1)
              note(cast<RankedTensorType>(g.getData().getType())
                       .getDimSize(g.getAxis()));
          } else if (auto l = dyn_cast<SoftmaxCrossEntropyOp>(user)) {
            if (use.getOperandNumber() == 1)
              note(cast<RankedTensorType>(l.getLogits().getType())
                       .getShape()
                       .back());
          } else if (user->getNumResults() == 1) {
            auto t = dyn_cast<RankedTensorType>(user->getResult(0).getType());
            if (t && t.getElementType().isInteger() &&
                seen.insert(user->getResult(0)).second)
              work.push_back(user->getResult(0));
          }
        }
      }
      if (bound)
        ranges[argName(f, arg.getArgNumber())] = bound;
    }
  }
  return ranges;
}

/// The integer range given to inputs no op bounds.
constexpr int64_t kDefaultIntegerRange = 2;

/// The whole value of every input and label of `plan`: floats uniform in
/// [-1, 1), integers in [0, range); a function of (seed, name, index).
std::map<std::string, rt::HostTensor>
makeInputs(const rt::LoadedPlan &plan,
           const std::map<std::string, int64_t> &ranges, uint64_t seed) {
  std::map<std::string, rt::HostTensor> inputs;
  for (const fbplan::Program *program : *plan.root().programs()) {
    if (!program->inputs())
      continue;
    for (const fbplan::Binding *b : *program->inputs()) {
      std::string name = b->name()->str();
      if (inputs.count(name))
        continue;
      rt::HostTensor t;
      t.dtype = rt::toDType(program->values()->Get(b->value())->dtype());
      t.shape.assign(b->global_shape()->begin(), b->global_shape()->end());
      int64_t n = 1;
      for (int64_t d : t.shape)
        n *= d;
      t.data.assign(n * rt::dtypeSize(t.dtype), 0);
      uint64_t key = rt::randomKey(seed ^ 0x5bd1e995ull, name);
      auto it = ranges.find(name);
      int64_t range = it == ranges.end() ? kDefaultIntegerRange : it->second;
      for (int64_t i = 0; i < n; ++i) {
        float u = rt::randomUniform(key + uint64_t(i));
        if (rt::isFloat(t.dtype)) {
          rt::storeFloat(t.data.data(), t.dtype, i, u * 2 - 1);
        } else {
          int64_t v = std::min<int64_t>(int64_t(u * double(range)), range - 1);
          if (t.dtype == rt::DType::I32)
            reinterpret_cast<int32_t *>(t.data.data())[i] = int32_t(v);
          else
            reinterpret_cast<int64_t *>(t.data.data())[i] = v;
        }
      }
      inputs[name] = std::move(t);
    }
  }
  return inputs;
}

//===----------------------------------------------------------------------===//
// Running
//===----------------------------------------------------------------------===//

/// What a plan computed: its scalar outputs after each step and every output
/// after the last, each assembled from the ranks.
struct RunResult {
  std::vector<std::map<std::string, double>> stepScalars;
  std::map<std::string, rt::HostTensor> outputs;
};

/// Where the weights come from.
struct WeightSpec {
  std::string path;
  uint64_t seed = 1;
  float scale = 0.1f;
};

/// One rank's share of a run.
struct RankRun {
  rt::Status status;
  std::vector<int64_t> coordinates;
  std::vector<std::map<std::string, double>> stepScalars;
  std::map<std::string, rt::HostTensor> outputs;
};

bool isScalarOutput(const fbplan::Program &p, const fbplan::Binding &b) {
  const fbplan::Value *v = p.values()->Get(b.value());
  return v->shape()->size() == 0 && rt::isFloat(rt::toDType(v->dtype())) &&
         b.updates() < 0;
}

RankRun runRank(const rt::LoadedPlan &plan, const WeightSpec &weights,
                const std::map<std::string, rt::HostTensor> &inputs,
                int steps, int rank, std::shared_ptr<rt::Store> store,
                int timeoutSeconds) {
  RankRun r;
  auto fail = [&](rt::Status s) {
    r.status = s;
    return std::move(r);
  };
  rt::StatusOr<std::unique_ptr<rt::Device>> device =
      rt::createDevice("cpu", rank);
  if (!device.isOk())
    return fail(device.status());
  rt::cpu::GlooOptions gloo;
  gloo.timeout = std::chrono::seconds(timeoutSeconds);
  rt::cpu::GlooCommunicatorFactory comms(rank, plan.worldSize(), store, gloo);
  rt::ExecutorOptions options;
  rt::StatusOr<std::unique_ptr<rt::Executor>> executor =
      rt::Executor::create(plan, rank, **device, comms, options);
  if (!executor.isOk())
    return fail(executor.status());
  rt::Executor &ex = **executor;
  if (!ex.hasProgram())
    return r;
  r.coordinates = ex.coordinates();
  const fbplan::Program &program = *ex.program();
  bool needsWeights = false;
  std::set<std::string> state;
  if (program.params())
    for (const fbplan::Binding *b : *program.params()) {
      needsWeights |= b->role() != fbplan::Role::Constant;
      if (b->role() == fbplan::Role::State)
        state.insert(b->name()->str());
    }
  if (needsWeights && weights.path.empty()) {
    rt::RandomSource source(weights.seed, weights.scale, std::move(state));
    if (rt::Status s = ex.loadParameters(source); !s.isOk())
      return fail(s);
  } else if (needsWeights) {
    rt::StatusOr<rt::SafetensorsReader> reader =
        rt::SafetensorsReader::open(weights.path);
    if (!reader.isOk())
      return fail(reader.status());
    rt::SafetensorsSource source(std::move(*reader), "model");
    if (rt::Status s = ex.loadParameters(source); !s.isOk())
      return fail(s);
  }
  if (program.inputs())
    for (const fbplan::Binding *b : *program.inputs()) {
      auto it = inputs.find(b->name()->str());
      if (it == inputs.end())
        return fail(PARTITION_ERROR(InvalidArgument, "input \"",
                                    b->name()->str(),
                                    "\" of the partitioned plan is not an "
                                    "input of the one-device plan"));
      if (rt::Status s = ex.setInput(it->first, it->second); !s.isOk())
        return fail(s);
    }
  for (int step = 0; step < steps; ++step) {
    if (rt::Status s = ex.run(); !s.isOk())
      return fail(s);
    std::map<std::string, double> scalars;
    if (program.outputs())
      for (const fbplan::Binding *b : *program.outputs())
        if (isScalarOutput(program, *b)) {
          rt::StatusOr<rt::HostTensor> t = ex.output(b->name()->str());
          if (!t.isOk())
            return fail(t.status());
          scalars[b->name()->str()] = rt::loadFloat(t->data.data(), t->dtype, 0);
        }
    r.stepScalars.push_back(std::move(scalars));
  }
  if (program.outputs())
    for (const fbplan::Binding *b : *program.outputs()) {
      rt::StatusOr<rt::HostTensor> t = ex.output(b->name()->str());
      if (!t.isOk())
        return fail(t.status());
      r.outputs[b->name()->str()] = std::move(*t);
    }
  return r;
}

/// The in-process store of one run, whose waits end early once the run is
/// cancelled: when a rank's thread cannot be started, the ranks already
/// running would otherwise wait the whole --timeout for it to connect.
class CancellableStore final : public rt::Store {
public:
  rt::Status set(const std::string &key,
                 const std::vector<char> &value) override {
    return inner.set(key, value);
  }
  rt::StatusOr<std::vector<char>>
  get(const std::string &key, std::chrono::milliseconds timeout) override {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    while (!cancelled.load()) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0)
        return inner.get(key, std::chrono::milliseconds(0));
      rt::StatusOr<std::vector<char>> value =
          inner.get(key, std::min(left, std::chrono::milliseconds(100)));
      if (value.isOk() ||
          value.status().code() != rt::StatusCode::DeadlineExceeded)
        return value;
    }
    return PARTITION_ERROR(Aborted,
                           "the run was cancelled while waiting "
                           "for \"",
                           key, "\"");
  }
  void cancel() { cancelled.store(true); }

private:
  rt::InProcessStore inner;
  std::atomic<bool> cancelled{false};
};

/// Runs `body(rank)` for every rank of `world` on a thread of its own and
/// waits for them. A thread that cannot be created (a limit on threads or
/// memory) is an error naming the rank, never std::terminate: the ranks
/// already started are cancelled through `store` and joined.
rt::Status runRankThreads(int world, const std::function<void(int)> &body,
                          CancellableStore &store, int testFailThread) {
  struct Start {
    const std::function<void(int)> *body;
    int rank;
  };
  std::vector<Start> starts(world);
  std::vector<pthread_t> threads;
  rt::Status status;
  for (int rank = 0; rank < world; ++rank) {
    starts[rank] = {&body, rank};
    pthread_t thread;
    int rc = rank == testFailThread
                 ? EAGAIN
                 : pthread_create(
                       &thread, nullptr,
                       [](void *arg) -> void * {
                         auto *start = static_cast<Start *>(arg);
                         (*start->body)(start->rank);
                         return nullptr;
                       },
                       &starts[rank]);
    if (rc != 0) {
      status =
          PARTITION_ERROR(ResourceExhausted, "cannot start rank ", rank, " of ",
                          world, " as a thread: ", std::strerror(rc));
      store.cancel();
      break;
    }
    threads.push_back(thread);
  }
  for (pthread_t thread : threads)
    pthread_join(thread, nullptr);
  return status;
}

/// Runs `plan` for `steps` steps on its ranks (threads) and assembles the
/// outputs, as partition-run does.
rt::StatusOr<RunResult> runPlan(const rt::LoadedPlan &plan,
                                const WeightSpec &weights,
                                const std::map<std::string, rt::HostTensor> &in,
                                int steps, int timeoutSeconds,
                                int testFailThread) {
  int world = plan.worldSize();
  if (world > kMaxRanks)
    return PARTITION_ERROR(InvalidArgument, "the plan has ", world,
                           " ranks; partition-check runs at most ", kMaxRanks,
                           " as threads");
  auto store = std::make_shared<CancellableStore>();
  std::vector<RankRun> ranks(world);
  PARTITION_RETURN_IF_ERROR(runRankThreads(
      world,
      [&](int rank) {
        ranks[rank] =
            runRank(plan, weights, in, steps, rank, store, timeoutSeconds);
      },
      *store, testFailThread));
  // The first error, preferring one that is not a peer's reaction to it.
  for (const RankRun &r : ranks)
    if (!r.status.isOk() && r.status.code() != rt::StatusCode::Aborted &&
        r.status.code() != rt::StatusCode::DeadlineExceeded)
      return r.status;
  for (const RankRun &r : ranks)
    if (!r.status.isOk())
      return r.status;

  RunResult result;
  result.stepScalars.resize(steps);
  const fbplan::Plan &root = plan.root();
  for (const fbplan::Program *program : *root.programs()) {
    if (!program->outputs())
      continue;
    const fbplan::Mesh &mesh = *root.meshes()->Get(program->mesh());
    for (const fbplan::Binding *b : *program->outputs()) {
      std::string name = b->name()->str();
      if (result.outputs.count(name))
        continue; // a parameter several pipeline stages update
      if (b->sharding()->unreduced() && b->sharding()->unreduced()->size())
        return PARTITION_ERROR(InvalidArgument, "output \"", name,
                               "\" is a pending sum; the program must reduce "
                               "it before returning it");
      const fbplan::Value &v = *program->values()->Get(b->value());
      rt::HostTensor whole;
      whole.dtype = rt::toDType(v.dtype());
      whole.shape.assign(b->global_shape()->begin(), b->global_shape()->end());
      int64_t n = 1;
      for (int64_t d : whole.shape)
        n *= d;
      whole.data.assign(n * rt::dtypeSize(whole.dtype), 0);
      for (int32_t rank : *mesh.ranks()) {
        const RankRun &r = ranks[rank];
        if (!rt::isAssemblingDevice(mesh, *b->sharding(), r.coordinates))
          continue;
        const rt::HostTensor &local = r.outputs.at(name);
        rt::insertBlock(whole.data.data(), whole.shape, local.data.data(),
                        local.shape,
                        rt::shardOffsets(mesh, *b->sharding(), r.coordinates,
                                         local.shape),
                        rt::dtypeSize(whole.dtype));
      }
      if (b->stored_shape()) {
        whole.shape.assign(b->stored_shape()->begin(),
                           b->stored_shape()->end());
        std::vector<int64_t> perm;
        if (b->stored_permutation())
          perm.assign(b->stored_permutation()->begin(),
                      b->stored_permutation()->end());
        whole.data = rt::toStoredOrder(whole.data, whole.shape, perm,
                                       rt::dtypeSize(whole.dtype));
      }
      result.outputs[name] = std::move(whole);
      if (isScalarOutput(*program, *b)) {
        int32_t first = mesh.ranks()->Get(0);
        for (int step = 0; step < steps; ++step)
          result.stepScalars[step][name] =
              ranks[first].stepScalars[step].at(name);
      }
    }
  }
  return result;
}

//===----------------------------------------------------------------------===//
// Comparing
//===----------------------------------------------------------------------===//

std::string number(double v) {
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%g", v);
  return buffer;
}
std::string g(double v) {
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%.9g", v);
  return buffer;
}
std::string e2(double v) {
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%.2g", v);
  return buffer;
}

/// "[1, 0, 3]" for element `flat` of `shape`.
std::string indexOf(int64_t flat, const std::vector<int64_t> &shape) {
  std::vector<int64_t> index(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    index[d] = shape[d] ? flat % shape[d] : 0;
    flat = shape[d] ? flat / shape[d] : 0;
  }
  std::string s = "[";
  for (size_t d = 0; d < index.size(); ++d)
    s += (d ? ", " : "") + std::to_string(index[d]);
  return s + "]";
}

/// The elements of one side of a comparison that are NaN or infinite.
struct NonFinite {
  int64_t count = 0;
  int64_t first = -1; ///< the first such element
  double value = 0;   ///< its value
  void note(int64_t i, double v) {
    if (std::isfinite(v))
      return;
    if (count++ == 0) {
      first = i;
      value = v;
    }
  }
};

/// "NaN", "+Inf" or "-Inf": the words the report uses for them.
std::string nonFiniteName(double v) {
  return std::isnan(v) ? "NaN" : v > 0 ? "+Inf" : "-Inf";
}

/// How one value compares. The bound of every element is atol + rtol *
/// scale, where scale is the largest magnitude of the unpartitioned value:
/// a sum the split adds in another order is off by a few units in the last
/// place of its largest partial sums, which an element that cancels to
/// near zero does not show.
struct Comparison {
  bool ok = true;
  std::string problem; ///< a shape or type that differs
  double maxAbs = 0;
  double scale = 0;   ///< the largest |unpartitioned| element
  int64_t worst = -1; ///< the element furthest outside (or nearest to) the bound
  double got = 0, want = 0;
  std::vector<int64_t> shape;
  /// The NaN and infinite elements of each side: no tolerance decides
  /// whether they agree.
  NonFinite gotNonFinite, wantNonFinite;
};

double elementOf(const rt::HostTensor &t, int64_t i) {
  switch (t.dtype) {
  case rt::DType::I32:
    return reinterpret_cast<const int32_t *>(t.data.data())[i];
  case rt::DType::I64:
    return double(reinterpret_cast<const int64_t *>(t.data.data())[i]);
  default:
    return rt::loadFloat(t.data.data(), t.dtype, i);
  }
}

Comparison compare(const rt::HostTensor &got, const rt::HostTensor &want,
                   double atol, double rtol) {
  Comparison c;
  c.shape = want.shape;
  if (got.dtype != want.dtype || got.shape != want.shape) {
    c.ok = false;
    c.problem = std::string("is ") + rt::dtypeName(got.dtype) +
                rt::formatShape(got.shape) + " partitioned but " +
                rt::dtypeName(want.dtype) + rt::formatShape(want.shape) +
                " unpartitioned";
    return c;
  }
  int64_t n = int64_t(want.data.size()) / rt::dtypeSize(want.dtype);
  for (int64_t i = 0; i < n; ++i) {
    double b = std::fabs(elementOf(want, i));
    if (std::isfinite(b))
      c.scale = std::max(c.scale, b);
  }
  double bound = atol + rtol * c.scale;
  double worstDiff = -1;
  for (int64_t i = 0; i < n; ++i) {
    double a = elementOf(got, i), b = elementOf(want, i);
    c.gotNonFinite.note(i, a);
    c.wantNonFinite.note(i, b);
    double diff = std::fabs(a - b);
    if (std::isnan(a) || std::isnan(b))
      diff = std::isnan(a) && std::isnan(b) ? 0 : INFINITY;
    else if (std::isinf(a) || std::isinf(b))
      diff = a == b ? 0 : INFINITY;
    if (std::isfinite(diff))
      c.maxAbs = std::max(c.maxAbs, diff);
    if (diff > worstDiff) {
      worstDiff = diff;
      c.worst = i;
      c.got = a;
      c.want = b;
    }
    if (!(diff <= bound))
      c.ok = false;
  }
  return c;
}

/// "at [1, 2]: partitioned 0.5 vs unpartitioned 0.25 (abs error 0.25, rel
/// error 1; the value's largest magnitude 2)".
std::string describeWorst(const Comparison &c) {
  double diff = std::fabs(c.got - c.want);
  std::string rel = c.want != 0 ? g(diff / std::fabs(c.want)) : "inf";
  return "at " + indexOf(c.worst, c.shape) + ": partitioned " + g(c.got) +
         " vs unpartitioned " + g(c.want) + " (abs error " + g(diff) +
         ", rel error " + rel + "; largest |unpartitioned| " + g(c.scale) +
         ")";
}

std::string typeOf(const rt::HostTensor &t) {
  return std::string(rt::dtypeName(t.dtype)) + rt::formatShape(t.shape);
}

//===----------------------------------------------------------------------===//
// The check
//===----------------------------------------------------------------------===//

class Checker {
public:
  Checker(ModuleOp model, llvm::StringRef path, const CheckOptions &o,
          llvm::raw_ostream &os, llvm::raw_ostream &errs)
      : model(model), path(path), o(o), os(os), errs(errs) {
    weights.path = o.weights;
    weights.seed = o.weightSeed;
    weights.scale = o.weightScale;
  }
  int run();

private:
  int error(const std::string &message) {
    errs << "partition-check: error: " << message << "\n";
    return kError;
  }
  /// The passes that partition for the user's mesh.
  LogicalResult spmdOptions(SpmdPipelineOptions &options, std::string &err);
  /// The one-device reference: part-spmd on a mesh of one device.
  PassBuilder referenceSpmd(bool training);
  PassBuilder partitionedSpmd(bool training);
  /// The training passes before part-spmd (those of planPipeline).
  std::string trainingPrefix(ModuleOp m) const;
  /// The passes after part-spmd in a training step.
  std::string trainingSuffix(const SpmdPipelineOptions &options) const;

  /// Compiles, lowers and runs both programs of `module`: `reference` and
  /// `partitioned` build them.
  struct Pair {
    RunResult reference, partitioned;
    std::map<std::string, int64_t> ranges;
    int worldSize = 0;
  };
  FailureOr<Pair> runBoth(ModuleOp module, const PassBuilder &reference,
                          const PassBuilder &partitioned, int steps,
                          const std::map<std::string, int64_t> *ranges,
                          std::string &err);

  /// Prints the comparison of every output; returns kPass when all agree,
  /// kNonFinite when some value is NaN or infinite, else kMismatch.
  int report(const Pair &pair, bool training);
  /// Bisects the forward model; returns the exit code.
  int bisect();
  /// The annotated forward model cut after op `k` of `ops`.
  OwningOpRef<ModuleOp> cutAfter(ModuleOp annotated, int64_t k);
  std::string shardingOf(Value v) const;
  std::string sourceLine(Location loc) const;

  ModuleOp model;
  std::string path;
  const CheckOptions &o;
  llvm::raw_ostream &os, &errs;
  WeightSpec weights;
  OwningOpRef<ModuleOp> plain; ///< the model without annotations
  std::map<std::string, int64_t> forwardRanges;
};

LogicalResult Checker::spmdOptions(SpmdPipelineOptions &options,
                                   std::string &err) {
  // The mesh text first, so that a typo gets a message of its own.
  SmallVector<StringRef> parts;
  StringRef(o.mesh).split(parts, ',', -1, /*KeepEmpty=*/true);
  // Every device is a thread of this process: bound their number before
  // anything is compiled.
  std::optional<int64_t> devices = 1;
  for (StringRef part : parts) {
    auto [name, size] = part.split(':');
    int64_t n = 0;
    if (name.trim().empty() || size.trim().getAsInteger(10, n) || n < 1) {
      err = "--mesh \"" + o.mesh + "\": \"" + part.str() +
            "\" is not AXIS:SIZE with a positive size (e.g. dp:2,tp:2)";
      return failure();
    }
    devices = devices ? llvm::checkedMul<int64_t>(*devices, n) : std::nullopt;
  }
  if (!devices || *devices > kMaxRanks) {
    err = "--mesh \"" + o.mesh + "\" has " +
          (devices ? std::to_string(*devices) : "more than 2^63") +
          " devices; partition-check runs each as a thread of this process, "
          "at most " +
          std::to_string(kMaxRanks);
    return failure();
  }
  std::string text = "mesh=" + o.mesh + " " + o.spmdOptions;
  std::string parseError;
  llvm::raw_string_ostream parseStream(parseError);
  if (failed(options.parseFromString(text, parseStream))) {
    StringRef why = StringRef(parseError).trim();
    why.consume_front("<Pass-Options-Parser>: ");
    err = "--spmd-options \"" + o.spmdOptions + "\": " + why.str() +
          " (see partition-opt --help, --part-spmd)";
    return failure();
  }
  options.testDropMatmulReduction = o.testDropMatmulReduction;
  return checkSpmdMeshAxes(options, [&](const Twine &message) {
    err = message.str();
    return failure();
  });
}

std::string Checker::trainingPrefix(ModuleOp m) const {
  planner::TrainingOptions training;
  training.optimizer = o.optimizer;
  training.precision = "f32";
  return planner::trainingPipeline(m, training, planner::Recompute::None);
}

std::string Checker::trainingSuffix(const SpmdPipelineOptions &options) const {
  int64_t dp = 1; // the devices a dense gradient is reduced over
  SmallVector<StringRef> parts;
  StringRef(options.mesh).split(parts, ',', -1, false);
  for (StringRef part : parts) {
    auto [name, size] = part.split(':');
    int64_t n = 1;
    (void)size.trim().getAsInteger(10, n);
    // Dense gradients are reduced over dp, cp and ep together.
    if (name.trim() == options.dataParallelAxis ||
        name.trim() == options.contextParallelAxis ||
        name.trim() == options.expertParallelAxis)
      dp *= n;
  }
  return planner::afterSpmdPipeline(/*train=*/true, dp, options.zero);
}

PassBuilder Checker::referenceSpmd(bool training) {
  return [this, training](OpPassManager &pm, std::string &err) {
    if (training && failed(addPasses(pm, trainingPrefix(*plain), err)))
      return failure();
    SpmdPipelineOptions options;
    (void)options.parseFromString("mesh=dp:1");
    addSpmdPipeline(pm, options);
    return success();
  };
}

PassBuilder Checker::partitionedSpmd(bool training) {
  return [this, training](OpPassManager &pm, std::string &err) {
    if (training && failed(addPasses(pm, trainingPrefix(*plain), err)))
      return failure();
    SpmdPipelineOptions options;
    if (failed(spmdOptions(options, err)))
      return failure();
    addSpmdPipeline(pm, options);
    if (training && failed(addPasses(pm, trainingSuffix(options), err)))
      return failure();
    return success();
  };
}

FailureOr<Checker::Pair>
Checker::runBoth(ModuleOp module, const PassBuilder &reference,
                 const PassBuilder &partitioned, int steps,
                 const std::map<std::string, int64_t> *ranges,
                 std::string &err) {
  FailureOr<OwningOpRef<ModuleOp>> ref = compile(module, reference, err);
  if (failed(ref)) {
    err = "the unpartitioned program does not compile: " + err;
    return failure();
  }
  FailureOr<OwningOpRef<ModuleOp>> part = compile(module, partitioned, err);
  if (failed(part)) {
    err = "partitioning for mesh " + o.mesh + " failed: " + err;
    return failure();
  }
  FailureOr<rt::LoadedPlan> refPlan = lower(**ref, "unpartitioned", err);
  if (failed(refPlan))
    return failure();
  FailureOr<rt::LoadedPlan> partPlan = lower(**part, "partitioned", err);
  if (failed(partPlan))
    return failure();
  Pair pair;
  pair.ranges = ranges ? *ranges : integerRanges(**ref);
  pair.worldSize = partPlan->worldSize();
  auto inputs = makeInputs(*refPlan, pair.ranges, o.inputSeed);
  rt::StatusOr<RunResult> r = runPlan(*refPlan, weights, inputs, steps,
                                      o.timeoutSeconds, o.testFailThread);
  if (!r.isOk()) {
    err = "the unpartitioned run failed: " + r.status().message();
    return failure();
  }
  pair.reference = std::move(*r);
  r = runPlan(*partPlan, weights, inputs, steps, o.timeoutSeconds,
              o.testFailThread);
  if (!r.isOk()) {
    err = "the partitioned run failed: " + r.status().message();
    return failure();
  }
  pair.partitioned = std::move(*r);
  return pair;
}

/// "the unpartitioned run has NaN at [0, 1] (2 of 8 elements)" for the
/// non-finite elements of one side, or "" when it has none.
std::string describeNonFinite(const NonFinite &n, const char *side,
                              const std::vector<int64_t> &shape,
                              int64_t elements) {
  if (!n.count)
    return "";
  std::string text =
      std::string("the ") + side + " run has " + nonFiniteName(n.value);
  if (shape.empty())
    return text;
  return text + " at " + indexOf(n.first, shape) + " (" +
         std::to_string(n.count) + " of " + std::to_string(elements) +
         " elements not finite)";
}

int Checker::report(const Pair &pair, bool training) {
  bool allOk = true;
  int64_t compared = 0, differ = 0, nonFinite = 0;
  std::string firstNonFinite;
  auto noteNonFinite = [&](const std::string &what) {
    if (nonFinite++ == 0)
      firstNonFinite = what;
  };
  if (training) {
    for (size_t step = 0; step < pair.reference.stepScalars.size(); ++step)
      for (const auto &[name, want] : pair.reference.stepScalars[step]) {
        auto &got = pair.partitioned.stepScalars[step];
        auto it = got.find(name);
        if (it == got.end()) {
          os << "  step " << step + 1 << ": " << name
             << ": MISMATCH: the partitioned plan has no such output\n";
          allOk = false;
          continue;
        }
        double a = it->second;
        std::string where = "step " + std::to_string(step + 1) + " " + name;
        if (!std::isfinite(a) || !std::isfinite(want)) {
          std::string sides = !std::isfinite(a) && !std::isfinite(want)
                                  ? "both runs"
                              : !std::isfinite(a) ? "the partitioned run"
                                                  : "the unpartitioned run";
          os << "  step " << step + 1 << ": " << name << " partitioned "
             << (std::isfinite(a) ? g(a) : nonFiniteName(a))
             << " vs unpartitioned "
             << (std::isfinite(want) ? g(want) : nonFiniteName(want))
             << "  NON-FINITE in " << sides << "\n";
          noteNonFinite(where + " in " + sides);
          continue;
        }
        double diff = std::fabs(a - want);
        bool ok = diff <= o.atol + o.rtol * std::fabs(want);
        allOk &= ok;
        os << "  step " << step + 1 << ": " << name << " partitioned "
           << g(a) << " vs unpartitioned " << g(want) << " (abs error "
           << e2(diff) << ")" << (ok ? "" : "  MISMATCH") << "\n";
      }
  }
  for (const auto &[name, want] : pair.reference.outputs) {
    auto it = pair.partitioned.outputs.find(name);
    if (it == pair.partitioned.outputs.end()) {
      os << "  " << name << " " << typeOf(want)
         << ": MISMATCH: the partitioned plan has no such output\n";
      allOk = false;
      ++differ;
      continue;
    }
    // After training, an output that updates a parameter is compared with
    // the weights' tolerance.
    bool weight = training && want.shape.size() > 0;
    double rtol = weight ? o.weightRtol : o.rtol;
    Comparison c = compare(it->second, want, o.atol, rtol);
    ++compared;
    if (c.problem.empty() && (c.gotNonFinite.count || c.wantNonFinite.count)) {
      int64_t n = int64_t(want.data.size()) / rt::dtypeSize(want.dtype);
      std::string ref =
          describeNonFinite(c.wantNonFinite, "unpartitioned", c.shape, n);
      std::string part =
          describeNonFinite(c.gotNonFinite, "partitioned", c.shape, n);
      std::string both = ref + (ref.empty() || part.empty() ? "" : "; ") + part;
      os << "  " << name << " " << typeOf(want) << ": NON-FINITE: " << both
         << "\n";
      noteNonFinite(name + (weight ? " (a weight)" : "") + " in " +
                    (ref.empty()    ? "the partitioned run"
                     : part.empty() ? "the unpartitioned run"
                                    : "both runs"));
      continue;
    }
    if (!c.problem.empty()) {
      os << "  " << name << ": MISMATCH: " << c.problem << "\n";
    } else if (!c.ok) {
      os << "  " << name << " " << typeOf(want) << ": MISMATCH "
         << describeWorst(c) << "\n";
    } else if (!training || o.steps == 0 || want.shape.empty()) {
      os << "  " << name << " " << typeOf(want) << ": max abs error "
         << e2(c.maxAbs) << " (largest |unpartitioned| " << e2(c.scale)
         << ")\n";
    }
    if (!c.ok) {
      ++differ;
      allOk = false;
    }
  }
  if (training && allOk && !nonFinite) {
    // The weights in one line: how close the worst came.
    double worstAbs = 0;
    int64_t weights = 0;
    for (const auto &[name, want] : pair.reference.outputs)
      if (!want.shape.empty()) {
        ++weights;
        worstAbs = std::max(
            worstAbs,
            compare(pair.partitioned.outputs.at(name), want, o.atol,
                    o.weightRtol)
                .maxAbs);
      }
    if (weights)
      os << "  weights after step " << o.steps << ": " << weights
         << " tensors agree (max abs error " << e2(worstAbs) << ")\n";
  }
  if (differ)
    os << "  " << differ << " of " << compared
       << (compared == 1 ? " output differs" : " outputs differ") << "\n";
  if (nonFinite) {
    os << "NON-FINITE: " << nonFinite
       << (nonFinite == 1 ? " value is" : " values are")
       << " NaN or infinite (first: " << firstNonFinite
       << "); no tolerance can compare them, so the check decides nothing "
          "(smaller --random-scale or weights, or a model that overflows)\n";
    return kNonFinite;
  }
  return allOk ? kPass : kMismatch;
}

std::string Checker::shardingOf(Value v) const {
  Attribute s;
  StringRef name = PartDialect::getShardingAttrName();
  if (auto arg = dyn_cast<BlockArgument>(v)) {
    if (auto f = dyn_cast<func::FuncOp>(arg.getOwner()->getParentOp()))
      s = f.getArgAttr(arg.getArgNumber(), name);
  } else {
    s = v.getDefiningOp()->getAttr(name);
  }
  if (!s)
    return "replicated (no annotation)";
  std::string text;
  llvm::raw_string_ostream os(text);
  s.print(os);
  return text;
}

std::string Checker::sourceLine(Location loc) const {
  auto l = loc->findInstanceOf<FileLineColLoc>();
  if (!l)
    return "";
  // The location names any file the model says: read it as untrusted.
  llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>> buffer =
      partition::readInputFile(l.getFilename().getValue().str(), "source");
  if (!buffer) {
    llvm::consumeError(buffer.takeError());
    return "";
  }
  SmallVector<StringRef> lines;
  (*buffer)->getBuffer().split(lines, '\n');
  if (l.getLine() == 0 || l.getLine() > lines.size())
    return "";
  std::string line = lines[l.getLine() - 1].trim().str();
  if (line.size() > 160)
    line = line.substr(0, 157) + "...";
  return line;
}

/// The ops of the function body whose results the cut can return.
SmallVector<Operation *> cuttableOps(func::FuncOp f) {
  SmallVector<Operation *> ops;
  for (Operation &op : f.getBody().front().without_terminator())
    if (op.getNumResults() > 0 &&
        llvm::all_of(op.getResultTypes(),
                     [](Type t) { return isa<RankedTensorType>(t); }))
      ops.push_back(&op);
  return ops;
}

OwningOpRef<ModuleOp> Checker::cutAfter(ModuleOp annotated, int64_t k) {
  OwningOpRef<ModuleOp> cut(annotated.clone());
  func::FuncOp f = mainFunction(*cut);
  SmallVector<Operation *> ops = cuttableOps(f);
  Operation *last = ops[k];
  Block &body = f.getBody().front();
  Operation *ret = body.getTerminator();
  // What op k and the ops before it hand on: op k's results and every value
  // of an earlier op that a later op (or the return) reads.
  SmallVector<Value> results;
  SmallVector<std::string> names;
  for (int64_t i = 0; i <= k; ++i)
    for (OpResult r : ops[i]->getResults()) {
      bool live = i == k || llvm::any_of(r.getUsers(), [&](Operation *u) {
                    return u == ret || last->isBeforeInBlock(u);
                  });
      if (!live)
        continue;
      results.push_back(r);
      names.push_back("op" + std::to_string(i) +
                      (ops[i]->getNumResults() > 1
                           ? "." + std::to_string(r.getResultNumber())
                           : ""));
    }
  Location loc = ret->getLoc();
  // Erase what follows op k (the return too), last first.
  SmallVector<Operation *> after;
  for (Operation *op = last->getNextNode(); op; op = op->getNextNode())
    after.push_back(op);
  for (Operation *op : llvm::reverse(after))
    op->erase();
  OpBuilder b = OpBuilder::atBlockEnd(&body);
  func::ReturnOp::create(b, loc, results);
  SmallVector<Type> types;
  for (Value v : results)
    types.push_back(v.getType());
  f.setFunctionType(
      FunctionType::get(f.getContext(), f.getArgumentTypes(), types));
  // Each result keeps its value's sharding, completed: the cut compares
  // whole values.
  SmallVector<DictionaryAttr> attrs;
  MLIRContext *ctx = f.getContext();
  for (auto [v, name] : llvm::zip(results, names)) {
    NamedAttrList list;
    list.set(PartDialect::getNameAttrName(), StringAttr::get(ctx, name));
    if (auto s = v.getDefiningOp()->getAttrOfType<ShardingAttr>(
            PartDialect::getShardingAttrName());
        s && v.getDefiningOp()->getNumResults() == 1)
      list.set(PartDialect::getShardingAttrName(),
               ShardingAttr::get(ctx, s.getMesh(), s.getDims(), {}));
    attrs.push_back(list.getDictionary(ctx));
  }
  f.setAllResultAttrs(attrs);
  return cut;
}

int Checker::bisect() {
  std::string err;
  SpmdPipelineOptions options;
  if (failed(spmdOptions(options, err)))
    return error(err);
  // Shardings chosen on the whole forward model, kept on every value of
  // each cut, so that the cut is partitioned as the whole model is.
  FailureOr<OwningOpRef<ModuleOp>> annotated = compile(
      *plain,
      [&](OpPassManager &pm, std::string &) {
        addSpmdShardingPipeline(pm, options);
        return success();
      },
      err);
  if (failed(annotated))
    return error("bisect: propagating shardings failed: " + err);
  func::FuncOp f = mainFunction(**annotated);
  SmallVector<Operation *> ops = cuttableOps(f);
  if (ops.empty())
    return error("bisect: the model has no ops to cut after");
  PassBuilder reference = [](OpPassManager &pm, std::string &err) {
    if (failed(addPasses(pm, "part-strip-sharding{remove-meshes=true}", err)))
      return failure();
    SpmdPipelineOptions one;
    (void)one.parseFromString("mesh=dp:1");
    addSpmdPipeline(pm, one);
    return success();
  };
  PassBuilder partitioned = [&](OpPassManager &pm, std::string &) {
    addSpmdPartitionPipeline(pm, options);
    return success();
  };
  os << "bisecting the forward model (" << ops.size()
     << " ops), each cut partitioned with the whole model's shardings:\n";
  // Whether the cut after op k differs; the failure to run it is an error.
  std::map<int64_t, std::string> worst;
  auto differs = [&](int64_t k) -> FailureOr<bool> {
    OwningOpRef<ModuleOp> cut = cutAfter(**annotated, k);
    FailureOr<Pair> pair =
        runBoth(*cut, reference, partitioned, 1, &forwardRanges, err);
    if (failed(pair))
      return failure();
    bool same = true;
    std::string first;
    for (const auto &[name, want] : pair->reference.outputs) {
      auto it = pair->partitioned.outputs.find(name);
      if (it == pair->partitioned.outputs.end())
        continue;
      Comparison c = compare(it->second, want, o.atol, o.rtol);
      if (!c.ok && same) {
        same = false;
        first = name + " " +
                (c.problem.empty() ? describeWorst(c) : c.problem);
      }
      // Op k's own result: the one the report names.
      if (name == "op" + std::to_string(k) && !c.ok)
        first = "result " +
                (c.problem.empty() ? describeWorst(c) : c.problem);
    }
    worst[k] = first;
    Operation *op = ops[k];
    std::string where = formatLoc(op->getLoc());
    os << "  cut after op " << k << " (" << op->getName() << ")"
       << (where.empty() ? "" : " at " + where) << ": "
       << (same ? "agrees" : "differs") << "\n";
    return !same;
  };
  int64_t lo = 0, hi = int64_t(ops.size()) - 1;
  FailureOr<bool> whole = differs(hi);
  if (failed(whole))
    return error("bisect: " + err);
  if (!*whole) {
    os << "every op of the forward model agrees: the difference is in how "
          "the results are laid out, or (when training) in backward or the "
          "optimizer update\n";
    return kMismatch;
  }
  while (lo < hi) {
    int64_t mid = lo + (hi - lo) / 2;
    FailureOr<bool> d = differs(mid);
    if (failed(d))
      return error("bisect: " + err);
    if (*d)
      hi = mid;
    else
      lo = mid + 1;
  }
  Operation *op = ops[hi];
  std::string where = formatLoc(op->getLoc());
  os << "first differing op: op " << hi << " " << op->getName()
     << (where.empty() ? "" : " at " + where) << "\n";
  std::string line = sourceLine(op->getLoc());
  if (!line.empty())
    os << "  source: " << line << "\n";
  for (auto [i, v] : llvm::enumerate(op->getOperands()))
    os << "  operand " << i << " sharding: " << shardingOf(v) << "\n";
  for (OpResult r : op->getResults())
    os << "  result " << r.getResultNumber()
       << " sharding: " << shardingOf(r) << "\n";
  if (!worst[hi].empty())
    os << "  " << worst[hi] << "\n";
  return kMismatch;
}

int Checker::run() {
  // The model the user gives may carry annotations for another mesh:
  // part-spmd chooses the shardings for this one.
  std::string err;
  bool annotated = false;
  model.walk([&](Operation *op) {
    if (isa<MeshOp>(op) || op->hasAttr(PartDialect::getShardingAttrName()))
      annotated = true;
  });
  if (!mainFunction(model))
    return error(path + ": the model has no function with a body");
  FailureOr<OwningOpRef<ModuleOp>> stripped = compile(
      model,
      [](OpPassManager &pm, std::string &err) {
        return addPasses(pm, "part-strip-sharding{remove-meshes=true}", err);
      },
      err);
  if (failed(stripped))
    return error(err);
  plain = std::move(*stripped);
  {
    // Annotations on arguments count too.
    func::FuncOp f = mainFunction(model);
    for (unsigned i = 0; i < f.getNumArguments(); ++i)
      annotated |= bool(f.getArgAttr(i, PartDialect::getShardingAttrName()));
  }
  SpmdPipelineOptions options;
  if (failed(spmdOptions(options, err)))
    return error(err);

  bool training = o.steps > 0;
  os << "partition-check: " << path << " on mesh " << o.mesh
     << (o.spmdOptions.empty() ? "" : " (" + o.spmdOptions + ")")
     << " against one device"
     << (training ? ", trained " + std::to_string(o.steps) + " step" +
                        (o.steps == 1 ? "" : "s") + " with " + o.optimizer
                  : "")
     << "\n";
  if (annotated)
    os << "  the model's sharding annotations are dropped: part-spmd "
          "chooses the shardings for this mesh\n";
  if (o.weights.empty())
    os << "  weights: random (seed " << o.weightSeed << ", in [-"
       << number(o.weightScale) << ", " << number(o.weightScale) << "))\n";
  else
    os << "  weights: " << o.weights << "\n";

  FailureOr<Pair> pair =
      runBoth(*plain, referenceSpmd(training), partitionedSpmd(training),
              training ? o.steps : 1, nullptr, err);
  if (failed(pair))
    return error(err);
  os << "  ranks: " << pair->worldSize << "\n";
  os << "  inputs: random (seed " << o.inputSeed << "): floats in [-1, 1)";
  {
    // Integer inputs and their ranges.
    std::string ints;
    for (const auto &[name, bound] : pair->ranges)
      ints += (ints.empty() ? "" : ", ") + name + " in [0, " +
              std::to_string(bound) + ")";
    if (!ints.empty())
      os << "; " << ints;
    os << "; other integers in [0, " << kDefaultIntegerRange << ")\n";
  }
  os << "  tolerance: |partitioned - unpartitioned| <= " << number(o.atol)
     << " + " << number(o.rtol)
     << " * max|unpartitioned| per output"
     << (training ? " (weights after training: rtol " +
                        number(o.weightRtol) + ")"
                  : "")
     << " (f32 sums split over ranks are added in another order: off by "
        "units in the last place of the largest partial sums)\n";
  int verdict = report(*pair, training);
  if (verdict == kPass) {
    os << "PASS\n";
    return kPass;
  }
  if (verdict == kNonFinite)
    return kNonFinite;
  os << "FAIL: the partitioned program differs\n";
  if (!o.bisect)
    return kMismatch;
  if (training) {
    // Compare the forward model first: a training mismatch that the
    // forward model shares is bisected there.
    FailureOr<Pair> forward =
        runBoth(*plain, referenceSpmd(false), partitionedSpmd(false), 1,
                nullptr, err);
    if (failed(forward))
      return error(err);
    forwardRanges = forward->ranges;
    bool same = true;
    for (const auto &[name, want] : forward->reference.outputs) {
      auto it = forward->partitioned.outputs.find(name);
      same &= it != forward->partitioned.outputs.end() &&
              compare(it->second, want, o.atol, o.rtol).ok;
    }
    if (same) {
      os << "the forward model agrees: the difference is in backward or the "
            "optimizer update\n";
      return kMismatch;
    }
  } else {
    forwardRanges = pair->ranges;
  }
  return bisect();
}

} // namespace

int partition::check::runCheck(ModuleOp model, llvm::StringRef modelPath,
                               const CheckOptions &options,
                               llvm::raw_ostream &os,
                               llvm::raw_ostream &errs) {
  Checker checker(model, modelPath, options, os, errs);
  return checker.run();
}
