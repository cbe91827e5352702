//===- PropagateShardings.cpp - spread shardings through the program ------===//
//
// Each value gets a sharding from the user's annotations, carried through
// every op by its sharding rule, forward and backward until nothing changes.
// A factor takes its mesh axes from the highest-priority dimension that
// carries some (a user annotation beats a propagated sharding); values only
// ever gain axes, so the iteration ends. Need-replication factors never carry
// axes: the partitioner reshards their operands. Axes on a reduction factor
// make the result unreduced over them. Every value that receives a sharding
// records where it came from in `part.sharding_origin`.
//
// Also the ZeRO pass (`part-zero`): it adds annotations that split optimizer
// state, gradients and parameters over the data-parallel axis on top of the
// layouts propagation would give them, and finds those layouts by running
// propagation on a copy of the function, so it lives here.
//
//===----------------------------------------------------------------------===//

#include "partition/Dialect/Part/Analysis/ShardingProjection.h"
#include "partition/Dialect/Part/IR/FunctionAttrs.h"
#include "partition/Dialect/Part/IR/PartOps.h"
#include "partition/Dialect/Part/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Debug.h"

#include <numeric>

#define DEBUG_TYPE "part-propagate-shardings"

namespace partition::part {
#define GEN_PASS_DEF_PARTPROPAGATESHARDINGSPASS
#define GEN_PASS_DEF_PARTZEROPASS
#include "partition/Dialect/Part/Transforms/Passes.h.inc"
} // namespace partition::part

using namespace mlir;
using namespace partition::part;

namespace {

/// How much a value's sharding is to be trusted over another's.
enum class Priority { None = 0, Propagated = 1, User = 2 };

/// What propagation knows about one value.
struct State {
  Layout layout;
  Priority priority = Priority::None;
  std::string origin;
};

/// Axes a factor takes, with the priority and origin of their source.
struct FactorChoice {
  SmallVector<StringAttr> axes;
  Priority priority = Priority::None;
  std::string origin;
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

class Propagation {
public:
  Propagation(func::FuncOp function, MeshOp mesh)
      : function(function), mesh(mesh), meshAttr(mesh.getMesh()) {
    for (auto [axis, size] :
         llvm::zip(meshAttr.getAxisNames(), meshAttr.getAxisSizes()))
      axisSizes[axis] = size;
  }

  /// Propagates and writes the result onto the function.
  LogicalResult run() {
    if (failed(compute()))
      return failure();
    write();
    return success();
  }
  /// Propagates without changing the IR.
  LogicalResult compute();
  /// Argument `i`'s sharding after compute(): null when it got none.
  ShardingAttr argumentSharding(unsigned i) {
    auto it = states.find(function.getArgument(i));
    if (it == states.end() || it->second.priority == Priority::None)
      return {};
    return build(it->second);
  }

private:
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
};

} // namespace

State &Propagation::stateOf(Value v) {
  auto [it, inserted] = states.try_emplace(v);
  if (inserted)
    it->second.layout =
        Layout::replicated(cast<RankedTensorType>(v.getType()).getRank());
  return it->second;
}

void Propagation::setFromSharding(Value v, ShardingAttr s, Priority p,
                                  std::string why) {
  State &state = stateOf(v);
  state.layout = Layout::of(s, s.getRank());
  state.priority = p;
  state.origin = std::move(why);
}

/// "file:line:col" of `loc` when it has one.
static std::string where(Location loc) {
  if (auto file = dyn_cast<FileLineColLoc>(loc))
    return (file.getFilename().getValue() + ":" + Twine(file.getLine()) + ":" +
            Twine(file.getColumn()))
        .str();
  return "";
}

LogicalResult Propagation::seed() {
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

bool Propagation::visit(Operation *op, const ShardingRule &rule) {
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
    SmallVector<std::string> origins;
    auto take = [&](const FactorChoice &choice) {
      if (choice.axes.empty())
        return;
      best = std::max(best, choice.priority);
      if (!llvm::is_contained(origins, choice.origin))
        origins.push_back(choice.origin);
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
    state.origin = llvm::join(origins, "; ");
    changed = true;
  };
  for (auto [v, mapping] :
       llvm::zip(op->getOperands(), rule.getOperandMappings()))
    apply(v, mapping, /*isResult=*/false);
  for (auto [v, mapping] :
       llvm::zip(op->getResults(), rule.getResultMappings()))
    apply(v, mapping, /*isResult=*/true);
  return changed;
}

ShardingAttr Propagation::build(const State &state) {
  return state.layout.toAttr(function.getContext(),
                             FlatSymbolRefAttr::get(mesh.getSymNameAttr()));
}

void Propagation::write() {
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

LogicalResult Propagation::compute() {
  if (failed(seed()))
    return failure();
  // Each op's rule, built once for all the rounds.
  std::vector<std::pair<Operation *, ShardingRule>> ops;
  function.walk([&](ShardingRuleOpInterface ruled) {
    ops.push_back({ruled.getOperation(), ruled.getShardingRule()});
  });
  // Forward, then backward, until nothing changes. Each change adds axes to
  // some value, so this ends; the bound is a guard against a bug.
  for (int round = 0; round < 64; ++round) {
    bool changed = false;
    for (auto &[op, rule] : ops)
      changed |= visit(op, rule);
    for (auto &[op, rule] : llvm::reverse(ops))
      changed |= visit(op, rule);
    LLVM_DEBUG(llvm::dbgs() << "round " << round << ": "
                            << (changed ? "changed" : "fixed point") << "\n");
    if (!changed)
      return success();
  }
  return function.emitError() << "sharding propagation did not converge";
}

namespace {
struct PartPropagateShardingsPass
    : public partition::part::impl::PartPropagateShardingsPassBase<
          PartPropagateShardingsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    for (auto function : module.getOps<func::FuncOp>()) {
      if (function.isDeclaration() || getSpmdMesh(function))
        continue;
      // The mesh is the one the function's annotations name.
      FlatSymbolRefAttr meshName;
      auto note = [&](ShardingAttr s) {
        if (s && !meshName)
          meshName = s.getMesh();
      };
      StringRef name = PartDialect::getShardingAttrName();
      for (unsigned i = 0; i < function.getNumArguments(); ++i)
        note(function.getArgAttrOfType<ShardingAttr>(i, name));
      for (unsigned i = 0; i < function.getNumResults(); ++i)
        note(function.getResultAttrOfType<ShardingAttr>(i, name));
      function.walk([&](Operation *op) {
        if (auto c = dyn_cast<ShardingConstraintOp>(op))
          note(c.getSharding());
        else
          note(op->getAttrOfType<ShardingAttr>(name));
      });
      if (!meshName)
        continue; // nothing to propagate
      MeshOp mesh = lookupMesh(function, meshName);
      Propagation propagation(function, mesh);
      if (failed(propagation.run()))
        return signalPassFailure();
    }
  }
};
} // namespace

//===----------------------------------------------------------------------===//
// part-zero
//===----------------------------------------------------------------------===//

namespace {

/// ZeRO on one training step: annotations that split state, gradients and
/// parameters over the data-parallel axis.
class ZeroSharding {
public:
  ZeroSharding(func::FuncOp function, MeshOp mesh, StringRef axis,
               unsigned stage)
      : function(function), mesh(mesh),
        axis(StringAttr::get(function.getContext(), axis)), stage(stage) {}

  LogicalResult run();

private:
  /// The optimizer update, found by data flow: the ops that compute the
  /// `part.updates` results from the gradients, and the gradients with the
  /// arguments their updates write.
  struct Update {
    llvm::SetVector<Operation *> ops;
    SmallVector<Value> gradients;
    SmallVector<SmallVector<unsigned>> targets;
  };
  FailureOr<Update> findUpdate();
  FailureOr<SmallVector<ShardingAttr>> baseArgumentShardings();
  ShardingAttr split(ShardingAttr base, RankedTensorType type);
  void remarkWhole(unsigned arg, ShardingAttr base);
  ArgRole roleOf(unsigned arg) {
    auto role = function.getArgAttrOfType<ArgRoleAttr>(
        arg, PartDialect::getRoleAttrName());
    return role ? role.getValue() : ArgRole::Input;
  }
  RankedTensorType typeOf(unsigned arg) {
    return cast<RankedTensorType>(function.getArgumentTypes()[arg]);
  }

  func::FuncOp function;
  MeshOp mesh;
  StringAttr axis;
  unsigned stage;
};

} // namespace

/// The sharding of every argument as propagation gives it without ZeRO (its
/// tensor-parallel layout), replicated where it gets none: propagation is
/// computed without writing it, its remarks silenced (the real run repeats
/// them).
FailureOr<SmallVector<ShardingAttr>> ZeroSharding::baseArgumentShardings() {
  MLIRContext *ctx = function.getContext();
  Propagation propagation(function, mesh);
  {
    ScopedDiagnosticHandler quiet(ctx, [](Diagnostic &d) {
      return success(d.getSeverity() == DiagnosticSeverity::Remark);
    });
    if (failed(propagation.compute()))
      return failure();
  }
  SmallVector<ShardingAttr> base;
  for (unsigned i = 0; i < function.getNumArguments(); ++i) {
    ShardingAttr s = propagation.argumentSharding(i);
    base.push_back(s ? s
                     : ShardingAttr::getReplicated(ctx, mesh.getSymName(),
                                                   typeOf(i).getRank()));
  }
  return base;
}

/// `base` with the axis added, as its minor axis, to the first dimension
/// whose local size (after `base`'s split) the axis divides; `base` itself
/// when it already uses the axis; null when no dimension is divisible.
ShardingAttr ZeroSharding::split(ShardingAttr base, RankedTensorType type) {
  if (base.isShardedOver(axis) || base.isUnreducedOver(axis))
    return base;
  MeshAttr meshAttr = mesh.getMesh();
  int64_t n = meshAttr.getGroupSize(axis);
  for (int64_t d = 0; d < type.getRank(); ++d) {
    int64_t local =
        type.getDimSize(d) / meshAttr.getGroupSize(base.getDimAxes(d));
    if (local % n == 0) {
      FailureOr<ShardingAttr> s = base.withDimAxesAppended(d, axis);
      if (succeeded(s))
        return *s;
    }
  }
  return {};
}

void ZeroSharding::remarkWhole(unsigned arg, ShardingAttr base) {
  auto name = function.getArgAttrOfType<StringAttr>(
      arg, PartDialect::getNameAttrName());
  RankedTensorType type = typeOf(arg);
  std::string local;
  for (int64_t d = 0; d < type.getRank(); ++d)
    local += (d ? "x" : "") +
             std::to_string(type.getDimSize(d) /
                            mesh.getMesh().getGroupSize(base.getDimAxes(d)));
  mlir::emitRemark(function.getArgument(arg).getLoc())
      << "argument " << arg << " ("
      << (name ? name.getValue() : StringRef("unnamed"))
      << ") stays whole over mesh axis \"" << axis.getValue() << "\" (size "
      << mesh.getMesh().getGroupSize(axis)
      << "): it divides no dimension of its local shape " << local;
}

/// True if `op` computes, elementwise, a value of `type` from values of
/// `type` and scalars: the shape of an optimizer update (and of a gradient
/// accumulation or scaling), not of the backward ops that produce a gradient.
static bool isElementwiseOf(Operation *op, Type type) {
  if (op->getNumResults() != 1 || op->getResult(0).getType() != type ||
      op->getNumRegions() != 0 || op->hasTrait<OpTrait::ConstantLike>())
    return false;
  return llvm::all_of(op->getOperands(), [&](Value v) {
    auto t = dyn_cast<RankedTensorType>(v.getType());
    return v.getType() == type || (t && t.getRank() == 0);
  });
}

FailureOr<ZeroSharding::Update> ZeroSharding::findUpdate() {
  Block &body = function.getBody().front();
  auto ret = cast<func::ReturnOp>(body.getTerminator());
  Update update;

  // Where each value is in the block (values only ever use earlier ones).
  llvm::DenseMap<Operation *, int64_t> position;
  for (auto [i, op] : llvm::enumerate(body))
    position[&op] = static_cast<int64_t>(i);
  auto pos = [&](Value v) -> int64_t {
    if (auto arg = dyn_cast<BlockArgument>(v))
      return -1 - static_cast<int64_t>(arg.getArgNumber());
    return position.lookup(v.getDefiningOp()) * 64 +
           cast<OpResult>(v).getResultNumber();
  };

  // Values computed from the data (any argument that is neither a parameter
  // nor optimizer state).
  llvm::DenseSet<Value> data;
  for (BlockArgument arg : body.getArguments()) {
    ArgRole role = roleOf(arg.getArgNumber());
    if (role != ArgRole::Parameter && role != ArgRole::State)
      data.insert(arg);
  }
  for (Operation &op : body.without_terminator())
    if (llvm::any_of(op.getOperands(),
                     [&](Value v) { return data.contains(v); }))
      for (Value r : op.getResults())
        data.insert(r);

  // The gradient of each updated value: walking back from the result through
  // ops elementwise in its type (scalars aside), the nearest value through
  // which every path from the data passes.
  SmallVector<Value> updated, others;
  for (OpOperand &operand : ret->getOpOperands()) {
    if (function.getResultAttr(operand.getOperandNumber(),
                               PartDialect::getUpdatesAttrName()))
      updated.push_back(operand.get());
    else
      others.push_back(operand.get());
  }
  // What the other results (the loss) are computed from: forward values,
  // which the update never uses directly (backward does).
  llvm::DenseSet<Value> forward;
  SmallVector<Value> work(others.begin(), others.end());
  while (!work.empty()) {
    Value v = work.pop_back_val();
    if (!forward.insert(v).second)
      continue;
    if (Operation *def = v.getDefiningOp())
      work.append(def->operand_begin(), def->operand_end());
  }
  auto isUpdateOp = [&](Operation *op, Type type) {
    return isElementwiseOf(op, type) &&
           llvm::none_of(op->getOperands(), [&](Value v) {
             return data.contains(v) && forward.contains(v);
           });
  };

  llvm::MapVector<Value, SmallVector<unsigned>> targets;
  for (OpOperand &operand : ret->getOpOperands()) {
    auto updates = function.getResultAttrOfType<IntegerAttr>(
        operand.getOperandNumber(), PartDialect::getUpdatesAttrName());
    Value r = operand.get();
    auto type = dyn_cast<RankedTensorType>(r.getType());
    if (!updates || !type || type.getRank() == 0 || !data.contains(r))
      continue;
    // The walk: inner values (elementwise ops of the type) and the data
    // leaves where it stops.
    SmallVector<Value> inner, leaves;
    llvm::DenseSet<Value> seen = {r};
    work.assign({r});
    while (!work.empty()) {
      Value v = work.pop_back_val();
      Operation *def = v.getDefiningOp();
      if (!def || !isUpdateOp(def, type)) {
        if (data.contains(v))
          leaves.push_back(v);
        continue;
      }
      inner.push_back(v);
      for (Value o : def->getOperands())
        if (o.getType() == type && data.contains(o) && seen.insert(o).second)
          work.push_back(o);
    }
    if (leaves.empty())
      continue;
    // Immediate post-dominators towards `r` on that graph, latest first.
    llvm::DenseMap<Value, Value> ipdom;
    llvm::sort(inner, [&](Value a, Value b) { return pos(a) > pos(b); });
    auto intersect = [&](Value a, Value b) {
      while (a != b) {
        assert(a && b && "every value of the walk reaches the result");
        while (pos(a) < pos(b))
          a = ipdom.lookup(a);
        while (pos(b) < pos(a))
          b = ipdom.lookup(b);
      }
      return a;
    };
    llvm::DenseSet<Value> innerSet(inner.begin(), inner.end());
    auto idom = [&](Value v) {
      Value d;
      for (Operation *user : v.getUsers())
        if (user->getNumResults() == 1 && innerSet.contains(user->getResult(0)))
          d = d ? intersect(d, user->getResult(0)) : user->getResult(0);
      return d;
    };
    for (Value v : inner)
      if (v != r)
        ipdom[v] = idom(v);
    for (Value l : leaves)
      if (l != r && !ipdom.count(l))
        ipdom[l] = idom(l);
    Value g = leaves.front();
    for (Value l : ArrayRef(leaves).drop_front())
      g = intersect(g, l);
    targets[g].push_back(updates.getInt());
  }
  for (auto &[g, t] : targets) {
    update.gradients.push_back(g);
    update.targets.push_back(t);
  }

  // The update: what the updated results are computed from, stopping at the
  // gradients, less what the gradients or the other results (the loss) are
  // computed from.
  llvm::DenseSet<Operation *> before;
  work.assign(update.gradients.begin(), update.gradients.end());
  work.append(others.begin(), others.end());
  while (!work.empty()) {
    Operation *def = work.pop_back_val().getDefiningOp();
    if (def && before.insert(def).second)
      work.append(def->operand_begin(), def->operand_end());
  }
  llvm::DenseSet<Value> gradients(update.gradients.begin(),
                                  update.gradients.end());
  work.assign(updated.begin(), updated.end());
  while (!work.empty()) {
    Value v = work.pop_back_val();
    Operation *def = v.getDefiningOp();
    if (!def || gradients.contains(v) || before.contains(def) ||
        !update.ops.insert(def))
      continue;
    work.append(def->operand_begin(), def->operand_end());
  }
  return update;
}

LogicalResult ZeroSharding::run() {
  StringRef shardingName = PartDialect::getShardingAttrName();
  Block &body = function.getBody().front();

  bool training = false;
  for (unsigned i = 0; i < function.getNumResults(); ++i)
    training |=
        function.getResultAttr(i, PartDialect::getUpdatesAttrName()) != nullptr;
  if (!training)
    return success(); // not a training step: nothing to shard
  FailureOr<Update> update = findUpdate();
  if (failed(update))
    return failure();
  LLVM_DEBUG({
    llvm::dbgs() << "part-zero: " << update->ops.size() << " update ops, "
                 << update->gradients.size() << " gradients\n";
    for (Value g : update->gradients)
      llvm::dbgs() << "  gradient: " << g << "\n";
  });

  FailureOr<SmallVector<ShardingAttr>> base = baseArgumentShardings();
  if (failed(base))
    return failure();

  // The layout each parameter and state argument gets at rest under ZeRO
  // (null: stays whole over the axis).
  SmallVector<ShardingAttr> zero(function.getNumArguments());
  for (unsigned i = 0; i < function.getNumArguments(); ++i) {
    ArgRole role = roleOf(i);
    if ((role != ArgRole::State && role != ArgRole::Parameter) ||
        typeOf(i).getRank() == 0)
      continue; // scalars (the step counter) stay whole
    if (stage == 0)
      continue; // only the gradients' constraints below
    zero[i] = split((*base)[i], typeOf(i));
    bool atRest = role == ArgRole::State || stage >= 3;
    if (!zero[i] && atRest)
      remarkWhole(i, (*base)[i]);
  }

  // Stage 1 (and up): state split; parameters pinned to their layout unless
  // stage 3 splits them too. An annotation already there stands.
  FunctionAttrEditor attrs(function);
  for (unsigned i = 0; stage >= 1 && i < function.getNumArguments(); ++i) {
    ArgRole role = roleOf(i);
    if ((role != ArgRole::State && role != ArgRole::Parameter) ||
        typeOf(i).getRank() == 0)
      continue;
    if (role == ArgRole::Parameter && stage >= 3 && zero[i]) {
      attrs.setArg(i, shardingName, zero[i]);
      continue;
    }
    if (attrs.getArg(i, shardingName))
      continue;
    attrs.setArg(i, shardingName,
                 role == ArgRole::State && zero[i] ? zero[i] : (*base)[i]);
  }
  attrs.commit();

  // Every stage: each gradient is constrained, right where it is produced,
  // to the layout of the values it updates (split over the axis, or whole
  // where they stay whole), for the uses in the update: the pending sum over
  // the axis is completed once -- a reduce-scatter, or an all-reduce -- and
  // not once per use (AdamW uses it for both moments, clipping for the norm
  // too). Where the parameter and its state disagree (tensor parallelism can
  // lay a moment out otherwise than its parameter), the state's layout wins:
  // the moments (or the momentum buffer) use the gradient directly; the
  // parameter's update then reshards a shard, not a pending sum.
  auto layoutOf = [&](ArrayRef<unsigned> targets) -> ShardingAttr {
    ShardingAttr target;
    for (unsigned t : targets) {
      ShardingAttr s = t < zero.size() && zero[t] ? zero[t] : (*base)[t];
      if (target && s != target)
        return {};
      target = s;
    }
    return target;
  };
  for (auto [g, targets] : llvm::zip(update->gradients, update->targets)) {
    ShardingAttr target = layoutOf(targets);
    if (!target) {
      SmallVector<unsigned> state;
      for (unsigned t : targets)
        if (roleOf(t) == ArgRole::State)
          state.push_back(t);
      target = layoutOf(state);
    }
    if (!target)
      continue; // no single layout to reduce it to
    OpBuilder b(function.getContext());
    if (Operation *def = g.getDefiningOp())
      b.setInsertionPointAfter(def);
    else
      b.setInsertionPointToStart(&body);
    auto constraint = ShardingConstraintOp::create(b, g.getLoc(), g, target);
    g.replaceUsesWithIf(constraint.getResult(), [&](OpOperand &use) {
      return update->ops.contains(use.getOwner());
    });
  }

  // Stage 3: every use of a split parameter outside the update gets the
  // parameter without the axis: an all-gather right before the use.
  if (stage >= 3) {
    for (unsigned i = 0; i < function.getNumArguments(); ++i) {
      if (roleOf(i) != ArgRole::Parameter || !zero[i] || zero[i] == (*base)[i])
        continue;
      BlockArgument p = body.getArgument(i);
      SmallVector<Operation *> users;
      for (Operation *user : p.getUsers())
        if (!update->ops.contains(user) && !llvm::is_contained(users, user))
          users.push_back(user);
      for (Operation *user : users) {
        OpBuilder b(user);
        auto whole =
            ShardingConstraintOp::create(b, user->getLoc(), p, (*base)[i]);
        user->replaceUsesOfWith(p, whole.getResult());
      }
    }
  }
  return success();
}

namespace {
struct PartZeroPass
    : public partition::part::impl::PartZeroPassBase<PartZeroPass> {
  using PartZeroPassBase::PartZeroPassBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    unsigned n = stage;
    if (n > 3) {
      module.emitError() << "ZeRO stage " << n
                         << " does not exist (expected 0 to 3)";
      return signalPassFailure();
    }
    if (failed(lookupMeshAxisSize(module, meshName, axis,
                                  "shard optimizer state over")))
      return signalPassFailure();
    MeshOp mesh =
        lookupMesh(module, FlatSymbolRefAttr::get(&getContext(), meshName));
    for (auto function : module.getOps<func::FuncOp>()) {
      if (function.isDeclaration() || getSpmdMesh(function))
        continue;
      if (function.getBody().getBlocks().size() != 1) {
        function.emitError() << "ZeRO needs a function of one block";
        return signalPassFailure();
      }
      if (failed(ZeroSharding(function, mesh, axis, stage).run()))
        return signalPassFailure();
    }
  }
};
} // namespace
