//===- Propagation.cpp - sharding propagation as an analysis --------------===//
//
// See Propagation.h.
//
//===----------------------------------------------------------------------===//

#include "partition/Dialect/Part/Analysis/Propagation.h"
#include "partition/Dialect/Part/Analysis/ShardingProjection.h"
#include "partition/Dialect/Part/Analysis/ValueTable.h"
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
  const Layout *layout = nullptr; // interned (Impl::layouts)
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
  ValueTable<State> states;
  LayoutInterner layouts;
  /// `v`'s state, null when it has none.
  const State *find(Value v) const { return states.find(v); }
  llvm::DenseSet<Value> reported; // values whose unsplit dimension was reported
  /// Each distinct origin text once: states and choices refer to it.
  llvm::BumpPtrAllocator originStorage;
  llvm::UniqueStringSaver origins{originStorage};
  /// Values whose state changed during the current visit.
  SmallVector<Value> touched;
};


State &ShardingPropagation::Impl::stateOf(Value v) {
  auto [state, inserted] = states.tryEmplace(v);
  if (inserted)
    state.layout =
        layouts.replicated(cast<RankedTensorType>(v.getType()).getRank());
  return state;
}

void ShardingPropagation::Impl::setFromSharding(Value v, ShardingAttr s, Priority p,
                                  std::string why) {
  State &state = stateOf(v);
  state.layout = layouts.intern(Layout::of(s, s.getRank()));
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
  // Optimizer state without a layout of its own is laid out as its
  // parameter (part.state_of), as every optimizer keeps it: a master copy
  // or a moment split like the weight it updates, whatever the gradient's
  // layout (under sequence parallelism the update would otherwise replicate
  // it over tp).
  for (auto [i, arg] : llvm::enumerate(function.getArguments())) {
    auto of = function.getArgAttrOfType<IntegerAttr>(
        i, PartDialect::getStateOfAttrName());
    if (!of || function.getArgAttr(i, name) || of.getInt() < 0 ||
        of.getInt() >= int64_t(function.getNumArguments()))
      continue;
    auto s = function.getArgAttrOfType<ShardingAttr>(of.getInt(), name);
    auto type = dyn_cast<RankedTensorType>(arg.getType());
    auto paramType = dyn_cast<RankedTensorType>(
        function.getArgument(of.getInt()).getType());
    if (s && type && paramType && type.getShape() == paramType.getShape())
      setFromSharding(arg, s, Priority::User,
                      "annotation on argument " + std::to_string(of.getInt()) +
                          " of @" + function.getName().str() +
                          " (the parameter this state updates with)");
  }
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
      // A pass's constraint says, in its location's name, what it is for.
      auto named = dyn_cast<NameLoc>(op->getLoc());
      setFromSharding(c.getResult(), c.getSharding(), Priority::User,
                      named ? named.getName().str()
                            : "sharding_constraint at " + where(op->getLoc()));
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
  SmallVector<FactorChoice, 8> choices(rule.getNumFactors());

  // Gather: what each value's layout gives the op's factors (one
  // projection, see ShardingProjection.h).
  auto collect = [&](Value v, const ShardingRule::ValueMapping &mapping) {
    const State *found = find(v);
    // A value with no axes gives no factor any (and leaves none over).
    if (!found || found->priority == Priority::None ||
        found->layout->numAxes() == 0)
      return;
    const State &state = *found;
    int64_t bytes = bytesOf(v);
    ValueProjection projection = projectOntoFactors(
        rule, mapping, *state.layout,
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
      // Axes of size 1 split nothing: losing them is no loss.
      if (llvm::all_of(left, [&](StringAttr a) { return axisSize(a) == 1; }))
        continue;
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
  SmallVector<int64_t, 8> order(rule.getNumFactors());
  std::iota(order.begin(), order.end(), 0);
  llvm::stable_sort(order, [&](int64_t a, int64_t b) {
    if (choices[a].priority != choices[b].priority)
      return choices[a].priority > choices[b].priority;
    return choices[a].bytes > choices[b].bytes;
  });
  llvm::SmallDenseSet<StringAttr> used;
  for (int64_t f : order) {
    SmallVector<StringAttr> &axes = choices[f].axes;
    size_t kept = 0;
    // Keep a prefix so the split stays major to minor.
    while (kept < axes.size() && used.insert(axes[kept]).second)
      ++kept;
    axes.truncate(kept);
  }
  // A minor factor split while a major one in the same dimension is not
  // (a reshape merging [8, 16] split on its 16) splits that dimension into
  // strides, which no layout holds: such a factor takes no axes.
  FactorAxes factorAxes;
  for (const FactorChoice &choice : choices)
    factorAxes.push_back(choice.axes);
  if (dropStridedSplits(rule, factorAxes,
                        [&](StringAttr axis) { return axisSize(axis); }))
    for (auto [choice, axes] : llvm::zip(choices, factorAxes))
      choice.axes = axes;

  // Scatter: a value takes the factors' axes where it has fewer.
  bool changed = false;
  if (llvm::all_of(choices, [](const FactorChoice &c) { return c.axes.empty(); }))
    return false; // no factor carries axes: no value gains any
  auto apply = [&](Value v, const ShardingRule::ValueMapping &mapping,
                   bool isResult) {
    State &state = stateOf(v);
    if (state.priority == Priority::User)
      return;
    // Every source that contributed axes, in order of first appearance, and
    // how many axes the value would get: it only ever gains axes.
    Priority best = Priority::None;
    size_t numAxes = 0;
    SmallVector<StringRef, 4> sources;
    auto take = [&](const FactorChoice &choice) {
      if (choice.axes.empty())
        return;
      numAxes += choice.axes.size();
      best = std::max(best, choice.priority);
      if (!llvm::is_contained(sources, choice.origin))
        sources.push_back(choice.origin);
    };
    for (const auto &factors : mapping)
      for (int64_t f : factors)
        take(choices[f]);
    if (isResult)
      for (int64_t f = 0; f < rule.getNumFactors(); ++f)
        if (rule.getFactorKind(f) == FactorKind::Reduction &&
            !ShardingRule::mapsFactor(mapping, f))
          take(choices[f]);
    if (best == Priority::None || numAxes <= state.layout->numAxes())
      return;
    Layout layout = layoutFromFactors(rule, mapping, factorAxes, isResult);
    // Sharding must divide each dimension.
    ArrayRef<int64_t> shape = cast<RankedTensorType>(v.getType()).getShape();
    for (auto [d, axes] : llvm::enumerate(layout.dims)) {
      int64_t shards = 1;
      for (StringAttr axis : axes)
        shards *= axisSize(axis);
      if (shape[d] % shards)
        return; // cannot happen: factors divide their dimensions
    }
    state.layout = layouts.intern(layout);
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
  return state.layout->toAttr(function.getContext(),
                             FlatSymbolRefAttr::get(mesh.getSymNameAttr()));
}

void ShardingPropagation::Impl::write() {
  MLIRContext *ctx = function.getContext();
  StringRef name = PartDialect::getShardingAttrName();
  FunctionAttrEditor attrs(function);
  for (auto [i, arg] : llvm::enumerate(function.getArguments())) {
    // Propagated layouts, and the user's given elsewhere (a state laid out
    // as its annotated parameter).
    const State *state = find(arg);
    if (!state || state->priority == Priority::None ||
        (state->priority == Priority::User && function.getArgAttr(i, name)))
      continue;
    attrs.setArg(i, name, build(*state));
    attrs.setArg(i, PartDialect::getShardingOriginAttrName(),
                 StringAttr::get(ctx, state->origin));
  }
  attrs.commit();
  function.walk([&](Operation *op) {
    if (op->getNumResults() != 1 || isa<ShardingConstraintOp>(op))
      return;
    const State *state = find(op->getResult(0));
    // Write what propagation found, and the user's shardings that were given
    // elsewhere (on a function result) onto the op that computes the value.
    if (!state || state->priority == Priority::None ||
        (state->priority == Priority::User && op->hasAttr(name)))
      return;
    NamedAttrList attrs(op->getAttrDictionary());
    attrs.set(name, build(*state));
    attrs.set(PartDialect::getShardingOriginAttrName(),
              StringAttr::get(ctx, state->origin));
    op->setAttrs(attrs.getDictionary(ctx));
  });
}

LogicalResult ShardingPropagation::Impl::compute() {
  if (failed(seed()))
    return failure();
  // Each op's rule, built once for all the rounds.
  std::vector<std::pair<Operation *, ShardingRule>> ops;
  size_t count = 0;
  function.walk([&](ShardingRuleOpInterface) { ++count; });
  ops.reserve(count); // a rule is copied, not moved, when the vector grows
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
  const State *state = impl->find(v);
  if (!state || state->priority == Priority::None)
    return {};
  return impl->build(*state);
}

std::string ShardingPropagation::originOf(Value v) const {
  const State *state = impl->find(v);
  return state ? state->origin.str() : std::string();
}

void ShardingPropagation::write() { impl->write(); }
