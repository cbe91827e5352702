//===- PipelineFragments.cpp - a pipeline stage as fragments and a table --===//
//
// part-pipeline's default form of a stage
// (docs/design/2026-12-05-pipeline-schedule-as-data.md): one function per
// kind of step the stage's schedule runs (forward, backward, or Bi and W,
// per chunk), each over one micro-batch, a fragment P that runs once at the
// start of the step (the accumulators' zeros, the values made from
// parameters alone), and the stage function itself, which runs once after
// the schedule (the update). The schedule stays a table (`part.schedule`);
// nothing is copied per micro-batch, so the program's size does not depend
// on the number of micro-batches.
//
// What crosses from one step to another is named on the fragments'
// arguments and results (`part.slot`): "arg:N", an argument of the stage
// function (a batched one is one micro-batch's slice); "stash:K", a value
// one step makes and a later step of the same micro-batch reads; "acc:K",
// a sum over the micro-batches; "hold:K", a value P makes once; "done:K",
// a sum completed into another shape (grad-sync=step: the whole gradient
// summed over the micro-batches, reduce-scattered once). A kind of
// step that adds to sums has a second, final fragment (`part.final`) for its
// last step in the table, which completes them there: the mean and the dp
// all_reduce of the gradients overlap the rest of that backward, as
// Megatron's gradient reduction overlaps the last micro-batch's.
//
//===----------------------------------------------------------------------===//

#include "PipelineSplit.h"

#include "partition/Dialect/Part/IR/PartOps.h"

#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/SetVector.h"

using namespace mlir;
using namespace partition::part;
using namespace partition::part::detail;

namespace {

/// A kind of step of a stage: its chunk and action.
struct FragmentKind {
  int64_t chunk = 0;
  pl::Action action = pl::Action::Forward;
  bool operator==(const FragmentKind &o) const {
    return chunk == o.chunk && action == o.action;
  }
  bool operator<(const FragmentKind &o) const {
    return std::tie(chunk, action) < std::tie(o.chunk, o.action);
  }
};

/// "F", "Bi", "B.1": the step's text without its micro-batch.
std::string fragmentName(FragmentKind kind, int64_t chunks) {
  std::string name = pl::actionName(kind.action);
  if (chunks > 1)
    name += "." + std::to_string(kind.chunk);
  return name;
}

std::string slotName(StringRef kind, int64_t index) {
  return (kind + ":" + Twine(index)).str();
}

/// A function being written: arguments and results added as they are
/// found, each with its `part.slot`.
class FragmentFunction {
public:
  /// Creates the function `name` with `top`, without arguments or results
  /// for now.
  FragmentFunction(OpBuilder &top, Location loc, StringRef name)
      : loc(loc),
        fn(func::FuncOp::create(top, loc, name,
                                FunctionType::get(top.getContext(), {}, {}))),
        entry(fn.addEntryBlock()), b(OpBuilder::atBlockBegin(entry)) {
    fn.setPrivate();
  }
  Value addArgument(Type type, std::string slot) {
    argSlots.push_back(std::move(slot));
    return entry->addArgument(type, loc);
  }
  void addResult(Value v, std::string slot) {
    results.push_back(v);
    resultSlots.push_back(std::move(slot));
  }
  /// Returns the results and sets the function's type and slots.
  func::FuncOp finish() {
    func::ReturnOp::create(b, loc, results);
    SmallVector<Type> resultTypes;
    for (Value v : results)
      resultTypes.push_back(v.getType());
    fn.setType(FunctionType::get(fn.getContext(), entry->getArgumentTypes(),
                                 resultTypes));
    Builder attrs(fn.getContext());
    StringRef slotAttr = PartDialect::getSlotAttrName();
    for (auto [i, slot] : llvm::enumerate(argSlots))
      fn.setArgAttr(i, slotAttr, attrs.getStringAttr(slot));
    for (auto [i, slot] : llvm::enumerate(resultSlots))
      fn.setResultAttr(i, slotAttr, attrs.getStringAttr(slot));
    return fn;
  }

  Location loc;
  func::FuncOp fn;
  Block *entry;
  OpBuilder b;
  SmallVector<std::string> argSlots, resultSlots;
  SmallVector<Value> results;
};

/// Whether `v` is made from constants alone (cheap to make again in every
/// fragment that reads it).
bool fromConstantsOnly(Value v) {
  Operation *def = v.getDefiningOp();
  if (!def)
    return false;
  if (isa<ConstantOp>(def))
    return true;
  return def->getNumOperands() &&
         llvm::all_of(def->getOperands(), fromConstantsOnly);
}

} // namespace

namespace partition::part::detail {

/// The stage's fragments as they are written: which kind of step makes or
/// receives each value the stage reads, what crosses between its steps.
struct StageFragments {
  int64_t stage;
  SmallVector<FragmentKind> kinds; ///< in order of first appearance
  /// The kind of step that has each micro-batch value of the stage at hand
  /// first: the one that makes it, or that receives it from another stage.
  llvm::DenseMap<Value, FragmentKind> producer;
  /// Per kind, the values received from other stages at its start, in the
  /// order their senders send them.
  std::map<FragmentKind, SmallVector<Value>> receives;
  llvm::MapVector<Value, int64_t> stash;                 ///< value -> K
  std::map<FragmentKind, llvm::SetVector<Value>> stashOut; ///< made, kept
  llvm::MapVector<Operation *, int64_t> accumulators; ///< all_reduce -> K
  /// grad-sync=step: a gradient's reduce-scatter over dp that only its
  /// accumulation reads, moved after the sum (the whole gradient is summed
  /// over the micro-batches and reduce-scattered once, in the final
  /// fragment): reduce_scatter -> its accumulation, and back.
  llvm::DenseMap<Operation *, Operation *> hoisted, scatterOf;
  llvm::MapVector<Value, int64_t> holds;               ///< value -> K
  /// Arguments of the step function some fragment reads.
  llvm::BitVector usedArgs;
};

} // namespace partition::part::detail

/// The kind of step of `stage` that receives each value another stage sends
/// it: the earliest step of the micro-batch that reads any value the same
/// step of the sender sends (they travel together, so that each direction's
/// transfers are taken in the order they are sent). An error when that kind
/// differs between micro-batches.
static LogicalResult findReceivers(
    func::FuncOp function, const pl::Schedule &schedule, int64_t stages,
    int64_t stage,
    const llvm::MapVector<
        Value, std::map<int64_t, std::set<std::pair<int64_t, pl::Action>>>>
        &crossing,
    llvm::function_ref<std::pair<int64_t, FragmentKind>(Value)> senderOf,
    StageFragments &out) {
  // Values sent to `stage`, grouped by sender (stage, kind).
  std::map<std::pair<int64_t, FragmentKind>, SmallVector<Value>> groups;
  for (auto &[v, readers] : crossing)
    if (readers.count(stage))
      groups[senderOf(v)].push_back(v);
  const std::vector<pl::Step> &steps = schedule.steps[stage];
  SmallVector<std::pair<size_t, std::pair<int64_t, FragmentKind>>> order;
  for (auto &[sender, values] : groups) {
    std::set<std::pair<int64_t, pl::Action>> readKinds;
    for (Value v : values) {
      const auto &kinds = crossing.find(v)->second.at(stage);
      readKinds.insert(kinds.begin(), kinds.end());
    }
    std::optional<FragmentKind> kind;
    size_t first = steps.size();
    for (int64_t m = 0; m < schedule.microBatches; ++m) {
      auto it = llvm::find_if(steps, [&](const pl::Step &s) {
        return s.microBatch == m && readKinds.count({s.chunk, s.action});
      });
      if (it == steps.end())
        continue;
      FragmentKind here{it->chunk, it->action};
      first = std::min(first, size_t(it - steps.begin()));
      if (kind && !(*kind == here))
        return function.emitError()
               << "part-pipeline: stage " << stage << " reads what stage "
               << sender.first << " sends in its "
               << fragmentName(sender.second, schedule.chunks)
               << " steps first in "
               << fragmentName(*kind, schedule.chunks)
               << " for one micro-batch and in "
               << fragmentName(here, schedule.chunks) << " for micro-batch "
               << m << "; a schedule table needs one kind of step per "
               << "transfer (unroll=true writes the schedule out)";
      kind = here;
    }
    if (!kind)
      continue; // read by no step: nothing to receive
    for (Value v : values)
      out.producer[v] = *kind;
    order.push_back({first, sender});
    (void)stages;
  }
  // Receives in the order of the steps that take them, then by sender.
  llvm::sort(order);
  for (auto &[first, sender] : order)
    for (Value v : groups[sender])
      out.receives[out.producer[v]].push_back(v);
  return success();
}

std::string PipelineSplit::stageName(int64_t stage) const {
  return (const_cast<func::FuncOp &>(function).getName() + "_stage" +
          Twine(stage))
      .str();
}

FlatSymbolRefAttr PipelineSplit::stageMeshRef(int64_t s) const {
  MeshOp m = mesh;
  return FlatSymbolRefAttr::get(m.getContext(),
                                (m.getSymName() + "_pp" + Twine(s)).str());
}

func::FuncOp PipelineSplit::createStageFunction(
    int64_t stage, OpBuilder &top, TypeRange extraArgs,
    SmallVector<unsigned> &results) {
  SmallVector<Type> argTypes;
  for (BlockArgument arg : function.getArguments()) {
    auto type = cast<RankedTensorType>(arg.getType());
    if (batched.contains(arg)) {
      SmallVector<int64_t> shape(type.getShape());
      shape[0] *= microBatches;
      type = RankedTensorType::get(shape, type.getElementType());
    }
    argTypes.push_back(type);
  }
  argTypes.append(extraArgs.begin(), extraArgs.end());
  SmallVector<Type> resultTypes;
  for (unsigned i = 0; i < function.getNumResults(); ++i)
    if (resultStages[i].count(stage)) {
      results.push_back(i);
      resultTypes.push_back(function.getResultTypes()[i]);
    }
  return func::FuncOp::create(
      top, function.getLoc(), stageName(stage),
      FunctionType::get(function.getContext(), argTypes, resultTypes));
}

void PipelineSplit::exchangeStepTransfers(
    OpBuilder &b, int64_t stage,
    SmallVectorImpl<std::tuple<int64_t, Value, int64_t>> &sends,
    IRMapping &invariants) {
  Location loc = function.getLoc();
  llvm::sort(sends, [](const auto &x, const auto &y) {
    return std::get<2>(x) < std::get<2>(y);
  });
  for (auto [to, value, channel] : sends)
    SendOp::create(b, loc, value, stageMeshRef(to),
                   b.getI64IntegerAttr(channel));
  for (auto &[key, channel] : stepTransfers)
    if (key.second == stage) {
      Value v = Value::getFromOpaquePointer(key.first);
      Value received = RecvOp::create(
          b, loc, wireType(v),
          stageMeshRef(physical(opStage.lookup(v.getDefiningOp()))),
          b.getI64IntegerAttr(channel));
      invariants.map(v, fromWire(b, v, received));
    }
}

void PipelineSplit::returnResults(OpBuilder &b, ArrayRef<unsigned> results,
                                  IRMapping &invariants) {
  auto ret = cast<func::ReturnOp>(function.getBody().front().getTerminator());
  SmallVector<Value> returned;
  for (unsigned i : results)
    returned.push_back(materialize(b, ret.getOperand(i), invariants));
  func::ReturnOp::create(b, function.getLoc(), returned);
}

void PipelineSplit::sendValuesMade(
    OpBuilder &b, int64_t vs, pl::Action action, IRMapping &map,
    llvm::function_ref<int64_t(int64_t)> channel) {
  for (auto [index, entry] : llvm::enumerate(crossing)) {
    auto &[v, readers] = entry;
    if (stageOfValue(v) != vs || actionOf.lookup(v.getDefiningOp()) != action)
      continue;
    Value wire = toWire(b, v, map.lookup(v));
    for (auto &reader : readers)
      SendOp::create(b, function.getLoc(), wire, stageMeshRef(reader.first),
                     b.getI64IntegerAttr(channel(int64_t(index))));
  }
}

LogicalResult PipelineSplit::planFragments(StageFragments &plan) {
  int64_t stage = plan.stage;
  for (const pl::Step &step : schedule.steps[stage]) {
    FragmentKind kind{step.chunk, step.action};
    if (!llvm::is_contained(plan.kinds, kind))
      plan.kinds.push_back(kind);
  }
  auto opsOf = [&](FragmentKind k) -> ArrayRef<Operation *> {
    const auto &byAction = stageOps[virtualOf(stage, k.chunk)];
    auto it = byAction.find(k.action);
    return it == byAction.end() ? ArrayRef<Operation *>() : it->second;
  };
  for (FragmentKind k : plan.kinds)
    for (Operation *op : opsOf(k))
      for (Value r : op->getResults())
        plan.producer[r] = k;
  auto senderOf = [&](Value v) -> std::pair<int64_t, FragmentKind> {
    int64_t vs = stageOfValue(v);
    return {physical(vs),
            FragmentKind{chunkOf(vs), actionOf.lookup(v.getDefiningOp())}};
  };
  if (failed(findReceivers(function, schedule, stages, stage, crossing,
                           senderOf, plan)))
    return failure();

  plan.usedArgs.resize(function.getNumArguments());
  for (FragmentKind k : plan.kinds)
    for (Operation *op : opsOf(k))
      for (Value v : op->getOperands()) {
        if (auto arg = dyn_cast<BlockArgument>(v)) {
          plan.usedArgs.set(arg.getArgNumber());
          continue;
        }
        Kind kind = valueKinds.lookup(v);
        if (kind == Kind::Invariant) {
          if (!fromConstantsOnly(v))
            plan.holds.insert({v, int64_t(plan.holds.size())});
          continue;
        }
        auto it = plan.producer.find(v);
        if (kind != Kind::MicroBatch || it == plan.producer.end())
          return op->emitOpError()
                 << "part-pipeline: stage " << stage
                 << " reads a value no step of the stage makes or receives";
        if (it->second == k)
          continue;
        plan.stash.insert({v, int64_t(plan.stash.size())});
        plan.stashOut[it->second].insert(v);
      }
  SmallVector<Operation *> accumulations;
  for (auto &[op, kind] : kinds)
    if (kind == Kind::Accumulate && physical(opStage.lookup(op)) == stage) {
      if (!plan.producer.count(op->getOperand(0)))
        return op->emitOpError() << "part-pipeline: stage " << stage
                                 << " accumulates a value it does not have";
      accumulations.push_back(op);
    }
  // Module order, not the hash map's: the program is the same every run.
  llvm::sort(accumulations, [](Operation *a, Operation *b) {
    return a->isBeforeInBlock(b);
  });
  for (Operation *op : accumulations)
    plan.accumulators.insert({op, int64_t(plan.accumulators.size())});
  if (syncPerStep)
    for (auto &[op, index] : plan.accumulators) {
      auto scatter = op->getOperand(0).getDefiningOp<ReduceScatterOp>();
      if (!scatter || !scatter->hasOneUse() ||
          scatter.getKind() != ReductionKind::Sum ||
          isCollectiveOver(scatter, axis))
        continue;
      plan.hoisted[scatter] = op;
      plan.scatterOf[op] = scatter;
    }
  return success();
}

/// The accumulation `op`'s sum as the steps add to it: the whole gradient
/// where its reduce-scatter moved after the sum, else what `op` reads.
static Type accumulatorType(const StageFragments &plan, Operation *op) {
  if (Operation *scatter = plan.scatterOf.lookup(op))
    return scatter->getOperand(0).getType();
  return op->getOperand(0).getType();
}

/// Points the collectives of `fn` at `meshRef` instead of `from`.
static void renameMesh(func::FuncOp fn, StringRef from,
                       FlatSymbolRefAttr meshRef) {
  fn.walk([&](Operation *op) {
    if (auto m = op->getAttrOfType<FlatSymbolRefAttr>("mesh"))
      if (m.getValue() == from)
        op->setAttr("mesh", meshRef);
  });
}

FailureOr<func::FuncOp> PipelineSplit::emitFragment(StageFragments &plan,
                                                    size_t index, bool final,
                                                    OpBuilder &top) {
  Location loc = function.getLoc();
  int64_t stage = plan.stage;
  FragmentKind kind = plan.kinds[index];
  int64_t vs = virtualOf(stage, kind.chunk);
  std::string name = fragmentName(kind, chunks);
  FragmentFunction f(top, loc,
                     stageName(stage) + "_" + name + (final ? "_final" : ""));
  OpBuilder &b = f.b;
  IRMapping map;
  // A sum over micro-batches this step adds to; in the kind's last step,
  // completed right there (the dp reduction overlaps the rest of the step),
  // reduce-scattered there too where grad-sync=step moved the scatter.
  auto accumulate = [&](Value r) {
    for (Operation *user : r.getUsers()) {
      Operation *scatter = plan.hoisted.count(user) ? user : nullptr;
      auto it = plan.accumulators.find(scatter ? plan.hoisted[user] : user);
      if (it == plan.accumulators.end())
        continue;
      std::string slot = slotName("acc", it->second);
      Value sum = f.addArgument(r.getType(), slot);
      Value added = AddOp::create(b, loc, sum, map.lookup(r));
      if (!final) {
        f.addResult(added, slot);
        continue;
      }
      Value done =
          completeAccumulation(b, it->first, added, stageMeshRef(stage));
      if (scatter) {
        auto rs = cast<ReduceScatterOp>(scatter);
        done = ReduceScatterOp::create(
            b, rs.getLoc(), rs.getType(), done, stageMeshRef(stage),
            rs.getAxes(), rs.getDimAttr(), rs.getKindAttr());
        done.getDefiningOp()->setDiscardableAttrs(
            rs->getDiscardableAttrDictionary());
      }
      f.addResult(done, slotName(scatter ? "done" : "acc", it->second));
    }
  };
  // An operand: at hand, an argument, kept from another step, or made
  // again from constants.
  std::function<Value(Value)> resolve = [&](Value v) -> Value {
    if (Value mapped = map.lookupOrNull(v))
      return mapped;
    Value made;
    if (auto arg = dyn_cast<BlockArgument>(v))
      made = f.addArgument(v.getType(), slotName("arg", arg.getArgNumber()));
    else if (auto it = plan.holds.find(v); it != plan.holds.end())
      made = f.addArgument(v.getType(), slotName("hold", it->second));
    else if (auto it = plan.stash.find(v); it != plan.stash.end())
      made = f.addArgument(v.getType(), slotName("stash", it->second));
    else if (valueKinds.lookup(v) == Kind::Invariant) {
      Operation *def = v.getDefiningOp();
      for (Value operand : def->getOperands())
        resolve(operand);
      b.clone(*def, map);
      return map.lookup(v);
    } else
      return Value();
    map.map(v, made);
    return made;
  };

  for (Value v : plan.receives[kind]) {
    int64_t channel = int64_t(crossing.find(v) - crossing.begin());
    Value received =
        RecvOp::create(b, loc, wireType(v), stageMeshRef(physical(stageOfValue(v))),
                       b.getI64IntegerAttr(channel));
    map.map(v, fromWire(b, v, received));
    accumulate(v);
  }
  const auto &byAction = stageOps[vs];
  auto opsIt = byAction.find(kind.action);
  if (opsIt != byAction.end())
    for (Operation *op : opsIt->second) {
      if (plan.hoisted.count(op))
        continue; // its sum is scattered once, in the final fragment
      for (Value v : op->getOperands())
        if (!resolve(v))
          return unmadeValueError(op, stage, name, v);
      Operation *copy = b.clone(*op, map);
      (void)copy;
      for (Value r : op->getResults())
        accumulate(r);
    }
  for (Value v : plan.stashOut[kind])
    f.addResult(map.lookup(v), slotName("stash", plan.stash.lookup(v)));
  // Sends at the end of the step that makes each value, by channel.
  sendValuesMade(b, vs, kind.action, map, [](int64_t index) { return index; });
  func::FuncOp fn = f.finish();
  fn->setAttr(PartDialect::getFragmentAttrName(), top.getStringAttr(name));
  if (final)
    fn->setAttr(PartDialect::getFinalAttrName(), top.getUnitAttr());
  fn->setAttr("part.stage", top.getI64IntegerAttr(stage));
  renameMesh(fn, mesh.getSymName(), stageMeshRef(stage));
  return fn;
}

func::FuncOp PipelineSplit::emitPrologue(StageFragments &plan,
                                         OpBuilder &top) {
  Location loc = function.getLoc();
  FragmentFunction f(top, loc, stageName(plan.stage) + "_P");
  OpBuilder &b = f.b;
  for (auto &[op, index] : plan.accumulators) {
    auto type = cast<RankedTensorType>(accumulatorType(plan, op));
    auto scalarType = RankedTensorType::get({}, type.getElementType());
    Value zero = ConstantOp::create(
        b, loc, scalarType,
        DenseElementsAttr::get(scalarType,
                               b.getZeroAttr(type.getElementType())));
    f.addResult(BroadcastOp::create(b, loc, type, zero),
                slotName("acc", index));
  }
  IRMapping map;
  std::function<Value(Value)> make = [&](Value v) -> Value {
    if (Value mapped = map.lookupOrNull(v))
      return mapped;
    if (auto arg = dyn_cast<BlockArgument>(v)) {
      plan.usedArgs.set(arg.getArgNumber());
      Value made =
          f.addArgument(v.getType(), slotName("arg", arg.getArgNumber()));
      map.map(v, made);
      return made;
    }
    Operation *def = v.getDefiningOp();
    for (Value operand : def->getOperands())
      make(operand);
    b.clone(*def, map);
    return map.lookup(v);
  };
  for (auto &[v, index] : plan.holds)
    f.addResult(make(v), slotName("hold", index));
  func::FuncOp fn = f.finish();
  fn->setAttr(PartDialect::getFragmentAttrName(), top.getStringAttr("P"));
  fn->setAttr("part.stage", top.getI64IntegerAttr(plan.stage));
  renameMesh(fn, mesh.getSymName(), stageMeshRef(plan.stage));
  return fn;
}

FailureOr<func::FuncOp>
PipelineSplit::emitUpdate(StageFragments &plan, OpBuilder &top,
                          SmallVector<int64_t> &renumbered) {
  int64_t stage = plan.stage;
  // The step's arguments, then one per accumulator.
  SmallVector<Type> accumulatorTypes;
  for (auto &entry : plan.accumulators)
    accumulatorTypes.push_back(entry.first->getOperand(0).getType());
  SmallVector<unsigned> results;
  func::FuncOp fn = createStageFunction(stage, top, accumulatorTypes, results);
  Block *entry = fn.addEntryBlock();
  OpBuilder b = OpBuilder::atBlockBegin(entry);
  IRMapping invariants;
  for (auto [arg, copy] :
       llvm::zip(function.getArguments(), entry->getArguments()))
    if (!batched.contains(arg))
      invariants.map(arg, copy);

  // The sums over the micro-batches, completed by each kind's final
  // fragment, and sent to the stages that update with them.
  SmallVector<std::tuple<int64_t, Value, int64_t>> sends;
  unsigned first = function.getNumArguments();
  for (auto &[op, index] : plan.accumulators) {
    fn.setArgAttr(first + index, PartDialect::getSlotAttrName(),
                  b.getStringAttr(slotName(
                      plan.scatterOf.count(op) ? "done" : "acc", index)));
    useAccumulation(b, op, entry->getArgument(first + index), invariants,
                    sends);
  }
  exchangeStepTransfers(b, stage, sends, invariants);
  returnResults(b, results, invariants);

  llvm::BitVector keep = plan.usedArgs;
  keep.resize(fn.getNumArguments(), true);
  FailureOr<SmallVector<int64_t>> numbers =
      finishStage(fn, stage, results, keep);
  if (failed(numbers))
    return failure();
  renumbered = std::move(*numbers);
  for (BlockArgument arg : function.getArguments())
    if (batched.contains(arg) && renumbered[arg.getArgNumber()] >= 0)
      fn.setArgAttr(renumbered[arg.getArgNumber()],
                    PartDialect::getMicroBatchesAttrName(),
                    b.getI64IntegerAttr(microBatches));
  return fn;
}

LogicalResult PipelineSplit::emitFragments(int64_t stage, OpBuilder &top) {
  StageFragments plan;
  plan.stage = stage;
  if (failed(planFragments(plan)))
    return failure();
  SmallVector<func::FuncOp> fragments = {emitPrologue(plan, top)};
  // Each kind of step, then the final fragments of the kinds that add to
  // sums whose completion does work (a mean, a reduction over dp); a sum
  // complete as added (reduced per micro-batch, as ZeRO's reduce-scatter)
  // needs none, and the update reads it as it is.
  for (bool final : {false, true})
    for (size_t i = 0; i < plan.kinds.size(); ++i) {
      if (final && !llvm::any_of(plan.accumulators, [&](const auto &entry) {
            return plan.producer.lookup(entry.first->getOperand(0)) ==
                       plan.kinds[i] &&
                   (completionDoesWork(entry.first) ||
                    plan.scatterOf.count(entry.first));
          }))
        continue;
      FailureOr<func::FuncOp> fn = emitFragment(plan, i, final, top);
      if (failed(fn))
        return failure();
      fragments.push_back(*fn);
    }
  SmallVector<int64_t> renumbered;
  FailureOr<func::FuncOp> update = emitUpdate(plan, top, renumbered);
  if (failed(update))
    return failure();
  // The fragments' "arg:N" name the stage function's arguments as they are
  // numbered now.
  StringRef slotAttr = PartDialect::getSlotAttrName();
  SmallVector<Attribute> refs;
  for (func::FuncOp fn : fragments) {
    for (unsigned i = 0; i < fn.getNumArguments(); ++i) {
      auto slot = fn.getArgAttrOfType<StringAttr>(i, slotAttr);
      auto [kind, number] = slot.getValue().split(':');
      int64_t n = 0;
      if (kind != "arg" || number.getAsInteger(10, n))
        continue;
      fn.setArgAttr(i, slotAttr,
                    top.getStringAttr(slotName("arg", renumbered[n])));
    }
    refs.push_back(FlatSymbolRefAttr::get(fn.getSymNameAttr()));
  }
  (*update)->setAttr(PartDialect::getFragmentsAttrName(),
                     top.getArrayAttr(refs));
  return success();
}
