//===- partition-opt.cpp - partition's pass driver ------------------------===//
//
// MlirOptMain over the dialects and passes in InitAll.h.
//
//===----------------------------------------------------------------------===//

#include "partition/InitAll.h"

#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  partition::registerAllDialects(registry);
  partition::registerAllPasses();
  return mlir::asMainReturnCode(mlir::MlirOptMain(
      argc, argv, "partition optimizer: the part dialect and its passes\n",
      registry));
}
