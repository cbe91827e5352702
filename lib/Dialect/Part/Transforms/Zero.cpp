//===- Zero.cpp - ZeRO: shard optimizer state, gradients, parameters ------===//
//
// part-zero adds annotations that split optimizer state (stage 1),
// gradients (2) and parameters (3) over the data-parallel axis on top of
// the layouts propagation would give them (computed without changing the
// IR, Analysis/Propagation.h), and constrains each gradient where it is
// produced so that its pending sum is completed once.
//
//===----------------------------------------------------------------------===//

#include "partition/Dialect/Part/Analysis/Propagation.h"
#include "partition/Dialect/Part/IR/FunctionAttrs.h"
#include "partition/Dialect/Part/IR/PartOps.h"
#include "partition/Dialect/Part/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "part-zero"

namespace partition::part {
#define GEN_PASS_DEF_PARTZEROPASS
#include "partition/Dialect/Part/Transforms/Passes.h.inc"
} // namespace partition::part

using namespace mlir;
using namespace partition::part;

namespace {

/// ZeRO on one training step: annotations that split state, gradients and
/// parameters over the data-parallel axis.
class ZeroSharding {
public:
  ZeroSharding(func::FuncOp function, MeshOp mesh, ArrayRef<StringRef> axes,
               unsigned stage)
      : function(function), mesh(mesh), stage(stage) {
    for (StringRef axis : axes)
      this->axes.push_back(StringAttr::get(function.getContext(), axis));
  }

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
  ShardingAttr split(ShardingAttr base, RankedTensorType type,
                     SmallVectorImpl<StringAttr> &whole);
  ShardingAttr split(ShardingAttr base, RankedTensorType type,
                     StringAttr axis);
  void remarkWhole(unsigned arg, ShardingAttr base, StringAttr axis);
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
  /// The axes split over, in order: the data-parallel axis, then the
  /// expert-parallel one.
  SmallVector<StringAttr, 2> axes;
  unsigned stage;
};

} // namespace

/// The sharding of every argument as propagation gives it without ZeRO (its
/// tensor-parallel layout), replicated where it gets none: propagation is
/// computed without writing it, its remarks silenced (the real run repeats
/// them).
FailureOr<SmallVector<ShardingAttr>> ZeroSharding::baseArgumentShardings() {
  MLIRContext *ctx = function.getContext();
  ShardingPropagation propagation(function, mesh);
  {
    ScopedDiagnosticHandler quiet(ctx, [](Diagnostic &d) {
      return success(d.getSeverity() == DiagnosticSeverity::Remark);
    });
    if (failed(propagation.compute()))
      return failure();
  }
  SmallVector<ShardingAttr> base;
  for (unsigned i = 0; i < function.getNumArguments(); ++i) {
    ShardingAttr s = propagation.shardingOf(function.getArgument(i));
    base.push_back(s ? s
                     : ShardingAttr::getReplicated(ctx, mesh.getSymName(),
                                                   typeOf(i).getRank()));
  }
  return base;
}

/// `base` split over each of the axes in turn (split(base, type, axis)),
/// those that divide no dimension left out and added to `whole`; null when
/// none was added and one of them divides nothing.
ShardingAttr ZeroSharding::split(ShardingAttr base, RankedTensorType type,
                                 SmallVectorImpl<StringAttr> &whole) {
  ShardingAttr s = base;
  for (StringAttr axis : axes) {
    if (ShardingAttr next = split(s, type, axis))
      s = next;
    else
      whole.push_back(axis);
  }
  return s == base && !whole.empty() ? ShardingAttr() : s;
}

/// `base` with `axis` added, as its minor axis, to the first dimension
/// whose local size (after `base`'s split) the axis divides; `base` itself
/// when it already uses the axis; null when no dimension is divisible.
ShardingAttr ZeroSharding::split(ShardingAttr base, RankedTensorType type,
                                 StringAttr axis) {
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

void ZeroSharding::remarkWhole(unsigned arg, ShardingAttr base,
                               StringAttr axis) {
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

FailureOr<ZeroSharding::Update> ZeroSharding::findUpdate() {
  Block &body = function.getBody().front();
  auto ret = cast<func::ReturnOp>(body.getTerminator());
  Update update;

  // The arguments the step writes back (results with part.updates).
  llvm::SmallDenseSet<unsigned> updatedArgs;
  SmallVector<Value> updated, others;
  for (OpOperand &operand : ret->getOpOperands()) {
    if (auto updates = function.getResultAttrOfType<IntegerAttr>(
            operand.getOperandNumber(), PartDialect::getUpdatesAttrName())) {
      updated.push_back(operand.get());
      updatedArgs.insert(updates.getInt());
    } else {
      others.push_back(operand.get());
    }
  }

  // part-optimizer's records: each state argument's parameter
  // (part.state_of), and where the update reads each parameter's gradient
  // (part.gradient, part.gradient_of).
  llvm::DenseMap<int64_t, SmallVector<unsigned>> statesOf;
  for (unsigned i = 0; i < function.getNumArguments(); ++i)
    if (auto of = function.getArgAttrOfType<IntegerAttr>(
            i, PartDialect::getStateOfAttrName()))
      statesOf[of.getInt()].push_back(i);

  // Values computed from the data (any argument that is neither a parameter
  // nor optimizer state): a gradient that is not (a constant one) is no
  // pending sum and needs no constraint.
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

  llvm::MapVector<Value, SmallVector<unsigned>> targets;
  bool recorded = false;
  for (Operation &op : body.without_terminator()) {
    auto of =
        op.getAttrOfType<IntegerAttr>(PartDialect::getGradientOfAttrName());
    if (!of)
      continue;
    recorded = true;
    Value g = op.getResult(0);
    auto type = dyn_cast<RankedTensorType>(g.getType());
    if (!type || type.getRank() == 0 || !data.contains(g))
      continue;
    // The arguments the gradient updates: its parameter (or the master copy
    // that stands for it) and the parameter's state.
    SmallVector<unsigned> &t = targets[g];
    if (updatedArgs.contains(of.getInt()))
      t.push_back(of.getInt());
    for (unsigned s : statesOf.lookup(of.getInt()))
      if (updatedArgs.contains(s))
        t.push_back(s);
  }
  if (!recorded && !updated.empty())
    return function.emitError()
           << "part-zero needs part-optimizer's records of each gradient "
              "('part.gradient_of' on the op that makes it, 'part.state_of' "
              "on state arguments); @"
           << function.getName() << " updates " << updated.size()
           << " arguments but has none";
  for (auto &[g, t] : targets) {
    update.gradients.push_back(g);
    update.targets.push_back(t);
  }

  // The update: what the updated results are computed from, stopping at the
  // gradients, less what the gradients or the other results (the loss) are
  // computed from.
  llvm::DenseSet<Operation *> before;
  SmallVector<Value> work(update.gradients.begin(), update.gradients.end());
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
    SmallVector<StringAttr, 2> whole;
    zero[i] = split((*base)[i], typeOf(i), whole);
    bool atRest = role == ArgRole::State || stage >= 3;
    for (StringAttr axis : whole)
      if (atRest)
        remarkWhole(i, zero[i] ? zero[i] : (*base)[i], axis);
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
    SmallVector<StringRef, 3> axes = {axis};
    for (StringRef extra : {StringRef(contextAxis), StringRef(expertAxis)})
      if (!extra.empty() && !llvm::is_contained(axes, extra))
        axes.push_back(extra);
    for (StringRef a : axes)
      if (failed(lookupMeshAxisSize(module, meshName, a,
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
      if (failed(ZeroSharding(function, mesh, axes, stage).run()))
        return signalPassFailure();
    }
  }
};
} // namespace
