//===- PrintShardingRules.cpp - report each op's sharding rule ------------===//

#include "partition/Dialect/Part/IR/PartOps.h"
#include "partition/Dialect/Part/Transforms/Passes.h"

#define DEBUG_TYPE "part-print-sharding-rules"

namespace partition::part {
#define GEN_PASS_DEF_PARTPRINTSHARDINGRULESPASS
#include "partition/Dialect/Part/Transforms/Passes.h.inc"
} // namespace partition::part

using namespace mlir;
using namespace partition::part;

namespace {
struct PartPrintShardingRulesPass
    : public partition::part::impl::PartPrintShardingRulesPassBase<
          PartPrintShardingRulesPass> {
  void runOnOperation() override {
    bool failedAny = false;
    getOperation().walk([&](Operation *op) {
      auto ruled = dyn_cast<ShardingRuleOpInterface>(op);
      if (!ruled) {
        // Collectives and meshes appear only after partitioning; any other
        // part op without a rule could not be partitioned.
        if (isa<PartDialect>(op->getDialect()) &&
            !isa<MeshOp, AllReduceOp, AllGatherOp, ReduceScatterOp, AllToAllOp,
                 AllSliceOp, AxisIndexOp, CollectivePermuteOp, SendOp, RecvOp>(
                op)) {
          op->emitError() << "has no sharding rule";
          failedAny = true;
        }
        return;
      }
      ShardingRule rule = ruled.getShardingRule();
      if (failed(rule.verify(op))) {
        failedAny = true;
        return;
      }
      op->emitRemark() << "sharding rule " << rule.describe();
    });
    if (failedAny)
      signalPassFailure();
    markAllAnalysesPreserved();
  }
};
} // namespace
