//===- PartInterfaces.td - part op interfaces --------------*- tablegen -*-===//

#ifndef PARTITION_DIALECT_PART_IR_PARTINTERFACES_TD
#define PARTITION_DIALECT_PART_IR_PARTINTERFACES_TD

include "mlir/IR/OpBase.td"

def Part_ShardingRuleOpInterface : OpInterface<"ShardingRuleOpInterface"> {
  let description = [{
    An op whose operands and results may be sharded states how, as factors of
    its iteration space (see ShardingRule.h). Propagation and partitioning
    work only through this interface; an op without it cannot be
    partitioned, and saying so is an error, never silent replication.
  }];
  let cppNamespace = "::partition::part";
  let methods = [
    InterfaceMethod<"The op's factors and the factors of each dimension.",
      "::partition::part::ShardingRule", "getShardingRule">,
    InterfaceMethod<[{
        Whether pending sums (values unreduced over some mesh axes) may stay
        pending through the op: `pending[i]` says operand i is one (all over
        the same axes). Returns, per operand, whether its pending sum is kept
        -- the result is then a pending sum over the same axes whose sum is
        the op's result on the sums -- or nothing when the op must see whole
        values. Linear ops keep them: the sum or difference of two pending
        values, the negation, reshape or transpose of one, the product of
        one and a whole value, the quotient of one by a whole value.
      }],
      "::llvm::SmallVector<bool>", "keepsPendingSum",
      (ins "::llvm::ArrayRef<bool>":$pending), [{}],
      [{ return {}; }]>,
    InterfaceMethod<[{
        Whether the result is a mean over the rule's reduction factors: a
        device's partial result over split reduction factors is then scaled
        by its share before the partial results are summed.
      }],
      "bool", "meansOverReductionFactors", (ins), [{}],
      [{ return false; }]>,
    InterfaceMethod<[{
        The op's own per-device form for the layouts its operands have
        (PartitionContext.h), when it knows a better one than resharding
        to its rule: returns true once it has built it and mapped its
        results, false to be partitioned by its rule, failure after an error.
      }],
      "::mlir::FailureOr<bool>", "partition",
      (ins "::mlir::OpBuilder &":$builder,
           "::partition::part::PartitionContext &":$context), [{}],
      [{ return false; }]>,
    InterfaceMethod<[{
        What padding `factor` of the op's sharding rule `rule` (to a multiple
        of a shard count, by part-pad-uneven) needs (Padding.h): nothing,
        masks on some operands, the op's own rewrite, or nothing possible.
      }],
      "::partition::part::PaddingRule", "getPaddingRule",
      (ins "const ::partition::part::ShardingRule &":$rule,
           "int64_t":$factor), [{}],
      [{ return ::partition::part::defaultPaddingRule(
             $_op, rule, factor,
             ::mlir::cast<::partition::part::ShardingRuleOpInterface>(
                 $_op.getOperation()).meansOverReductionFactors()); }]>,
    InterfaceMethod<[{
        Replaces the op, whose padded values already have their padded
        types, by a form whose result ignores the padding (called once, when
        getPaddingRule said Rewrite for some factor). The op is erased by
        the caller once its results have no uses.
      }],
      "::mlir::LogicalResult", "rewritePadded",
      (ins "::mlir::OpBuilder &":$builder,
           "::partition::part::PaddingContext &":$context), [{}],
      [{ return $_op->emitOpError("cannot be rewritten for padding"); }]>,
  ];
}

def Part_VjpOpInterface : OpInterface<"VjpOpInterface"> {
  let description = [{
    A differentiable op states its vector-Jacobian product: given the
    cotangent of each result (d loss / d result), it builds the cotangent of
    each operand (d loss / d operand) out of `part` ops, so that the backward
    program is partitioned by the same sharding rules as the forward one.
    `part-autodiff` calls it once per op, walking the function backwards.
    The rules live in lib/Dialect/Part/IR/Vjp.cpp.

    Conventions:
    - a null result cotangent means zero; a null operand cotangent means the
      operand gets nothing from this op (an integer operand, such as indices,
      labels or a select condition, or an operand with no path to a float
      result);
    - every operand cotangent has exactly its operand's type (broadcast
      operands get their cotangent summed back to their own shape);
    - the rule may read the op's operands and results (they dominate the
      builder's insertion point) and recomputes what else it needs.
  }];
  let cppNamespace = "::partition::part";
  let methods = [
    InterfaceMethod<[{
        Builds the operand cotangents at `builder`'s insertion point (after
        the op) from `resultCotangents` (one per result, null = zero); returns
        one value per operand, null where the operand gets no cotangent.
      }],
      "::llvm::SmallVector<::mlir::Value>", "buildVjp",
      (ins "::mlir::OpBuilder &":$builder,
           "::mlir::ArrayRef<::mlir::Value>":$resultCotangents)>,
  ];
}

#endif // PARTITION_DIALECT_PART_IR_PARTINTERFACES_TD
