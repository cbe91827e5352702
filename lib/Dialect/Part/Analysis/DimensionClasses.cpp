//===- DimensionClasses.cpp - dimensions one split splits together --------===//

#include "partition/Dialect/Part/Analysis/DimensionClasses.h"
#include "partition/Dialect/Part/IR/PartOps.h"

using namespace mlir;
using namespace partition::part;

DimensionClasses::DimensionClasses(func::FuncOp function) {
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
  for (auto &entry : nodes)
    ++sizes[classes.findLeader(entry.second)];
}

std::optional<unsigned> DimensionClasses::classOf(Value value,
                                                  unsigned dim) const {
  auto it = nodes.find({value, dim});
  if (it == nodes.end())
    return std::nullopt;
  return classes.findLeader(it->second);
}
