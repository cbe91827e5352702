//===- partition-translate.cpp - partition's translations -----------------===//
//
// partition's translations (`--part-to-plan` writes the execution plan of a
// module's per-device programs) over MLIR's translation registry. The
// driver is this file rather than mlirTranslateMain, which opens its input
// and output itself: here the model is read as an untrusted file
// (ToolSupport.h readInputFile: /dev/zero or a FIFO is an error, not an
// endless read or a hang) and -o is checked before anything is read and
// written with every write checked (runtime/Files.h), as in every tool.
//
//===----------------------------------------------------------------------===//

#include "partition/Conversion/PartToPlan/PartToPlan.h"
#include "partition/Tools/ToolSupport.h"
#include "partition/runtime/Files.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Support/ToolUtilities.h"
#include "mlir/Tools/mlir-translate/Translation.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"

namespace cl = llvm::cl;
using mlir::SourceMgrDiagnosticVerifierHandler;

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  partition::hideLibraryOptions();
  partition::registerPartToPlanTranslation();
  mlir::registerAsmPrinterCLOptions();
  mlir::registerMLIRContextCLOptions();
  mlir::registerTranslationCLOptions();
  partition::setQuietDiagnosticDefaults();

  // The options of mlir-translate that partition's tests and users use.
  cl::opt<std::string> inputFilename(cl::Positional, cl::desc("<input file>"),
                                     cl::init("-"));
  cl::opt<std::string> outputFilename("o", cl::desc("Output filename"),
                                      cl::value_desc("filename"),
                                      cl::init("-"));
  cl::opt<bool> allowUnregisteredDialects(
      "allow-unregistered-dialect",
      cl::desc("Allow operation with no registered dialects (testing only)"));
  cl::opt<std::string> inputSplitMarker(
      "split-input-file", cl::ValueOptional,
      cl::desc("Split the input file into chunks using the given or default "
               "marker and process each chunk independently"),
      cl::init(""));
  cl::opt<std::string> outputSplitMarker(
      "output-split-marker",
      cl::desc("Split marker to use for merging the output"), cl::init(""));
  cl::opt<bool> verifyDiagnostics(
      "verify-diagnostics",
      cl::desc("Check that emitted diagnostics match expected-* lines on the "
               "corresponding line"));
  cl::list<const mlir::Translation *, bool, mlir::TranslationParser>
      translations("", cl::desc("Translations to perform"), cl::Required);
  cl::ParseCommandLineOptions(argc, argv, "partition translations\n");
  // `--split-input-file` without a value: the default marker.
  if (inputSplitMarker.getNumOccurrences() && inputSplitMarker.empty())
    inputSplitMarker = std::string(mlir::kDefaultSplitMarker);
  if (translations.size() != 1) {
    llvm::errs() << "partition-translate: give one translation\n";
    return 1;
  }
  const mlir::Translation &translation = *translations[0];

  partition::runtime::StatusOr<std::vector<partition::runtime::OutputFile>>
      outputs = partition::runtime::checkOutputFiles(
          {{"-o", outputFilename}}, {{"the model", inputFilename}});
  if (!outputs.isOk()) {
    llvm::errs() << "partition-translate: " << outputs.status().message()
                 << "\n";
    return 1;
  }
  llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>> input =
      partition::readInputFile(inputFilename, "model");
  if (!input) {
    llvm::errs() << "partition-translate: " << llvm::toString(input.takeError())
                 << "\n";
    return 1;
  }

  // Each chunk (the whole input without --split-input-file) in a context
  // of its own.
  auto processBuffer = [&](std::unique_ptr<llvm::MemoryBuffer> buffer,
                           llvm::raw_ostream &os) -> mlir::LogicalResult {
    // A chunk is not NUL-terminated; the parser needs a terminated copy.
    buffer = llvm::MemoryBuffer::getMemBufferCopy(
        buffer->getBuffer(), buffer->getBufferIdentifier());
    mlir::MLIRContext context;
    context.allowUnregisteredDialects(allowUnregisteredDialects);
    context.printOpOnDiagnostic(!verifyDiagnostics);
    auto sourceMgr = std::make_shared<llvm::SourceMgr>();
    sourceMgr->AddNewSourceBuffer(std::move(buffer), llvm::SMLoc());
    if (verifyDiagnostics) {
      SourceMgrDiagnosticVerifierHandler handler(*sourceMgr, &context);
      (void)translation(sourceMgr, os, &context);
      return handler.verify();
    }
    mlir::SourceMgrDiagnosticHandler handler(*sourceMgr, &context);
    return translation(sourceMgr, os, &context);
  };
  std::string result;
  llvm::raw_string_ostream os(result);
  bool ok = mlir::succeeded(
      mlir::splitAndProcessBuffer(std::move(*input), processBuffer, os,
                                  inputSplitMarker, outputSplitMarker));
  return partition::finishToolOutput("partition-translate", ok, (*outputs)[0], result);
}
