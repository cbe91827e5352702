//===- Padding.h - what padding a split dimension means to an op -*- C++ -*-===//
//
// Where a split does not divide a dimension, part-pad-uneven pads it (and
// every dimension linked to it through ops' factors) to a multiple of the
// shard count (docs/design/2026-12-03-sharding-analysis.md, "Uneven
// shards"). Each op says, per factor, what the padded positions would do to
// its result (ShardingRuleOpInterface::getPaddingRule) and, where masking
// operands is not enough, rewrites itself (rewritePadded) through this
// context.
//
//===----------------------------------------------------------------------===//

#ifndef PARTITION_DIALECT_PART_IR_PADDING_H
#define PARTITION_DIALECT_PART_IR_PADDING_H

#include "mlir/IR/Builders.h"
#include "llvm/ADT/SmallVector.h"

#include <optional>
#include <string>

namespace partition::part {

class ShardingRule;

/// What an op needs when one of its factors is padded.
struct PaddingRule {
  enum class Kind {
    /// The padded positions are computed and never read across: nothing
    /// to do (elementwise ops, the kept dimensions of a reduction).
    Free,
    /// The result sums over the factor: the padding of the operands listed
    /// is masked to zero (one operand of a contraction is enough).
    MaskZero,
    /// The result takes a maximum or a softmax over the factor: the padding
    /// of the operands listed is masked to the lowest finite value.
    MaskLowest,
    /// The op rewrites itself (rewritePadded).
    Rewrite,
    /// The op cannot have the factor padded; `reason` says why.
    Unsupported,
  };
  Kind kind = Kind::Free;
  llvm::SmallVector<unsigned, 2> operands;
  /// MaskZero: the result is a mean over the factor, so it is rescaled by
  /// padded size / logical size.
  bool rescale = false;
  std::string reason;

  static PaddingRule free() { return {}; }
  static PaddingRule mask(Kind kind, llvm::ArrayRef<unsigned> operands,
                          bool rescale = false) {
    PaddingRule r;
    r.kind = kind;
    r.operands.assign(operands.begin(), operands.end());
    r.rescale = rescale;
    return r;
  }
  static PaddingRule rewrite() {
    PaddingRule r;
    r.kind = Kind::Rewrite;
    return r;
  }
  static PaddingRule unsupported(std::string reason) {
    PaddingRule r;
    r.kind = Kind::Unsupported;
    r.reason = std::move(reason);
    return r;
  }
};

/// The rule most ops follow, from the factor's kind: parallel factors are
/// free; a reduction masks the first float operand that has the factor to
/// zero (rescaled for a mean, `means`); a factor that needs the whole
/// dimension cannot be padded.
PaddingRule defaultPaddingRule(mlir::Operation *op, const ShardingRule &rule,
                               int64_t factor, bool means);

/// What an op's rewritePadded may ask.
class PaddingContext {
public:
  virtual ~PaddingContext() = default;
  /// The unpadded size of dimension `dim` of `value`, or nullopt when that
  /// dimension is not padded.
  virtual std::optional<int64_t> logicalSize(mlir::Value value,
                                             int64_t dim) = 0;
  /// `value` with its positions at or past `logical[d]` along each
  /// dimension d (nullopt: not padded) set to zero, or to the lowest finite
  /// value (`lowest`).
  virtual mlir::Value mask(mlir::OpBuilder &b, mlir::Location loc,
                           mlir::Value value,
                           llvm::ArrayRef<std::optional<int64_t>> logical,
                           bool lowest = false) = 0;
};

} // namespace partition::part

#endif // PARTITION_DIALECT_PART_IR_PADDING_H
