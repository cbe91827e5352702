//===- partition-check.cpp - does the partitioned model compute the same --===//
//
// partition-check MODEL.mlir --mesh dp:2,tp:2 [--steps N]
//   [--weights W.safetensors | --random-weights SEED]
//
// Partitions a model for a mesh, runs it and the unpartitioned model on CPU
// ranks with the same weights and inputs, compares every output, and on a
// mismatch names the first op whose partitioned result differs (Check.h).
//
//===----------------------------------------------------------------------===//

#include "partition/Check/Check.h"
#include "partition/InitAll.h"
#include "partition/Tools/ToolSupport.h"
#include "partition/runtime/Files.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"

#include <cmath>
#include <cstdio>
#include <optional>

using namespace mlir;
using namespace partition::check;
namespace cl = llvm::cl;

namespace {

cl::OptionCategory category("partition-check options");
cl::opt<std::string> inputFile(cl::Positional, cl::desc("<model.mlir>"),
                               cl::cat(category));
cl::opt<std::string> mesh("mesh",
                          cl::desc("the mesh, as part-spmd's mesh option: "
                                   "dp:2,tp:2 (axes dp, tp, ep, pp)"),
                          cl::cat(category));
cl::opt<std::string>
    spmdOptions("spmd-options",
                cl::desc("more part-spmd options, e.g. \"zero=1 "
                         "sequence-parallel=true\" or \"micro-batches=4\""),
                cl::cat(category));
cl::opt<int> steps("steps",
                   cl::desc("train N steps both ways (part-autodiff, "
                            "part-optimizer; a loss is appended when the "
                            "model returns none) and compare the loss of "
                            "each step and the weights after the last"),
                   cl::init(0), cl::cat(category));
cl::opt<std::string> optimizer("optimizer",
                               cl::desc("part-optimizer's options with "
                                        "--steps (default \"kind=sgd "
                                        "lr=0.01\": AdamW turns a gradient "
                                        "that is zero up to rounding into a "
                                        "whole step either way; give it a "
                                        "looser --weight-rtol)"),
                               cl::init("kind=sgd lr=0.01"),
                               cl::cat(category));
cl::opt<std::string> weights("weights",
                             cl::desc("safetensors file with every parameter "
                                      "(default: --random-weights 1)"),
                             cl::cat(category));
cl::opt<int64_t> randomWeights(
    "random-weights",
    cl::desc("random weights from SEED, as partition-run --random-weights"),
    cl::init(-1), cl::cat(category));
cl::opt<double> randomScale(
    "random-scale",
    cl::desc("range of --random-weights (default 1: weights in [-1, 1) make "
             "the outputs depend strongly on every op; partition-run's "
             "default is 0.1)"),
    cl::init(1.0), cl::cat(category));
cl::opt<int64_t> inputSeed("input-seed",
                           cl::desc("seed of the random inputs (default 0)"),
                           cl::init(0), cl::cat(category));
cl::opt<double> absTolerance("atol", cl::desc("absolute tolerance (default 1e-5)"),
                     cl::init(1e-5), cl::cat(category));
cl::opt<double> relTolerance("rtol",
                     cl::desc("relative tolerance of outputs and losses "
                              "(default 1e-4)"),
                     cl::init(1e-4), cl::cat(category));
cl::opt<double> weightRtol("weight-rtol",
                           cl::desc("relative tolerance of the weights after "
                                    "training (default 1e-3)"),
                           cl::init(1e-3), cl::cat(category));
cl::opt<bool> noBisect("no-bisect",
                       cl::desc("on a mismatch, do not look for the first "
                                "differing op"),
                       cl::cat(category));
cl::opt<int> timeout("timeout",
                     cl::desc("deadline of each collective wait in seconds "
                              "(default 60)"),
                     cl::init(60), cl::cat(category));
// TEST ONLY: a deliberately wrong partitioner, to see a mismatch found.
cl::opt<bool> testDropMatmulReduction(
    "test-drop-matmul-reduction",
    cl::desc("TEST ONLY: partition with a broken rule (the all-reduce that "
             "completes a matmul's split contraction is left out)"),
    cl::Hidden, cl::cat(category));
cl::opt<int> testFailThread(
    "test-fail-thread",
    cl::desc("TEST ONLY: the thread of this rank fails to start, as when a "
             "limit on threads is reached"),
    cl::init(-1), cl::Hidden, cl::cat(category));

const char *kOverview =
    R"(partition-check: does the partitioned model compute what the model does?

Partitions MODEL for the mesh with part-spmd (the model's own sharding
annotations, if any, are dropped), lowers the partitioned and the
unpartitioned (one device) programs to plans, runs both on CPU ranks (threads
of this process, Gloo) with the same weights and random inputs (integer
inputs below the rows of the table they index or the classes of the loss
they label), and compares every output: |partitioned - unpartitioned| <=
atol + rtol * |unpartitioned| everywhere, printing the largest errors. With
--steps N it trains N steps both ways and compares the loss of each step and
the weights after the last. On a mismatch it cuts the forward model after an
op (the cut returns that op's values, partitioned with the whole model's
shardings), halving the range of ops until it names the first op whose
partitioned result differs, with its operands' and result's shardings.

  partition-check gpt2.mlir --mesh dp:2,tp:2
  partition-check gpt2.mlir --mesh tp:2 --steps 3 --weights w.safetensors

Each device of the mesh is a thread of this process: at most 64.

Exit codes: 0 every output agrees; 1 some output, loss or weight differs;
2 bad usage, a model that does not parse or compile for the mesh, or a run
that fails; 3 some output, loss or weight is NaN or infinite on either side
(each is named, with the step or element and the side, on a NON-FINITE
line): no tolerance can say whether such values agree.
)";

/// The ranges of the numeric options.
constexpr double kMaxSteps = 10000;
constexpr double kMaxTimeoutSeconds = 86400;
constexpr double kMaxRandomScale = 1000;
constexpr double kMaxAbsTolerance = 1e6;

/// `value` as the message shows it ("1e+300", "-1", "NaN", "infinity").
std::string formatNumber(double value) {
  if (std::isnan(value))
    return "NaN";
  if (std::isinf(value))
    return value > 0 ? "infinity" : "-infinity";
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%g", value);
  return buffer;
}

int usage(const llvm::Twine &message) {
  llvm::errs() << "partition-check: error: " << message << "\n";
  return kError;
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  cl::HideUnrelatedOptions(category);
  if (!cl::ParseCommandLineOptions(argc, argv, kOverview, &llvm::errs()))
    return kError;
  if (inputFile.empty())
    return usage("no model given (partition-check MODEL.mlir --mesh "
                 "dp:2,tp:2; see --help)");
  if (mesh.empty())
    return usage("--mesh is required, e.g. --mesh dp:2,tp:2");
  // Every number in its range (NaN fails each comparison).
  auto outside = [](llvm::StringRef option, double value, double lo,
                    double hi) -> std::optional<int> {
    if (value >= lo && value <= hi)
      return std::nullopt;
    return usage("--" + option + " " + formatNumber(value) +
                 " is out of range (" + formatNumber(lo) + " to " +
                 formatNumber(hi) + ")");
  };
  if (auto e = outside("steps", steps, 0, kMaxSteps))
    return *e;
  if (randomWeights.getNumOccurrences() && randomWeights < 0)
    return usage("--random-weights " + llvm::Twine(int64_t(randomWeights)) +
                 " is not a seed (0 or more)");
  if (inputSeed < 0)
    return usage("--input-seed " + llvm::Twine(int64_t(inputSeed)) +
                 " is not a seed (0 or more)");
  if (auto e = outside("timeout", timeout, 1, kMaxTimeoutSeconds))
    return *e;
  // Weights beyond this make f32 sums overflow in any model.
  if (!(randomScale > 0))
    return usage("--random-scale " + formatNumber(randomScale) +
                 " must be positive");
  if (auto e = outside("random-scale", randomScale, 0, kMaxRandomScale))
    return *e;
  if (auto e = outside("atol", absTolerance, 0, kMaxAbsTolerance))
    return *e;
  if (auto e = outside("rtol", relTolerance, 0, 1))
    return *e;
  if (auto e = outside("weight-rtol", weightRtol, 0, 1))
    return *e;
  if (!weights.empty() && randomWeights.getNumOccurrences())
    return usage("--weights and --random-weights are two sources of "
                 "weights; give one");
  CheckOptions options;
  options.mesh = mesh;
  options.spmdOptions = spmdOptions;
  options.steps = steps;
  options.optimizer = optimizer;
  options.weights = weights;
  options.weightSeed = randomWeights >= 0 ? uint64_t(randomWeights) : 1;
  options.weightScale = float(randomScale);
  options.inputSeed = uint64_t(inputSeed);
  options.atol = absTolerance;
  options.rtol = relTolerance;
  options.weightRtol = weightRtol;
  options.bisect = !noBisect;
  options.timeoutSeconds = timeout;
  options.testDropMatmulReduction = testDropMatmulReduction;
  options.testFailThread = testFailThread;

  llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>> read =
      partition::readInputFile(inputFile, "model");
  if (!read)
    return usage(llvm::toString(read.takeError()));
  std::unique_ptr<llvm::MemoryBuffer> input = std::move(*read);
  if (!weights.empty()) {
    // Read by every rank through the same reader; checked once here.
    partition::runtime::StatusOr<partition::runtime::RegularFile> file =
        partition::runtime::RegularFile::open(weights, "weights file");
    if (!file.isOk())
      return usage("--weights " + file.status().message());
  }
  if (!partition::checkNestingDepth(input->getBuffer(),
                                    input->getBufferIdentifier(), llvm::errs()))
    return kError;
  DialectRegistry registry;
  partition::registerAllDialects(registry);
  partition::registerAllPasses();
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  context.printOpOnDiagnostic(false);
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(std::move(input), llvm::SMLoc());
  OwningOpRef<ModuleOp> module;
  {
    // Parse errors as one line each: "file:line:col: error: message".
    bool failedOnce = false;
    ScopedDiagnosticHandler handler(&context, [&](Diagnostic &d) {
      if (d.getSeverity() != DiagnosticSeverity::Error || failedOnce)
        return success();
      failedOnce = true;
      std::string where;
      if (auto l = d.getLocation()->findInstanceOf<FileLineColLoc>())
        where = (l.getFilename().getValue() + ":" + llvm::Twine(l.getLine()) +
                 ":" + llvm::Twine(l.getColumn()) + ": ")
                    .str();
      llvm::errs() << where << "error: " << d.str() << "\n";
      return success();
    });
    module = parseSourceFile<ModuleOp>(sourceMgr, &context);
    if (!module)
      return kError;
  }
  return runCheck(*module, inputFile, options, llvm::outs(), llvm::errs());
}
