//===- partition-opt.cpp - partition's pass driver ------------------------===//
//
// MlirOptMain over the dialects and passes in InitAll.h. The input is read
// here, checked for nesting deep enough to overflow the parser's stack, and
// then handed to MlirOptMain. --part-report=FILE appends part-html-report to
// the pipeline.
//
//===----------------------------------------------------------------------===//

#include "partition/Dialect/Part/Transforms/Passes.h"
#include "partition/InitAll.h"
#include "partition/Tools/ToolSupport.h"
#include "partition/runtime/Files.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"

#include <unistd.h>

namespace {
llvm::cl::opt<std::string> reportFile(
    "part-report",
    llvm::cl::desc("after the passes, write the HTML report of the module's "
                   "per-device programs to this file (part-html-report)"),
    llvm::cl::value_desc("report.html"));
llvm::cl::opt<std::string> reportCluster(
    "part-report-cluster",
    llvm::cl::desc("the cluster the report places devices on and predicts "
                   "times for: a preset (dgx-a100, dgx-h100, h200) or a "
                   "cluster file (default dgx-h100)"),
    llvm::cl::init("dgx-h100"));
llvm::cl::opt<bool> progress(
    "progress",
    llvm::cl::desc("report each pass over the module on stderr as it starts "
                   "(on a terminal, compiles over a second show one line "
                   "redrawn in place without this flag)"));
} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  partition::hideLibraryOptions();
  reportFile.setHiddenFlag(llvm::cl::NotHidden);
  reportCluster.setHiddenFlag(llvm::cl::NotHidden);
  progress.setHiddenFlag(llvm::cl::NotHidden);
  mlir::DialectRegistry registry;
  partition::registerAllDialects(registry);
  partition::registerAllPasses();
  std::string helpHeader = mlir::registerCLIOptions(
      "partition optimizer: the part dialect and its passes\n", registry);
  partition::setQuietDiagnosticDefaults();
  auto [inputFilename, outputFilename] =
      mlir::parseCLIOptions(argc, argv, helpHeader);
  mlir::MlirOptMainConfig config =
      mlir::MlirOptMainConfig::createFromCLOptions();

  if (config.shouldShowDialects()) {
    llvm::outs() << "Available Dialects: ";
    llvm::interleave(registry.getDialectNames(), llvm::outs(), ",");
    llvm::outs() << "\n";
    return 0;
  }
  if (config.shouldListPasses()) {
    mlir::printRegisteredPasses();
    return 0;
  }

  // Before anything is read: the outputs, which may be neither the model
  // nor each other, and the model itself, read as an untrusted file.
  std::vector<partition::runtime::NamedPath> outputPaths{
      {"-o", outputFilename}};
  if (!reportFile.empty())
    outputPaths.push_back({"--part-report", reportFile});
  partition::runtime::StatusOr<std::vector<partition::runtime::OutputFile>>
      outputs = partition::runtime::checkOutputFiles(
          outputPaths, {{"the model", inputFilename},
                        {"--part-report-cluster", reportCluster}});
  if (!outputs.isOk()) {
    llvm::errs() << "partition-opt: " << outputs.status().message() << "\n";
    return 1;
  }
  llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>> input =
      partition::readInputFile(inputFilename, "model");
  if (!input) {
    llvm::errs() << "partition-opt: " << llvm::toString(input.takeError())
                 << "\n";
    return 1;
  }
  if (!partition::checkNestingDepth(
          (*input)->getBuffer(), (*input)->getBufferIdentifier(), llvm::errs()))
    return 1;
  // Diagnostics of passes print a bounded excerpt of their source line
  // (MLIR's handler echoes the whole line: a function's signature). Not
  // with -verify-diagnostics, which checks them, nor with split input,
  // whose chunks number their lines from 1.
  std::shared_ptr<llvm::SourceMgr> sourceMgr;
  if (!config.shouldVerifyDiagnostics() && config.inputSplitMarker().empty()) {
    sourceMgr = std::make_shared<llvm::SourceMgr>();
    sourceMgr->AddNewSourceBuffer(
        llvm::MemoryBuffer::getMemBufferCopy((*input)->getBuffer(),
                                             (*input)->getBufferIdentifier()),
        llvm::SMLoc());
  }
  // Progress: with --progress a line per pass; on a terminal one line
  // redrawn in place once a compile takes a second.
  bool progressLines = progress;
  bool progressBar = !progress && ::isatty(STDERR_FILENO) &&
                     !config.shouldVerifyDiagnostics();
  if (sourceMgr || !reportFile.empty() || progressLines || progressBar) {
    mlir::MlirOptMainConfig base = config;
    std::string report = reportFile, cluster = reportCluster;
    config.setPassPipelineSetupFn([base, sourceMgr, report, cluster,
                                   progressLines,
                                   progressBar](mlir::PassManager &pm) {
      if (sourceMgr)
        partition::registerShortDiagnosticHandler(pm.getContext(), sourceMgr);
      if (mlir::failed(base.setupPassPipeline(pm)))
        return mlir::failure();
      if (!report.empty()) {
        partition::part::PartHtmlReportPassOptions options;
        options.output = report;
        options.cluster = cluster;
        pm.addPass(partition::part::createPartHtmlReportPass(options));
      }
      if (progressLines || progressBar)
        partition::addProgressReporting(pm, "partition-opt", progressLines);
      return mlir::success();
    });
  }
  // The result is written once it is complete, with every write checked.
  std::string result;
  llvm::raw_string_ostream os(result);
  bool ok = mlir::succeeded(
      mlir::MlirOptMain(os, std::move(*input), registry, config));
  return partition::finishToolOutput("partition-opt", ok, (*outputs)[0], result);
}
