//===- partition-translate.cpp - partition's translations -----------------===//
//
// MlirTranslateMain over partition's translations: `--part-to-plan` writes
// the execution plan of a module's per-device programs.
//
//===----------------------------------------------------------------------===//

#include "partition/Conversion/PartToPlan/PartToPlan.h"

#include "mlir/Tools/mlir-translate/MlirTranslateMain.h"

int main(int argc, char **argv) {
  partition::registerPartToPlanTranslation();
  return mlir::failed(
      mlir::mlirTranslateMain(argc, argv, "partition translations\n"));
}
