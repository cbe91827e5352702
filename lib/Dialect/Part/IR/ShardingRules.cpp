//===- ShardingRules.cpp - the sharding rule of every part op -------------===//
//
// ShardingRule itself, and getShardingRule() for each model op. The rules are
// stated in docs/design/2026-12-02-sharding-propagation.md.
//
//===----------------------------------------------------------------------===//

#include "partition/Dialect/Part/IR/PartOps.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <numeric>

using namespace mlir;
using namespace partition::part;

#include "partition/Dialect/Part/IR/PartInterfaces.cpp.inc"

//===----------------------------------------------------------------------===//
// ShardingRule
//===----------------------------------------------------------------------===//

StringRef partition::part::stringifyFactorKind(FactorKind kind) {
  switch (kind) {
  case FactorKind::Parallel:
    return "parallel";
  case FactorKind::Reduction:
    return "reduction";
  case FactorKind::NeedReplication:
    return "need-replication";
  }
  return "?";
}

int64_t ShardingRule::addFactor(int64_t size, FactorKind kind) {
  factorSizes.push_back(size);
  factorKinds.push_back(kind);
  return factorSizes.size() - 1;
}

/// Shape of `value`'s ranked tensor type.
static ArrayRef<int64_t> shapeOf(Value value) {
  return cast<RankedTensorType>(value.getType()).getShape();
}

LogicalResult ShardingRule::verify(Operation *op) const {
  if (operands.size() != op->getNumOperands() ||
      results.size() != op->getNumResults())
    return op->emitOpError()
           << "sharding rule maps " << operands.size() << " operands and "
           << results.size() << " results";
  SmallVector<bool> used(factorSizes.size(), false);
  auto check = [&](ValueRange values, ArrayRef<ValueMapping> mappings,
                   StringRef what) -> LogicalResult {
    for (auto [index, value, mapping] : llvm::enumerate(values, mappings)) {
      ArrayRef<int64_t> shape = shapeOf(value);
      if (mapping.size() != shape.size())
        return op->emitOpError()
               << "sharding rule has " << mapping.size() << " dimensions for "
               << what << " " << index << " of rank " << shape.size();
      for (auto [dim, factors] : llvm::enumerate(mapping)) {
        int64_t product = 1;
        for (int64_t f : factors) {
          if (f < 0 || f >= getNumFactors())
            return op->emitOpError() << "sharding rule names factor " << f;
          used[f] = true;
          product *= factorSizes[f];
        }
        if (product != shape[dim])
          return op->emitOpError() << "sharding rule gives " << what << " "
                                   << index << " dimension " << dim << " size "
                                   << product << " but it has " << shape[dim];
      }
    }
    return success();
  };
  if (failed(check(op->getOperands(), operands, "operand")) ||
      failed(check(op->getResults(), results, "result")))
    return failure();
  for (auto [f, isUsed] : llvm::enumerate(used))
    if (!isUsed)
      return op->emitOpError() << "sharding rule never uses factor " << f;
  return success();
}

std::string ShardingRule::describe() const {
  // Factors are named a, b, c, ... in order.
  auto name = [](int64_t f) {
    std::string n;
    do {
      n.insert(n.begin(), char('a' + f % 26));
      f = f / 26 - 1;
    } while (f >= 0);
    return n;
  };
  std::string text;
  llvm::raw_string_ostream os(text);
  auto printValues = [&](ArrayRef<ValueMapping> values) {
    os << "(";
    llvm::interleaveComma(values, os, [&](const ValueMapping &mapping) {
      os << "[";
      llvm::interleaveComma(mapping, os, [&](ArrayRef<int64_t> factors) {
        if (factors.empty())
          os << "1";
        llvm::interleave(
            factors, os, [&](int64_t f) { os << name(f); }, " ");
      });
      os << "]";
    });
    os << ")";
  };
  printValues(operands);
  os << " -> ";
  printValues(results);
  for (int64_t f = 0; f < getNumFactors(); ++f)
    os << " " << name(f) << "=" << factorSizes[f];
  bool first = true;
  for (int64_t f = 0; f < getNumFactors(); ++f)
    if (factorKinds[f] != FactorKind::Parallel) {
      os << (first ? "; " : ", ") << name(f) << " "
         << stringifyFactorKind(factorKinds[f]);
      first = false;
    }
  return text;
}

ShardingRule ShardingRule::elementwise(Operation *op) {
  ShardingRule rule;
  ArrayRef<int64_t> result = shapeOf(op->getResult(0));
  SmallVector<int64_t> factors;
  for (int64_t size : result)
    factors.push_back(rule.addFactor(size));
  auto mapAligned = [&](ArrayRef<int64_t> shape) {
    ValueMapping mapping;
    int64_t lead = result.size() - shape.size();
    for (auto [i, size] : llvm::enumerate(shape)) {
      int64_t f = factors[lead + i];
      // A size-1 dimension broadcast against a larger one takes no factor.
      if (size == 1 && rule.getFactorSize(f) != 1)
        mapping.push_back({});
      else
        mapping.push_back({f});
    }
    return mapping;
  };
  for (Value operand : op->getOperands())
    rule.addOperand(mapAligned(shapeOf(operand)));
  rule.addResult(mapAligned(result));
  return rule;
}

/// One factor per dimension of `shape`, all of `kind`; returns the mapping.
static ShardingRule::ValueMapping
addDims(ShardingRule &rule, ArrayRef<int64_t> shape,
        FactorKind kind = FactorKind::Parallel) {
  ShardingRule::ValueMapping mapping;
  for (int64_t size : shape)
    mapping.push_back({rule.addFactor(size, kind)});
  return mapping;
}

//===----------------------------------------------------------------------===//
// Elementwise and friends
//===----------------------------------------------------------------------===//

#define PART_ELEMENTWISE_RULE(OP)                                              \
  ShardingRule OP::getShardingRule() {                                         \
    return ShardingRule::elementwise(*this);                                   \
  }
PART_ELEMENTWISE_RULE(AddOp)
PART_ELEMENTWISE_RULE(SubOp)
PART_ELEMENTWISE_RULE(MulOp)
PART_ELEMENTWISE_RULE(DivOp)
PART_ELEMENTWISE_RULE(MaxOp)
PART_ELEMENTWISE_RULE(MinOp)
PART_ELEMENTWISE_RULE(PowOp)
PART_ELEMENTWISE_RULE(SelectOp)
PART_ELEMENTWISE_RULE(CompareOp)
PART_ELEMENTWISE_RULE(NegOp)
PART_ELEMENTWISE_RULE(ExpOp)
PART_ELEMENTWISE_RULE(LogOp)
PART_ELEMENTWISE_RULE(SqrtOp)
PART_ELEMENTWISE_RULE(RsqrtOp)
PART_ELEMENTWISE_RULE(TanhOp)
PART_ELEMENTWISE_RULE(ErfOp)
PART_ELEMENTWISE_RULE(CosOp)
PART_ELEMENTWISE_RULE(SinOp)
PART_ELEMENTWISE_RULE(SigmoidOp)
PART_ELEMENTWISE_RULE(ReluOp)
PART_ELEMENTWISE_RULE(SiluOp)
PART_ELEMENTWISE_RULE(GeluOp)
PART_ELEMENTWISE_RULE(CastOp)
PART_ELEMENTWISE_RULE(ConstantOp)
PART_ELEMENTWISE_RULE(ShardingConstraintOp)
PART_ELEMENTWISE_RULE(BroadcastOp)
#undef PART_ELEMENTWISE_RULE

//===----------------------------------------------------------------------===//
// Contractions
//===----------------------------------------------------------------------===//

/// lhs [P..., M, K] (swapped by ta), rhs [Q..., K, N] (swapped by tb) where
/// the rhs has `rhsBatch` leading dimensions shared with the lhs.
static ShardingRule contraction(Value lhs, Value rhs, bool ta, bool tb,
                                bool batchedRhs) {
  ShardingRule rule;
  ArrayRef<int64_t> l = shapeOf(lhs), r = shapeOf(rhs);
  int64_t rank = l.size();
  ShardingRule::ValueMapping lhsMap, rhsMap, resultMap;
  for (int64_t i = 0; i < rank - 2; ++i) {
    int64_t f = rule.addFactor(l[i]);
    lhsMap.push_back({f});
    resultMap.push_back({f});
    if (batchedRhs)
      rhsMap.push_back({f});
  }
  int64_t m = rule.addFactor(l[ta ? rank - 1 : rank - 2]);
  int64_t k =
      rule.addFactor(l[ta ? rank - 2 : rank - 1], FactorKind::Reduction);
  int64_t n = rule.addFactor(r[tb ? r.size() - 2 : r.size() - 1]);
  lhsMap.push_back({ta ? k : m});
  lhsMap.push_back({ta ? m : k});
  rhsMap.push_back({tb ? n : k});
  rhsMap.push_back({tb ? k : n});
  resultMap.push_back({m});
  resultMap.push_back({n});
  rule.addOperand(lhsMap);
  rule.addOperand(rhsMap);
  rule.addResult(resultMap);
  return rule;
}

ShardingRule MatmulOp::getShardingRule() {
  return contraction(getLhs(), getRhs(), getTransposeA(), getTransposeB(),
                     /*batchedRhs=*/false);
}

ShardingRule BatchMatmulOp::getShardingRule() {
  return contraction(getLhs(), getRhs(), getTransposeA(), getTransposeB(),
                     /*batchedRhs=*/true);
}

//===----------------------------------------------------------------------===//
// Normalisation, softmax, attention, loss
//===----------------------------------------------------------------------===//

ShardingRule SoftmaxOp::getShardingRule() {
  ShardingRule rule = ShardingRule::elementwise(*this);
  rule.setFactorKind(getDim(), FactorKind::NeedReplication);
  return rule;
}

/// input [..., D] normalised over D, with `numWeights` weights of shape [D].
static ShardingRule normalisation(Operation *op, int64_t numWeights) {
  ShardingRule rule;
  ArrayRef<int64_t> shape = shapeOf(op->getOperand(0));
  ShardingRule::ValueMapping input = addDims(rule, shape.drop_back());
  int64_t d = rule.addFactor(shape.back(), FactorKind::NeedReplication);
  input.push_back({d});
  rule.addOperand(input);
  for (int64_t i = 0; i < numWeights; ++i)
    rule.addOperand({{d}});
  rule.addResult(input);
  return rule;
}

ShardingRule LayerNormOp::getShardingRule() {
  return normalisation(*this, getBias() ? 2 : 1);
}

ShardingRule RmsNormOp::getShardingRule() { return normalisation(*this, 1); }

ShardingRule RotaryEmbeddingOp::getShardingRule() {
  // Rotating halves mixes the two halves of D, so D stays whole; the tables
  // follow the sequence dimension.
  ShardingRule rule;
  ArrayRef<int64_t> shape = shapeOf(getInput());
  int64_t rank = shape.size();
  ShardingRule::ValueMapping input = addDims(rule, shape.drop_back(2));
  int64_t s = rule.addFactor(shape[rank - 2]);
  int64_t d = rule.addFactor(shape[rank - 1], FactorKind::NeedReplication);
  input.push_back({s});
  input.push_back({d});
  rule.addOperand(input);
  rule.addOperand({{s}, {d}});
  rule.addOperand({{s}, {d}});
  rule.addResult(input);
  return rule;
}

/// The factors of an attention's operands: batch, key/value heads, the
/// query heads as [hkv g] (query head h uses key/value head h / G),
/// positions and head sizes, those but batch and heads of the given kinds.
struct AttentionFactors {
  int64_t b, hkv, sq, sk, d, dv;
  SmallVector<int64_t, 2> qHeads;
};
static AttentionFactors attentionFactors(ShardingRule &rule, Value query,
                                         Value key, Value value,
                                         FactorKind queryPositions,
                                         FactorKind valueSize) {
  ArrayRef<int64_t> q = shapeOf(query), k = shapeOf(key), v = shapeOf(value);
  AttentionFactors f;
  f.b = rule.addFactor(q[0]);
  f.hkv = rule.addFactor(k[1]);
  f.qHeads = {f.hkv};
  if (q[1] != k[1])
    f.qHeads.push_back(rule.addFactor(q[1] / k[1]));
  f.sq = rule.addFactor(q[2], queryPositions);
  f.sk = rule.addFactor(k[2], FactorKind::NeedReplication);
  f.d = rule.addFactor(q[3], FactorKind::NeedReplication);
  f.dv = rule.addFactor(v[3], valueSize);
  rule.addOperand({{f.b}, f.qHeads, {f.sq}, {f.d}});
  rule.addOperand({{f.b}, {f.hkv}, {f.sk}, {f.d}});
  rule.addOperand({{f.b}, {f.hkv}, {f.sk}, {f.dv}});
  return f;
}

/// The mappings of an attention's optional positions, [Sq] and [Sk], which
/// come after its other operands.
static void addAttentionPositions(ShardingRule &rule,
                                  const AttentionFactors &f, Value positions) {
  if (!positions)
    return;
  rule.addOperand({{f.sq}});
  rule.addOperand({{f.sk}});
}

ShardingRule AttentionOp::getShardingRule() {
  // Keys and head size stay whole. A causal mask compares positions: the
  // query's stay whole unless the op is given them (context parallelism),
  // and then they split with the queries.
  ShardingRule rule;
  AttentionFactors f = attentionFactors(
      rule, getQuery(), getKey(), getValue(),
      getCausal() && !getQueryPositions() ? FactorKind::NeedReplication
                                          : FactorKind::Parallel,
      FactorKind::Parallel);
  addAttentionPositions(rule, f, getQueryPositions());
  rule.addResult({{f.b}, f.qHeads, {f.sq}, {f.dv}});
  return rule;
}

ShardingRule AttentionBlockOp::getShardingRule() {
  // part.attention's with positions, and the rows' log-sum-exp.
  ShardingRule rule;
  AttentionFactors f =
      attentionFactors(rule, getQuery(), getKey(), getValue(),
                       FactorKind::Parallel, FactorKind::Parallel);
  addAttentionPositions(rule, f, getQueryPositions());
  rule.addResult({{f.b}, f.qHeads, {f.sq}, {f.dv}});
  rule.addResult({{f.b}, f.qHeads, {f.sq}});
  return rule;
}

ShardingRule AttentionGradOp::getShardingRule() {
  // Each query head's gradients are its own (the key's and value's too:
  // per query head, summed over each group by the caller), so batch and
  // heads are parallel; every sum runs over positions and head sizes,
  // which stay whole. Given positions, the query positions are a
  // reduction: the query's gradient splits with them, and the key's and
  // value's are partial sums over the local queries (context parallelism
  // reduce-scatters them).
  ShardingRule rule;
  AttentionFactors f = attentionFactors(
      rule, getQuery(), getKey(), getValue(),
      getQueryPositions() ? FactorKind::Reduction
                          : FactorKind::NeedReplication,
      FactorKind::NeedReplication);
  rule.addOperand({{f.b}, f.qHeads, {f.sq}, {f.dv}});
  addAttentionPositions(rule, f, getQueryPositions());
  if (getLse()) { // the rows' log-sum-exp and delta
    rule.addOperand({{f.b}, f.qHeads, {f.sq}});
    rule.addOperand({{f.b}, f.qHeads, {f.sq}});
  }
  rule.addResult({{f.b}, f.qHeads, {f.sq}, {f.d}});
  rule.addResult({{f.b}, f.qHeads, {f.sk}, {f.d}});
  rule.addResult({{f.b}, f.qHeads, {f.sk}, {f.dv}});
  return rule;
}

ShardingRule SoftmaxCrossEntropyOp::getShardingRule() {
  // Positions are parallel with no reduction, and reduction factors of the
  // (scalar) mean or sum; classes stay whole. For a mean, the partitioner
  // divides each device's sum by the global count.
  ShardingRule rule;
  ArrayRef<int64_t> labels = shapeOf(getLabels());
  bool reduced = getReduction() != LossReduction::None;
  ShardingRule::ValueMapping positions = addDims(
      rule, labels, reduced ? FactorKind::Reduction : FactorKind::Parallel);
  ShardingRule::ValueMapping logits = positions;
  logits.push_back({rule.addFactor(shapeOf(getLogits()).back(),
                                   FactorKind::NeedReplication)});
  rule.addOperand(logits);
  rule.addOperand(positions);
  rule.addResult(reduced ? ShardingRule::ValueMapping() : positions);
  return rule;
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

/// Reduced dimensions are factors of `kind`; kept ones are parallel.
static ShardingRule reduction(Operation *op, ArrayRef<int64_t> dims,
                              bool keepDims, FactorKind kind) {
  ShardingRule rule;
  ShardingRule::ValueMapping input, result;
  for (auto [d, size] : llvm::enumerate(shapeOf(op->getOperand(0)))) {
    bool reduced = llvm::is_contained(dims, int64_t(d));
    int64_t f = rule.addFactor(size, reduced ? kind : FactorKind::Parallel);
    input.push_back({f});
    if (!reduced)
      result.push_back({f});
    else if (keepDims)
      result.push_back({});
  }
  rule.addOperand(input);
  rule.addResult(result);
  return rule;
}

ShardingRule ReduceSumOp::getShardingRule() {
  return reduction(*this, getDims(), getKeepDims(), FactorKind::Reduction);
}

ShardingRule ReduceMeanOp::getShardingRule() {
  // Each device's mean over its block, summed over the group, is the mean
  // times the group size: the partitioner scales by the global count.
  return reduction(*this, getDims(), getKeepDims(), FactorKind::Reduction);
}

ShardingRule ReduceMaxOp::getShardingRule() {
  // A pending reduction is a sum; a sharded max would need its own kind.
  return reduction(*this, getDims(), getKeepDims(),
                   FactorKind::NeedReplication);
}

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

ShardingRule ReshapeOp::getShardingRule() {
  // Groups of dimensions whose products agree are matched left to right.
  // Inside a group, the factors are the common refinement of both sides'
  // running products; a side whose dimensions are not products of those
  // factors (as in [6, 4] -> [4, 6]) keeps its own, need-replication,
  // factors instead.
  ShardingRule rule;
  ArrayRef<int64_t> in = shapeOf(getInput()), out = shapeOf(getResult());
  ShardingRule::ValueMapping inMap(in.size()), outMap(out.size());
  if (llvm::is_contained(in, 0) || llvm::is_contained(out, 0)) {
    // An empty tensor has nothing to split.
    rule.addOperand(addDims(rule, in, FactorKind::NeedReplication));
    rule.addResult(addDims(rule, out, FactorKind::NeedReplication));
    return rule;
  }
  size_t i = 0, o = 0;
  while (i < in.size() || o < out.size()) {
    // Size-1 dimensions take no factor.
    if (i < in.size() && in[i] == 1) {
      ++i;
      continue;
    }
    if (o < out.size() && out[o] == 1) {
      ++o;
      continue;
    }
    // Grow the group until both sides' products agree.
    size_t i0 = i, o0 = o;
    int64_t pi = in[i++], po = out[o++];
    while (pi != po) {
      if (pi < po)
        pi *= in[i++];
      else
        po *= out[o++];
    }
    // Cut points of both sides in the group's index space, major first.
    SmallVector<int64_t> cuts;
    for (size_t j = i0, p = 1; j < i; ++j)
      cuts.push_back(p *= in[j]);
    for (size_t j = o0, p = 1; j < o; ++j)
      cuts.push_back(p *= out[j]);
    llvm::sort(cuts);
    cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
    bool refines = true;
    for (size_t c = 1; c < cuts.size(); ++c)
      refines &= cuts[c] % cuts[c - 1] == 0;
    if (refines) {
      SmallVector<int64_t> factors;
      for (size_t c = 0, prev = 1; c < cuts.size(); prev = cuts[c++])
        factors.push_back(rule.addFactor(cuts[c] / prev));
      // Assign consecutive factors to each dimension of each side.
      auto assign = [&](ArrayRef<int64_t> shape, size_t begin, size_t end,
                        ShardingRule::ValueMapping &map) {
        size_t f = 0;
        for (size_t j = begin; j < end; ++j) {
          for (int64_t product = 1; product < shape[j]; ++f) {
            product *= rule.getFactorSize(factors[f]);
            map[j].push_back(factors[f]);
          }
        }
      };
      assign(in, i0, i, inMap);
      assign(out, o0, o, outMap);
    } else {
      for (size_t j = i0; j < i; ++j)
        inMap[j].push_back(rule.addFactor(in[j], FactorKind::NeedReplication));
      for (size_t j = o0; j < o; ++j)
        outMap[j].push_back(
            rule.addFactor(out[j], FactorKind::NeedReplication));
    }
  }
  rule.addOperand(inMap);
  rule.addResult(outMap);
  return rule;
}

ShardingRule TransposeOp::getShardingRule() {
  ShardingRule rule;
  ShardingRule::ValueMapping input = addDims(rule, shapeOf(getInput()));
  ShardingRule::ValueMapping result;
  for (int64_t p : getPermutation())
    result.push_back(input[p]);
  rule.addOperand(input);
  rule.addResult(result);
  return rule;
}

/// The rule of a strided window (slice reads it from `in`, pad writes it
/// into `out`): a dimension that is the whole window (offset 0, stride 1,
/// equal sizes) is parallel; any other stays whole on both sides.
static ShardingRule
stridedWindowRule(ArrayRef<int64_t> in, ArrayRef<int64_t> out,
                  ArrayRef<int64_t> offsets,
                  std::optional<ArrayRef<int64_t>> strides) {
  ShardingRule rule;
  ShardingRule::ValueMapping inMap, outMap;
  for (size_t d = 0; d < in.size(); ++d) {
    bool whole =
        offsets[d] == 0 && in[d] == out[d] && (!strides || (*strides)[d] == 1);
    if (whole) {
      int64_t f = rule.addFactor(in[d]);
      inMap.push_back({f});
      outMap.push_back({f});
    } else {
      inMap.push_back({rule.addFactor(in[d], FactorKind::NeedReplication)});
      outMap.push_back({rule.addFactor(out[d], FactorKind::NeedReplication)});
    }
  }
  rule.addOperand(inMap);
  rule.addResult(outMap);
  return rule;
}

ShardingRule SliceOp::getShardingRule() {
  return stridedWindowRule(shapeOf(getInput()), shapeOf(getResult()),
                           getOffsets(), getStrides());
}

ShardingRule PadOp::getShardingRule() {
  return stridedWindowRule(shapeOf(getInput()), shapeOf(getResult()),
                           getOffsets(), getStrides());
}

ShardingRule ConcatOp::getShardingRule() {
  ShardingRule rule;
  ArrayRef<int64_t> out = shapeOf(getResult());
  int64_t dim = getDim();
  SmallVector<int64_t> shared;
  for (auto [d, size] : llvm::enumerate(out))
    shared.push_back(int64_t(d) == dim ? -1 : rule.addFactor(size));
  auto mapping = [&](ArrayRef<int64_t> shape) {
    ShardingRule::ValueMapping map;
    for (auto [d, size] : llvm::enumerate(shape))
      map.push_back({int64_t(d) == dim
                         ? rule.addFactor(size, FactorKind::NeedReplication)
                         : shared[d]});
    return map;
  };
  for (Value input : getInputs())
    rule.addOperand(mapping(shapeOf(input)));
  rule.addResult(mapping(out));
  return rule;
}

ShardingRule GatherOp::getShardingRule() {
  // data[..., axis, ...] indexed along `axis`: the indexed dimension stays
  // whole (a vocabulary-parallel embedding is a separate rewrite), the others
  // and every index dimension are parallel.
  ShardingRule rule;
  ArrayRef<int64_t> data = shapeOf(getData()), indices = shapeOf(getIndices());
  int64_t axis = getAxis();
  ShardingRule::ValueMapping dataMap = addDims(rule, data);
  rule.setFactorKind(dataMap[axis][0], FactorKind::NeedReplication);
  ShardingRule::ValueMapping indexMap = addDims(rule, indices);
  ShardingRule::ValueMapping result(dataMap.begin(), dataMap.begin() + axis);
  result.append(indexMap.begin(), indexMap.end());
  result.append(dataMap.begin() + axis + 1, dataMap.end());
  rule.addOperand(dataMap);
  rule.addOperand(indexMap);
  rule.addResult(result);
  return rule;
}

ShardingRule ScatterAddOp::getShardingRule() {
  // The transpose of gather's rule: the dimensions of the result other than
  // `axis` are parallel (shared with the updates); the scattered dimension
  // stays whole; the index dimensions are summed over, so splitting them
  // leaves each device a partial sum of the result (an embedding gradient
  // under data parallelism is pending over the batch axes).
  ShardingRule rule;
  ArrayRef<int64_t> out = shapeOf(getResult()), indices = shapeOf(getIndices());
  int64_t axis = getAxis();
  ShardingRule::ValueMapping outMap = addDims(rule, out);
  rule.setFactorKind(outMap[axis][0], FactorKind::NeedReplication);
  ShardingRule::ValueMapping indexMap =
      addDims(rule, indices, FactorKind::Reduction);
  ShardingRule::ValueMapping updates(outMap.begin(), outMap.begin() + axis);
  updates.append(indexMap.begin(), indexMap.end());
  updates.append(outMap.begin() + axis + 1, outMap.end());
  rule.addOperand(updates);
  rule.addOperand(indexMap);
  rule.addResult(outMap);
  return rule;
}

//===----------------------------------------------------------------------===//
// Mixture-of-experts routing
//===----------------------------------------------------------------------===//

ShardingRule TopKOp::getShardingRule() {
  // Every leading dimension is parallel; the ranked dimension and K stay
  // whole.
  ShardingRule rule;
  ArrayRef<int64_t> in = shapeOf(getInput());
  ShardingRule::ValueMapping lead = addDims(rule, in.drop_back());
  ShardingRule::ValueMapping input = lead, top = lead;
  input.push_back({rule.addFactor(in.back(), FactorKind::NeedReplication)});
  top.push_back({rule.addFactor(shapeOf(getValues()).back(),
                                FactorKind::NeedReplication)});
  rule.addOperand(input);
  rule.addResult(top);
  rule.addResult(top);
  return rule;
}

/// The factors of a routing op: the groups G and the hidden size H are
/// parallel (capacity is per group); a slot's position depends on the whole
/// group and every expert, so S, K, E and C stay whole. Returns the
/// mappings of the buffer [E, G, C, H], the slots [G, S, K(, H)] and the
/// indices [G, S, K].
struct RoutingMaps {
  ShardingRule::ValueMapping buffer, slots, indices;
};
static RoutingMaps routingMaps(ShardingRule &rule, Value buffer, Value slots,
                               Value indices) {
  ArrayRef<int64_t> b = shapeOf(buffer), i = shapeOf(indices);
  auto whole = [&](int64_t size) {
    return rule.addFactor(size, FactorKind::NeedReplication);
  };
  int64_t g = rule.addFactor(b[1]), h = rule.addFactor(b[3]);
  int64_t e = whole(b[0]), c = whole(b[2]), s = whole(i[1]), k = whole(i[2]);
  RoutingMaps maps;
  maps.buffer = {{e}, {g}, {c}, {h}};
  maps.indices = {{g}, {s}, {k}};
  // The token form [G, S, H] of a dispatch's input has no K.
  maps.slots = {{g}, {s}};
  if (shapeOf(slots).size() == 4)
    maps.slots.push_back({k});
  maps.slots.push_back({h});
  return maps;
}

/// A dispatch (slots and indices to the buffer) or a combine (the buffer
/// and indices to the slots).
static ShardingRule routingRule(Value buffer, Value slots, Value indices,
                                bool dispatch) {
  ShardingRule rule;
  RoutingMaps maps = routingMaps(rule, buffer, slots, indices);
  rule.addOperand(dispatch ? maps.slots : maps.buffer);
  rule.addOperand(maps.indices);
  rule.addResult(dispatch ? maps.buffer : maps.slots);
  return rule;
}

ShardingRule ExpertDispatchOp::getShardingRule() {
  return routingRule(getResult(), getInput(), getIndices(), /*dispatch=*/true);
}

ShardingRule ExpertCombineOp::getShardingRule() {
  return routingRule(getInput(), getResult(), getIndices(),
                     /*dispatch=*/false);
}

//===----------------------------------------------------------------------===//
// Pending sums through linear ops
//===----------------------------------------------------------------------===//

// sum_i(a_i) +- sum_i(b_i) = sum_i(a_i +- b_i): both operands pending.
SmallVector<bool> AddOp::keepsPendingSum(ArrayRef<bool> pending) {
  return pending[0] && pending[1] ? SmallVector<bool>{true, true}
                                  : SmallVector<bool>{};
}
SmallVector<bool> SubOp::keepsPendingSum(ArrayRef<bool> pending) {
  return pending[0] && pending[1] ? SmallVector<bool>{true, true}
                                  : SmallVector<bool>{};
}
// sum_i(a_i) * w = sum_i(a_i * w), with w whole (on either side).
SmallVector<bool> MulOp::keepsPendingSum(ArrayRef<bool> pending) {
  if (pending[0] != pending[1])
    return {pending[0], pending[1]};
  return {};
}
// sum_i(a_i) / w = sum_i(a_i / w); not w / sum_i(a_i).
SmallVector<bool> DivOp::keepsPendingSum(ArrayRef<bool> pending) {
  if (pending[0] && !pending[1])
    return {true, false};
  return {};
}
// -sum_i(a_i), and moving elements around, are linear.
SmallVector<bool> NegOp::keepsPendingSum(ArrayRef<bool> pending) {
  return pending[0] ? SmallVector<bool>{true} : SmallVector<bool>{};
}
SmallVector<bool> ReshapeOp::keepsPendingSum(ArrayRef<bool> pending) {
  return pending[0] ? SmallVector<bool>{true} : SmallVector<bool>{};
}
SmallVector<bool> TransposeOp::keepsPendingSum(ArrayRef<bool> pending) {
  return pending[0] ? SmallVector<bool>{true} : SmallVector<bool>{};
}
// A sum of partial sums is the partial sum of the sums: reduced after the
// sum, the reduction moves the smaller tensor (context parallelism's
// weight gradients, summed over the batch rows after their products).
SmallVector<bool> ReduceSumOp::keepsPendingSum(ArrayRef<bool> pending) {
  return pending[0] ? SmallVector<bool>{true} : SmallVector<bool>{};
}

// A mean's partial results over split reduction factors are scaled by their
// share before they are summed.
bool ReduceMeanOp::meansOverReductionFactors() { return true; }
bool SoftmaxCrossEntropyOp::meansOverReductionFactors() {
  return getReduction() == LossReduction::Mean;
}
