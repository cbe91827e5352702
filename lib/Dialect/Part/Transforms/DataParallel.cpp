//===- DataParallel.cpp - split the batch over a mesh axis ----------------===//

#include "partition/Dialect/Part/Analysis/DimensionClasses.h"
#include "partition/Dialect/Part/IR/FunctionAttrs.h"
#include "partition/Dialect/Part/IR/PartOps.h"
#include "partition/Dialect/Part/Transforms/Padding.h"
#include "partition/Dialect/Part/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/StringExtras.h"

#define DEBUG_TYPE "part-data-parallel"

namespace partition::part {
#define GEN_PASS_DEF_PARTDATAPARALLELPASS
#include "partition/Dialect/Part/Transforms/Passes.h.inc"
} // namespace partition::part

using namespace mlir;
using namespace partition::part;

/// Of `candidates` (arguments to split), those whose first dimension is the
/// batch of `inputs` (the arguments with a role of input or label and a
/// first dimension, annotated or not). Dimensions are
/// joined into classes through the ops' sharding rules (a factor and the
/// dimensions it leads, the ones a split of that factor splits first): the
/// batch is the class of the labels' first dimension, or without labels, of
/// the first dimension of the input of highest rank (the most elements
/// among those). An input whose first dimension is in another class (a
/// rotary table [S, d] joined to the sequence) is no batch; one that no op
/// joins to anything is, when its first dimension has the batch's size.
static SmallVector<bool> batchArguments(func::FuncOp function,
                                        ArrayRef<bool> inputs,
                                        ArrayRef<bool> candidates) {
  DimensionClasses classes(function);
  auto typeOf = [&](unsigned i) {
    return cast<RankedTensorType>(function.getArgumentTypes()[i]);
  };
  auto isLabel = [&](unsigned i) {
    auto role = function.getArgAttrOfType<ArgRoleAttr>(
        i, PartDialect::getRoleAttrName());
    return role && role.getValue() == ArgRole::Label;
  };
  // The argument whose first dimension names the batch.
  std::optional<unsigned> reference;
  for (unsigned i = 0; i < inputs.size(); ++i) {
    if (!inputs[i])
      continue;
    if (!reference) {
      reference = i;
      continue;
    }
    RankedTensorType a = typeOf(i), b = typeOf(*reference);
    auto key = [&](unsigned j, RankedTensorType t) {
      return std::make_tuple(isLabel(j), t.getRank(),
                             t.hasStaticShape() ? t.getNumElements() : 0);
    };
    if (key(i, a) > key(*reference, b))
      reference = i;
  }
  SmallVector<bool> batched(candidates.size(), false);
  if (!reference)
    return batched;
  Value ref = function.getArgument(*reference);
  std::optional<unsigned> batchClass = classes.classOf(ref, 0);
  int64_t batchSize = typeOf(*reference).getDimSize(0);
  for (unsigned i = 0; i < candidates.size(); ++i) {
    if (!candidates[i])
      continue;
    // A dimension joined to nothing is a class of its own (or has none).
    std::optional<unsigned> c = classes.classOf(function.getArgument(i), 0);
    bool alone = !c || classes.size(*c) == 1;
    batched[i] = (!alone && c == batchClass) ||
                 (alone && typeOf(i).getDimSize(0) == batchSize);
  }
  return batched;
}

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
    // The micro-batches and the expert-parallel devices split each device's
    // batch further. (With the micro-batch axis as `axis` itself, it is the
    // only split.) The expert axis is the minor one: an all-to-all that
    // moves it from the tokens' groups to the experts leaves the groups
    // split over the major axes alone, a block each.
    SmallVector<StringRef> extraAxes;
    for (StringRef extra : {StringRef(microBatchAxis), StringRef(expertAxis)})
      if (!extra.empty() && extra != axis)
        extraAxes.push_back(extra);
    // The device axes the batch is split over, for diagnostics.
    SmallVector<std::string> deviceAxes;
    SmallVector<StringRef> batchAxes = {axis};
    llvm::append_range(batchAxes, extraAxes);
    for (StringRef a : batchAxes)
      if (a != microBatchAxis)
        deviceAxes.push_back(("\"" + a + "\"").str());
    for (StringRef extra : extraAxes) {
      FailureOr<int64_t> m =
          lookupMeshAxisSize(module, meshName, extra, "split the batch over");
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
      // Only inputs whose first dimension is the batch: a table indexed by
      // position ([S, d]) stays whole on every device.
      SmallVector<bool> inputs, candidates;
      for (unsigned i = 0; i < function.getNumArguments(); ++i) {
        auto role = function.getArgAttrOfType<ArgRoleAttr>(
            i, PartDialect::getRoleAttrName());
        inputs.push_back(
            role && role.getValue() != ArgRole::Parameter &&
            role.getValue() != ArgRole::State &&
            cast<RankedTensorType>(function.getArgumentTypes()[i]).getRank() !=
                0);
        candidates.push_back(inputs.back() &&
                             !function.getArgAttr(i, shardingName));
      }
      SmallVector<bool> batchedArgs =
          batchArguments(function, inputs, candidates);
      auto batched = [&](unsigned i) { return batchedArgs[i]; };
      // Micro-batches are equal slices of each device's batch: no padding.
      if (!microBatchAxis.empty())
        for (unsigned i = 0; i < function.getNumArguments(); ++i)
          if (batched(i)) {
            int64_t n = cast<RankedTensorType>(function.getArgumentTypes()[i])
                            .getDimSize(0);
            if (n % *size)
              return (void)(function.emitError()
                            << "argument " << i << " has a batch of " << n
                            << ", which the micro-batches"
                            << (deviceAxes.empty()
                                    ? std::string()
                                    : " times the devices of " +
                                          llvm::join(deviceAxes, " x "))
                            << " (" << *size << ") do not divide"),
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
        llvm::append_range(dims[0], extraAxes);
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
