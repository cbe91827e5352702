//===- PropagateShardings.cpp - spread shardings through the program ------===//
//
// part-propagate-shardings: ShardingPropagation (Analysis/Propagation.h),
// computed and written onto each annotated function.
//
//===----------------------------------------------------------------------===//

#include "partition/Dialect/Part/Analysis/Propagation.h"
#include "partition/Dialect/Part/IR/PartOps.h"
#include "partition/Dialect/Part/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace partition::part {
#define GEN_PASS_DEF_PARTPROPAGATESHARDINGSPASS
#include "partition/Dialect/Part/Transforms/Passes.h.inc"
} // namespace partition::part

using namespace mlir;
using namespace partition::part;

namespace {
struct PartPropagateShardingsPass
    : public partition::part::impl::PartPropagateShardingsPassBase<
          PartPropagateShardingsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    for (auto function : module.getOps<func::FuncOp>()) {
      if (function.isDeclaration() || getSpmdMesh(function))
        continue;
      // The mesh is the one the function's annotations name.
      FlatSymbolRefAttr meshName;
      auto note = [&](ShardingAttr s) {
        if (s && !meshName)
          meshName = s.getMesh();
      };
      StringRef name = PartDialect::getShardingAttrName();
      for (unsigned i = 0; i < function.getNumArguments(); ++i)
        note(function.getArgAttrOfType<ShardingAttr>(i, name));
      for (unsigned i = 0; i < function.getNumResults(); ++i)
        note(function.getResultAttrOfType<ShardingAttr>(i, name));
      function.walk([&](Operation *op) {
        if (auto c = dyn_cast<ShardingConstraintOp>(op))
          note(c.getSharding());
        else
          note(op->getAttrOfType<ShardingAttr>(name));
      });
      if (!meshName)
        continue; // nothing to propagate
      MeshOp mesh = lookupMesh(function, meshName);
      ShardingPropagation propagation(function, mesh);
      if (failed(propagation.compute()))
        return signalPassFailure();
      propagation.write();
    }
  }
};
} // namespace

