//===- Partition.cpp - global part program to per-device program ----------===//
//
// Rewrites each annotated global function into the per-device program of its
// mesh. Every op's operands are first resharded to what its sharding rule
// needs (no axes on need-replication factors, no pending sums), then the op
// is rebuilt on local shapes; axes on reduction factors leave its result
// unreduced. Reshards are, in order: reduce_scatter or all_reduce (pending
// sums), all_to_all (an axis moving between dimensions), all_gather (axes to
// drop) and all_slice (axes to add); each inserted collective records in
// `part.origin` which op needed it and where the operand's sharding came from.
//
//===----------------------------------------------------------------------===//

#include "partition/Dialect/Part/Analysis/Reshard.h"
#include "partition/Dialect/Part/Analysis/ShardingProjection.h"
#include "partition/Dialect/Part/IR/FunctionAttrs.h"
#include "partition/Dialect/Part/IR/PartOps.h"
#include "partition/Dialect/Part/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/DenseMap.h"

#define DEBUG_TYPE "part-partition"

namespace partition::part {
#define GEN_PASS_DEF_PARTPARTITIONPASS
#include "partition/Dialect/Part/Transforms/Passes.h.inc"
} // namespace partition::part

using namespace mlir;
using namespace partition::part;

namespace {

class Partitioner final : public PartitionContext {
public:
  Partitioner(func::FuncOp function, MeshOp mesh)
      : function(function), meshOp(mesh), meshAttr(mesh.getMesh()),
        meshRef(FlatSymbolRefAttr::get(mesh.getSymNameAttr())) {}

  LogicalResult run();

  // PartitionContext, for ops that partition themselves.
  Value lookup(Value global) override { return mapping.lookup(global); }
  const Layout &layoutOf(Value local) override { return layouts[local]; }
  FailureOr<Value> reshard(OpBuilder &b, Value local, const Layout &target,
                           Operation *user, unsigned operand,
                           StringRef why) override {
    Layout current = layouts[local];
    FailureOr<Value> r = reshard(
        b, local, current, target, user,
        why.empty() ? "operand " + Twine(operand) : Twine(why),
        sourceOf(user->getOperand(operand)));
    if (succeeded(r))
      layouts[*r] = current;
    return r;
  }
  void map(Value global, Value local, const Layout &layout) override {
    mapping.map(global, local);
    layouts[local] = layout;
  }
  FlatSymbolRefAttr mesh() override { return meshRef; }
  int64_t groupSize(ArrayRef<StringAttr> axes) override {
    return meshAttr.getGroupSize(axes);
  }

private:
  RankedTensorType localType(RankedTensorType global, const Layout &l) {
    return RankedTensorType::get(l.localShape(global.getShape(), meshAttr),
                                 global.getElementType());
  }
  ArrayAttr axesAttr(ArrayRef<StringAttr> axes) {
    return ArrayAttr::get(function.getContext(),
                          SmallVector<Attribute>(axes.begin(), axes.end()));
  }
  FailureOr<Value> reshard(OpBuilder &b, Value local, Layout &current,
                           const Layout &target, Operation *user,
                           const Twine &why, StringRef source);
  std::string sourceOf(Value global);
  LogicalResult partitionOp(OpBuilder &b, Operation *op);

  func::FuncOp function;
  MeshOp meshOp;
  MeshAttr meshAttr;
  FlatSymbolRefAttr meshRef;
  IRMapping mapping;                     // global value -> local value
  llvm::DenseMap<Value, Layout> layouts; // local value -> its layout
  /// Reshards already made of a local value: (layout reached, value).
  llvm::DenseMap<Value, SmallVector<std::pair<Layout, Value>>> reshards;
};

} // namespace

FailureOr<Value> Partitioner::reshard(OpBuilder &b, Value local,
                                      Layout &current, const Layout &target,
                                      Operation *user, const Twine &why,
                                      StringRef source) {
  MLIRContext *ctx = function.getContext();
  Location loc = user->getLoc();
  // Say which op needed the collective and where the operand's sharding came
  // from (an annotation, or propagation from annotations).
  std::string text = (why + " of " + user->getName().getStringRef()).str();
  if (user->hasAttr(PartDialect::getRecomputedAttrName()))
    text += " (recomputed in backward)";
  if (auto loc = dyn_cast<FileLineColLoc>(user->getLoc()))
    text +=
        " at " + loc.getFilename().str() + ":" + std::to_string(loc.getLine());
  if (!source.empty())
    text += ", sharded by " + source.str();
  StringAttr origin = StringAttr::get(ctx, text);
  auto tag = [&](Operation *op) {
    op->setAttr(PartDialect::getOriginAttrName(), origin);
  };
  std::string error;
  FailureOr<ReshardPlan> plan = planReshard(
      current, target, cast<RankedTensorType>(local.getType()).getShape(),
      [&](ArrayRef<StringAttr> axes) { return groupSize(axes); }, &error);
  if (failed(plan))
    return user->emitOpError() << error << "; unsupported";
  Type element = cast<RankedTensorType>(local.getType()).getElementType();
  auto sum = ReductionKindAttr::get(ctx, ReductionKind::Sum);
  for (const ReshardStep &step : plan->steps) {
    auto type = RankedTensorType::get(step.resultShape, element);
    Operation *op = nullptr;
    switch (step.kind) {
    case ReshardStep::Kind::ReduceScatter:
      op = ReduceScatterOp::create(b, loc, type, local, meshRef,
                                   axesAttr(step.axes),
                                   b.getI64IntegerAttr(step.dim), sum);
      break;
    case ReshardStep::Kind::AllReduce:
      op = AllReduceOp::create(b, loc, local, meshRef, axesAttr(step.axes),
                               sum);
      break;
    case ReshardStep::Kind::AllToAll:
      op = AllToAllOp::create(b, loc, type, local, meshRef,
                              axesAttr(step.axes),
                              b.getI64IntegerAttr(step.dim),
                              b.getI64IntegerAttr(step.concatDim));
      break;
    case ReshardStep::Kind::AllGather:
      op = AllGatherOp::create(b, loc, type, local, meshRef,
                               axesAttr(step.axes),
                               b.getI64IntegerAttr(step.dim));
      break;
    case ReshardStep::Kind::AllSlice:
      op = AllSliceOp::create(b, loc, type, local, meshRef,
                              axesAttr(step.axes),
                              b.getI64IntegerAttr(step.dim));
      break;
    }
    tag(op);
    local = op->getResult(0);
  }
  current = plan->reached;
  return local;
}

std::string Partitioner::sourceOf(Value global) {
  StringRef origin = PartDialect::getShardingOriginAttrName();
  StringRef sharding = PartDialect::getShardingAttrName();
  if (auto arg = dyn_cast<BlockArgument>(global)) {
    unsigned i = arg.getArgNumber();
    if (auto s = function.getArgAttrOfType<StringAttr>(i, origin))
      return s.str();
    if (function.getArgAttr(i, sharding))
      return "annotation on argument " + std::to_string(i) + " of @" +
             function.getName().str();
    return "";
  }
  Operation *def = global.getDefiningOp();
  if (auto s = def->getAttrOfType<StringAttr>(origin))
    return s.str();
  if (def->hasAttr(sharding) || isa<ShardingConstraintOp>(def)) {
    std::string text = "annotation on " + def->getName().getStringRef().str();
    if (auto loc = dyn_cast<FileLineColLoc>(def->getLoc()))
      text += " at " + loc.getFilename().str() + ":" +
              std::to_string(loc.getLine());
    return text;
  }
  return "";
}

LogicalResult Partitioner::partitionOp(OpBuilder &b, Operation *op) {
  StringRef shardingName = PartDialect::getShardingAttrName();
  auto ruled = dyn_cast<ShardingRuleOpInterface>(op);
  if (!ruled)
    return op->emitOpError() << "has no sharding rule, so it cannot be "
                                "partitioned";
  // An op that knows a better per-device form for these layouts than its
  // rule's (a vocabulary-parallel lookup or loss, a softmax over a split
  // dimension) builds it itself.
  FailureOr<bool> own = ruled.partition(b, *this);
  if (failed(own))
    return failure();
  if (*own)
    return success();
  ShardingRule rule = ruled.getShardingRule();

  // Pending sums that may stay pending through this op, where the op says
  // that is valid (keepsPendingSum: two row-parallel branches added need
  // one all-reduce, not two) and where it saves a reduction: a value with
  // other uses is reduced once where it stands, since keeping it pending
  // here would reduce this op's result as well as the value.
  SmallVector<StringAttr> pending;
  SmallVector<bool> operandPending(op->getNumOperands(), false);
  {
    SmallVector<bool> isPending;
    bool sameAxes = true;
    for (Value v : op->getOperands()) {
      const Layout &l = layouts[mapping.lookup(v)];
      bool p = !l.unreduced.empty() && v.hasOneUse();
      isPending.push_back(p);
      if (p && !pending.empty() && pending != l.unreduced)
        sameAxes = false;
      if (p && pending.empty())
        pending = l.unreduced;
    }
    SmallVector<bool> kept;
    if (sameAxes && llvm::is_contained(isPending, true))
      kept = ruled.keepsPendingSum(isPending);
    if (llvm::is_contained(kept, true))
      operandPending.assign(kept.begin(), kept.end());
    else
      pending.clear();
  }

  // Axes per factor: the result's annotation first, then the operands' own
  // layouts, each axis on one factor only and only where it divides; axes of
  // pending sums kept pending shard nothing.
  FactorAxes factorAxes(rule.getNumFactors());
  llvm::SmallDenseSet<StringAttr> used(pending.begin(), pending.end());
  auto offer = [&](const Layout &l, const ShardingRule::ValueMapping &m) {
    ValueProjection projection = projectOntoFactors(
        rule, m, l, [&](StringAttr axis) { return groupSize(axis); });
    for (auto [f, mine] : llvm::enumerate(projection.factorAxes))
      if (factorAxes[f].empty() && !mine.empty() &&
          llvm::none_of(mine, [&](StringAttr a) { return used.count(a); })) {
        factorAxes[f] = mine;
        used.insert(mine.begin(), mine.end());
      }
  };
  if (op->getNumResults() == 1)
    if (auto s = op->getAttrOfType<ShardingAttr>(shardingName))
      offer(Layout::of(s, s.getRank()), rule.getResultMappings()[0]);
  for (auto [operand, m] :
       llvm::zip(op->getOperands(), rule.getOperandMappings()))
    offer(layouts[mapping.lookup(operand)], m);

  // Operands: exactly the factors' axes, and no pending sums but those kept.
  SmallVector<Value> operands;
  for (auto [i, operand, m] :
       llvm::enumerate(op->getOperands(), rule.getOperandMappings())) {
    Layout target = layoutFromFactors(rule, m, factorAxes, /*isResult=*/false);
    if (operandPending[i])
      target.unreduced = pending;
    Value local = mapping.lookup(operand);
    // A value resharded the same way for an earlier op is reused (the Q, K
    // and V projections share one all-gather of their input).
    auto &done = reshards[local];
    auto reused = llvm::find_if(done, [&](const auto &entry) {
      return entry.first.dims == target.dims &&
             entry.first.unreduced == target.unreduced;
    });
    if (reused != done.end()) {
      operands.push_back(reused->second);
      continue;
    }
    Layout current = layouts[local];
    FailureOr<Value> resharded =
        reshard(b, local, current, target, op, "operand " + Twine(i),
                sourceOf(operand));
    if (failed(resharded))
      return failure();
    layouts[*resharded] = current;
    if (*resharded != local)
      reshards[local].push_back({current, *resharded});
    operands.push_back(*resharded);
  }

  // The op on local shapes; its results have the factors' axes, and are
  // pending sums over the axes of sharded reduction factors.
  SmallVector<Type> resultTypes;
  SmallVector<Layout> resultLayouts;
  SmallVector<StringAttr> reduced;
  for (auto [result, m] :
       llvm::zip(op->getResults(), rule.getResultMappings())) {
    Layout l = layoutFromFactors(rule, m, factorAxes, /*isResult=*/true);
    reduced = l.unreduced;
    llvm::append_range(l.unreduced, pending);
    resultTypes.push_back(
        localType(cast<RankedTensorType>(result.getType()), l));
    resultLayouts.push_back(l);
  }
  OperationState state(op->getLoc(), op->getName());
  state.addOperands(operands);
  state.addTypes(resultTypes);
  // part.gradient_of served part-zero; the per-device program does without.
  for (NamedAttribute attr : op->getAttrs())
    if (attr.getName() != shardingName &&
        attr.getName() != PartDialect::getShardingOriginAttrName() &&
        attr.getName() != PartDialect::getGradientOfAttrName())
      state.addAttribute(attr.getName(), attr.getValue());
  Operation *local = b.create(state);

  // A mean over a split dimension: each device's mean over its block, times
  // the block's share, is its part of the sum that makes the global mean.
  if (ruled.meansOverReductionFactors() && !reduced.empty()) {
    auto type = cast<RankedTensorType>(local->getResult(0).getType());
    double share = 1.0 / groupSize(reduced);
    auto scale = ConstantOp::create(
        b, op->getLoc(),
        DenseElementsAttr::get(RankedTensorType::get({}, type.getElementType()),
                               FloatAttr::get(type.getElementType(), share)));
    auto mul = MulOp::create(b, op->getLoc(), type, local->getResult(0),
                             scale.getResult());
    local = mul;
  }
  for (unsigned i = 0; i < op->getNumResults(); ++i) {
    Value r = local->getResult(i);
    mapping.map(op->getResult(i), r);
    layouts[r] = resultLayouts[i];
  }
  return success();
}

LogicalResult Partitioner::run() {
  MLIRContext *ctx = function.getContext();
  StringRef shardingName = PartDialect::getShardingAttrName();
  Block &oldBody = function.getBody().front();
  auto *newBody = new Block();

  // Arguments: local types from their shardings (replicated when none).
  SmallVector<Type> argTypes;
  for (auto [i, arg] : llvm::enumerate(function.getArguments())) {
    auto global = cast<RankedTensorType>(arg.getType());
    Layout l =
        Layout::of(function.getArgAttrOfType<ShardingAttr>(i, shardingName),
                   global.getRank());
    if (!l.unreduced.empty())
      return function.emitError()
             << "argument " << i
             << " is annotated as a pending sum; an "
                "input must be a whole value or a split of one";
    Type local = localType(global, l);
    argTypes.push_back(local);
    BlockArgument newArg = newBody->addArgument(local, arg.getLoc());
    mapping.map(arg, newArg);
    layouts[newArg] = l;
  }

  OpBuilder b(ctx);
  b.setInsertionPointToEnd(newBody);
  for (Operation &op : oldBody.without_terminator())
    if (failed(partitionOp(b, &op))) {
      delete newBody;
      return failure();
    }

  // Results: resharded to the function's result annotations.
  auto ret = cast<func::ReturnOp>(oldBody.getTerminator());
  SmallVector<Value> results;
  SmallVector<Type> resultTypes;
  for (auto [i, v] : llvm::enumerate(ret.getOperands())) {
    auto global = cast<RankedTensorType>(v.getType());
    Layout target =
        Layout::of(function.getResultAttrOfType<ShardingAttr>(i, shardingName),
                   global.getRank());
    Value local = mapping.lookup(v);
    Layout current = layouts[local];
    FailureOr<Value> r = reshard(b, local, current, target, ret,
                                 "result " + Twine(i), sourceOf(v));
    if (failed(r)) {
      delete newBody;
      return failure();
    }
    results.push_back(*r);
    resultTypes.push_back(localType(global, target));
  }
  func::ReturnOp::create(b, ret.getLoc(), results);

  // Swap in the new body and signature; the shardings on arguments and
  // results now say how each local value is a slice of the global one.
  function.getBody().getBlocks().clear();
  function.getBody().push_back(newBody);
  function.setFunctionType(FunctionType::get(ctx, argTypes, resultTypes));
  FunctionAttrEditor attrs(function);
  for (unsigned i = 0; i < function.getNumArguments(); ++i)
    attrs.removeArg(i, PartDialect::getShardingOriginAttrName());
  attrs.commit();
  function->setAttr(PartDialect::getSpmdAttrName(), meshRef);
  return success();
}

namespace {
struct PartPartitionPass
    : public partition::part::impl::PartPartitionPassBase<PartPartitionPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    StringRef name = PartDialect::getShardingAttrName();
    for (auto function :
         llvm::make_early_inc_range(module.getOps<func::FuncOp>())) {
      if (function.isDeclaration() || getSpmdMesh(function))
        continue;
      // A result that is the new value of a parameter or state is laid out
      // as that argument: the runtime writes it back in place.
      {
        FunctionAttrEditor attrs(function);
        for (unsigned i = 0; i < function.getNumResults(); ++i) {
          auto updates = function.getResultAttrOfType<IntegerAttr>(
              i, PartDialect::getUpdatesAttrName());
          if (!updates)
            continue;
          if (auto s = function.getArgAttrOfType<ShardingAttr>(
                  updates.getInt(), name))
            attrs.setResult(i, name, s);
          else
            attrs.removeResult(i, name);
        }
      }
      FlatSymbolRefAttr meshName;
      auto note = [&](ShardingAttr s) {
        if (s && !meshName)
          meshName = s.getMesh();
      };
      for (unsigned i = 0; i < function.getNumArguments(); ++i)
        note(function.getArgAttrOfType<ShardingAttr>(i, name));
      for (unsigned i = 0; i < function.getNumResults(); ++i)
        note(function.getResultAttrOfType<ShardingAttr>(i, name));
      function.walk(
          [&](Operation *op) { note(op->getAttrOfType<ShardingAttr>(name)); });
      if (!meshName)
        continue; // not annotated: stays a single-device function
      if (function.getBody().getBlocks().size() != 1) {
        function.emitError() << "can only partition a function of one block";
        return signalPassFailure();
      }
      Partitioner partitioner(function, lookupMesh(function, meshName));
      if (failed(partitioner.run()))
        return signalPassFailure();
    }
  }
};
} // namespace
