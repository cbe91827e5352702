//===- ShardingRule.h - how an op's dimensions may be sharded ---*- C++ -*-===//
//
// An op's sharding rule names the factors of its iteration space and maps
// every operand and result dimension to a product of factors. See
// docs/design/2026-12-02-sharding-propagation.md.
//
//===----------------------------------------------------------------------===//

#ifndef PARTITION_DIALECT_PART_IR_SHARDINGRULE_H
#define PARTITION_DIALECT_PART_IR_SHARDINGRULE_H

#include "mlir/IR/Operation.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"

#include <string>

namespace partition::part {

/// What sharding a factor over a mesh axis means.
enum class FactorKind {
  /// In operands and results alike: sharding it needs no communication.
  Parallel,
  /// In operands only: sharding it leaves partial sums (unreduced results).
  Reduction,
  /// Must stay unsharded: operands are resharded to replicate it.
  NeedReplication,
};

/// "parallel", "reduction", "need-replication".
llvm::StringRef stringifyFactorKind(FactorKind kind);

/// The factors of an op and, per operand and result, the factors (major to
/// minor) whose product is each dimension. A dimension of size 1 that only
/// broadcasts maps to no factor.
class ShardingRule {
public:
  /// Factors of one value: per dimension, the factor indices.
  using ValueMapping = llvm::SmallVector<llvm::SmallVector<int64_t, 2>>;

  /// Adds a factor and returns its index.
  int64_t addFactor(int64_t size, FactorKind kind = FactorKind::Parallel);
  /// Appends the mapping of the next operand / result.
  void addOperand(ValueMapping mapping) {
    operands.push_back(std::move(mapping));
  }
  void addResult(ValueMapping mapping) {
    results.push_back(std::move(mapping));
  }

  /// Whether some dimension of `mapping` is made of factor `f`.
  static bool mapsFactor(const ValueMapping &mapping, int64_t f) {
    return llvm::any_of(mapping, [&](const auto &factors) {
      return llvm::is_contained(factors, f);
    });
  }

  int64_t getNumFactors() const { return factorSizes.size(); }
  int64_t getFactorSize(int64_t f) const { return factorSizes[f]; }
  FactorKind getFactorKind(int64_t f) const { return factorKinds[f]; }
  void setFactorKind(int64_t f, FactorKind kind) { factorKinds[f] = kind; }
  llvm::ArrayRef<ValueMapping> getOperandMappings() const { return operands; }
  llvm::ArrayRef<ValueMapping> getResultMappings() const { return results; }

  /// Checks the rule against `op`: one mapping per operand and result, one
  /// entry per dimension, each dimension the product of its factors' sizes
  /// (a dimension with no factor has size 1), every factor used.
  mlir::LogicalResult verify(mlir::Operation *op) const;

  /// A one-line description, e.g.
  /// "([a, b, k], [k, n]) -> ([a, b, n]) a=2 b=16 k=64 n=256; k reduction".
  std::string describe() const;

  /// The rule of an elementwise op with numpy broadcasting: one parallel
  /// factor per result dimension; operand dimensions aligned at the right
  /// share it, and broadcast size-1 dimensions map to none.
  static ShardingRule elementwise(mlir::Operation *op);

private:
  llvm::SmallVector<int64_t> factorSizes;
  llvm::SmallVector<FactorKind> factorKinds;
  llvm::SmallVector<ValueMapping> operands, results;
};

} // namespace partition::part

#endif // PARTITION_DIALECT_PART_IR_SHARDINGRULE_H
