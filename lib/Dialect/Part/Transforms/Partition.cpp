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
#include "partition/Dialect/Part/Analysis/ValueTable.h"
#include "partition/Dialect/Part/IR/FunctionAttrs.h"
#include "partition/Dialect/Part/IR/PartOps.h"
#include "partition/Dialect/Part/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/DenseMap.h"

#include <limits>

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
  Partitioner(func::FuncOp function, MeshOp mesh,
              ArrayRef<StringAttr> accumulateOnly = {},
              bool testDropMatmulReduction = false)
      : function(function), meshOp(mesh), meshAttr(mesh.getMesh()),
        meshRef(FlatSymbolRefAttr::get(mesh.getSymNameAttr())),
        accumulateOnly(accumulateOnly),
        testDropMatmulReduction(testDropMatmulReduction) {}

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
  void setLayout(Value local, const Layout &layout) override {
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
  /// Whether `op` is a view: linear in its one operand (its pending sums stay
  /// pending through it) with only parallel factors, so that applying it to
  /// another layout of its operand costs no communication (a reshape, a
  /// transpose).
  bool isView(Operation *op);
  /// The layouts a view's result has when the view is applied to each
  /// version of its operand (its value and the reshards made of it), with
  /// that version.
  SmallVector<std::pair<Layout, Value>, 1> viewSources(Operation *view);
  /// The view applied to the version of its operand that gives its result
  /// `layout`, registered as a version of the view's result.
  Value buildView(OpBuilder &b, Operation *view, const Layout &layout);

  func::FuncOp function;
  MeshOp meshOp;
  MeshAttr meshAttr;
  FlatSymbolRefAttr meshRef;
  /// Axes over which only pending sums may be completed (see the pass's
  /// accumulate-axes option).
  SmallVector<StringAttr> accumulateOnly;
  /// TEST ONLY (the pass's test-drop-matmul-reduction): leave out every
  /// all_reduce that completes a matmul's pending sum, so that the program
  /// computes something else (partition-check's tests break a rule with it).
  bool testDropMatmulReduction = false;
  /// What `plan` moves per device, or kForbidden when it runs another
  /// collective than an all_reduce over an accumulate-only axis.
  static constexpr int64_t kForbidden = int64_t(1) << 50;
  int64_t planCost(const ReshardPlan &plan, int64_t element,
                   llvm::function_ref<int64_t(ArrayRef<StringAttr>)> size) {
    for (const ReshardStep &step : plan.steps)
      if (step.kind != ReshardStep::Kind::AllReduce &&
          llvm::any_of(step.axes, [&](StringAttr a) {
            return llvm::is_contained(accumulateOnly, a);
          }))
        return kForbidden;
    return reshardBytes(plan, element, size);
  }
  IRMapping mapping;                     // global value -> local value
  ValueTable<Layout> layouts; // local value -> its layout
  /// Per global value, the axes over which its pending sum may stay
  /// pending (see run()).
  llvm::DenseMap<Value, SmallVector<StringAttr>> deferred;
  /// Reshards already made of a local value: (layout reached, value).
  ValueTable<SmallVector<std::pair<Layout, Value>, 1>> reshards;
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
  // A collective made for an op of a layer belongs to the layer (pipeline
  // stages run it where the layer runs, so that what crosses between stages
  // is the layer's input, not what the collective made of it).
  Attribute layer = user->getAttr(PartDialect::getLayerAttrName());
  auto tag = [&](Operation *op) {
    op->setAttr(PartDialect::getOriginAttrName(), origin);
    if (layer)
      op->setAttr(PartDialect::getLayerAttrName(), layer);
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
      // TEST ONLY: a deliberately wrong program (see the option).
      if (testDropMatmulReduction && local.getDefiningOp<MatmulOp>())
        continue;
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

bool Partitioner::isView(Operation *op) {
  auto ruled = dyn_cast<ShardingRuleOpInterface>(op);
  if (!ruled || op->getNumOperands() != 1 || op->getNumResults() != 1)
    return false;
  SmallVector<bool> kept = ruled.keepsPendingSum({true});
  if (kept.size() != 1 || !kept[0])
    return false;
  ShardingRule rule = ruled.getShardingRule();
  for (int64_t f = 0; f < rule.getNumFactors(); ++f)
    if (rule.getFactorKind(f) != FactorKind::Parallel)
      return false;
  return true;
}

SmallVector<std::pair<Layout, Value>, 1>
Partitioner::viewSources(Operation *view) {
  SmallVector<std::pair<Layout, Value>, 1> sources;
  Value local = mapping.lookup(view->getOperand(0));
  if (!local)
    return sources;
  SmallVector<std::pair<Layout, Value>, 4> inputs = {{layouts[local], local}};
  if (const auto *made = reshards.find(local))
    llvm::append_range(inputs, *made);
  ShardingRule rule = cast<ShardingRuleOpInterface>(view).getShardingRule();
  for (auto &[layout, value] : inputs) {
    ValueProjection projection = projectOntoFactors(
        rule, rule.getOperandMappings()[0], layout,
        [&](StringAttr axis) { return groupSize(axis); });
    // A split the view's result cannot hold as blocks (the minor of two
    // merged dimensions) needs communication: no view of this version.
    if (projection.hasLeftover() ||
        dropStridedSplits(rule, projection.factorAxes,
                          [&](StringAttr axis) { return groupSize(axis); }))
      continue;
    Layout result = layoutFromFactors(rule, rule.getResultMappings()[0],
                                      projection.factorAxes,
                                      /*isResult=*/true);
    result.unreduced = layout.unreduced;
    sources.push_back({std::move(result), value});
  }
  return sources;
}

Value Partitioner::buildView(OpBuilder &b, Operation *view,
                             const Layout &layout) {
  for (auto &[result, input] : viewSources(view)) {
    if (result != layout)
      continue;
    OperationState state(view->getLoc(), view->getName());
    state.addOperands(input);
    state.addTypes(localType(
        cast<RankedTensorType>(view->getResult(0).getType()), result));
    for (NamedAttribute attr : view->getAttrs())
      if (attr.getName() != PartDialect::getShardingAttrName() &&
          attr.getName() != PartDialect::getShardingOriginAttrName())
        state.addAttribute(attr.getName(), attr.getValue());
    Value built = b.create(state)->getResult(0);
    layouts[built] = result;
    reshards[mapping.lookup(view->getResult(0))].push_back({result, built});
    return built;
  }
  llvm_unreachable("buildView: no version of the operand gives the layout");
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

  // Axes per factor: from a list of layouts offered in turn, each axis on
  // one factor only and only where it divides; axes of pending sums kept
  // pending shard nothing. The result's annotation is offered first, then
  // the operands' own layouts, unless another order (an operand's layout,
  // or a layout a reshard for an earlier op already made of it, first)
  // moves fewer bytes: a backward op then takes the layouts its forward
  // op's values already have instead of resharding them again.
  ShardingAttr annotation;
  if (op->getNumResults() == 1)
    annotation = op->getAttrOfType<ShardingAttr>(shardingName);
  std::optional<Layout> annotated;
  if (annotation)
    annotated = Layout::of(annotation, annotation.getRank());
  auto size = [&](ArrayRef<StringAttr> axes) { return groupSize(axes); };
  auto axisSize = [&](StringAttr axis) { return groupSize(axis); };
  auto chooseFactors = [&](const Layout *first, int64_t firstOperand) {
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
    if (first)
      offer(*first, rule.getOperandMappings()[firstOperand]);
    if (annotated)
      offer(*annotated, rule.getResultMappings()[0]);
    for (auto [operand, m] :
         llvm::zip(op->getOperands(), rule.getOperandMappings()))
      offer(layouts[mapping.lookup(operand)], m);
    dropStridedSplits(rule, factorAxes, axisSize);
    return factorAxes;
  };
  // The versions of each operand: its value, the reshards made of it, and
  // for the result of a view (a reshape or transpose of a version of its
  // own operand: data movement, no communication), that view of each
  // version of its operand: the weight gradient's reshape of an activation
  // the forward pass already gathered is then the reshape of the gathered
  // activation. A view version is built when it is chosen (null value).
  auto versions = [&](Value operand) {
    Value local = mapping.lookup(operand);
    SmallVector<std::pair<Layout, Value>, 4> list = {{layouts[local], local}};
    if (const auto *made = reshards.find(local))
      llvm::append_range(list, *made);
    if (Operation *def = operand.getDefiningOp();
        def && mapping.contains(operand) && isView(def))
        for (auto &[layout, value] : viewSources(def))
          if (llvm::none_of(list, [&](const auto &v) {
                return v.first == layout;
              }))
            list.push_back({layout, Value()});
    return list;
  };
  // The operands' targets under `factorAxes`, and the cheapest version of
  // each (with the bytes that reaching the target from it moves).
  struct Source {
    Value value;
    Layout layout;
    int64_t bytes = 0;
  };
  auto targetsOf = [&](const FactorAxes &factorAxes) {
    SmallVector<Layout, 2> targets;
    for (auto [i, m] : llvm::enumerate(rule.getOperandMappings())) {
      Layout target =
          layoutFromFactors(rule, m, factorAxes, /*isResult=*/false);
      if (operandPending[i])
        target.unreduced = pending;
      targets.push_back(std::move(target));
    }
    return targets;
  };
  auto cheapest = [&](Value operand, const Layout &target) {
    Source best;
    bool found = false;
    auto global = cast<RankedTensorType>(operand.getType());
    int64_t element =
        *getTensorBytes(RankedTensorType::get({}, global.getElementType()));
    for (auto &[layout, value] : versions(operand)) {
      auto shape = layout.localShape(global.getShape(), meshAttr);
      FailureOr<ReshardPlan> plan = planReshard(layout, target, shape, size);
      if (failed(plan))
        continue;
      int64_t bytes = planCost(*plan, element, size);
      if (!found || bytes < best.bytes) {
        best = {value, layout, bytes};
        found = true;
      }
    }
    if (!found) // planReshard's error comes from the reshard below
      best = {mapping.lookup(operand), layouts[mapping.lookup(operand)], 0};
    return best;
  };
  auto costOf = [&](const FactorAxes &factorAxes) {
    int64_t total = 0;
    for (auto [operand, target] :
         llvm::zip(op->getOperands(), targetsOf(factorAxes)))
      total += cheapest(operand, target).bytes;
    // A result laid out otherwise than its users need is resharded for
    // them: a sharding constraint's layout where the users are constraints
    // (a gradient whose reduction is deferred), the result's annotation,
    // completed, otherwise.
    if (annotated) {
      Layout result = layoutFromFactors(rule, rule.getResultMappings()[0],
                                        factorAxes, /*isResult=*/true);
      llvm::append_range(result.unreduced, pending);
      SmallVector<Layout, 2> needs;
      for (Operation *user : op->getResult(0).getUsers()) {
        auto constraint = dyn_cast<ShardingConstraintOp>(user);
        if (!constraint) {
          // Whoever uses a pending sum completes it, unless the program
          // defers that sum to a constraint (every use keeps it pending on
          // the way there): its cost counts here.
          needs.assign(1, *annotated);
          needs.front().unreduced = result.unreduced;
          auto it = deferred.find(op->getResult(0));
          llvm::erase_if(needs.front().unreduced, [&](StringAttr a) {
            if (it == deferred.end() || !llvm::is_contained(it->second, a))
              return true;
            // Users whose other operands are already partitioned keep the
            // sum pending only if those are pending over the axis too.
            for (Operation *user : op->getResult(0).getUsers())
              for (Value other : user->getOperands())
                if (other != op->getResult(0) && mapping.contains(other) &&
                    !isa<ShardingConstraintOp>(user) &&
                    !llvm::is_contained(
                        layouts[mapping.lookup(other)].unreduced, a))
                  return true;
            return false;
          });
          break;
        }
        needs.push_back(Layout::of(constraint.getSharding(),
                                   constraint.getType().getRank()));
      }
      auto global = cast<RankedTensorType>(op->getResult(0).getType());
      auto local = localType(global, result);
      int64_t element =
          *getTensorBytes(RankedTensorType::get({}, global.getElementType()));
      for (Layout &wanted : needs) {
        // A sum the use leaves pending that this result already completed
        // costs nothing more.
        llvm::erase_if(wanted.unreduced, [&](StringAttr a) {
          return !llvm::is_contained(result.unreduced, a);
        });
        if (result == wanted)
          continue;
        FailureOr<ReshardPlan> plan =
            planReshard(result, wanted, local.getShape(), size);
        total += succeeded(plan) ? planCost(*plan, element, size)
                                 : std::numeric_limits<int32_t>::max();
      }
    }
    return total;
  };
  FactorAxes factorAxes = chooseFactors(nullptr, 0);
  if (int64_t cost = costOf(factorAxes); cost > 0) {
    // A contraction (a reduction factor in two float operands: a matmul)
    // is compute-bound: no choice may give a device more of its work than
    // the default (the data-parallel weight gradient is not computed whole
    // on every device to save its reduction).
    bool contraction = false;
    for (int64_t f = 0; f < rule.getNumFactors() && !contraction; ++f) {
      if (rule.getFactorKind(f) != FactorKind::Reduction)
        continue;
      int64_t floats = 0;
      for (auto [operand, m] :
           llvm::zip(op->getOperands(), rule.getOperandMappings()))
        if (isa<FloatType>(
                cast<RankedTensorType>(operand.getType()).getElementType()) &&
            ShardingRule::mapsFactor(m, f))
          ++floats;
      contraction = floats >= 2;
    }
    auto work = [&](const FactorAxes &axes) {
      double w = 1;
      for (int64_t f = 0; f < rule.getNumFactors(); ++f)
        w *= double(rule.getFactorSize(f)) / double(groupSize(axes[f]));
      return w;
    };
    double defaultWork = work(factorAxes);
    auto consider = [&](FactorAxes candidate) {
      // Taking an axis off a major factor leaves the minor ones strided.
      dropStridedSplits(rule, candidate, axisSize);
      if (contraction && work(candidate) > defaultWork)
        return;
      if (int64_t c = costOf(candidate); c < cost) {
        cost = c;
        factorAxes = std::move(candidate);
      }
    };
    // Every factor whole (the operands gathered); the default with one mesh
    // axis taken off every factor (gathered over that axis only); each
    // operand's versions offered first.
    FactorAxes first = factorAxes; // the default, before any candidate
    consider(FactorAxes(rule.getNumFactors()));
    SmallVector<StringAttr> axes;
    for (const auto &list : first)
      for (StringAttr axis : list)
        if (!llvm::is_contained(axes, axis))
          axes.push_back(axis);
    for (StringAttr axis : axes) {
      FactorAxes without = first;
      for (auto &list : without)
        llvm::erase(list, axis);
      consider(std::move(without));
    }
    for (auto [i, operand] : llvm::enumerate(op->getOperands()))
      for (auto &[layout, value] : versions(operand))
        consider(chooseFactors(&layout, i));
  }

  // Operands: exactly the factors' axes, and no pending sums but those kept,
  // each from its cheapest version (a value resharded the same way for an
  // earlier op is reused: the Q, K and V projections share one all-gather
  // of their input).
  SmallVector<Value> operands;
  for (auto [i, operand, target] :
       llvm::enumerate(op->getOperands(), targetsOf(factorAxes))) {
    Source source = cheapest(operand, target);
    if (!source.value) // a view of another version of the view's operand
      source.value = buildView(b, operand.getDefiningOp(), source.layout);
    if (source.layout == target) {
      operands.push_back(source.value);
      continue;
    }
    Value local = mapping.lookup(operand);
    Layout current = source.layout;
    FailureOr<Value> resharded =
        reshard(b, source.value, current, target, op, "operand " + Twine(i),
                sourceOf(operand));
    if (failed(resharded))
      return failure();
    layouts[*resharded] = current;
    if (*resharded != source.value)
      reshards[local].push_back({current, *resharded});
    operands.push_back(*resharded);
  }

  // The op on local shapes; its results have the factors' axes, and are
  // pending sums over the axes of sharded reduction factors.
  SmallVector<Type> resultTypes;
  SmallVector<Layout, 2> resultLayouts;
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

  // The axes over which a value's pending sum may stay pending until a
  // constraint completes it (a gradient's data-parallel reduction, done once
  // where the gradient is constrained): axes its annotation leaves pending
  // that every use keeps pending too, a constraint or an op that keeps the
  // pending sum (with its other operands as their annotations say) into a
  // result that defers the axis as well.

  for (Operation &op : llvm::reverse(oldBody.without_terminator())) {
    if (op.getNumResults() != 1 || op.getResult(0).use_empty())
      continue;
    SmallVector<StringAttr> axes(meshAttr.getAxisNames());
    for (OpOperand &use : op.getResult(0).getUses()) {
      Operation *user = use.getOwner();
      if (isa<ShardingConstraintOp>(user))
        continue;
      auto ruled = dyn_cast<ShardingRuleOpInterface>(user);
      if (!ruled || user->getNumResults() != 1) {
        axes.clear();
        break;
      }
      auto downstream = deferred.find(user->getResult(0));
      llvm::erase_if(axes, [&](StringAttr axis) {
        if (downstream == deferred.end() ||
            !llvm::is_contained(downstream->second, axis))
          return true;
        // The other operands are taken to be pending too (gradients
        // summed); where they are not, partitionOp sees it (their layouts
        // are known by then).
        SmallVector<bool> pending(user->getNumOperands(), true);
        SmallVector<bool> kept = ruled.keepsPendingSum(pending);
        return kept.size() <= use.getOperandNumber() ||
               !kept[use.getOperandNumber()];
      });
    }
    if (!axes.empty())
      deferred[op.getResult(0)] = std::move(axes);
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
  using PartPartitionPassBase::PartPartitionPassBase;
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
      SmallVector<StringAttr> accumulateOnly;
      SmallVector<StringRef> names;
      StringRef(accumulateAxes).split(names, ',', -1, /*KeepEmpty=*/false);
      for (StringRef axis : names)
        accumulateOnly.push_back(StringAttr::get(&getContext(), axis.trim()));
      Partitioner partitioner(function, lookupMesh(function, meshName),
                              accumulateOnly, testDropMatmulReduction);
      if (failed(partitioner.run()))
        return signalPassFailure();
    }
  }
};
} // namespace
