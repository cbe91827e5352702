//===- Padding.cpp - padding dimensions a split does not divide -----------===//
//
// See Padding.h. A requested dimension and every dimension that one factor
// of some op's sharding rule maps alone together with it form a class; the
// class is padded as one (a tied embedding, its lookup, the logits, their
// gradients and optimizer state all grow to the same size). Each op of the
// class says what the padding needs (ShardingRuleOpInterface::
// getPaddingRule); the padding's contents are never relied on.
//
//===----------------------------------------------------------------------===//

#include "partition/Dialect/Part/Transforms/Padding.h"

#include "partition/Dialect/Part/IR/FunctionAttrs.h"
#include "partition/Dialect/Part/IR/PartOps.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SetVector.h"

#include <numeric>

using namespace mlir;
using namespace partition::part;

namespace {

using Node = std::pair<Value, int64_t>; // (value, dimension)

/// A padded class: its members, the ops that see it (with the factor of
/// each op's rule it is), and the function results it reaches. A member
/// that a reshape merged with inner dimensions (the batch of [batch * seq,
/// features]) has the padded dimension as its major part: its size is
/// `size * scale`, padded to `padded() * scale`, the padding at the end.
struct PadClass {
  int64_t size = 0;   // the unpadded size
  int64_t shards = 1; // the padded size is a multiple of it
  llvm::MapVector<Node, int64_t> members; // -> scale
  llvm::MapVector<Operation *, SmallVector<int64_t, 1>> factors;
  SmallVector<std::pair<unsigned, int64_t>> results; // (result, dimension)
  std::optional<PadBlocker> blocker;

  int64_t padded() const { return (size + shards - 1) / shards * shards; }
};

std::string describeOp(Operation *op) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << op->getName() << " at ";
  op->getLoc().print(os);
  return text;
}

class Padder : public PaddingContext {
public:
  explicit Padder(func::FuncOp function) : function(function) {}

  /// The class of `request`'s dimension.
  PadClass grow(const PadRequest &request);
  /// Pads the classes (disjoint) and masks their readers.
  LogicalResult apply(ArrayRef<PadClass> classes);

  std::optional<int64_t> logicalSize(Value value, int64_t dim) override {
    auto it = logical.find({value, dim});
    if (it == logical.end())
      return std::nullopt;
    return it->second;
  }
  Value mask(OpBuilder &b, Location loc, Value value,
             ArrayRef<std::optional<int64_t>> sizes, bool lowest) override;

private:
  const ShardingRule &ruleOf(Operation *op) {
    auto it = rules.find(op);
    if (it == rules.end())
      it = rules
               .try_emplace(op, cast<ShardingRuleOpInterface>(op)
                                    .getShardingRule())
               .first;
    return it->second;
  }
  /// `value` masked over all its padded dimensions, once per value and kind,
  /// just after its definition.
  Value maskPadded(Value value, bool lowest);

  func::FuncOp function;
  llvm::DenseMap<Operation *, ShardingRule> rules;
  llvm::DenseMap<Node, int64_t> logical; // padded (value, dim) -> unpadded
  llvm::DenseMap<std::pair<Value, int>, Value> masks;
};

PadClass Padder::grow(const PadRequest &request) {
  PadClass c;
  auto type = cast<RankedTensorType>(request.value.getType());
  c.size = type.getDimSize(request.dim);
  c.shards = request.shards;
  SmallVector<Node> work = {{request.value, request.dim}};
  c.members.insert({work.front(), 1});
  auto block = [&](Operation *op, std::string reason) {
    if (!c.blocker)
      c.blocker = PadBlocker{op, std::move(reason)};
  };
  while (!work.empty() && !c.blocker) {
    auto [value, dim] = work.pop_back_val();
    int64_t scale = c.members.lookup({value, dim});
    if (cast<RankedTensorType>(value.getType()).getDimSize(dim) !=
        c.size * scale) {
      block(value.getDefiningOp() ? value.getDefiningOp() : function,
            "it links dimensions of different sizes");
      break;
    }
    SmallVector<Operation *, 4> ops;
    if (Operation *def = value.getDefiningOp())
      ops.push_back(def);
    for (Operation *user : value.getUsers())
      if (!llvm::is_contained(ops, user))
        ops.push_back(user);
    for (Operation *op : ops) {
      if (isa<func::ReturnOp>(op)) {
        for (OpOperand &use : op->getOpOperands())
          if (use.get() == value &&
              !llvm::is_contained(c.results,
                                  std::make_pair(use.getOperandNumber(), dim)))
            c.results.push_back({use.getOperandNumber(), dim});
        continue;
      }
      if (!isa<ShardingRuleOpInterface>(op)) {
        block(op, "it has no sharding rule");
        break;
      }
      const ShardingRule &rule = ruleOf(op);
      // The factor of this dimension in the op, wherever the value appears.
      SmallVector<const ShardingRule::ValueMapping *, 2> where;
      for (auto [v, m] : llvm::zip(op->getOperands(), rule.getOperandMappings()))
        if (v == value)
          where.push_back(&m);
      for (auto [v, m] : llvm::zip(op->getResults(), rule.getResultMappings()))
        if (v == value)
          where.push_back(&m);
      for (const ShardingRule::ValueMapping *m : where) {
        // The padded part is the major factor of the dimension; the others
        // (a reshape's inner dimensions) make its scale.
        const auto &factors = (*m)[dim];
        if (factors.empty()) {
          block(op, "it broadcasts the dimension");
          break;
        }
        int64_t f = factors.front(), inner = 1;
        for (int64_t g : ArrayRef<int64_t>(factors).drop_front())
          inner *= rule.getFactorSize(g);
        if (scale % inner) {
          block(op, "it splits the dimension across others");
          break;
        }
        int64_t unit = scale / inner;
        auto &list = c.factors[op];
        if (llvm::is_contained(list, f))
          continue;
        list.push_back(f);
        auto link = [&](Value v, const ShardingRule::ValueMapping &mapping) {
          for (auto [d, fs] : llvm::enumerate(mapping)) {
            auto at = llvm::find(fs, f);
            if (at == fs.end())
              continue;
            if (at != fs.begin()) {
              block(op, "it merges the dimension, as a minor part, with "
                        "others");
              return;
            }
            int64_t k = unit;
            for (int64_t g : ArrayRef<int64_t>(fs).drop_front())
              k *= rule.getFactorSize(g);
            auto [it, fresh] = c.members.insert({{v, int64_t(d)}, k});
            if (fresh)
              work.push_back({v, int64_t(d)});
            else if (it->second != k)
              block(op, "it links the dimension at two scales");
          }
        };
        for (auto [v, mapping] :
             llvm::zip(op->getOperands(), rule.getOperandMappings()))
          link(v, mapping);
        for (auto [v, mapping] :
             llvm::zip(op->getResults(), rule.getResultMappings()))
          link(v, mapping);
      }
      if (c.blocker)
        break;
    }
  }
  if (c.blocker)
    return c;
  for (auto &[op, factors] : c.factors)
    for (int64_t f : factors) {
      PaddingRule r =
          cast<ShardingRuleOpInterface>(op).getPaddingRule(ruleOf(op), f);
      if (r.kind == PaddingRule::Kind::Unsupported) {
        c.blocker = PadBlocker{op, r.reason};
        return c;
      }
    }
  return c;
}

Value Padder::mask(OpBuilder &b, Location loc, Value value,
                   ArrayRef<std::optional<int64_t>> sizes, bool lowest) {
  auto type = cast<RankedTensorType>(value.getType());
  MLIRContext *ctx = b.getContext();
  // condition: i32, the value's padded dimensions and 1 elsewhere; 1 where
  // every index is below its logical size.
  SmallVector<int64_t> shape(type.getRank(), 1);
  for (auto [d, n] : llvm::enumerate(sizes))
    if (n)
      shape[d] = type.getDimSize(d);
  auto condType = RankedTensorType::get(shape, IntegerType::get(ctx, 32));
  SmallVector<APInt> bits;
  bits.reserve(condType.getNumElements());
  SmallVector<int64_t> index(shape.size(), 0);
  for (int64_t e = 0, n = condType.getNumElements(); e < n; ++e) {
    bool inside = true;
    for (auto [d, size] : llvm::enumerate(sizes))
      if (size && index[d] >= *size)
        inside = false;
    bits.push_back(APInt(32, inside ? 1 : 0));
    for (int64_t d = int64_t(shape.size()) - 1; d >= 0; --d) {
      if (++index[d] < shape[d])
        break;
      index[d] = 0;
    }
  }
  Value cond =
      ConstantOp::create(b, loc, DenseElementsAttr::get(condType, bits));
  auto elt = cast<FloatType>(type.getElementType());
  APFloat fill = lowest ? APFloat::getLargest(elt.getFloatSemantics(),
                                              /*Negative=*/true)
                        : APFloat::getZero(elt.getFloatSemantics());
  Value neutral = ConstantOp::create(
      b, loc,
      DenseElementsAttr::get(RankedTensorType::get({}, elt),
                             FloatAttr::get(elt, fill)));
  return SelectOp::create(b, loc, type, cond, value, neutral);
}

Value Padder::maskPadded(Value value, bool lowest) {
  auto key = std::make_pair(value, int(lowest));
  if (Value done = masks.lookup(key))
    return done;
  auto type = cast<RankedTensorType>(value.getType());
  SmallVector<std::optional<int64_t>> sizes;
  for (int64_t d = 0; d < type.getRank(); ++d)
    sizes.push_back(logicalSize(value, d));
  OpBuilder b(function.getContext());
  if (Operation *def = value.getDefiningOp())
    b.setInsertionPointAfter(def);
  else
    b.setInsertionPointToStart(cast<BlockArgument>(value).getOwner());
  Value masked = mask(b, value.getLoc(), value, sizes, lowest);
  masks[key] = masked;
  return masked;
}

LogicalResult Padder::apply(ArrayRef<PadClass> classes) {
  MLIRContext *ctx = function.getContext();
  Block &entry = function.getBody().front();
  auto ret = cast<func::ReturnOp>(entry.getTerminator());
  // The unpadded shapes of the arguments and results that change.
  llvm::MapVector<unsigned, SmallVector<int64_t>> argShapes, resultShapes;
  auto shapeOf = [](Value v) {
    return llvm::to_vector(cast<RankedTensorType>(v.getType()).getShape());
  };
  for (const PadClass &c : classes) {
    for (const auto &[node, scale] : c.members)
      if (auto arg = dyn_cast<BlockArgument>(node.first);
          arg && arg.getOwner() == &entry)
        argShapes.try_emplace(arg.getArgNumber(), shapeOf(arg));
    for (auto [result, dim] : c.results)
      resultShapes.try_emplace(result, shapeOf(ret.getOperand(result)));
  }

  // Retype every member.
  for (const PadClass &c : classes)
    for (const auto &[node, scale] : c.members) {
      auto [value, dim] = node;
      auto type = cast<RankedTensorType>(value.getType());
      SmallVector<int64_t> shape(type.getShape());
      shape[dim] = c.padded() * scale;
      value.setType(type.clone(shape));
      logical[node] = c.size * scale;
    }

  // Masks and rescales first, then the ops that rewrite themselves (they
  // see their masked operands).
  llvm::SetVector<Operation *> rewrites;
  for (const PadClass &c : classes)
    for (auto &[op, factors] : c.factors)
      for (int64_t f : factors) {
        PaddingRule r =
            cast<ShardingRuleOpInterface>(op).getPaddingRule(ruleOf(op), f);
        switch (r.kind) {
        case PaddingRule::Kind::Free:
        case PaddingRule::Kind::Unsupported: // checked by grow()
          break;
        case PaddingRule::Kind::Rewrite:
          rewrites.insert(op);
          break;
        case PaddingRule::Kind::MaskZero:
        case PaddingRule::Kind::MaskLowest: {
          bool lowest = r.kind == PaddingRule::Kind::MaskLowest;
          for (unsigned i : r.operands)
            op->setOperand(i, maskPadded(op->getOperand(i), lowest));
          if (r.rescale) {
            OpBuilder b(op->getContext());
            b.setInsertionPointAfter(op);
            Value result = op->getResult(0);
            auto type = cast<RankedTensorType>(result.getType());
            Value scale = ConstantOp::create(
                b, op->getLoc(),
                DenseElementsAttr::get(
                    RankedTensorType::get({}, type.getElementType()),
                    b.getFloatAttr(type.getElementType(),
                                   double(c.padded()) / double(c.size))));
            auto scaled = MulOp::create(b, op->getLoc(), result, scale);
            result.replaceAllUsesExcept(scaled.getResult(), scaled);
          }
          break;
        }
        }
      }
  for (Operation *op : rewrites) {
    OpBuilder b(op);
    if (failed(cast<ShardingRuleOpInterface>(op).rewritePadded(b, *this)))
      return failure();
    if (!op->use_empty())
      return op->emitOpError("left uses of its results after its rewrite "
                             "for padding");
    op->erase();
  }

  // The signature, with the unpadded shapes recorded.
  function.setType(FunctionType::get(ctx, entry.getArgumentTypes(),
                                     ret.getOperandTypes()));
  FunctionAttrEditor attrs(function);
  StringRef name = PartDialect::getLogicalShapeAttrName();
  for (auto &[index, shape] : argShapes)
    attrs.setArg(index, name, DenseI64ArrayAttr::get(ctx, shape));
  for (auto &[index, shape] : resultShapes)
    attrs.setResult(index, name, DenseI64ArrayAttr::get(ctx, shape));
  attrs.commit();
  return success();
}

} // namespace

std::string partition::part::describeDimension(func::FuncOp function,
                                               Value value, int64_t dim) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "dimension " << dim << " of ";
  if (auto arg = dyn_cast<BlockArgument>(value)) {
    os << "argument " << arg.getArgNumber();
    if (auto name = function.getArgAttrOfType<StringAttr>(
            arg.getArgNumber(), PartDialect::getNameAttrName()))
      os << " (\"" << name.getValue() << "\")";
  } else {
    os << "the result of " << describeOp(value.getDefiningOp());
  }
  return text;
}

std::optional<PadBlocker>
partition::part::checkPadding(func::FuncOp function,
                              const PadRequest &request) {
  Padder padder(function);
  return padder.grow(request).blocker;
}

LogicalResult partition::part::padForSplits(func::FuncOp function,
                                            ArrayRef<PadRequest> requests) {
  Padder padder(function);
  SmallVector<PadClass> classes;
  for (const PadRequest &request : requests) {
    Node node = {request.value, request.dim};
    // A request in a class already grown raises its shard count.
    auto known = llvm::find_if(
        classes, [&](const PadClass &c) { return c.members.count(node); });
    if (known != classes.end()) {
      known->shards = std::lcm(known->shards, request.shards);
      continue;
    }
    PadClass c = padder.grow(request);
    if (c.blocker) {
      auto type = cast<RankedTensorType>(request.value.getType());
      int64_t n = type.getDimSize(request.dim);
      return c.blocker->op->emitOpError()
             << "cannot read a padded dimension: "
             << describeDimension(function, request.value, request.dim)
             << " (size " << n << ") would be padded to "
             << (n + request.shards - 1) / request.shards * request.shards
             << " to split it into " << request.shards
             << " blocks, but this op reaches it and " << c.blocker->reason;
    }
    classes.push_back(std::move(c));
  }
  llvm::erase_if(classes,
                 [](const PadClass &c) { return c.size % c.shards == 0; });
  if (classes.empty())
    return success();
  return padder.apply(classes);
}
