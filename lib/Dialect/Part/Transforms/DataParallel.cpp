//===- DataParallel.cpp - split the batch over a mesh axis ----------------===//

#include "partition/Dialect/Part/IR/FunctionAttrs.h"
#include "partition/Dialect/Part/IR/PartOps.h"
#include "partition/Dialect/Part/Transforms/Padding.h"
#include "partition/Dialect/Part/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#define DEBUG_TYPE "part-data-parallel"

namespace partition::part {
#define GEN_PASS_DEF_PARTDATAPARALLELPASS
#include "partition/Dialect/Part/Transforms/Passes.h.inc"
} // namespace partition::part

using namespace mlir;
using namespace partition::part;

namespace {
struct PartDataParallelPass
    : public partition::part::impl::PartDataParallelPassBase<
          PartDataParallelPass> {
  using PartDataParallelPassBase::PartDataParallelPassBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();
    FailureOr<int64_t> size =
        lookupMeshAxisSize(module, meshName, axis, "split the batch over");
    if (failed(size))
      return signalPassFailure();
    // Micro-batches split each device's batch further.
    // (With the micro-batch axis as `axis` itself, it is the only split.)
    bool extraAxis = !microBatchAxis.empty() && microBatchAxis != axis;
    if (extraAxis) {
      FailureOr<int64_t> m = lookupMeshAxisSize(
          module, meshName, microBatchAxis, "split micro-batches over");
      if (failed(m))
        return signalPassFailure();
      *size *= *m;
    }
    StringRef shardingName = PartDialect::getShardingAttrName();
    for (auto function : module.getOps<func::FuncOp>()) {
      if (function.isDeclaration() || getSpmdMesh(function))
        continue;
      // The batch arguments; a batch the axis does not divide is padded to
      // a multiple of it, with what reads across it masked.
      auto batched = [&](unsigned i) {
        auto role = function.getArgAttrOfType<ArgRoleAttr>(
            i, PartDialect::getRoleAttrName());
        return role && role.getValue() != ArgRole::Parameter &&
               role.getValue() != ArgRole::State &&
               !function.getArgAttr(i, shardingName) &&
               cast<RankedTensorType>(function.getArgumentTypes()[i])
                       .getRank() != 0;
      };
      // Micro-batches are equal slices of each device's batch: no padding.
      if (!microBatchAxis.empty())
        for (unsigned i = 0; i < function.getNumArguments(); ++i)
          if (batched(i)) {
            int64_t n = cast<RankedTensorType>(function.getArgumentTypes()[i])
                            .getDimSize(0);
            if (n % *size)
              return (void)(function.emitError()
                            << "argument " << i << " has a batch of " << n
                            << ", which the data-parallel devices times the "
                               "micro-batches ("
                            << *size << ") do not divide"),
                     signalPassFailure();
          }
      SmallVector<PadRequest> padding;
      for (unsigned i = 0; i < function.getNumArguments(); ++i)
        if (batched(i) &&
            cast<RankedTensorType>(function.getArgumentTypes()[i])
                    .getDimSize(0) %
                *size)
          padding.push_back({function.getArgument(i), 0, *size});
      if (failed(padForSplits(function, padding)))
        return signalPassFailure();
      FunctionAttrEditor batch(function);
      for (unsigned i = 0; i < function.getNumArguments(); ++i) {
        if (!batched(i))
          continue;
        auto type = cast<RankedTensorType>(function.getArgumentTypes()[i]);
        SmallVector<SmallVector<StringRef>> dims(type.getRank());
        dims[0].push_back(axis);
        if (extraAxis)
          dims[0].push_back(microBatchAxis);
        batch.setArg(i, shardingName, ShardingAttr::get(ctx, meshName, dims));
      }
      batch.commit();
      // A function with nothing to split (no inputs: everything folded to
      // constants) still becomes a per-device program: its results are
      // pinned replicated, which is what marks it for partitioning.
      bool annotated = false;
      for (unsigned i = 0; i < function.getNumArguments(); ++i)
        annotated |= function.getArgAttr(i, shardingName) != nullptr;
      for (unsigned i = 0; i < function.getNumResults(); ++i)
        annotated |= function.getResultAttr(i, shardingName) != nullptr;
      if (annotated)
        continue;
      FunctionAttrEditor attrs(function);
      for (unsigned i = 0; i < function.getNumResults(); ++i) {
        auto type = cast<RankedTensorType>(function.getResultTypes()[i]);
        SmallVector<SmallVector<StringRef>> dims(type.getRank());
        attrs.setResult(i, shardingName,
                        ShardingAttr::get(ctx, meshName, dims));
      }
    }
  }
};
} // namespace
