//===- OnnxImportFuzzer.cpp - fuzz the ONNX importer ----------------------===//
//
// Input: one byte that binds symbolic dimensions (bit 0: batch=2, bit 1:
// seq=8, bit 2: sequence=4), then the bytes of an ONNX model. The model is
// written to a file in a private temporary folder (the importer reads a path,
// and external data is looked up beside it) and imported; an accepted module
// must verify. Diagnostics are dropped, but a failed import must report at
// least one error.
//
//===----------------------------------------------------------------------===//

#include "FuzzCheck.h"

#include "partition/Import/OnnxImporter.h"
#include "partition/InitAll.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"

#include <cstdio>
#include <cstdlib>
#include <string>

#include <unistd.h>

using namespace partition;

namespace {
/// The model file every input is written to, in a folder made once.
const std::string &modelPath() {
  static const std::string path = [] {
    const char *tmp = std::getenv("TMPDIR");
    std::string dir =
        std::string(tmp && *tmp ? tmp : "/tmp") + "/partition-onnx-fuzz-XXXXXX";
    FUZZ_CHECK(::mkdtemp(dir.data()) != nullptr, "cannot make a temp folder");
    return dir + "/model.onnx";
  }();
  return path;
}
} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1)
    return 0;
  import::OnnxImportOptions options;
  if (data[0] & 1)
    options.dims["batch"] = 2;
  if (data[0] & 2)
    options.dims["seq"] = 8;
  if (data[0] & 4)
    options.dims["sequence"] = 4;

  const std::string &path = modelPath();
  FILE *file = std::fopen(path.c_str(), "wb");
  FUZZ_CHECK(file != nullptr, "cannot write the model file");
  FUZZ_CHECK(std::fwrite(data + 1, 1, size - 1, file) == size - 1,
             "cannot write the model file");
  std::fclose(file);

  static mlir::DialectRegistry *registry = [] {
    auto *r = new mlir::DialectRegistry();
    registerAllDialects(*r);
    return r;
  }();
  mlir::MLIRContext context(*registry, mlir::MLIRContext::Threading::DISABLED);
  context.loadAllAvailableDialects();
  int errors = 0;
  mlir::ScopedDiagnosticHandler handler(&context, [&](mlir::Diagnostic &d) {
    errors += d.getSeverity() == mlir::DiagnosticSeverity::Error;
    return mlir::success();
  });

  import::Weights weights;
  mlir::OwningOpRef<mlir::ModuleOp> module =
      import::importOnnx(context, path, options, weights);
  if (!module) {
    FUZZ_CHECK(errors > 0, "the import failed without an error");
    return 0;
  }
  FUZZ_CHECK(mlir::succeeded(mlir::verify(*module)),
             "the imported module does not verify");
  return 0;
}
