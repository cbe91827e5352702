//===- StripSharding.cpp - drop sharding annotations ----------------------===//
//
// Produces the unpartitioned reference program of a module.
//
//===----------------------------------------------------------------------===//

#include "partition/Dialect/Part/IR/FunctionAttrs.h"
#include "partition/Dialect/Part/IR/PartOps.h"
#include "partition/Dialect/Part/Transforms/Passes.h"

#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "part-strip-sharding"

namespace partition::part {
#define GEN_PASS_DEF_PARTSTRIPSHARDINGPASS
#include "partition/Dialect/Part/Transforms/Passes.h.inc"
} // namespace partition::part

using namespace mlir;
using namespace partition::part;

namespace {
struct PartStripShardingPass
    : public partition::part::impl::PartStripShardingPassBase<
          PartStripShardingPass> {
  using PartStripShardingPassBase::PartStripShardingPassBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    StringRef name = PartDialect::getShardingAttrName();
    int64_t removed = 0;
    module.walk([&](Operation *op) {
      if (auto constraint = dyn_cast<ShardingConstraintOp>(op)) {
        constraint.getResult().replaceAllUsesWith(constraint.getInput());
        constraint.erase();
        ++removed;
        return;
      }
      if (op->removeAttr(name))
        ++removed;
      if (auto function = dyn_cast<FunctionOpInterface>(op)) {
        FunctionAttrEditor attrs(function);
        for (unsigned i = 0, e = function.getNumArguments(); i < e; ++i)
          removed += attrs.removeArg(i, name);
        for (unsigned i = 0, e = function.getNumResults(); i < e; ++i)
          removed += attrs.removeResult(i, name);
      }
    });
    LLVM_DEBUG(llvm::dbgs()
               << "removed " << removed << " sharding annotations\n");
    if (!removeMeshes)
      return;
    for (MeshOp mesh : llvm::make_early_inc_range(module.getOps<MeshOp>()))
      if (SymbolTable::symbolKnownUseEmpty(mesh, module))
        mesh.erase();
  }
};
} // namespace
