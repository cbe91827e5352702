//===- partition-translate.cpp - partition's translations -----------------===//
//
// MlirTranslateMain over partition's translations: `--part-to-plan` writes
// the execution plan of a module's per-device programs.
//
//===----------------------------------------------------------------------===//

#include "partition/Conversion/PartToPlan/PartToPlan.h"
#include "partition/Tools/ToolSupport.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/Tools/mlir-translate/MlirTranslateMain.h"

int main(int argc, char **argv) {
  partition::hideLibraryOptions();
  partition::registerPartToPlanTranslation();
  // mlirTranslateMain registers these again (a no-op) and parses the command
  // line; registering them first lets their defaults be changed.
  mlir::registerMLIRContextCLOptions();
  partition::setQuietDiagnosticDefaults();
  return mlir::failed(
      mlir::mlirTranslateMain(argc, argv, "partition translations\n"));
}
