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

class Partitioner {
public:
  Partitioner(func::FuncOp function, MeshOp mesh)
      : function(function), mesh(mesh), meshAttr(mesh.getMesh()),
        meshRef(FlatSymbolRefAttr::get(mesh.getSymNameAttr())) {}

  LogicalResult run();

private:
  int64_t groupSize(ArrayRef<StringAttr> axes) {
    return meshAttr.getGroupSize(axes);
  }
  RankedTensorType localType(RankedTensorType global, const Layout &l) {
    SmallVector<int64_t> shape(global.getShape());
    for (auto [d, axes] : llvm::enumerate(l.dims))
      shape[d] /= groupSize(axes);
    return RankedTensorType::get(shape, global.getElementType());
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
  LogicalResult partitionSplitLookup(OpBuilder &b, GatherOp gather);
  LogicalResult partitionSplitLoss(OpBuilder &b, SoftmaxCrossEntropyOp loss);
  LogicalResult partitionSplitSoftmax(OpBuilder &b, SoftmaxOp softmax);

  func::FuncOp function;
  MeshOp mesh;
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

/// A lookup in a table split along the looked-up dimension (Megatron's
/// vocabulary-parallel embedding): each device looks up the indices that fall
/// in its rows, writes zeros for the others, and the result is a pending sum
/// over the table's axes. No device needs the whole table.
LogicalResult Partitioner::partitionSplitLookup(OpBuilder &b, GatherOp gather) {
  MLIRContext *ctx = function.getContext();
  Location loc = gather.getLoc();
  int64_t axis = gather.getAxis();
  Value data = mapping.lookup(gather.getData());
  Layout dataLayout = layouts[data];
  SmallVector<StringAttr> split = dataLayout.dims[axis];

  // The indices address the whole table: no axis of the table's split may
  // split them too, and they must not be pending sums.
  Value indices = mapping.lookup(gather.getIndices());
  Layout current = layouts[indices];
  Layout target = current;
  target.unreduced.clear();
  for (auto &axes : target.dims) {
    auto it = llvm::find_if(
        axes, [&](StringAttr a) { return llvm::is_contained(split, a); });
    axes.erase(it, axes.end());
  }
  FailureOr<Value> resharded =
      reshard(b, indices, current, target, gather, "operand 1",
              sourceOf(gather.getIndices()));
  if (failed(resharded))
    return failure();
  indices = *resharded;
  layouts[indices] = current;

  auto dataType = cast<RankedTensorType>(data.getType());
  auto indexType = cast<RankedTensorType>(indices.getType());
  Type indexElt = indexType.getElementType();
  auto scalar = [&](int64_t v) {
    auto type = RankedTensorType::get({}, indexElt);
    return ConstantOp::create(
               b, loc,
               DenseElementsAttr::get(type, b.getIntegerAttr(indexElt, v)))
        .getResult();
  };
  int64_t rows = dataType.getDimSize(axis);
  StringAttr origin = StringAttr::get(
      ctx,
      "vocabulary-parallel lookup of part.gather" +
          (isa<FileLineColLoc>(loc)
               ? " at " + cast<FileLineColLoc>(loc).getFilename().str() + ":" +
                     std::to_string(cast<FileLineColLoc>(loc).getLine())
               : std::string()));
  // offset = (this device's index along the split) * rows per device.
  Value index =
      AxisIndexOp::create(b, loc, RankedTensorType::get({}, b.getI32Type()),
                          meshRef, axesAttr(split));
  index.getDefiningOp()->setAttr(PartDialect::getOriginAttrName(), origin);
  if (!indexElt.isInteger(32))
    index = CastOp::create(b, loc, RankedTensorType::get({}, indexElt), index);
  Value offset = MulOp::create(b, loc, index, scalar(rows));
  // local = indices - offset; mask = 1 where 0 <= local < rows, else 0.
  Value local = SubOp::create(b, loc, indices, offset);
  Value zero = scalar(0), one = scalar(1);
  Value low = MinOp::create(
      b, loc, MaxOp::create(b, loc, AddOp::create(b, loc, local, one), zero),
      one);
  Value high = MinOp::create(
      b, loc,
      MaxOp::create(b, loc, SubOp::create(b, loc, scalar(rows), local), zero),
      one);
  Value mask = MulOp::create(b, loc, low, high);
  Value safe = MulOp::create(b, loc, local, mask);
  Value looked = GatherOp::create(b, loc, data, safe, uint64_t(axis));
  // Zero the rows this device does not hold: the mask, shaped to broadcast
  // over the gathered features.
  auto lookedType = cast<RankedTensorType>(looked.getType());
  SmallVector<int64_t> maskShape(indexType.getShape());
  maskShape.append(dataType.getRank() - axis - 1, 1);
  Value maskF = CastOp::create(
      b, loc,
      RankedTensorType::get(indexType.getShape(), lookedType.getElementType()),
      mask);
  maskF = ReshapeOp::create(
      b, loc, RankedTensorType::get(maskShape, lookedType.getElementType()),
      maskF);
  Value result = MulOp::create(b, loc, looked, maskF);

  Layout out;
  out.dims.assign(dataLayout.dims.begin(), dataLayout.dims.begin() + axis);
  out.dims.append(target.dims.begin(), target.dims.end());
  out.dims.append(dataLayout.dims.begin() + axis + 1, dataLayout.dims.end());
  out.unreduced = split;
  mapping.map(gather.getResult(), result);
  layouts[result] = out;
  return success();
}

/// Cross-entropy over logits split along the classes (Megatron's
/// vocabulary-parallel loss): the log-sum-exp is assembled from each device's
/// maximum and sum of exponentials (an all-reduce of max, then of sum, over
/// positions only), and the label's logit from the one device holding it;
/// no device gathers the logits.
LogicalResult Partitioner::partitionSplitLoss(OpBuilder &b,
                                              SoftmaxCrossEntropyOp loss) {
  MLIRContext *ctx = function.getContext();
  Location loc = loss.getLoc();
  Value logits = mapping.lookup(loss.getLogits());
  Layout logitsLayout = layouts[logits];
  SmallVector<StringAttr> split = logitsLayout.dims.back();
  auto logitsType = cast<RankedTensorType>(logits.getType());
  int64_t rank = logitsType.getRank();
  Type floatElt = logitsType.getElementType();

  // Labels split like the logits' positions, whole otherwise.
  Layout positions;
  positions.dims.assign(logitsLayout.dims.begin(), logitsLayout.dims.end() - 1);
  Value labels = mapping.lookup(loss.getLabels());
  Layout current = layouts[labels];
  FailureOr<Value> resharded = reshard(b, labels, current, positions, loss,
                                       "operand 1", sourceOf(loss.getLabels()));
  if (failed(resharded))
    return failure();
  labels = *resharded;
  layouts[labels] = current;
  auto labelType = cast<RankedTensorType>(labels.getType());
  Type indexElt = labelType.getElementType();

  std::string where;
  if (auto file = dyn_cast<FileLineColLoc>(loc))
    where = " at " + file.getFilename().str() + ":" +
            std::to_string(file.getLine());
  StringAttr origin = StringAttr::get(
      ctx, "vocabulary-parallel loss of part.softmax_cross_entropy" + where);
  auto tag = [&](Value v) {
    v.getDefiningOp()->setAttr(PartDialect::getOriginAttrName(), origin);
    return v;
  };
  auto intScalar = [&](int64_t v) {
    auto type = RankedTensorType::get({}, indexElt);
    return ConstantOp::create(
               b, loc,
               DenseElementsAttr::get(type, b.getIntegerAttr(indexElt, v)))
        .getResult();
  };
  auto reduceLast = [&](Value v, bool max) -> Value {
    SmallVector<int64_t> dims = {rank - 1};
    if (max)
      return ReduceMaxOp::create(b, loc, v, dims, /*keep_dims=*/true);
    return ReduceSumOp::create(b, loc, v, dims, /*keep_dims=*/true);
  };

  // log-sum-exp over all classes: m = max over devices of local maxima;
  // lse = m + log(sum over devices of local sums of exp(x - m)).
  Value m = tag(AllReduceOp::create(
      b, loc, reduceLast(logits, true), meshRef, axesAttr(split),
      ReductionKindAttr::get(ctx, ReductionKind::Max)));
  Value e = ExpOp::create(b, loc, SubOp::create(b, loc, logits, m));
  Value s = tag(AllReduceOp::create(
      b, loc, reduceLast(e, false), meshRef, axesAttr(split),
      ReductionKindAttr::get(ctx, ReductionKind::Sum)));
  Value lse = AddOp::create(b, loc, LogOp::create(b, loc, s), m);

  // The label's logit: one-hot of (label - offset) over this device's
  // classes, built with integer arithmetic (|class - label| capped at 1).
  int64_t classes = logitsType.getShape().back();
  Value index =
      AxisIndexOp::create(b, loc, RankedTensorType::get({}, b.getI32Type()),
                          meshRef, axesAttr(split));
  tag(index);
  if (!indexElt.isInteger(32))
    index = CastOp::create(b, loc, RankedTensorType::get({}, indexElt), index);
  Value offset = MulOp::create(b, loc, index, intScalar(classes));
  Value local = SubOp::create(b, loc, labels, offset);
  SmallVector<int64_t> column(labelType.getShape());
  column.push_back(1);
  local =
      ReshapeOp::create(b, loc, RankedTensorType::get(column, indexElt), local);
  SmallVector<APInt> iotaValues;
  unsigned bits = indexElt.getIntOrFloatBitWidth();
  for (int64_t c = 0; c < classes; ++c)
    iotaValues.push_back(APInt(bits, c));
  Value iota = ConstantOp::create(
      b, loc,
      DenseElementsAttr::get(RankedTensorType::get({classes}, indexElt),
                             iotaValues));
  Value diff = SubOp::create(b, loc, iota, local);
  Value zero = intScalar(0), one = intScalar(1);
  Value distance = MinOp::create(
      b, loc, MaxOp::create(b, loc, diff, SubOp::create(b, loc, zero, diff)),
      one);
  Value hot = SubOp::create(b, loc, one, distance);
  Value hotF = CastOp::create(
      b, loc,
      RankedTensorType::get(cast<RankedTensorType>(hot.getType()).getShape(),
                            floatElt),
      hot);
  Value picked = tag(AllReduceOp::create(
      b, loc, reduceLast(MulOp::create(b, loc, logits, hotF), false), meshRef,
      axesAttr(split), ReductionKindAttr::get(ctx, ReductionKind::Sum)));

  // Per-position loss [positions..., 1] -> [positions...].
  Value perPosition = SubOp::create(b, loc, lse, picked);
  perPosition = ReshapeOp::create(
      b, loc, RankedTensorType::get(labelType.getShape(), floatElt),
      perPosition);

  Layout out;
  Value result = perPosition;
  if (loss.getReduction() == LossReduction::None) {
    out = positions;
  } else {
    SmallVector<int64_t> all;
    for (int64_t d = 0; d < labelType.getRank(); ++d)
      all.push_back(d);
    SmallVector<StringAttr> reduced;
    for (const auto &axes : positions.dims)
      llvm::append_range(reduced, axes);
    if (all.empty()) {
      result = perPosition;
    } else if (loss.getReduction() == LossReduction::Sum) {
      result = ReduceSumOp::create(b, loc, perPosition, all, false);
    } else {
      result = ReduceMeanOp::create(b, loc, perPosition, all, false);
      if (!reduced.empty()) {
        // Each device's mean of its positions, scaled to its share.
        auto scale = ConstantOp::create(
            b, loc,
            DenseElementsAttr::get(
                RankedTensorType::get({}, floatElt),
                FloatAttr::get(floatElt, 1.0 / groupSize(reduced))));
        result = MulOp::create(b, loc, result, scale.getResult());
      }
    }
    out.dims.clear();
    out.unreduced = reduced;
  }
  mapping.map(loss.getResult(), result);
  layouts[result] = out;
  return success();
}

/// Softmax along a split dimension (the backward of a vocabulary-parallel
/// loss): each device normalises its block with the maximum and the sum of
/// exponentials over all blocks, two all-reduces of one value per row; no
/// device gathers the row.
LogicalResult Partitioner::partitionSplitSoftmax(OpBuilder &b,
                                                 SoftmaxOp softmax) {
  MLIRContext *ctx = function.getContext();
  Location loc = softmax.getLoc();
  Value input = mapping.lookup(softmax.getInput());
  Layout layout = layouts[input];
  int64_t dim = softmax.getDim();
  SmallVector<StringAttr> split = layout.dims[dim];
  std::string where;
  if (auto file = dyn_cast<FileLineColLoc>(loc))
    where = " at " + file.getFilename().str() + ":" +
            std::to_string(file.getLine());
  StringAttr origin =
      StringAttr::get(ctx, "softmax over a split dimension" + where);
  auto tag = [&](Value v) {
    v.getDefiningOp()->setAttr(PartDialect::getOriginAttrName(), origin);
    return v;
  };
  SmallVector<int64_t> dims = {dim};
  Value m = tag(AllReduceOp::create(
      b, loc, ReduceMaxOp::create(b, loc, input, dims, /*keep_dims=*/true),
      meshRef, axesAttr(split),
      ReductionKindAttr::get(ctx, ReductionKind::Max)));
  Value e = ExpOp::create(b, loc, SubOp::create(b, loc, input, m));
  Value sum = tag(AllReduceOp::create(
      b, loc, ReduceSumOp::create(b, loc, e, dims, /*keep_dims=*/true),
      meshRef, axesAttr(split),
      ReductionKindAttr::get(ctx, ReductionKind::Sum)));
  Value result = DivOp::create(b, loc, e, sum);
  mapping.map(softmax.getResult(), result);
  layouts[result] = layout;
  return success();
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
  if (auto constraint = dyn_cast<ShardingConstraintOp>(op)) {
    // No op of its own: the operand is resharded to the constraint.
    Value local = mapping.lookup(constraint.getInput());
    Layout current = layouts[local];
    Layout target =
        Layout::of(constraint.getSharding(), constraint.getType().getRank());
    FailureOr<Value> r =
        reshard(b, local, current, target, op, "the constraint",
                sourceOf(constraint.getInput()));
    if (failed(r))
      return failure();
    layouts[*r] = current;
    mapping.map(constraint.getResult(), *r);
    return success();
  }
  if (auto constant = dyn_cast<ConstantOp>(op)) {
    // The whole value on every device; consumers slice what they need.
    Operation *copy = b.clone(*op);
    copy->removeAttr(shardingName);
    copy->removeAttr(PartDialect::getShardingOriginAttrName());
    mapping.map(op->getResult(0), copy->getResult(0));
    layouts[copy->getResult(0)] = Layout::of({}, constant.getType().getRank());
    return success();
  }
  if (auto loss = dyn_cast<SoftmaxCrossEntropyOp>(op)) {
    Layout &logits = layouts[mapping.lookup(loss.getLogits())];
    if (!logits.dims.back().empty() && logits.unreduced.empty())
      return partitionSplitLoss(b, loss);
  }
  if (auto softmax = dyn_cast<SoftmaxOp>(op)) {
    // Unless the result wants the axes on another dimension (then one
    // all_to_all moves them there before a local softmax), a split of the
    // softmax dimension stays: two all-reduces of one value per row instead
    // of gathering the rows.
    Layout &input = layouts[mapping.lookup(softmax.getInput())];
    ArrayRef<StringAttr> split = input.dims[softmax.getDim()];
    auto wanted = softmax->getAttrOfType<ShardingAttr>(shardingName);
    bool movesElsewhere = false;
    for (int64_t d = 0; wanted && d < wanted.getRank(); ++d)
      if (d != int64_t(softmax.getDim()))
        for (StringAttr axis : wanted.getDimAxes(d))
          movesElsewhere |= llvm::is_contained(split, axis);
    if (!split.empty() && input.unreduced.empty() && !movesElsewhere)
      return partitionSplitSoftmax(b, softmax);
  }
  if (auto gather = dyn_cast<GatherOp>(op)) {
    Layout &data = layouts[mapping.lookup(gather.getData())];
    if (!data.dims[gather.getAxis()].empty() && data.unreduced.empty())
      return partitionSplitLookup(b, gather);
  }

  auto ruled = dyn_cast<ShardingRuleOpInterface>(op);
  if (!ruled)
    return op->emitOpError() << "has no sharding rule, so it cannot be "
                                "partitioned";
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
  for (NamedAttribute attr : op->getAttrs())
    if (attr.getName() != shardingName &&
        attr.getName() != PartDialect::getShardingOriginAttrName())
      state.addAttribute(attr.getName(), attr.getValue());
  Operation *local = b.create(state);

  // A mean over a split dimension: each device's mean over its block, times
  // the block's share, is its part of the sum that makes the global mean.
  bool isMean =
      isa<ReduceMeanOp>(op) ||
      (isa<SoftmaxCrossEntropyOp>(op) &&
       cast<SoftmaxCrossEntropyOp>(op).getReduction() == LossReduction::Mean);
  if (isMean && !reduced.empty()) {
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
