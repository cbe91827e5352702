//===- IrSpmdFuzzer.cpp - fuzz parsing, verification and part-spmd --------===//
//
// Input: MLIR source text. It is parsed with the dialects of InitAll.h and
// verified; a valid module then runs through the part-spmd pipeline on a
// fixed mesh (dp:2, tp:2). Diagnostics are dropped, but every failure must
// report at least one error: a pass may fail, never crash or fail silently.
//
//===----------------------------------------------------------------------===//

#include "FuzzCheck.h"

#include "partition/InitAll.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"

#include <string>

using namespace partition;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static mlir::DialectRegistry *registry = [] {
    auto *r = new mlir::DialectRegistry();
    registerAllDialects(*r);
    registerAllPasses();
    return r;
  }();
  mlir::MLIRContext context(*registry, mlir::MLIRContext::Threading::DISABLED);
  context.loadAllAvailableDialects();
  int errors = 0;
  mlir::ScopedDiagnosticHandler handler(&context, [&](mlir::Diagnostic &d) {
    errors += d.getSeverity() == mlir::DiagnosticSeverity::Error;
    return mlir::success();
  });

  // A NUL-terminated copy, as a file read by the tools would be: MLIR's
  // lexer reads one byte past the end of a string that is not.
  std::string source(reinterpret_cast<const char *>(data), size);
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceString<mlir::ModuleOp>(source, &context, "fuzz.mlir");
  if (!module) {
    FUZZ_CHECK(errors > 0, "the parser failed without an error");
    return 0;
  }
  // parseSourceString verifies; verify again to exercise the verifiers on the
  // module as the passes will see it.
  if (mlir::failed(mlir::verify(*module))) {
    FUZZ_CHECK(errors > 0, "verification failed without an error");
    return 0;
  }

  mlir::PassManager pm(&context);
  part::SpmdPipelineOptions options;
  options.mesh = "dp:2,tp:2";
  part::addSpmdPipeline(pm, options);
  if (mlir::failed(pm.run(*module)))
    FUZZ_CHECK(errors > 0, "part-spmd failed without an error");
  return 0;
}
