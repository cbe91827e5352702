//===- DataParallel.cpp - split the batch over a mesh axis ----------------===//

#include "partition/Dialect/Part/IR/FunctionAttrs.h"
#include "partition/Dialect/Part/IR/PartOps.h"
#include "partition/Dialect/Part/Transforms/Padding.h"
#include "partition/Dialect/Part/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/IntEqClasses.h"

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
  llvm::DenseMap<std::pair<Value, unsigned>, unsigned> nodes;
  llvm::IntEqClasses classes;
  unsigned count = 0;
  auto node = [&](Value v, unsigned d) {
    auto [it, inserted] = nodes.try_emplace({v, d}, count);
    if (inserted)
      classes.grow(++count);
    return it->second;
  };
  function.walk([&](ShardingRuleOpInterface op) {
    ShardingRule rule = op.getShardingRule();
    unsigned base = count;
    count += rule.getNumFactors();
    classes.grow(count);
    auto join = [&](ValueRange values,
                    ArrayRef<ShardingRule::ValueMapping> mappings) {
      for (auto [v, mapping] : llvm::zip(values, mappings))
        for (auto [d, factors] : llvm::enumerate(mapping))
          if (!factors.empty())
            classes.join(node(v, d), base + factors.front());
    };
    join(op->getOperands(), rule.getOperandMappings());
    join(op->getResults(), rule.getResultMappings());
  });
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
  unsigned batchClass = classes.findLeader(node(ref, 0));
  int64_t batchSize = typeOf(*reference).getDimSize(0);
  // A dimension joined to nothing is a class of its own (or no node yet).
  llvm::DenseMap<unsigned, unsigned> sizes;
  for (auto &entry : nodes)
    ++sizes[classes.findLeader(entry.second)];
  for (unsigned i = 0; i < candidates.size(); ++i) {
    if (!candidates[i])
      continue;
    auto it = nodes.find({function.getArgument(i), 0});
    bool alone = it == nodes.end() ||
                 sizes.lookup(classes.findLeader(it->second)) == 1;
    batched[i] = (!alone && classes.findLeader(it->second) == batchClass) ||
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
