//===- ShardingProjection.cpp - layouts onto an op's factors and back ----===//

#include "partition/Dialect/Part/Analysis/ShardingProjection.h"

using namespace mlir;
using namespace partition::part;

ValueProjection partition::part::projectOntoFactors(
    const ShardingRule &rule, const ShardingRule::ValueMapping &mapping,
    const Layout &layout, function_ref<int64_t(StringAttr)> axisSize) {
  ValueProjection p;
  p.factorAxes.resize(rule.getNumFactors());
  p.leftover.resize(mapping.size());
  for (auto [d, factors] : llvm::enumerate(mapping)) {
    ArrayRef<StringAttr> axes = layout.dims[d];
    size_t next = 0;
    for (int64_t f : factors) {
      SmallVector<StringAttr> mine;
      int64_t product = 1;
      while (next < axes.size() &&
             rule.getFactorSize(f) % (product * axisSize(axes[next])) == 0) {
        product *= axisSize(axes[next]);
        mine.push_back(axes[next++]);
      }
      if (rule.getFactorKind(f) != FactorKind::NeedReplication)
        p.factorAxes[f] = std::move(mine);
      // Axes split a dimension major to minor: a minor factor takes axes
      // only once the major ones are split completely.
      if (next < axes.size() && product != rule.getFactorSize(f))
        break;
    }
    p.leftover[d].assign(axes.begin() + next, axes.end());
  }
  return p;
}

bool partition::part::dropStridedSplits(
    const ShardingRule &rule, FactorAxes &factorAxes,
    function_ref<int64_t(StringAttr)> axisSize) {
  auto splitCompletely = [&](int64_t f) {
    int64_t product = 1;
    for (StringAttr axis : factorAxes[f])
      product *= axisSize(axis);
    return product == rule.getFactorSize(f);
  };
  // Dropping a factor's axes can leave it split partly where it is major to
  // another factor in another value: repeat until nothing changes (each
  // round drops axes or ends).
  bool dropped = false;
  for (bool changed = true; changed;) {
    changed = false;
    auto visit = [&](ArrayRef<ShardingRule::ValueMapping> values) {
      for (const ShardingRule::ValueMapping &mapping : values)
        for (const auto &factors : mapping) {
          bool blocks = true; // the factors so far are split completely
          for (int64_t f : factors) {
            if (!blocks && !factorAxes[f].empty()) {
              factorAxes[f].clear();
              changed = dropped = true;
            }
            blocks = blocks && splitCompletely(f);
          }
        }
    };
    visit(rule.getOperandMappings());
    visit(rule.getResultMappings());
  }
  return dropped;
}

Layout partition::part::layoutFromFactors(
    const ShardingRule &rule, const ShardingRule::ValueMapping &mapping,
    const FactorAxes &factorAxes, bool isResult) {
  Layout l = Layout::replicated(mapping.size());
  for (auto [d, factors] : llvm::enumerate(mapping))
    for (int64_t f : factors)
      llvm::append_range(l.dims[d], factorAxes[f]);
  // A reduction factor leaves partial sums in the results it does not index
  // (a result that it indexes is split by it, as attention_grad's query
  // gradient by the query positions).
  if (isResult)
    for (int64_t f = 0; f < rule.getNumFactors(); ++f)
      if (rule.getFactorKind(f) == FactorKind::Reduction &&
          !ShardingRule::mapsFactor(mapping, f))
        llvm::append_range(l.unreduced, factorAxes[f]);
  return l;
}
