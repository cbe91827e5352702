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

