//===- Propagation.cpp - sharding propagation as an analysis --------------===//
//
// See Propagation.h.
//
//===----------------------------------------------------------------------===//

#include "partition/Dialect/Part/Analysis/Propagation.h"
#include "partition/Dialect/Part/Analysis/ShardingProjection.h"
#include "partition/Dialect/Part/IR/FunctionAttrs.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Debug.h"
#include "llvm/Support/StringSaver.h"

#include <numeric>

#define DEBUG_TYPE "part-propagate-shardings"

using namespace mlir;
using namespace partition::part;

namespace {

/// How much a value's sharding is to be trusted over another's.
enum class Priority { None = 0, Propagated = 1, User = 2 };

/// What propagation knows about one value.
struct State {
  Layout layout;
  Priority priority = Priority::None;
  StringRef origin; // interned (Impl::origins)
};

/// Axes a factor takes, with the priority and origin of their source.
struct FactorChoice {
  SmallVector<StringAttr> axes;
  Priority priority = Priority::None;
  StringRef origin;
  /// Bytes of the value the axes come from: the other choice's value would
  /// have to be resharded, so at equal priority the larger value wins.
  int64_t bytes = 0;
};

/// Bytes of a ranked tensor value.
static int64_t bytesOf(Value v) {
  auto type = cast<RankedTensorType>(v.getType());
  return type.getNumElements() *
         std::max<int64_t>(1, type.getElementTypeBitWidth() / 8);
}

} // namespace

class partition::part::ShardingPropagation::Impl {
public:
  Impl(func::FuncOp function, MeshOp mesh)
      : function(function), mesh(mesh), meshAttr(mesh.getMesh()) {
    for (auto [axis, size] :
         llvm::zip(meshAttr.getAxisNames(), meshAttr.getAxisSizes()))
      axisSizes[axis] = size;
  }

  /// Propagates without changing the IR.
  LogicalResult compute();

  LogicalResult seed();
  ShardingAttr build(const State &state);
  State &stateOf(Value v);
  void setFromSharding(Value v, ShardingAttr s, Priority p, std::string why);
  bool visit(Operation *op, const ShardingRule &rule);
  void write();
  int64_t axisSize(StringAttr axis) const { return axisSizes.lookup(axis); }

  func::FuncOp function;
  MeshOp mesh;
  MeshAttr meshAttr;
  llvm::SmallDenseMap<StringAttr, int64_t, 4> axisSizes;
  llvm::DenseMap<Value, State> states;
  llvm::DenseSet<Value> reported; // values whose unsplit dimension was reported
  /// Each distinct origin text once: states and choices refer to it.
  llvm::BumpPtrAllocator originStorage;
  llvm::UniqueStringSaver origins{originStorage};
  /// Values whose state changed during the current visit.
  SmallVector<Value> touched;
};


State &ShardingPropagation::Impl::stateOf(Value v) {
  auto [it, inserted] = states.try_emplace(v);
  if (inserted)
    it->second.layout =
        Layout::replicated(cast<RankedTensorType>(v.getType()).getRank());
  return it->second;
}

void ShardingPropagation::Impl::setFromSharding(Value v, ShardingAttr s, Priority p,
                                  std::string why) {
  State &state = stateOf(v);
  state.layout = Layout::of(s, s.getRank());
  state.priority = p;
  state.origin = origins.save(why);
}

/// "file:line:col" of `loc` when it has one.
static std::string where(Location loc) {
  if (auto file = dyn_cast<FileLineColLoc>(loc))
    return (file.getFilename().getValue() + ":" + Twine(file.getLine()) + ":" +
            Twine(file.getColumn()))
        .str();
  return "";
}

LogicalResult ShardingPropagation::Impl::seed() {
  StringRef name = PartDialect::getShardingAttrName();
  for (auto [i, arg] : llvm::enumerate(function.getArguments()))
    if (auto s = function.getArgAttrOfType<ShardingAttr>(i, name))
      setFromSharding(arg, s, Priority::User,
                      "annotation on argument " + std::to_string(i) + " of @" +
                          function.getName().str());
  WalkResult result = function.walk([&](Operation *op) {
    if (auto ret = dyn_cast<func::ReturnOp>(op)) {
      for (auto [i, v] : llvm::enumerate(ret.getOperands()))
        if (auto s = function.getResultAttrOfType<ShardingAttr>(i, name))
          setFromSharding(v, s, Priority::User,
                          "annotation on result " + std::to_string(i) +
                              " of @" + function.getName().str());
      return WalkResult::advance();
    }
    if (auto c = dyn_cast<ShardingConstraintOp>(op)) {
      setFromSharding(c.getResult(), c.getSharding(), Priority::User,
                      "sharding_constraint at " + where(op->getLoc()));
      return WalkResult::advance();
    }
    if (op->getNumResults() == 1)
      if (auto s = op->getAttrOfType<ShardingAttr>(name)) {
        // A sharding already on a result is kept: the user's when it has no
        // recorded origin, propagation's otherwise.
        bool propagated = op->hasAttr(PartDialect::getShardingOriginAttrName());
        setFromSharding(
            op->getResult(0), s,
            propagated ? Priority::Propagated : Priority::User,
            propagated ? op->getAttrOfType<StringAttr>(
                               PartDialect::getShardingOriginAttrName())
                             .str()
                       : "annotation on " + op->getName().getStringRef().str() +
                             " at " + where(op->getLoc()));
      }
    if (isa<PartDialect>(op->getDialect()) &&
        !isa<ShardingRuleOpInterface, MeshOp>(op) && op->getNumResults()) {
      op->emitOpError() << "has no sharding rule, so its operands and results "
                           "cannot be sharded";
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return failure(result.wasInterrupted());
}

bool ShardingPropagation::Impl::visit(Operation *op, const ShardingRule &rule) {
  SmallVector<FactorChoice> choices(rule.getNumFactors());

  // Gather: what each value's layout gives the op's factors (one
  // projection, see ShardingProjection.h).
  auto collect = [&](Value v, const ShardingRule::ValueMapping &mapping) {
    auto it = states.find(v);
    if (it == states.end() || it->second.priority == Priority::None)
      return;
    const State &state = it->second;
    int64_t bytes = bytesOf(v);
    ValueProjection projection = projectOntoFactors(
        rule, mapping, state.layout,
        [&](StringAttr axis) { return axisSize(axis); });
    for (auto [f, mine] : llvm::enumerate(projection.factorAxes)) {
      if (mine.empty())
        continue;
      // Higher priority wins. At equal priority, a finer split of the same
      // axes wins; between splits that disagree, the larger value's wins,
      // since the smaller one is cheaper to reshard.
      FactorChoice &choice = choices[f];
      size_t common = std::min(mine.size(), choice.axes.size());
      bool agree = ArrayRef<StringAttr>(mine).take_front(common) ==
                   ArrayRef<StringAttr>(choice.axes).take_front(common);
      bool better = state.priority > choice.priority ||
                    (state.priority == choice.priority &&
                     ((agree && mine.size() > choice.axes.size()) ||
                      (!agree && bytes > choice.bytes)));
      if (better) {
        choice.axes = mine;
        choice.priority = state.priority;
        choice.origin = state.origin;
        choice.bytes = bytes;
      }
    }
    for (auto [d, left] : llvm::enumerate(projection.leftover)) {
      if (left.empty() || !reported.insert(v).second)
        continue;
      // Axes the op's factors cannot take stop at this op: say so.
      std::string names;
      for (StringAttr axis : left)
        names += (names.empty() ? "\"" : ", \"") + axis.str() + "\"";
      op->emitRemark() << "cannot carry mesh axes " << names
                       << " of dimension " << d << " (size "
                       << cast<RankedTensorType>(v.getType()).getDimSize(d)
                       << ") through: they do not split the op's factors "
                          "of that dimension evenly";
    }
  };
  for (auto [v, mapping] :
       llvm::zip(op->getOperands(), rule.getOperandMappings()))
    collect(v, mapping);
  for (auto [v, mapping] :
       llvm::zip(op->getResults(), rule.getResultMappings()))
    collect(v, mapping);

  // An axis may shard one factor only: higher-priority factors keep theirs.
  SmallVector<int64_t> order(rule.getNumFactors());
  std::iota(order.begin(), order.end(), 0);
  llvm::stable_sort(order, [&](int64_t a, int64_t b) {
    if (choices[a].priority != choices[b].priority)
      return choices[a].priority > choices[b].priority;
    return choices[a].bytes > choices[b].bytes;
  });
  llvm::SmallDenseSet<StringAttr> used;
  for (int64_t f : order) {
    SmallVector<StringAttr> kept;
    for (StringAttr axis : choices[f].axes) {
      if (!used.insert(axis).second)
        break; // keep a prefix so the split stays major to minor
      kept.push_back(axis);
    }
    choices[f].axes = kept;
  }

  // Scatter: a value takes the factors' axes where it has fewer.
  bool changed = false;
  FactorAxes factorAxes;
  for (const FactorChoice &choice : choices)
    factorAxes.push_back(choice.axes);
  auto apply = [&](Value v, const ShardingRule::ValueMapping &mapping,
                   bool isResult) {
    State &state = stateOf(v);
    if (state.priority == Priority::User)
      return;
    Layout layout = layoutFromFactors(rule, mapping, factorAxes, isResult);
    // Every source that contributed axes, in order of first appearance.
    Priority best = Priority::None;
    SmallVector<StringRef, 4> sources;
    auto take = [&](const FactorChoice &choice) {
      if (choice.axes.empty())
        return;
      best = std::max(best, choice.priority);
      if (!llvm::is_contained(sources, choice.origin))
        sources.push_back(choice.origin);
    };
    for (const auto &factors : mapping)
      for (int64_t f : factors)
        take(choices[f]);
    if (isResult)
      for (int64_t f = 0; f < rule.getNumFactors(); ++f)
        if (rule.getFactorKind(f) == FactorKind::Reduction)
          take(choices[f]);
    if (best == Priority::None || layout.numAxes() <= state.layout.numAxes())
      return;
    // Sharding must divide each dimension.
    ArrayRef<int64_t> shape = cast<RankedTensorType>(v.getType()).getShape();
    for (auto [d, axes] : llvm::enumerate(layout.dims)) {
      int64_t shards = 1;
      for (StringAttr axis : axes)
        shards *= axisSize(axis);
      if (shape[d] % shards)
        return; // cannot happen: factors divide their dimensions
    }
    state.layout = std::move(layout);
    state.priority = Priority::Propagated;
    state.origin = sources.size() == 1 ? sources.front()
                                       : origins.save(llvm::join(sources, "; "));
    changed = true;
    touched.push_back(v);
  };
  for (auto [v, mapping] :
       llvm::zip(op->getOperands(), rule.getOperandMappings()))
    apply(v, mapping, /*isResult=*/false);
  for (auto [v, mapping] :
       llvm::zip(op->getResults(), rule.getResultMappings()))
    apply(v, mapping, /*isResult=*/true);
  return changed;
}

ShardingAttr ShardingPropagation::Impl::build(const State &state) {
  return state.layout.toAttr(function.getContext(),
                             FlatSymbolRefAttr::get(mesh.getSymNameAttr()));
}

void ShardingPropagation::Impl::write() {
  MLIRContext *ctx = function.getContext();
  StringRef name = PartDialect::getShardingAttrName();
  FunctionAttrEditor attrs(function);
  for (auto [i, arg] : llvm::enumerate(function.getArguments())) {
    auto it = states.find(arg);
    if (it == states.end() || it->second.priority != Priority::Propagated)
      continue;
    attrs.setArg(i, name, build(it->second));
    attrs.setArg(i, PartDialect::getShardingOriginAttrName(),
                 StringAttr::get(ctx, it->second.origin));
  }
  attrs.commit();
  function.walk([&](Operation *op) {
    if (op->getNumResults() != 1 || isa<ShardingConstraintOp>(op))
      return;
    auto it = states.find(op->getResult(0));
    // Write what propagation found, and the user's shardings that were given
    // elsewhere (on a function result) onto the op that computes the value.
    if (it == states.end() || it->second.priority == Priority::None ||
        (it->second.priority == Priority::User && op->hasAttr(name)))
      return;
    op->setAttr(name, build(it->second));
    op->setAttr(PartDialect::getShardingOriginAttrName(),
                StringAttr::get(ctx, it->second.origin));
  });
}

LogicalResult ShardingPropagation::Impl::compute() {
  if (failed(seed()))
    return failure();
  // Each op's rule, built once for all the rounds.
  std::vector<std::pair<Operation *, ShardingRule>> ops;
  function.walk([&](ShardingRuleOpInterface ruled) {
    ops.push_back({ruled.getOperation(), ruled.getShardingRule()});
  });
  // Forward, then backward, until nothing changes. Each change adds axes to
  // some value, so this ends; the bound is a guard against a bug. An op none
  // of whose values changed since its last visit would change nothing: only
  // the ops a change touched are visited again.
  llvm::DenseMap<Operation *, unsigned> index;
  for (auto [i, entry] : llvm::enumerate(ops))
    index[entry.first] = i;
  std::vector<bool> dirty(ops.size(), true);
  auto visitAt = [&](size_t i) {
    if (!dirty[i])
      return false;
    dirty[i] = false;
    touched.clear();
    bool changed = visit(ops[i].first, ops[i].second);
    for (Value v : touched) {
      auto mark = [&](Operation *op) {
        auto it = index.find(op);
        if (it != index.end())
          dirty[it->second] = true;
      };
      if (Operation *def = v.getDefiningOp())
        mark(def);
      for (Operation *user : v.getUsers())
        mark(user);
    }
    return changed;
  };
  for (int round = 0; round < 64; ++round) {
    bool changed = false;
    for (size_t i = 0; i < ops.size(); ++i)
      changed |= visitAt(i);
    for (size_t i = ops.size(); i-- > 0;)
      changed |= visitAt(i);
    LLVM_DEBUG(llvm::dbgs() << "round " << round << ": "
                            << (changed ? "changed" : "fixed point") << "\n");
    if (!changed)
      return success();
  }
  return function.emitError() << "sharding propagation did not converge";
}


ShardingPropagation::ShardingPropagation(func::FuncOp function, MeshOp mesh)
    : impl(std::make_unique<Impl>(function, mesh)) {}

ShardingPropagation::~ShardingPropagation() = default;

LogicalResult ShardingPropagation::compute() { return impl->compute(); }

ShardingAttr ShardingPropagation::shardingOf(Value v) const {
  auto it = impl->states.find(v);
  if (it == impl->states.end() || it->second.priority == Priority::None)
    return {};
  return impl->build(it->second);
}

std::string ShardingPropagation::originOf(Value v) const {
  auto it = impl->states.find(v);
  return it == impl->states.end() ? std::string() : it->second.origin.str();
}

void ShardingPropagation::write() { impl->write(); }
