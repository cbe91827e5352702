//===- Partitioning.cpp - ops that partition themselves -------------------===//
//
// ShardingRuleOpInterface::partition for the ops whose per-device form for
// some layouts is better than resharding to their rule (PartitionContext.h):
// Megatron's vocabulary-parallel embedding (a gather from a table split
// along the looked-up rows) and loss (cross-entropy over split classes), a
// softmax along a split dimension (the loss's backward); and the two ops
// that are not computations: a sharding constraint (its operand resharded)
// and a constant (whole on every device, consumers slice what they need).
//
//===----------------------------------------------------------------------===//

#include "partition/Dialect/Part/IR/PartOps.h"

using namespace mlir;
using namespace partition::part;

namespace {
ArrayAttr axesAttr(MLIRContext *ctx, ArrayRef<StringAttr> axes) {
  return ArrayAttr::get(ctx, SmallVector<Attribute>(axes.begin(), axes.end()));
}
} // namespace

FailureOr<bool> ShardingConstraintOp::partition(OpBuilder &b,
                                                PartitionContext &context) {
  Value local = context.lookup(getInput());
  FailureOr<Value> r = context.reshard(
      b, local, Layout::of(getSharding(), getType().getRank()), *this,
      /*operand=*/0, "the constraint");
  if (failed(r))
    return failure();
  context.map(getResult(), *r, context.layoutOf(*r));
  return true;
}

FailureOr<bool> ConstantOp::partition(OpBuilder &b,
                                      PartitionContext &context) {
  Operation *copy = b.clone(*getOperation());
  copy->removeAttr(PartDialect::getShardingAttrName());
  copy->removeAttr(PartDialect::getShardingOriginAttrName());
  context.map(getResult(), copy->getResult(0),
              Layout::replicated(getType().getRank()));
  return true;
}

/// A lookup in a table split along the looked-up dimension (Megatron's
/// vocabulary-parallel embedding): each device looks up the indices that fall
/// in its rows, writes zeros for the others, and the result is a pending sum
/// over the table's axes. No device needs the whole table.
FailureOr<bool> GatherOp::partition(OpBuilder &b, PartitionContext &context) {
  GatherOp gather = *this;
  int64_t axis = gather.getAxis();
  Value data = context.lookup(gather.getData());
  Layout dataLayout = context.layoutOf(data);
  SmallVector<StringAttr> split = dataLayout.dims[axis];
  if (split.empty() || !dataLayout.unreduced.empty())
    return false; // partitioned by its rule
  MLIRContext *ctx = getContext();
  Location loc = gather.getLoc();
  FlatSymbolRefAttr meshRef = context.mesh();

  // The indices address the whole table: no axis of the table's split may
  // split them too, and they must not be pending sums.
  Value indices = context.lookup(gather.getIndices());
  Layout target = context.layoutOf(indices);
  target.unreduced.clear();
  for (auto &axes : target.dims) {
    auto it = llvm::find_if(
        axes, [&](StringAttr a) { return llvm::is_contained(split, a); });
    axes.erase(it, axes.end());
  }
  FailureOr<Value> resharded =
      context.reshard(b, indices, target, gather, /*operand=*/1);
  if (failed(resharded))
    return failure();
  indices = *resharded;

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
                          meshRef, axesAttr(ctx, split));
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
  context.map(gather.getResult(), result, out);
  return true;
}

/// Cross-entropy over logits split along the classes (Megatron's
/// vocabulary-parallel loss): the log-sum-exp is assembled from each device's
/// maximum and sum of exponentials (an all-reduce of max, then of sum, over
/// positions only), and the label's logit from the one device holding it;
/// no device gathers the logits.
FailureOr<bool> SoftmaxCrossEntropyOp::partition(OpBuilder &b,
                                                 PartitionContext &context) {
  SoftmaxCrossEntropyOp loss = *this;
  Value logits = context.lookup(loss.getLogits());
  Layout logitsLayout = context.layoutOf(logits);
  SmallVector<StringAttr> split = logitsLayout.dims.back();
  // A split over axes of one device is no split: the fused loss, as the
  // same plan without those axes runs it.
  if (split.empty() || context.groupSize(split) == 1 ||
      !logitsLayout.unreduced.empty())
    return false; // partitioned by its rule
  MLIRContext *ctx = getContext();
  Location loc = loss.getLoc();
  FlatSymbolRefAttr meshRef = context.mesh();
  auto logitsType = cast<RankedTensorType>(logits.getType());
  int64_t rank = logitsType.getRank();
  Type floatElt = logitsType.getElementType();

  // Labels split like the logits' positions, whole otherwise.
  Layout positions;
  positions.dims.assign(logitsLayout.dims.begin(), logitsLayout.dims.end() - 1);
  Value labels = context.lookup(loss.getLabels());
  FailureOr<Value> resharded =
      context.reshard(b, labels, positions, loss, /*operand=*/1);
  if (failed(resharded))
    return failure();
  labels = *resharded;
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
      b, loc, reduceLast(logits, true), meshRef, axesAttr(ctx, split),
      ReductionKindAttr::get(ctx, ReductionKind::Max)));
  Value e = ExpOp::create(b, loc, SubOp::create(b, loc, logits, m));
  Value s = tag(AllReduceOp::create(
      b, loc, reduceLast(e, false), meshRef, axesAttr(ctx, split),
      ReductionKindAttr::get(ctx, ReductionKind::Sum)));
  Value lse = AddOp::create(b, loc, LogOp::create(b, loc, s), m);

  // The label's logit: one-hot of (label - offset) over this device's
  // classes, built with integer arithmetic (|class - label| capped at 1).
  int64_t classes = logitsType.getShape().back();
  Value index =
      AxisIndexOp::create(b, loc, RankedTensorType::get({}, b.getI32Type()),
                          meshRef, axesAttr(ctx, split));
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
      axesAttr(ctx, split), ReductionKindAttr::get(ctx, ReductionKind::Sum)));

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
                FloatAttr::get(floatElt, 1.0 / context.groupSize(reduced))));
        result = MulOp::create(b, loc, result, scale.getResult());
      }
    }
    out.dims.clear();
    out.unreduced = reduced;
  }
  context.map(loss.getResult(), result, out);
  return true;
}

/// Softmax along a split dimension (the backward of a vocabulary-parallel
/// loss): each device normalises its block with the maximum and the sum of
/// exponentials over all blocks, two all-reduces of one value per row; no
/// device gathers the row.
FailureOr<bool> SoftmaxOp::partition(OpBuilder &b, PartitionContext &context) {
  SoftmaxOp softmax = *this;
  Value input = context.lookup(softmax.getInput());
  Layout layout = context.layoutOf(input);
  int64_t dim = softmax.getDim();
  SmallVector<StringAttr> split = layout.dims[dim];
  // Unless the result wants the axes on another dimension (then one
  // all_to_all moves them there before a local softmax, by the rule), the
  // split stays.
  auto wanted =
      softmax->getAttrOfType<ShardingAttr>(PartDialect::getShardingAttrName());
  bool movesElsewhere = false;
  for (int64_t d = 0; wanted && d < wanted.getRank(); ++d)
    if (d != dim)
      for (StringAttr axis : wanted.getDimAxes(d))
        movesElsewhere |= llvm::is_contained(split, axis);
  if (split.empty() || context.groupSize(split) == 1 ||
      !layout.unreduced.empty() || movesElsewhere)
    return false; // partitioned by its rule
  MLIRContext *ctx = getContext();
  Location loc = softmax.getLoc();
  FlatSymbolRefAttr meshRef = context.mesh();
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
      meshRef, axesAttr(ctx, split),
      ReductionKindAttr::get(ctx, ReductionKind::Max)));
  Value e = ExpOp::create(b, loc, SubOp::create(b, loc, input, m));
  Value sum = tag(AllReduceOp::create(
      b, loc, ReduceSumOp::create(b, loc, e, dims, /*keep_dims=*/true),
      meshRef, axesAttr(ctx, split),
      ReductionKindAttr::get(ctx, ReductionKind::Sum)));
  Value result = DivOp::create(b, loc, e, sum);
  context.map(softmax.getResult(), result, layout);
  return true;
}


//===----------------------------------------------------------------------===//
// Attention: context parallelism's all-to-all form
//===----------------------------------------------------------------------===//

namespace {
/// Context parallelism's all-to-all form (DeepSpeed-Ulysses) of a causal
/// attention or attention_grad tagged part.context_heads: its [B, H, S, D]
/// operands, the sequence split over the axis, exchanged with all-to-alls
/// so that each device holds the whole sequence of 1 / n of the heads; the
/// op runs there with the whole positions; its results are exchanged back.
class HeadsForSequence {
public:
  HeadsForSequence(Operation *op, StringAttr axis, PartitionContext &context)
      : op(op), axis(axis), context(context),
        devices(context.groupSize({axis})) {}

  /// The query's local heads must divide by the devices.
  LogicalResult checkHeads(Value query) const {
    int64_t heads = cast<RankedTensorType>(query.getType()).getDimSize(1);
    if (heads % devices == 0)
      return success();
    return op->emitError()
           << "context parallelism's all-to-all over \"" << axis.getValue()
           << "\" (" << devices << " devices) gives each device the whole "
           << "sequence of a share of the heads, but " << devices
           << " does not divide the " << heads
           << " query heads a device holds; attention=all-gather takes "
              "any number of heads";
  }

  /// `local` (operand `operand`) with the axis moved from its sequence to
  /// its heads, pending sums completed.
  FailureOr<Value> toHeads(OpBuilder &b, Value local, unsigned operand) {
    Layout target = context.layoutOf(local);
    target.unreduced.clear();
    llvm::erase(target.dims[2], axis);
    target.dims[1].push_back(axis);
    return context.reshard(
        b, local, target, op, operand,
        "context parallelism (all-to-all): the whole sequence of a share of "
        "the heads, operand " +
            std::to_string(operand));
  }

  /// A key or value (operand `operand`) with `group` times its heads
  /// (grouped-query attention with fewer key/value heads than devices),
  /// then moved to its heads.
  FailureOr<Value> repeatedToHeads(OpBuilder &b, Value local, int64_t group,
                                   unsigned operand) {
    if (group > 1) {
      auto type = cast<RankedTensorType>(local.getType());
      ArrayRef<int64_t> s = type.getShape();
      Type elt = type.getElementType();
      Location loc = op->getLoc();
      Layout layout = context.layoutOf(local);
      Value one = ReshapeOp::create(
          b, loc, RankedTensorType::get({s[0], s[1], 1, s[2], s[3]}, elt),
          local);
      Value wide = BroadcastOp::create(
          b, loc, RankedTensorType::get({s[0], s[1], group, s[2], s[3]}, elt),
          one);
      local = ReshapeOp::create(
          b, loc, RankedTensorType::get({s[0], s[1] * group, s[2], s[3]}, elt),
          wide);
      context.setLayout(local, layout);
    }
    return toHeads(b, local, operand);
  }

  /// The positions (operand `operand`), whole on every device.
  FailureOr<Value> whole(OpBuilder &b, Value global, unsigned operand) {
    Value local = context.lookup(global);
    return context.reshard(b, local, Layout::replicated(1), op, operand);
  }

  /// `local`, a result laid out as `layout` (heads split over the axis,
  /// the sequence whole), with the sequence split over `sequence` again.
  FailureOr<Value> toSequence(OpBuilder &b, Value local, Layout layout,
                              ArrayRef<StringAttr> sequence) {
    context.setLayout(local, layout);
    llvm::erase(layout.dims[1], axis);
    layout.dims[2].assign(sequence.begin(), sequence.end());
    return context.reshard(b, local, layout, op, 0,
                           "context parallelism (all-to-all): the sequence "
                           "back from the heads, the result");
  }

  /// The layout of a local result [B, H, S, X] of the op run on `heads`
  /// (an operand moved to its heads), its last dimension laid out as
  /// `last`'s.
  Layout resultLayout(Value heads, Value last) {
    Layout l = context.layoutOf(heads);
    l.dims[3] = context.layoutOf(last).dims[3];
    return l;
  }

  int64_t getDevices() const { return devices; }

private:
  Operation *op;
  StringAttr axis;
  PartitionContext &context;
  int64_t devices;
};

/// The all-to-all form's axis when `op` asks for it and its queries are
/// split over it; null otherwise (the op is partitioned by its rule).
StringAttr headsAxis(Operation *op, Value query, Value keyPositions,
                     PartitionContext &context) {
  auto axis =
      op->getAttrOfType<StringAttr>(PartDialect::getContextHeadsAttrName());
  if (!axis || !keyPositions)
    return {};
  const Layout &l = context.layoutOf(context.lookup(query));
  return llvm::is_contained(l.dims[2], axis) ? axis : StringAttr();
}

/// The query, key and value of an attention moved to their heads (keys and
/// values repeated where the devices do not divide their heads).
FailureOr<SmallVector<Value>> attentionInputsToHeads(OpBuilder &b,
                                                     HeadsForSequence &form,
                                                     Value q, Value k,
                                                     Value v) {
  if (failed(form.checkHeads(q)))
    return failure();
  int64_t hq = cast<RankedTensorType>(q.getType()).getDimSize(1);
  int64_t hk = cast<RankedTensorType>(k.getType()).getDimSize(1);
  int64_t group = hk % form.getDevices() ? hq / hk : 1;
  FailureOr<Value> qh = form.toHeads(b, q, 0);
  FailureOr<Value> kh = form.repeatedToHeads(b, k, group, 1);
  FailureOr<Value> vh = form.repeatedToHeads(b, v, group, 2);
  if (failed(qh) || failed(kh) || failed(vh))
    return failure();
  return SmallVector<Value>{*qh, *kh, *vh};
}

/// The local type of a result [B, H, S, X]: `heads`'s shape with X last.
RankedTensorType headsType(Value heads, Value last) {
  SmallVector<int64_t> shape(
      cast<RankedTensorType>(heads.getType()).getShape());
  shape[3] = cast<RankedTensorType>(last.getType()).getShape()[3];
  return RankedTensorType::get(
      shape, cast<RankedTensorType>(heads.getType()).getElementType());
}
} // namespace

FailureOr<bool> AttentionOp::partition(OpBuilder &b,
                                       PartitionContext &context) {
  StringAttr axis =
      headsAxis(*this, getQuery(), getKeyPositions(), context);
  if (!axis)
    return false;
  HeadsForSequence form(*this, axis, context);
  Value q = context.lookup(getQuery());
  SmallVector<StringAttr> sequence = context.layoutOf(q).dims[2];
  FailureOr<SmallVector<Value>> in = attentionInputsToHeads(
      b, form, q, context.lookup(getKey()), context.lookup(getValue()));
  FailureOr<Value> positions = form.whole(b, getKeyPositions(), 4);
  if (failed(in) || failed(positions))
    return failure();
  auto local = AttentionOp::create(
      b, getLoc(), headsType((*in)[0], (*in)[2]), (*in)[0], (*in)[1],
      (*in)[2], *positions, *positions, getCausal(), getScaleAttr(),
      getWindowAttr());
  if (Attribute layer = (*this)->getAttr(PartDialect::getLayerAttrName()))
    local->setAttr(PartDialect::getLayerAttrName(), layer);
  FailureOr<Value> back = form.toSequence(
      b, local, form.resultLayout((*in)[0], (*in)[2]), sequence);
  if (failed(back))
    return failure();
  context.map(getResult(), *back, context.layoutOf(*back));
  return true;
}

/// The all-to-all form of attention's gradients.
static FailureOr<bool> partitionGradHeads(AttentionGradOp op, OpBuilder &b,
                                          PartitionContext &context) {
  StringAttr axis =
      headsAxis(op, op.getQuery(), op.getKeyPositions(), context);
  if (!axis)
    return false;
  HeadsForSequence form(op, axis, context);
  Value q = context.lookup(op.getQuery()), k = context.lookup(op.getKey());
  SmallVector<StringAttr> querySequence = context.layoutOf(q).dims[2];
  SmallVector<StringAttr> keySequence = context.layoutOf(k).dims[2];
  FailureOr<SmallVector<Value>> in =
      attentionInputsToHeads(b, form, q, k, context.lookup(op.getValue()));
  FailureOr<Value> dy = form.toHeads(b, context.lookup(op.getResultGrad()), 3);
  FailureOr<Value> positions = form.whole(b, op.getKeyPositions(), 5);
  if (failed(in) || failed(dy) || failed(positions))
    return failure();
  auto local = AttentionGradOp::create(
      b, op.getLoc(), (*in)[0], (*in)[1], (*in)[2], *dy, *positions, *positions,
      /*lse=*/Value(), /*delta=*/Value(), op.getCausal(), op.getScaleAttr(),
      op.getWindowAttr());
  if (Attribute layer = op->getAttr(PartDialect::getLayerAttrName()))
    local->setAttr(PartDialect::getLayerAttrName(), layer);
  // The key's and value's gradients are per query head, as the query's.
  Value grads[] = {local.getQueryGrad(), local.getKeyGrad(),
                   local.getValueGrad()};
  Value lasts[] = {(*in)[0], (*in)[1], (*in)[2]};
  for (auto [i, grad] : llvm::enumerate(grads)) {
    FailureOr<Value> back =
        form.toSequence(b, grad, form.resultLayout((*in)[0], lasts[i]),
                        i == 0 ? querySequence : keySequence);
    if (failed(back))
      return failure();
    context.map(op.getResult(i), *back, context.layoutOf(*back));
  }
  return true;
}

//===----------------------------------------------------------------------===//
// Attention: context parallelism's ring form
//===----------------------------------------------------------------------===//

namespace {
/// Context parallelism's ring form of a part.attention_block or a
/// part.attention_grad (with lse) tagged part.context_ring: the sequence
/// split over the axis, each device keeps its queries and passes the blocks
/// of keys and values (with their positions) to the next device of the
/// ring, computing one block per step. Each step's permutes are issued
/// before its block's compute, which does not read them, so the transfer
/// of the next block runs beside it.
class Ring {
public:
  Ring(Operation *op, StringAttr axis, PartitionContext &context)
      : op(op), axis(axis), context(context),
        devices(context.groupSize({axis})), loc(op->getLoc()) {}

  int64_t size() const { return devices; }

  /// `global` (operand `operand`) laid out as `dims`, no pending sums.
  FailureOr<Value> laidOut(OpBuilder &b, Value global, unsigned operand,
                           ArrayRef<SmallVector<StringAttr>> dims) {
    Layout target;
    target.dims.assign(dims.begin(), dims.end());
    return context.reshard(b, context.lookup(global), target, op, operand);
  }

  /// `local` sent to the next device of the ring (`what`, for the reason
  /// --part-explain gives), its layout `layout`.
  Value next(OpBuilder &b, Value local, const Layout &layout,
             const Twine &what) {
    SmallVector<int64_t> pairs;
    for (int64_t i = 0; i < devices; ++i) {
      pairs.push_back(i);
      pairs.push_back((i + 1) % devices);
    }
    MLIRContext *ctx = op->getContext();
    auto permute = CollectivePermuteOp::create(
        b, loc, local.getType(), local, context.mesh(),
        ArrayAttr::get(ctx, {axis}), b.getDenseI64ArrayAttr(pairs));
    std::string where;
    if (auto file = dyn_cast<FileLineColLoc>(loc))
      where = " at " + file.getFilename().str() + ":" +
              std::to_string(file.getLine());
    permute->setAttr(PartDialect::getOriginAttrName(),
                     StringAttr::get(ctx, "context parallelism (ring): " +
                                              what + " of " +
                                              op->getName().getStringRef() +
                                              where));
    tagLayer(permute);
    context.setLayout(permute.getResult(), layout);
    return permute.getResult();
  }

  /// Gives `made` the layer of the op it partitions.
  void tagLayer(Operation *made) const {
    if (Attribute layer = op->getAttr(PartDialect::getLayerAttrName()))
      made->setAttr(PartDialect::getLayerAttrName(), layer);
  }

  /// Merges a block's (result, lse) into the running (acc, accLse) by
  /// their log-sum-exp; returns the new pair.
  std::pair<Value, Value> merge(OpBuilder &b, Value acc, Value accLse,
                                Value result, Value lse) {
    Value m = MaxOp::create(b, loc, accLse, lse);
    Value wa = ExpOp::create(b, loc, SubOp::create(b, loc, accLse, m));
    Value wb = ExpOp::create(b, loc, SubOp::create(b, loc, lse, m));
    Value sum = AddOp::create(b, loc, wa, wb);
    Value newLse = AddOp::create(b, loc, m, LogOp::create(b, loc, sum));
    // Each side's share [B, H, S] as a column [B, H, S, 1] of the
    // results' type.
    auto column = [&](Value w) -> Value {
      Value share = DivOp::create(b, loc, w, sum);
      auto t = cast<RankedTensorType>(share.getType());
      SmallVector<int64_t> shape(t.getShape());
      shape.push_back(1);
      Value r = ReshapeOp::create(
          b, loc, RankedTensorType::get(shape, t.getElementType()), share);
      Type elt = cast<RankedTensorType>(acc.getType()).getElementType();
      if (elt != t.getElementType())
        r = CastOp::create(b, loc, RankedTensorType::get(shape, elt), r);
      tagLayer(share.getDefiningOp());
      tagLayer(r.getDefiningOp());
      return r;
    };
    // One op per statement: the IR's order must not depend on the order
    // the compiler evaluates a call's arguments in.
    Value accShare = column(wa);
    Value kept = MulOp::create(b, loc, acc, accShare);
    Value blockShare = column(wb);
    Value added = MulOp::create(b, loc, result, blockShare);
    Value merged = AddOp::create(b, loc, kept, added);
    for (Value v : {kept, added})
      tagLayer(v.getDefiningOp());
    for (Value v : {m, wa, wb, sum, newLse, merged})
      tagLayer(v.getDefiningOp());
    return {merged, newLse};
  }

private:
  Operation *op;
  StringAttr axis;
  PartitionContext &context;
  int64_t devices;
  Location loc;
};

/// The ring's axis when `op` asks for it and its queries are split over
/// it; null otherwise.
StringAttr ringAxis(Operation *op, Value query, PartitionContext &context) {
  auto axis =
      op->getAttrOfType<StringAttr>(PartDialect::getContextRingAttrName());
  if (!axis)
    return {};
  const Layout &l = context.layoutOf(context.lookup(query));
  return llvm::is_contained(l.dims[2], axis) ? axis : StringAttr();
}

/// The local key, value and query positions of a ring: the keys and values
/// split along the sequence as the queries are (so that a device's block of
/// keys has its queries' positions).
struct RingInputs {
  Value q, k, v, positions;
  Layout queryLayout, keyLayout, valueLayout;
};
template <typename AttentionLike>
FailureOr<RingInputs> ringInputs(OpBuilder &b, Ring &ring,
                                 AttentionLike op, PartitionContext &context,
                                 unsigned positionsOperand) {
  RingInputs in;
  in.q = context.lookup(op.getQuery());
  in.queryLayout = context.layoutOf(in.q);
  SmallVector<StringAttr> sequence = in.queryLayout.dims[2];
  auto along = [&](Value global) {
    Layout l = context.layoutOf(context.lookup(global));
    l.dims[2] = sequence;
    return l.dims;
  };
  FailureOr<Value> k = ring.laidOut(b, op.getKey(), 1, along(op.getKey()));
  FailureOr<Value> v =
      ring.laidOut(b, op.getValue(), 2, along(op.getValue()));
  FailureOr<Value> positions =
      ring.laidOut(b, op.getQueryPositions(), positionsOperand, {sequence});
  if (failed(k) || failed(v) || failed(positions))
    return failure();
  in.k = *k;
  in.v = *v;
  in.positions = *positions;
  in.keyLayout = context.layoutOf(in.k);
  in.valueLayout = context.layoutOf(in.v);
  return in;
}
} // namespace

FailureOr<bool> AttentionBlockOp::partition(OpBuilder &b,
                                            PartitionContext &context) {
  StringAttr axis = ringAxis(*this, getQuery(), context);
  if (!axis)
    return false;
  Ring ring(*this, axis, context);
  FailureOr<RingInputs> in =
      ringInputs(b, ring, *this, context, /*positionsOperand=*/3);
  if (failed(in))
    return failure();
  Value k = in->k, v = in->v, positions = in->positions;
  Layout positionsLayout = context.layoutOf(positions);
  Value acc, accLse;
  for (int64_t step = 0; step < ring.size(); ++step) {
    Value nextK, nextV, nextPositions;
    if (step + 1 < ring.size()) {
      std::string what = "step " + std::to_string(step + 1) + "'s ";
      nextK = ring.next(b, k, in->keyLayout, what + "keys");
      nextV = ring.next(b, v, in->valueLayout, what + "values");
      nextPositions =
          ring.next(b, positions, positionsLayout, what + "key positions");
    }
    auto block = AttentionBlockOp::create(b, getLoc(), in->q, k, v,
                                          in->positions, positions,
                                          getCausal(), getScaleAttr(),
                                          getWindowAttr());
    ring.tagLayer(block);
    if (step == 0)
      std::tie(acc, accLse) = std::make_pair(block.getResult(), block.getLse());
    else
      std::tie(acc, accLse) =
          ring.merge(b, acc, accLse, block.getResult(), block.getLse());
    k = nextK, v = nextV, positions = nextPositions;
  }
  Layout result = in->queryLayout;
  result.unreduced.clear();
  result.dims[3] = in->valueLayout.dims[3];
  Layout rows = result;
  rows.dims.pop_back();
  context.map(getResult(), acc, result);
  context.map(getLse(), accLse, rows);
  return true;
}

/// The ring form of the gradients: each step's block of keys gets its
/// key and value gradients (per query head) added to those the block
/// carries from the devices before; after the last step they travel once
/// more, to the device that holds the block.
static FailureOr<bool> partitionGradRing(AttentionGradOp op, OpBuilder &b,
                                         PartitionContext &context,
                                         StringAttr axis) {
  Ring ring(op, axis, context);
  FailureOr<RingInputs> in =
      ringInputs(b, ring, op, context, /*positionsOperand=*/4);
  if (failed(in))
    return failure();
  SmallVector<SmallVector<StringAttr>> rowDims(
      in->queryLayout.dims.begin(), in->queryLayout.dims.begin() + 3);
  FailureOr<Value> dy =
      ring.laidOut(b, op.getResultGrad(), 3, in->queryLayout.dims);
  FailureOr<Value> lse = ring.laidOut(b, op.getLse(), 6, rowDims);
  FailureOr<Value> delta = ring.laidOut(b, op.getDelta(), 7, rowDims);
  if (failed(dy) || failed(lse) || failed(delta))
    return failure();
  Value k = in->k, v = in->v, positions = in->positions;
  Layout positionsLayout = context.layoutOf(positions);
  // The gradients of a block of keys are per query head: the query's
  // heads, the key's (value's) sequence and head size.
  Layout keyGrad = in->queryLayout, valueGrad = in->queryLayout;
  keyGrad.unreduced.clear();
  valueGrad.unreduced.clear();
  keyGrad.dims[3] = in->keyLayout.dims[3];
  valueGrad.dims[3] = in->valueLayout.dims[3];
  Value dq, dk, dv;
  for (int64_t step = 0; step < ring.size(); ++step) {
    Value nextK, nextV, nextPositions;
    std::string what = "step " + std::to_string(step + 1) + "'s ";
    if (step + 1 < ring.size()) {
      nextK = ring.next(b, k, in->keyLayout, what + "keys");
      nextV = ring.next(b, v, in->valueLayout, what + "values");
      nextPositions =
          ring.next(b, positions, positionsLayout, what + "key positions");
    }
    auto block = AttentionGradOp::create(
        b, op.getLoc(), in->q, k, v, *dy, in->positions, positions, *lse,
        *delta, op.getCausal(), op.getScaleAttr(), op.getWindowAttr());
    ring.tagLayer(block);
    auto add = [&](Value sum, Value term) -> Value {
      if (!sum)
        return term;
      Value r = AddOp::create(b, op.getLoc(), sum, term);
      ring.tagLayer(r.getDefiningOp());
      return r;
    };
    dq = add(dq, block.getQueryGrad());
    dk = add(dk, block.getKeyGrad());
    dv = add(dv, block.getValueGrad());
    // The block's gradients go on with it (after the last step: home).
    std::string carried = step + 1 < ring.size()
                              ? what + "block's"
                              : std::string("the block's own");
    dk = ring.next(b, dk, keyGrad, carried + " key gradient");
    dv = ring.next(b, dv, valueGrad, carried + " value gradient");
    k = nextK, v = nextV, positions = nextPositions;
  }
  Layout queryGrad = in->queryLayout;
  queryGrad.unreduced.clear();
  context.map(op.getQueryGrad(), dq, queryGrad);
  context.map(op.getKeyGrad(), dk, keyGrad);
  context.map(op.getValueGrad(), dv, valueGrad);
  return true;
}

FailureOr<bool> AttentionGradOp::partition(OpBuilder &b,
                                           PartitionContext &context) {
  if (StringAttr axis =
          getLse() ? ringAxis(*this, getQuery(), context) : StringAttr())
    return partitionGradRing(*this, b, context, axis);
  return partitionGradHeads(*this, b, context);
}
