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

Layout partition::part::layoutFromFactors(
    const ShardingRule &rule, const ShardingRule::ValueMapping &mapping,
    const FactorAxes &factorAxes, bool isResult) {
  Layout l = Layout::replicated(mapping.size());
  for (auto [d, factors] : llvm::enumerate(mapping))
    for (int64_t f : factors)
      llvm::append_range(l.dims[d], factorAxes[f]);
  if (isResult)
    for (int64_t f = 0; f < rule.getNumFactors(); ++f)
      if (rule.getFactorKind(f) == FactorKind::Reduction)
        llvm::append_range(l.unreduced, factorAxes[f]);
  return l;
}
