//===- Padding.cpp - what padding a split dimension means to each op ------===//
//
// ShardingRuleOpInterface::getPaddingRule and rewritePadded (Padding.h):
// the default from the factor's kind, and the ops that differ from it.
//
//===----------------------------------------------------------------------===//

#include "partition/Dialect/Part/IR/PartOps.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/TypeUtilities.h"

#include <numeric>

using namespace mlir;
using namespace partition::part;

namespace {
/// Whether operand `i` of `op` under `rule` has a dimension mapped to
/// `factor`.
bool hasFactor(const ShardingRule &rule, unsigned i, int64_t factor) {
  for (const auto &factors : rule.getOperandMappings()[i])
    if (llvm::is_contained(factors, factor))
      return true;
  return false;
}
} // namespace

PaddingRule partition::part::defaultPaddingRule(Operation *op,
                                                const ShardingRule &rule,
                                                int64_t factor, bool means) {
  switch (rule.getFactorKind(factor)) {
  case FactorKind::Parallel:
    return PaddingRule::free();
  case FactorKind::Reduction:
    // A sum over the factor of terms that vanish where one operand does: a
    // contraction, a sum, a mean. One operand's zeros are enough.
    for (unsigned i = 0; i < op->getNumOperands(); ++i)
      if (isa<FloatType>(getElementTypeOrSelf(op->getOperand(i).getType())) &&
          hasFactor(rule, i, factor))
        return PaddingRule::mask(PaddingRule::Kind::MaskZero, {i}, means);
    return PaddingRule::unsupported("it reduces over the dimension and has no "
                                    "float operand to mask");
  case FactorKind::NeedReplication:
    return PaddingRule::unsupported("it needs the whole dimension");
  }
  llvm_unreachable("unknown factor kind");
}

/// The lookup reads only the rows its indices name, which are in the
/// logical range; the other factors follow the default.
PaddingRule GatherOp::getPaddingRule(const ShardingRule &rule,
                                     int64_t factor) {
  if (rule.getOperandMappings()[0][getAxis()] == ArrayRef<int64_t>{factor})
    return PaddingRule::free();
  return defaultPaddingRule(*this, rule, factor, false);
}

/// The transpose of the lookup: the indices write only logical rows.
PaddingRule ScatterAddOp::getPaddingRule(const ShardingRule &rule,
                                         int64_t factor) {
  if (rule.getResultMappings()[0][getAxis()] == ArrayRef<int64_t>{factor})
    return PaddingRule::free();
  return defaultPaddingRule(*this, rule, factor, false);
}

PaddingRule SoftmaxOp::getPaddingRule(const ShardingRule &rule,
                                      int64_t factor) {
  if (rule.getOperandMappings()[0][getDim()] == ArrayRef<int64_t>{factor})
    return PaddingRule::mask(PaddingRule::Kind::MaskLowest, {0});
  return PaddingRule::free();
}

PaddingRule ReduceMaxOp::getPaddingRule(const ShardingRule &rule,
                                        int64_t factor) {
  if (rule.getFactorKind(factor) == FactorKind::Parallel)
    return PaddingRule::free();
  return PaddingRule::mask(PaddingRule::Kind::MaskLowest, {0});
}

/// Classes: padded logits masked to the lowest value take no share of the
/// softmax. Positions summed or averaged over: the per-position losses of
/// padded positions are masked out (rewritePadded).
PaddingRule SoftmaxCrossEntropyOp::getPaddingRule(const ShardingRule &rule,
                                                  int64_t factor) {
  if (rule.getOperandMappings()[0].back() == ArrayRef<int64_t>{factor})
    return PaddingRule::mask(PaddingRule::Kind::MaskLowest, {0});
  if (getReduction() == LossReduction::None)
    return PaddingRule::free();
  return PaddingRule::rewrite();
}

LogicalResult SoftmaxCrossEntropyOp::rewritePadded(OpBuilder &b,
                                                   PaddingContext &context) {
  // loss = sum over positions of mask(per-position loss), divided by the
  // logical count for a mean.
  // The logits' padded classes are already masked (getPaddingRule).
  Location loc = getLoc();
  auto labels = cast<RankedTensorType>(getLabels().getType());
  auto resultType = cast<RankedTensorType>(getType());
  auto perPosition = RankedTensorType::get(labels.getShape(),
                                           resultType.getElementType());
  Value losses = SoftmaxCrossEntropyOp::create(
      b, loc, perPosition, getLogits(), getLabels(), LossReduction::None);
  SmallVector<std::optional<int64_t>> logical;
  for (int64_t d = 0; d < labels.getRank(); ++d)
    logical.push_back(context.logicalSize(getLabels(), d));
  losses = context.mask(b, loc, losses, logical);
  SmallVector<int64_t> dims(labels.getRank());
  std::iota(dims.begin(), dims.end(), 0);
  Value loss = ReduceSumOp::create(b, loc, losses, dims, /*keepDims=*/false);
  if (getReduction() == LossReduction::Mean) {
    int64_t count = 1;
    for (int64_t d = 0; d < labels.getRank(); ++d)
      count *= context.logicalSize(getLabels(), d).value_or(labels.getDimSize(d));
    auto scale = ConstantOp::create(
        b, loc,
        DenseElementsAttr::get(resultType,
                               b.getFloatAttr(resultType.getElementType(),
                                              1.0 / double(count))));
    loss = MulOp::create(b, loc, loss, scale);
  }
  getResult().replaceAllUsesWith(loss);
  return success();
}

/// A constant's padded positions may hold anything: its rewrite fills them
/// with zeros.
PaddingRule ConstantOp::getPaddingRule(const ShardingRule &, int64_t) {
  return PaddingRule::rewrite();
}

LogicalResult ConstantOp::rewritePadded(OpBuilder &b, PaddingContext &context) {
  auto type = cast<RankedTensorType>(getType()); // already padded
  auto value = dyn_cast<DenseElementsAttr>(getValue());
  if (!value)
    return emitOpError("has a value that cannot be padded (not dense)");
  DenseElementsAttr padded;
  if (value.isSplat()) {
    padded = DenseElementsAttr::get(type, value.getSplatValue<Attribute>());
  } else {
    ArrayRef<int64_t> from = value.getType().getShape(), to = type.getShape();
    SmallVector<Attribute> old(value.getValues<Attribute>());
    Attribute zero = b.getZeroAttr(type.getElementType());
    SmallVector<Attribute> elements(type.getNumElements(), zero);
    int64_t rank = to.size();
    SmallVector<int64_t> index(rank, 0);
    for (Attribute element : old) {
      int64_t flat = 0;
      for (int64_t d = 0; d < rank; ++d)
        flat = flat * to[d] + index[d];
      elements[flat] = element;
      for (int64_t d = rank - 1; d >= 0; --d) {
        if (++index[d] < from[d])
          break;
        index[d] = 0;
      }
    }
    padded = DenseElementsAttr::get(type, elements);
  }
  (void)context;
  auto copy = ConstantOp::create(b, getLoc(), padded);
  getResult().replaceAllUsesWith(copy.getResult());
  return success();
}
