//===- ExpertParallel.cpp - split the experts over a mesh axis ------------===//
//
// part-expert-parallel: the experts' weights of mixture-of-experts layers
// split by expert over a mesh axis. See docs/design/2026-12-07-experts.md.
//
//===----------------------------------------------------------------------===//

#include "partition/Dialect/Part/Analysis/DimensionClasses.h"
#include "partition/Dialect/Part/IR/FunctionAttrs.h"
#include "partition/Dialect/Part/IR/PartOps.h"
#include "partition/Dialect/Part/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseSet.h"

#define DEBUG_TYPE "part-expert-parallel"

namespace partition::part {
#define GEN_PASS_DEF_PARTEXPERTPARALLELPASS
#include "partition/Dialect/Part/Transforms/Passes.h.inc"
} // namespace partition::part

using namespace mlir;
using namespace partition::part;

/// The classes of the experts' dimension of every dispatch buffer (a
/// dispatch's result, a combine's operand) in `function`.
static llvm::DenseSet<unsigned> expertClasses(func::FuncOp function,
                                              const DimensionClasses &classes) {
  llvm::DenseSet<unsigned> experts;
  auto add = [&](Value buffer) {
    if (std::optional<unsigned> c = classes.classOf(buffer, 0))
      experts.insert(*c);
  };
  function.walk([&](Operation *op) {
    if (auto dispatch = dyn_cast<ExpertDispatchOp>(op))
      add(dispatch.getResult());
    else if (auto combine = dyn_cast<ExpertCombineOp>(op))
      add(combine.getInput());
  });
  return experts;
}

namespace {
struct PartExpertParallelPass
    : public partition::part::impl::PartExpertParallelPassBase<
          PartExpertParallelPass> {
  using PartExpertParallelPassBase::PartExpertParallelPassBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    FailureOr<int64_t> size =
        lookupMeshAxisSize(module, meshName, axis, "split the experts over");
    if (failed(size))
      return signalPassFailure();
    for (auto function : module.getOps<func::FuncOp>()) {
      if (function.isDeclaration() || getSpmdMesh(function))
        continue;
      if (failed(splitExperts(function, *size)))
        return signalPassFailure();
    }
  }

  /// Splits dimension 0 of each parameter in an experts' class over `axis`.
  LogicalResult splitExperts(func::FuncOp function, int64_t size) {
    DimensionClasses classes(function);
    llvm::DenseSet<unsigned> experts = expertClasses(function, classes);
    if (experts.empty())
      return function.emitError()
             << "mesh axis \"" << axis << "\" splits experts, but @"
             << function.getName()
             << " has no part.expert_dispatch (no mixture-of-experts layer)";
    StringRef shardingName = PartDialect::getShardingAttrName();
    StringAttr axisName = StringAttr::get(&getContext(), axis);
    FunctionAttrEditor editor(function);
    for (unsigned i = 0; i < function.getNumArguments(); ++i) {
      auto role = function.getArgAttrOfType<ArgRoleAttr>(
          i, PartDialect::getRoleAttrName());
      auto type = cast<RankedTensorType>(function.getArgumentTypes()[i]);
      std::optional<unsigned> c =
          type.getRank() ? classes.classOf(function.getArgument(i), 0)
                         : std::nullopt;
      if (!role || role.getValue() != ArgRole::Parameter || !c ||
          !experts.contains(*c))
        continue;
      if (type.getDimSize(0) % size)
        return function.emitError()
               << "argument " << i << " (" << argumentName(function, i)
               << ") holds " << type.getDimSize(0)
               << " experts, which mesh axis \"" << axis << "\" of size "
               << size << " does not divide";
      auto existing =
          dyn_cast_or_null<ShardingAttr>(editor.getArg(i, shardingName));
      ShardingAttr split = ShardingAttr::get(
          &getContext(), meshName,
          SmallVector<SmallVector<StringRef>>(type.getRank()), {});
      split = *split.withDimAxesAppended(0, {axisName});
      if (existing) {
        FailureOr<ShardingAttr> both = split.compose(existing);
        if (failed(both))
          return function.emitError()
                 << "argument " << i << " (" << argumentName(function, i)
                 << ") is already split over \"" << axis << "\"";
        split = *both;
      }
      editor.setArg(i, shardingName, split);
    }
    editor.commit();
    return success();
  }

  static std::string argumentName(func::FuncOp function, unsigned i) {
    auto name = function.getArgAttrOfType<StringAttr>(
        i, PartDialect::getNameAttrName());
    return name ? name.str() : "argument " + std::to_string(i);
  }
};
} // namespace
