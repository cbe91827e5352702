//===- partition-import.cpp - models into the part dialect ----------------===//
//
//   partition-import model.onnx [--shape input_ids=8x128 ...]
//                    [--dim batch=8 ...] -o model.mlir
//                    [--weights model.safetensors]
//   partition-import --list-ops
//   partition-import --model gpt|llama|mixtral|mlp [--layers N --hidden N
//                    --heads N --kv-heads N --ffn N --vocab N --seq N
//                    --batch N --experts N --top-k N --capacity-factor F
//                    --router-aux-loss-coef W]
//                    [--seed N | --shapes-only] -o model.mlir
//                    [--weights model.safetensors]
//
// Every output path is checked before the import starts; outputs are written
// to temporary files beside their targets and renamed only when everything
// succeeded, so a failed import leaves nothing behind. Devices and FIFOs
// (`-o /dev/null`) are written in place, never renamed over; a FIFO that
// nobody reads is refused (runtime/Files.h, checkOutputFiles).
//
//===----------------------------------------------------------------------===//

#include "partition/Import/ModelGenerators.h"
#include "partition/Import/OnnxImporter.h"
#include "partition/InitAll.h"
#include "partition/runtime/Files.h"
#include "partition/runtime/Safetensors.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include "mlir/IR/Diagnostics.h"

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

using namespace llvm;
using namespace partition;

namespace {
cl::OptionCategory category("partition-import options");

cl::opt<std::string> inputPath(cl::Positional, cl::desc("[model.onnx]"),
                               cl::init(""), cl::cat(category));
cl::opt<std::string> outputPath("o", cl::desc("Output IR file ('-': stdout)"),
                                cl::value_desc("file"), cl::init("-"),
                                cl::cat(category));
cl::opt<std::string>
    weightsPath("weights",
                cl::desc("Write the parameters' data to this safetensors file"),
                cl::value_desc("file"), cl::init(""), cl::cat(category));
cl::list<std::string>
    dimBindings("dim",
                cl::desc("Bind a symbolic dimension by the name the model "
                         "gives it: --dim batch=8"),
                cl::value_desc("name=value"), cl::cat(category));
cl::list<std::string> shapeBindings(
    "shape",
    cl::desc("Give an input's sizes by position, whatever the exporter "
             "named its dimensions: --shape input_ids=8x128; '?' or '_' "
             "leaves a dimension to the model or --dim. A size the model "
             "fixes cannot change: the export serves only that size"),
    cl::value_desc("input=SIZExSIZE..."), cl::cat(category));
cl::opt<bool> noRaise("no-raise",
                      cl::desc("Keep the imported ops one to one with the "
                               "ONNX nodes (skip part-raise and "
                               "part-split-fused-projections)"),
                      cl::init(false), cl::cat(category));
cl::opt<bool> reportRaising(
    "report-raising",
    cl::desc("Remark at each decomposed layer that part-raise left alone, "
             "saying why"),
    cl::init(false), cl::cat(category));
cl::opt<bool> reportParameters(
    "report-parameters",
    cl::desc("Remark, for each floating-point initializer, whether it is a "
             "parameter (and its module name) or a constant, and why; and "
             "the inputs' shapes, saying which sizes the export fixed"),
    cl::init(false), cl::cat(category));
cl::list<std::string> frozenPatterns(
    "frozen",
    cl::desc("Initializers to keep constant (not trained), by name or module "
             "name; a glob pattern, repeatable"),
    cl::value_desc("pattern"), cl::cat(category));
cl::list<std::string> trainablePatterns(
    "trainable",
    cl::desc("Initializers to train that the export's metadata marks as "
             "buffers or constants; a glob pattern, repeatable"),
    cl::value_desc("pattern"), cl::cat(category));
cl::opt<std::string>
    lossKind("loss",
             cl::desc("Return a training loss instead of the outputs: "
                      "cross-entropy (adds an i32 'labels' argument) or mse "
                      "(adds a 'targets' argument); see part-append-loss"),
             cl::value_desc("kind"), cl::init(""), cl::cat(category));
cl::opt<std::string>
    lossOutput("loss-output",
               cl::desc("With --loss: the output the loss is computed from "
                        "(default: the first)"),
               cl::value_desc("name"), cl::init(""), cl::cat(category));
cl::opt<int64_t> maxFoldElements(
    "max-fold-elements",
    cl::desc("The most elements of a constant computed while importing "
             "(ConstantOfShape, Range, Expand, masks, ...)"),
    cl::init(int64_t(1) << 24), cl::cat(category));
cl::opt<bool> listOps("list-ops",
                      cl::desc("Print the ONNX ops the importer translates, "
                               "one a line with their opsets, and exit"),
                      cl::init(false), cl::cat(category));
cl::opt<std::string> functionName("function",
                                  cl::desc("Name of the imported function"),
                                  cl::init("main"), cl::cat(category));

cl::opt<std::string>
    modelFamily("model",
                cl::desc("Generate a model instead of importing one: gpt, "
                         "llama, mixtral or mlp"),
                cl::value_desc("family"), cl::init(""), cl::cat(category));
cl::opt<int64_t> layers("layers", cl::desc("Generated model: layers"),
                        cl::init(2), cl::cat(category));
cl::opt<int64_t> hidden("hidden", cl::desc("Generated model: hidden size"),
                        cl::init(64), cl::cat(category));
cl::opt<int64_t> heads("heads", cl::desc("Generated model: attention heads"),
                       cl::init(4), cl::cat(category));
cl::opt<int64_t> kvHeads("kv-heads",
                         cl::desc("Generated Llama: key/value heads "
                                  "(default: --heads)"),
                         cl::init(0), cl::cat(category));
cl::opt<int64_t> ffn("ffn",
                     cl::desc("Generated model: feed-forward size (default: "
                              "4 x hidden; Llama: SwiGLU size)"),
                     cl::init(0), cl::cat(category));
cl::opt<int64_t> vocab("vocab", cl::desc("Generated model: vocabulary size"),
                       cl::init(128), cl::cat(category));
cl::opt<int64_t> seqLength("seq", cl::desc("Generated model: sequence length"),
                     cl::init(16), cl::cat(category));
cl::opt<int64_t> batchSize("batch", cl::desc("Generated model: batch size"),
                       cl::init(2), cl::cat(category));
cl::opt<int64_t> experts("experts",
                         cl::desc("Generated Mixtral: experts per layer"),
                         cl::init(4), cl::cat(category));
cl::opt<int64_t> topK("top-k",
                      cl::desc("Generated Mixtral: experts per token"),
                      cl::init(2), cl::cat(category));
cl::opt<double> capacityFactor(
    "capacity-factor",
    cl::desc("Generated Mixtral: each expert's slots per sequence, as a "
             "multiple of seq x top-k / experts, at most seq (default 0: "
             "seq, no token is ever dropped)"),
    cl::init(0), cl::cat(category));
cl::opt<double> routerAuxLossCoef(
    "router-aux-loss-coef",
    cl::desc("Generated Mixtral: weight of the load-balancing loss, returned "
             "as aux_loss and added to the training loss (default 0.001, "
             "Hugging Face's; 0: none)"),
    cl::init(0.001), cl::cat(category));
cl::opt<uint64_t> seed("seed", cl::desc("Generated model: weight seed"),
                       cl::init(0), cl::cat(category));
cl::opt<bool> shapesOnly("shapes-only",
                         cl::desc("Generated model: no weight data"),
                         cl::init(false), cl::cat(category));
} // namespace

/// Prints a diagnostic as "model.onnx: error: node '/h.0/attn/MatMul'
/// (MatMul): ..." -- the model has no lines to point at -- naming the ONNX
/// node a remark on an op came from.
static mlir::LogicalResult printDiagnostic(mlir::Diagnostic &d) {
  std::string where = "partition-import";
  std::string node;
  mlir::Location loc = d.getLocation();
  if (auto name = llvm::dyn_cast<mlir::NameLoc>(loc)) {
    node = name.getName().str();
    loc = name.getChildLoc();
  }
  if (auto file = llvm::dyn_cast<mlir::FileLineColLoc>(loc)) {
    where = file.getFilename().str();
    if (file.getLine())
      where += ":" + std::to_string(file.getLine()) + ":" +
               std::to_string(file.getColumn());
  }
  const char *severity = "error";
  switch (d.getSeverity()) {
  case mlir::DiagnosticSeverity::Warning:
    severity = "warning";
    break;
  case mlir::DiagnosticSeverity::Remark:
    severity = "remark";
    break;
  case mlir::DiagnosticSeverity::Note:
    severity = "note";
    break;
  default:
    break;
  }
  std::string message = d.str();
  errs() << where << ": " << severity << ": ";
  if (!node.empty() && message.find("'" + node + "'") == std::string::npos)
    errs() << "node '" << node << "': ";
  errs() << message << "\n";
  return mlir::success();
}

/// --list-ops: one line per op: name, opsets, and what is not supported
/// where support is partial. The same table decides what imports.
static void listOnnxOps() {
  for (const import::OnnxOpSupport &op : import::supportedOnnxOps()) {
    std::string line = op.opType;
    line.resize(std::max<size_t>(line.size() + 1, 20), ' ');
    line += std::to_string(op.sinceOpset) + "-" + std::to_string(op.untilOpset);
    if (!op.note.empty())
      line += "  " + op.note;
    outs() << line << "\n";
  }
}

/// Parses the --dim and --shape bindings into `options`; prints what is
/// malformed and returns false.
static bool parseBindings(import::OnnxImportOptions &options) {
  bool ok = true;
  for (const std::string &binding : dimBindings) {
    auto [name, value] = StringRef(binding).split('=');
    int64_t size;
    if (name.empty() || value.getAsInteger(10, size) || size <= 0) {
      errs() << "partition-import: --dim " << binding
             << ": expected name=value with a positive integer value\n";
      ok = false;
      continue;
    }
    options.dims[name.str()] = size;
  }
  for (const std::string &binding : shapeBindings) {
    // Sizes hold no '=': an input name may.
    auto [name, text] = StringRef(binding).rsplit('=');
    std::vector<std::optional<int64_t>> sizes;
    bool valid = !name.empty() && !text.empty() && name != binding;
    SmallVector<StringRef> parts;
    text.split(parts, 'x');
    for (StringRef part : parts) {
      int64_t size;
      if (part == "?" || part == "_")
        sizes.push_back(std::nullopt);
      else if (!part.getAsInteger(10, size) && size > 0)
        sizes.push_back(size);
      else
        valid = false;
    }
    if (!valid) {
      errs() << "partition-import: --shape " << binding
             << ": expected input=SIZExSIZE..., each size a positive "
                "integer, or '?' or '_' to leave it\n";
      ok = false;
    } else if (!options.shapes.emplace(name.str(), sizes).second) {
      errs() << "partition-import: --shape " << binding << ": input '" << name
             << "' has another --shape\n";
      ok = false;
    }
  }
  return ok;
}

/// The model file imported with the command line's options, raised
/// (unless --no-raise) and its fused projections split; null after an
/// error was printed.
static mlir::OwningOpRef<mlir::ModuleOp>
importModelFile(mlir::MLIRContext &context, import::Weights &weights) {
  import::OnnxImportOptions options;
  options.functionName = functionName;
  if (maxFoldElements < 1) {
    errs() << "partition-import: --max-fold-elements must be positive, got "
           << maxFoldElements << "\n";
    return nullptr;
  }
  options.maxFoldElements = maxFoldElements;
  options.reportParameters = reportParameters;
  options.frozen.assign(frozenPatterns.begin(), frozenPatterns.end());
  options.trainable.assign(trainablePatterns.begin(),
                           trainablePatterns.end());
  if (!parseBindings(options))
    return nullptr;
  mlir::OwningOpRef<mlir::ModuleOp> module =
      import::importOnnx(context, inputPath, options, weights);
  if (module && !noRaise) {
    // Rebuild gelu, layer_norm, rms_norm, silu and attention from the
    // decomposed forms exporters write.
    mlir::PassManager pm(&context);
    part::PartRaisePassOptions raiseOptions;
    raiseOptions.report = reportRaising;
    pm.addPass(part::createPartRaisePass(raiseOptions));
    // One projection per block of a fused one (GPT-2's [Q | K | V]), so
    // that tensor parallelism can give each rank whole heads.
    pm.addPass(part::createPartSplitFusedProjectionsPass());
    if (mlir::failed(pm.run(*module)))
      return nullptr;
  }
  return module;
}

/// Writes the weights (when asked) and then the IR: to temporary files,
/// renamed once both are complete.
static bool writeOutputs(mlir::ModuleOp module, const import::Weights &weights,
                         const runtime::OutputFile *irFile,
                         const runtime::OutputFile *weightsFile) {
  // Everything is built: write to temporary files, then rename.
  std::string weightBytes;
  std::vector<runtime::OutputContents> outputs;
  if (weightsFile) {
    runtime::SafetensorsWriter writer;
    for (const import::WeightTensor &tensor : weights.tensors) {
      runtime::Status status = writer.add(tensor.name, tensor.dtype,
                                          tensor.shape, tensor.data.data());
      if (!status.isOk()) {
        errs() << "partition-import: " << weightsPath << ": "
               << status.message() << "\n";
        return false;
      }
    }
    runtime::StatusOr<std::string> bytes = writer.serialize();
    if (!bytes.isOk()) {
      errs() << "partition-import: " << weightsPath << ": "
             << bytes.status().message() << "\n";
      return false;
    }
    weightBytes = std::move(*bytes);
    outputs.push_back({weightsFile, weightBytes.data(), weightBytes.size()});
  }
  std::string text;
  {
    raw_string_ostream os(text);
    module.print(os);
  }
  // Standard output comes last, so a reader of it never sees IR without its
  // data.
  outputs.push_back({irFile, text.data(), text.size()});
  if (runtime::Status s = runtime::writeOutputFiles(outputs); !s.isOk()) {
    errs() << "partition-import: " << s.message() << "\n";
    return false;
  }
  return true;
}

int main(int argc, char **argv) {
  InitLLVM init(argc, argv);
  cl::HideUnrelatedOptions(category);
  cl::ParseCommandLineOptions(
      argc, argv,
      "partition-import: an ONNX model, or a generated GPT, Llama or MLP, "
      "as part IR plus a safetensors file of its parameters\n");

  mlir::DialectRegistry registry;
  registerAllDialects(registry);
  mlir::MLIRContext context(registry);
  context.loadAllAvailableDialects();
  // Diagnostics read "model.onnx: error: node '/h.0/attn/MatMul' (MatMul):
  // ..." -- the model has no lines to point at -- and a remark on an op
  // names the ONNX node it came from.
  mlir::ScopedDiagnosticHandler diagnostics(&context, printDiagnostic);

  if (listOps) {
    listOnnxOps();
    return 0;
  }
  bool generate = !modelFamily.empty();
  if (generate == !inputPath.empty()) {
    errs() << "partition-import: give either a model file or --model "
              "gpt|llama|mlp\n";
    return 1;
  }
  if (!generate && shapesOnly) {
    errs() << "partition-import: --shapes-only applies to --model only\n";
    return 1;
  }

  if (!weightsPath.empty() && generate && shapesOnly) {
    errs() << "partition-import: --shapes-only builds no weight data; drop "
              "--weights\n";
    return 1;
  }
  // Every output is checked before anything is computed or written, and
  // none may be the model or another output.
  std::vector<runtime::NamedPath> outputPaths{{"-o", outputPath}};
  if (!weightsPath.empty())
    outputPaths.push_back({"--weights", weightsPath});
  runtime::StatusOr<std::vector<runtime::OutputFile>> checked =
      runtime::checkOutputFiles(outputPaths, {{"the model", inputPath}});
  if (!checked.isOk()) {
    errs() << "partition-import: " << checked.status().message() << "\n";
    return 1;
  }
  const runtime::OutputFile *irFile = &(*checked)[0];
  const runtime::OutputFile *weightsFile =
      weightsPath.empty() ? nullptr : &(*checked)[1];

  import::Weights weights;
  mlir::OwningOpRef<mlir::ModuleOp> module;
  if (generate) {
    import::ModelConfig config;
    config.family = modelFamily;
    config.layers = layers;
    config.hidden = hidden;
    config.heads = heads;
    config.kvHeads = kvHeads;
    config.ffn = ffn;
    config.vocab = vocab;
    config.seq = seqLength;
    config.batch = batchSize;
    config.experts = experts;
    config.topK = topK;
    config.capacityFactor = capacityFactor;
    config.routerAuxLossCoef = routerAuxLossCoef;
    config.seed = seed;
    config.shapesOnly = shapesOnly;
    module = import::generateModel(context, config, weights);
  } else {
    module = importModelFile(context, weights);
  }
  if (!module)
    return 1;
  if (!lossKind.empty()) {
    mlir::PassManager pm(&context);
    part::PartAppendLossPassOptions lossOptions;
    lossOptions.kind = lossKind;
    lossOptions.output = lossOutput;
    pm.addPass(part::createPartAppendLossPass(lossOptions));
    if (mlir::failed(pm.run(*module)))
      return 1;
  }
  if (mlir::failed(mlir::verify(*module)))
    return 1;

  return writeOutputs(*module, weights, irFile, weightsFile) ? 0 : 1;
}
