//===- Pipeline.cpp - pipeline stages and micro-batches -------------------===//
//
// part-pipeline cuts a per-device training step into pipeline stages and
// runs micro-batches through them on a schedule
// (docs/design/2026-12-03-pipelines.md).
//
// Its input is the step partitioned over a mesh with a micro-batch axis
// (part-spmd adds it for a mesh with a pp axis): the batch is split over
// that axis like a data-parallel one, so the per-device function computes
// one micro-batch, and where the step completes a sum over the batch (the
// loss, every gradient) the partitioner has put an all_reduce over the
// micro-batch axis. Those all_reduces are where micro-batches accumulate.
//
// Ops fall into four kinds: micro-batch ops (they read the batch: run once
// per micro-batch), accumulations (the all_reduces over the micro-batch
// axis), step ops (they read an accumulation: the optimizer, run once per
// step) and invariants (parameters only: made once, where used).
//
// Micro-batch ops are forward (what the loss is computed from) or backward,
// and each has a home stage: a forward op by its `part.layer` (layers cut
// into contiguous groups, balanced by FLOPs or as `stage-layers` says; an
// op without a layer goes where its operands are), a backward op with the
// forward values it reads (the earliest stage among its operands). Each
// stage becomes a function on its own mesh (the axes other than the
// micro-batch axis) that runs the stage's steps of the schedule unrolled:
// forward or backward of micro-batch k is a copy of the stage's ops on the
// k-th slice of the batch, a value another stage reads is sent to it
// (`part.send` / `part.recv`, a channel per value and micro-batch), and an
// accumulation sums the micro-batches (averaging where the all_reduce
// averaged) before the step ops run once. A parameter several stages read
// (a tied embedding) is held by each of them, and each applies the same
// update: the accumulated gradient is sent to every stage that holds it.
//
//===----------------------------------------------------------------------===//

#include "partition/Dialect/Part/Analysis/Cost.h"
#include "partition/Dialect/Part/Analysis/ForwardProgram.h"
#include "partition/Dialect/Part/Analysis/PipelineSchedule.h"
#include "partition/Dialect/Part/Analysis/StageBalance.h"
#include "partition/Dialect/Part/IR/FunctionAttrs.h"
#include "partition/Dialect/Part/IR/PartOps.h"
#include "partition/Dialect/Part/Transforms/Passes.h"

#include "PipelineSplit.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/BitVector.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/StringExtras.h"

#include <map>
#include <set>

#define DEBUG_TYPE "part-pipeline"

namespace partition::part {
#define GEN_PASS_DEF_PARTPIPELINEPASS
#include "partition/Dialect/Part/Transforms/Passes.h.inc"
} // namespace partition::part

using namespace mlir;
using namespace partition::part;
using namespace partition::part::detail;

bool partition::part::detail::isCollectiveOver(Operation *op,
                                               StringAttr axis) {
  auto axes = op->getAttrOfType<ArrayAttr>("axes");
  if (!axes || !op->getAttrOfType<FlatSymbolRefAttr>("mesh"))
    return false;
  return llvm::is_contained(axes.getValue(), axis);
}

ShardingAttr partition::part::detail::withoutAxis(ShardingAttr s,
                                                 StringAttr axis,
                                                 FlatSymbolRefAttr mesh) {
  MLIRContext *ctx = s.getContext();
  SmallVector<ArrayAttr> dims;
  for (int64_t d = 0; d < s.getRank(); ++d) {
    SmallVector<Attribute> axes;
    for (StringAttr a : s.getDimAxes(d))
      if (a != axis)
        axes.push_back(a);
    dims.push_back(ArrayAttr::get(ctx, axes));
  }
  SmallVector<StringAttr> unreduced;
  for (StringAttr a : s.getUnreduced())
    if (a != axis)
      unreduced.push_back(a);
  return ShardingAttr::get(ctx, mesh, dims, unreduced);
}

namespace {

/// For each value of `body`, the mesh axes (bit i: axis i of `meshAttr`)
/// along which every device holds the same local value. Forward and sound:
/// an argument is the same along the axes its sharding does not name; an
/// all_reduce or all_gather makes its result the same along its axes; an op
/// of the rank (all_slice, axis_index, reduce_scatter, all_to_all, permute)
/// makes it differ along its axes; a receive is assumed to differ
/// everywhere; any other op computes the same from the same operands.
llvm::DenseMap<Value, uint64_t> sameAlongAxes(func::FuncOp function,
                                              MeshAttr meshAttr) {
  llvm::DenseMap<Value, uint64_t> same;
  unsigned n = meshAttr.getNumAxes();
  uint64_t all = n >= 64 ? ~uint64_t(0) : (uint64_t(1) << n) - 1;
  auto bitsOf = [&](ArrayAttr axes) {
    uint64_t bits = 0;
    for (Attribute a : axes)
      if (auto index = meshAttr.getAxisIndex(cast<StringAttr>(a).getValue()))
        bits |= uint64_t(1) << *index;
    return bits;
  };
  Block &body = function.getBody().front();
  for (BlockArgument arg : body.getArguments()) {
    uint64_t bits = all;
    if (auto s = function.getArgAttrOfType<ShardingAttr>(
            arg.getArgNumber(), PartDialect::getShardingAttrName())) {
      for (StringAttr a : s.getShardedAxes())
        if (auto index = meshAttr.getAxisIndex(a.getValue()))
          bits &= ~(uint64_t(1) << *index);
      for (StringAttr a : s.getUnreduced())
        if (auto index = meshAttr.getAxisIndex(a.getValue()))
          bits &= ~(uint64_t(1) << *index);
    }
    same[arg] = bits;
  }
  for (Operation &op : body.without_terminator()) {
    uint64_t bits = all;
    for (Value v : op.getOperands())
      bits &= same.lookup(v);
    auto axes = op.getAttrOfType<ArrayAttr>("axes");
    if (isa<AllReduceOp, AllGatherOp>(op))
      bits |= bitsOf(axes);
    else if (isa<AllSliceOp, AxisIndexOp, ReduceScatterOp, AllToAllOp,
                 CollectivePermuteOp>(op))
      bits &= ~bitsOf(axes);
    else if (isa<RecvOp>(op) || op.getNumRegions() != 0)
      bits = 0;
    for (Value r : op.getResults())
      same[r] = bits;
  }
  return same;
}

} // namespace

LogicalResult PipelineSplit::classify() {
  Block &body = function.getBody().front();
  for (BlockArgument arg : body.getArguments()) {
    auto s = function.getArgAttrOfType<ShardingAttr>(
        arg.getArgNumber(), PartDialect::getShardingAttrName());
    bool split = s && s.getRank() > 0 && s.isShardedOver(axis);
    if (split && !llvm::is_contained(s.getDimAxes(0), axis))
      return function.emitError()
             << "part-pipeline: argument " << arg.getArgNumber()
             << " is split over the micro-batch axis \"" << axis.getValue()
             << "\" in a dimension other than the batch (0)";
    valueKinds[arg] = split ? Kind::MicroBatch : Kind::Invariant;
    if (split)
      batched.insert(arg);
  }
  for (Operation &op : body.without_terminator()) {
    Kind kind = Kind::Invariant;
    if (isCollectiveOver(&op, axis)) {
      auto reduce = dyn_cast<AllReduceOp>(&op);
      if (!reduce)
        return op.emitOpError()
               << "runs over the micro-batch axis \"" << axis.getValue()
               << "\", which a pipeline runs one micro-batch at a time: only "
                  "sums and means over it (all_reduce) can be accumulated";
      if (reduce.getKind() != ReductionKind::Sum &&
          reduce.getKind() != ReductionKind::Avg)
        return op.emitOpError()
               << "reduces over the micro-batch axis \"" << axis.getValue()
               << "\" with " << stringifyReductionKind(reduce.getKind())
               << ": only sums and means accumulate over micro-batches";
      if (valueKinds.lookup(reduce.getInput()) != Kind::MicroBatch)
        return op.emitOpError()
               << "reduces a value that is the same in every micro-batch over "
                  "the micro-batch axis";
      kind = Kind::Accumulate;
    } else {
      bool micro = false, step = false;
      for (Value v : op.getOperands()) {
        Kind k = valueKinds.lookup(v);
        micro |= k == Kind::MicroBatch;
        step |= k == Kind::Step || k == Kind::Accumulate;
      }
      if (micro && step)
        return op.emitOpError()
               << "reads both a value of one micro-batch and a sum over all "
                  "of them; a pipeline cannot place it";
      kind = micro ? Kind::MicroBatch : step ? Kind::Step : Kind::Invariant;
      if (op.getNumRegions())
        return op.emitOpError() << "has regions; part-pipeline cannot cut it";
    }
    kinds[&op] = kind;
    for (Value r : op.getResults())
      valueKinds[r] = kind == Kind::Accumulate ? Kind::Step : kind;
  }

  // Forward: the micro-batch ops an accumulation that no update reads (the
  // loss) is computed from.
  auto ret = cast<func::ReturnOp>(body.getTerminator());
  llvm::DenseSet<Operation *> updateSide;
  SmallVector<Value> work;
  for (OpOperand &o : ret->getOpOperands())
    if (function.getResultAttr(o.getOperandNumber(),
                               PartDialect::getUpdatesAttrName()))
      work.push_back(o.get());
  while (!work.empty()) {
    Operation *def = work.pop_back_val().getDefiningOp();
    if (!def || kinds.lookup(def) != Kind::Step || !updateSide.insert(def).second)
      continue;
    work.append(def->operand_begin(), def->operand_end());
  }
  llvm::DenseSet<Operation *> gradientAccumulations;
  for (Operation *op : updateSide)
    for (Value v : op->getOperands())
      if (Operation *def = v.getDefiningOp();
          def && kinds.lookup(def) == Kind::Accumulate)
        gradientAccumulations.insert(def);
  for (Operation &op : body.without_terminator())
    if (kinds.lookup(&op) == Kind::Accumulate &&
        !gradientAccumulations.contains(&op))
      work.push_back(op.getOperand(0));
  while (!work.empty()) {
    Operation *def = work.pop_back_val().getDefiningOp();
    if (!def || kinds.lookup(def) != Kind::MicroBatch ||
        !forward.insert(def).second)
      continue;
    work.append(def->operand_begin(), def->operand_end());
  }
  return success();
}

LogicalResult PipelineSplit::assignStages() {
  FailureOr<pl::LayerGroups> groupOf = balanceLayers(measureLayers());
  if (failed(groupOf))
    return failure();
  placeOps(*groupOf);
  accumulateTermsInTheirStages();
  if (failed(groupStageOps()) || failed(findCrossings()))
    return failure();
  return placeStepValues();
}

pl::LayerCosts PipelineSplit::measureLayers() {
  Block &body = function.getBody().front();
  // The layers of the forward program, with their FLOPs; forward ops
  // without a layer count with the layer before them, or before the first
  // layer (the embedding: the first stage) or after the last (the head and
  // the loss: the last stage).
  std::map<int64_t, int64_t> layerFlops;
  int64_t leadingFlops = 0, trailingFlops = 0;
  std::optional<int64_t> lastLayer;
  // balance=memory: what each layer holds for the whole step (its
  // parameters, their gradients and optimizer state, counted at their first
  // reader) and per micro-batch in flight (the values its forward makes that
  // backward reads); ops without a layer count as their FLOPs do.
  using Footprint = pl::LayerCost;
  std::map<int64_t, Footprint> layerMemory;
  Footprint leadingMemory;
  std::vector<int64_t> stateBytes(function.getNumArguments(), 0);
  for (BlockArgument arg : body.getArguments())
    if (auto of = function.getArgAttrOfType<IntegerAttr>(
            arg.getArgNumber(), PartDialect::getStateOfAttrName());
        of && of.getInt() >= 0 && of.getInt() < int64_t(stateBytes.size()))
      stateBytes[of.getInt()] += getTensorBytes(cast<RankedTensorType>(
                                                   arg.getType()))
                                     .value_or(0);
  llvm::DenseSet<Value> counted;
  auto footprintOf = [&](Operation &op) {
    Footprint f;
    for (Value v : op.getOperands()) {
      auto arg = dyn_cast<BlockArgument>(v);
      auto role = arg ? function.getArgAttrOfType<ArgRoleAttr>(
                            arg.getArgNumber(), PartDialect::getRoleAttrName())
                      : ArgRoleAttr();
      if (!role || role.getValue() != ArgRole::Parameter ||
          !counted.insert(v).second)
        continue;
      int64_t bytes =
          getTensorBytes(cast<RankedTensorType>(v.getType())).value_or(0);
      f.resident += double(2 * bytes + stateBytes[arg.getArgNumber()]);
    }
    for (Value r : op.getResults())
      if (llvm::any_of(r.getUsers(),
                       [&](Operation *u) { return !forward.contains(u); }))
        if (auto t = dyn_cast<RankedTensorType>(r.getType()))
          f.perMicroBatch += double(getTensorBytes(t).value_or(0));
    return f;
  };
  auto add = [](Footprint &to, const Footprint &f) {
    to.resident += f.resident;
    to.perMicroBatch += f.perMicroBatch;
  };
  Footprint pendingMemory; // ops after a layer, until the next layer starts
  for (Operation &op : body.without_terminator()) {
    if (!forward.contains(&op))
      continue;
    Footprint memory = footprintOf(op);
    if (auto layer =
            op.getAttrOfType<IntegerAttr>(PartDialect::getLayerAttrName())) {
      if (lastLayer && *lastLayer != layer.getInt())
        add(layerMemory[*lastLayer], pendingMemory), pendingMemory = {};
      add(layerMemory[layer.getInt()], memory);
      add(layerMemory[layer.getInt()], pendingMemory);
      pendingMemory = {};
    } else if (lastLayer) {
      add(pendingMemory, memory);
    } else {
      add(leadingMemory, memory);
    }
    int64_t flops = std::max<int64_t>(1, flopsOf(&op));
    if (auto layer =
            op.getAttrOfType<IntegerAttr>(PartDialect::getLayerAttrName())) {
      if (lastLayer && *lastLayer != layer.getInt())
        layerFlops[*lastLayer] += trailingFlops, trailingFlops = 0;
      lastLayer = layer.getInt();
      layerFlops[layer.getInt()] += flops + trailingFlops;
      trailingFlops = 0;
    } else if (lastLayer) {
      trailingFlops += flops;
    } else {
      leadingFlops += flops;
    }
  }
  pl::LayerCosts costs;
  for (auto &[layer, flops] : layerFlops) {
    Footprint &memory = layerMemory[layer];
    costs.layers.push_back(
        {layer, double(flops), memory.resident, memory.perMicroBatch});
  }
  costs.leading = leadingMemory;
  costs.leading.flops = double(leadingFlops);
  costs.trailing = pendingMemory;
  costs.trailing.flops = double(trailingFlops);
  return costs;
}

FailureOr<pl::LayerGroups>
PipelineSplit::balanceLayers(const pl::LayerCosts &costs) {
  pl::StageGroups groups{stages, chunks};
  std::string error;
  std::optional<pl::LayerGroups> groupOf;
  if (!stageLayers.empty()) {
    groupOf = pl::groupsFromRanges(
        costs, groups, {stageLayers.begin(), stageLayers.end()}, &error);
  } else if (inFlight) {
    // Per group (virtual stage), the micro-batches in flight on its stage.
    std::vector<int64_t> inFlightOfGroup;
    for (int64_t g = 0; g < groups.count(); ++g)
      inFlightOfGroup.push_back((*inFlight)[physical(g)]);
    groupOf = pl::balanceMemory(costs, groups, inFlightOfGroup, &error);
  } else {
    groupOf = pl::balanceFlops(costs, groups, &error);
  }
  if (!groupOf)
    return function.emitError() << "part-pipeline: " << error;
  return *groupOf;
}

/// The forward ops after the last op of a layer (the head and the loss, and
/// what they read of the batch): the last group runs them, which is their
/// own where the groups outnumber the layers (pl::mostGroups).
static llvm::DenseSet<Operation *>
trailingOps(Block &body, const llvm::DenseSet<Operation *> &forward) {
  llvm::DenseSet<Operation *> trailing;
  for (Operation &op : body.without_terminator()) {
    if (!forward.contains(&op))
      continue;
    if (op.hasAttr(PartDialect::getLayerAttrName()))
      trailing.clear();
    else
      trailing.insert(&op);
  }
  return trailing;
}

bool PipelineSplit::readsParameter(Value v,
                                   llvm::DenseMap<Value, bool> &memo) {
  if (auto arg = dyn_cast<BlockArgument>(v)) {
    auto role = function.getArgAttrOfType<ArgRoleAttr>(
        arg.getArgNumber(), PartDialect::getRoleAttrName());
    return role && role.getValue() == ArgRole::Parameter;
  }
  if (auto it = memo.find(v); it != memo.end())
    return it->second;
  Operation *def = v.getDefiningOp();
  bool reads = def && kinds.lookup(def) == Kind::Invariant &&
               llvm::any_of(def->getOperands(), [&](Value o) {
                 return readsParameter(o, memo);
               });
  memo[v] = reads;
  return reads;
}

int64_t PipelineSplit::backwardStage(Operation &op) const {
  // Where the forward it differentiates ran, from what it reads: a forward
  // value, on the latest group that made or read it (a norm's backward reads
  // its input, which the group before made); an index that is no forward
  // value (the token ids, the positions, the labels), on the first group
  // whose forward reads it (the embedding's gradient scatters by the ids).
  int64_t anchor = -1;
  for (Value v : op.getOperands()) {
    Operation *def = v.getDefiningOp();
    bool computed = def && forward.contains(def);
    auto type = dyn_cast<RankedTensorType>(v.getType());
    if (!computed && !(type && type.getElementType().isInteger()))
      continue;
    int64_t first = -1, last = computed ? stageOfValue(v) : -1;
    for (Operation *user : v.getUsers())
      if (auto it = opStage.find(user);
          it != opStage.end() && forward.contains(user)) {
        first = first < 0 ? it->second : std::min(first, it->second);
        last = std::max(last, it->second);
      }
    anchor = std::max(anchor, computed ? last : first);
  }
  if (anchor >= 0)
    return anchor;
  // Otherwise the earliest group of what it reads (a sum of gradients from
  // two stages: the first), or the last group.
  int64_t stage = -1;
  for (Value v : op.getOperands())
    if (int64_t s = stageOfValue(v); s >= 0)
      stage = stage < 0 ? s : std::min(stage, s);
  return stage < 0 ? stages * chunks - 1 : stage;
}

void PipelineSplit::placeOps(pl::LayerGroups stageOfLayer) {
  Block &body = function.getBody().front();
  int64_t groups = stages * chunks; // virtual stages
  llvm::DenseSet<Operation *> trailing = trailingOps(body, forward);
  for (Operation &op : body.without_terminator()) {
    Kind kind = kinds.lookup(&op);
    if (kind != Kind::MicroBatch && kind != Kind::Accumulate)
      continue;
    int64_t stage = -1;
    if (kind == Kind::Accumulate) {
      stage = stageOfValue(op.getOperand(0));
    } else if (forward.contains(&op)) {
      if (auto layer =
              op.getAttrOfType<IntegerAttr>(PartDialect::getLayerAttrName()))
        stage = stageOfLayer[layer.getInt()];
      for (Value v : op.getOperands())
        stage = std::max(stage, stageOfValue(v));
      if (trailing.contains(&op))
        stage = groups - 1;
      stage = std::max<int64_t>(stage, 0);
    } else if (auto layer = op.getAttrOfType<IntegerAttr>(
                   PartDialect::getLayerAttrName());
               layer && stageOfLayer.count(layer.getInt())) {
      // A layer's backward runs with its forward (part-autodiff labels the
      // backward ops of a layer's ops): only the gradient of the activation
      // between two stages crosses back, as in Megatron.
      stage = stageOfLayer[layer.getInt()];
    } else {
      stage = backwardStage(op);
    }
    opStage[&op] = stage;
    for (Value r : op.getResults())
      home[r] = stage;
    if (kind == Kind::MicroBatch)
      actionOf[&op] = forward.contains(&op) ? pl::Action::Forward
                                            : pl::Action::Backward;
  }
  floatBatchOps();
}

void PipelineSplit::floatBatchOps() {
  Block &body = function.getBody().front();
  // Forward ops outside the layers that read only the batch and invariants
  // (the labels' masks, positions) go to the first stage that uses them
  // rather than the first stage: they are computed there instead of sent.
  // Not what reads a parameter (the embedding's lookup): that stays in its
  // group, which may hold nothing else.
  llvm::DenseMap<Value, bool> parameterMemo;
  llvm::DenseSet<Operation *> floating;
  for (Operation &op : body.without_terminator()) {
    if (!forward.contains(&op) || !opStage.count(&op) ||
        op.hasAttr(PartDialect::getLayerAttrName()))
      continue;
    if (llvm::all_of(op.getOperands(), [&](Value v) {
          Operation *def = v.getDefiningOp();
          return (stageOfValue(v) < 0 && !readsParameter(v, parameterMemo)) ||
                 (def && floating.contains(def));
        }))
      floating.insert(&op);
  }
  for (Operation &op : llvm::reverse(body.without_terminator())) {
    if (!floating.contains(&op))
      continue;
    int64_t stage = -1;
    for (Operation *user : op.getUsers())
      if (auto it = opStage.find(user); it != opStage.end())
        stage = stage < 0 ? it->second : std::min(stage, it->second);
    if (stage < 0)
      continue;
    opStage[&op] = stage;
    for (Value r : op.getResults())
      home[r] = stage;
  }
}

void PipelineSplit::accumulateTermsInTheirStages() {
  Block &body = function.getBody().front();
  // A sum accumulated over micro-batches whose terms come from different
  // stages (a tied embedding's gradient: the lookup's on the first stage,
  // the head's on the last), possibly through ops linear in it (the
  // optimizer's scaling), is accumulated term by term, each in its own
  // stage, and the terms' sums are added once per step: the sum over
  // micro-batches is linear. Otherwise one term would cross to the other's
  // stage every micro-batch (a vocabulary-sized gradient).
  for (bool changed = true; changed;) {
    changed = false;
    for (Operation &op : llvm::make_early_inc_range(body.without_terminator())) {
      auto acc = dyn_cast<AllReduceOp>(&op);
      if (!acc || kinds.lookup(&op) != Kind::Accumulate)
        continue;
      // Up from the accumulation through single-use ops linear in the
      // value (their other operands the same in every micro-batch) to an
      // add of terms of two stages.
      SmallVector<std::pair<Operation *, unsigned>> chain; // (op, operand)
      Value v = acc.getInput();
      AddOp add;
      while (Operation *def = v.getDefiningOp()) {
        if (!v.hasOneUse() || kinds.lookup(def) != Kind::MicroBatch ||
            def->getNumResults() != 1)
          break;
        if (auto a = dyn_cast<AddOp>(def)) {
          int64_t sa = stageOfValue(a.getLhs()), sb = stageOfValue(a.getRhs());
          if (sa >= 0 && sb >= 0 && sa != sb &&
              a.getLhs().getType() == a.getType() &&
              a.getRhs().getType() == a.getType()) {
            add = a;
            break;
          }
        }
        auto ruled = dyn_cast<ShardingRuleOpInterface>(def);
        std::optional<unsigned> through;
        for (auto [i, operand] : llvm::enumerate(def->getOperands()))
          if (valueKinds.lookup(operand) == Kind::MicroBatch)
            through = through ? std::optional<unsigned>() : i;
        if (!ruled || !through)
          break;
        SmallVector<bool> pending(def->getNumOperands(), false);
        pending[*through] = true;
        SmallVector<bool> kept = ruled.keepsPendingSum(pending);
        if (kept.empty() || !kept[*through])
          break;
        chain.push_back({def, *through});
        v = def->getOperand(*through);
      }
      if (!add)
        continue;
      OpBuilder builder(acc);
      auto accumulate = [&](Value term, int64_t stage) {
        // The chain again on this term, in its stage.
        builder.setInsertionPoint(acc);
        for (auto &[link, index] : llvm::reverse(chain)) {
          IRMapping map;
          map.map(link->getOperand(index), term);
          Operation *copy = builder.clone(*link, map);
          kinds[copy] = Kind::MicroBatch;
          valueKinds[copy->getResult(0)] = Kind::MicroBatch;
          opStage[copy] = stage;
          home[copy->getResult(0)] = stage;
          actionOf[copy] = pl::Action::Backward;
          term = copy->getResult(0);
        }
        auto sum = AllReduceOp::create(builder, acc.getLoc(), term,
                                       acc.getMeshAttr(), acc.getAxesAttr(),
                                       acc.getKindAttr());
        if (Attribute origin = acc->getAttr(PartDialect::getOriginAttrName()))
          sum->setAttr(PartDialect::getOriginAttrName(), origin);
        kinds[sum] = Kind::Accumulate;
        valueKinds[sum.getResult()] = Kind::Step;
        opStage[sum] = stage;
        home[sum.getResult()] = stage;
        return sum.getResult();
      };
      Value sumA = accumulate(add.getLhs(), stageOfValue(add.getLhs()));
      Value sumB = accumulate(add.getRhs(), stageOfValue(add.getRhs()));
      auto total = AddOp::create(builder, acc.getLoc(), sumA, sumB);
      kinds[total] = Kind::Step;
      valueKinds[total.getResult()] = Kind::Step;
      acc.getResult().replaceAllUsesWith(total.getResult());
      SmallVector<Operation *> gone = {acc.getOperation()};
      for (auto &entry : chain)
        gone.push_back(entry.first);
      gone.push_back(add.getOperation());
      for (Operation *dead : gone) {
        kinds.erase(dead);
        opStage.erase(dead);
        actionOf.erase(dead);
        for (Value r : dead->getResults()) {
          valueKinds.erase(r);
          home.erase(r);
        }
        dead->erase();
      }
      changed = true;
    }
  }
}

LogicalResult PipelineSplit::groupStageOps() {
  Block &body = function.getBody().front();
  int64_t groups = stages * chunks; // virtual stages
  // Zero-bubble: a stage's backward splits into what the previous stage
  // waits for (Bi: the gradient of the stage's input) and the weight
  // gradients (W): the backward ops whose results only other such ops and
  // the accumulation of gradients read, within the stage.
  if (splitBackward) {
    auto isBackward = [&](Operation *op) {
      auto it = actionOf.find(op);
      return it != actionOf.end() && it->second == pl::Action::Backward;
    };
    llvm::DenseSet<Operation *> weight = weightGradientOps(
        body, isBackward,
        [&](Operation *user) { return kinds.lookup(user) == Kind::Accumulate; },
        [&](Operation *op) { return opStage.lookup(op); });
    for (auto &[op, action] : actionOf)
      if (action == pl::Action::Backward)
        action = weight.contains(op) ? pl::Action::BackwardWeight
                                     : pl::Action::BackwardInput;
  }
  stageOps.assign(groups, {});
  for (Operation &op : body.without_terminator())
    if (auto it = actionOf.find(&op); it != actionOf.end())
      stageOps[opStage.lookup(&op)][it->second].push_back(&op);
  for (int64_t s = 0; s < groups; ++s)
    if (stageOps[s][pl::Action::Forward].empty())
      return function.emitError()
             << "part-pipeline: stage " << s << " has no forward work";
  return success();
}

LogicalResult PipelineSplit::findCrossings() {
  Block &body = function.getBody().front();
  // Values read in another stage than their home.
  for (Operation &op : body.without_terminator()) {
    auto it = opStage.find(&op);
    if (it == opStage.end())
      continue;
    for (Value v : op.getOperands()) {
      int64_t from = stageOfValue(v);
      // A value of another chunk of the same stage is at hand.
      if (from < 0 || physical(from) == physical(it->second) ||
          valueKinds.lookup(v) != Kind::MicroBatch)
        continue;
      pl::Action reader = kinds.lookup(&op) == Kind::Accumulate
                              ? pl::Action::Backward
                              : actionOf.lookup(&op);
      crossing[v][physical(it->second)].insert(
          {chunkOf(it->second), reader});
    }
  }
  nextChannel = int64_t(crossing.size()) * microBatches;

  // The schedule with what the stages send each other, simulated.
  for (auto &[v, readers] : crossing)
    for (auto &[to, steps] : readers)
      for (auto &[chunk, action] : steps) {
        int64_t from = stageOfValue(v);
        pl::Transfer x{physical(from), actionOf.lookup(v.getDefiningOp()), to,
                       action, chunkOf(from), chunk};
        if (llvm::none_of(schedule.transfers, [&](const pl::Transfer &y) {
              return y.fromStage == x.fromStage &&
                     y.fromAction == x.fromAction && y.toStage == x.toStage &&
                     y.toAction == x.toAction && y.fromChunk == x.fromChunk &&
                     y.toChunk == x.toChunk;
            }))
          schedule.transfers.push_back(x);
      }
  std::string error;
  if (!pl::simulate(schedule, &error))
    return function.emitError()
           << "part-pipeline: with the values its stages send each other, "
           << error;
  return success();
}

LogicalResult PipelineSplit::placeStepValues() {
  Block &body = function.getBody().front();
  // The stages that return each result: an update goes to every stage that
  // reads the argument it updates (or, for optimizer state, its parameter);
  // any other result to the last stage among the accumulations it reads.
  auto ret = cast<func::ReturnOp>(body.getTerminator());
  std::vector<std::set<int64_t>> argStages(function.getNumArguments());
  llvm::DenseMap<Value, std::set<int64_t>> invariantReaders;
  // Stages reading an invariant value, computed users-first.
  for (Operation &op : llvm::reverse(body.without_terminator())) {
    std::set<int64_t> here;
    auto it = opStage.find(&op);
    if (it != opStage.end())
      here.insert(physical(it->second));
    else if (kinds.lookup(&op) == Kind::Invariant)
      for (Value r : op.getResults()) {
        auto found = invariantReaders.find(r);
        if (found != invariantReaders.end())
          here.insert(found->second.begin(), found->second.end());
      }
    if (here.empty())
      continue;
    for (Value v : op.getOperands())
      if (valueKinds.lookup(v) == Kind::Invariant)
        invariantReaders[v].insert(here.begin(), here.end());
  }
  for (BlockArgument arg : body.getArguments()) {
    auto it = invariantReaders.find(arg);
    if (it != invariantReaders.end())
      argStages[arg.getArgNumber()] = it->second;
  }
  // The last stage among the accumulations each step value is computed
  // from (forward over the step ops).
  llvm::DenseMap<Value, int64_t> lastAccumulation;
  for (Operation &op : body.without_terminator()) {
    Kind kind = kinds.lookup(&op);
    if (kind == Kind::Accumulate) {
      lastAccumulation[op.getResult(0)] = physical(opStage.lookup(&op));
      continue;
    }
    if (kind != Kind::Step)
      continue;
    int64_t last = -1;
    for (Value v : op.getOperands())
      if (auto it = lastAccumulation.find(v); it != lastAccumulation.end())
        last = std::max(last, it->second);
    if (last >= 0)
      for (Value r : op.getResults())
        lastAccumulation[r] = last;
  }
  auto updatedArgs = [&](unsigned result) -> SmallVector<int64_t, 2> {
    auto updates = function.getResultAttrOfType<IntegerAttr>(
        result, PartDialect::getUpdatesAttrName());
    if (!updates)
      return {};
    SmallVector<int64_t, 2> args = {updates.getInt()};
    if (auto of = function.getArgAttrOfType<IntegerAttr>(
            updates.getInt(), PartDialect::getStateOfAttrName()))
      args.push_back(of.getInt());
    return args;
  };
  resultStages.assign(function.getNumResults(), {});
  for (OpOperand &o : ret->getOpOperands()) {
    unsigned i = o.getOperandNumber();
    if (valueKinds.lookup(o.get()) == Kind::MicroBatch)
      return (o.get().getDefiningOp() ? o.get().getDefiningOp()
                                      : function.getOperation())
                 ->emitOpError()
             << "is returned per micro-batch; a pipelined step returns sums "
                "over micro-batches";
    SmallVector<int64_t, 2> args = updatedArgs(i);
    if (!args.empty()) {
      // The parameter's stages (for optimizer state, its parameter's).
      resultStages[i] = argStages[args.back()];
      if (resultStages[i].empty())
        resultStages[i].insert(0);
    } else {
      resultStages[i].insert(std::max<int64_t>(0, lastAccumulation.lookup(o.get())));
    }
  }

  // The stages that need each step or invariant value: those that return a
  // result computed from it (backward over the ops).
  llvm::DenseMap<Value, std::set<int64_t>> needs;
  auto computeNeeds = [&] {
    needs.clear();
    for (OpOperand &o : ret->getOpOperands())
      needs[o.get()].insert(resultStages[o.getOperandNumber()].begin(),
                            resultStages[o.getOperandNumber()].end());
    for (Operation &op : llvm::reverse(body.without_terminator())) {
      Kind kind = kinds.lookup(&op);
      if (kind != Kind::Step && kind != Kind::Invariant)
        continue;
      std::set<int64_t> here;
      for (Value r : op.getResults())
        if (auto it = needs.find(r); it != needs.end())
          here.insert(it->second.begin(), it->second.end());
      if (!here.empty())
        for (Value v : op.getOperands())
          needs[v].insert(here.begin(), here.end());
    }
  };
  // A stage that returns a result reads the arguments its step ops read (the
  // optimizer's step counter, say): it returns their updates too, until
  // nothing changes (stages only join, so at most a few rounds).
  for (bool changed = true; changed;) {
    changed = false;
    computeNeeds();
    for (BlockArgument arg : body.getArguments())
      if (auto it = needs.find(arg); it != needs.end())
        for (int64_t stage : it->second)
          changed |= argStages[arg.getArgNumber()].insert(stage).second;
    for (unsigned i = 0; i < function.getNumResults(); ++i)
      for (int64_t arg : updatedArgs(i))
        for (int64_t stage : argStages[arg])
          changed |= resultStages[i].insert(stage).second;
  }

  // Accumulations a stage's step ops read but another stage holds.
  for (Operation &op : body.without_terminator()) {
    if (kinds.lookup(&op) != Kind::Accumulate)
      continue;
    Value sum = op.getResult(0);
    auto it = needs.find(sum);
    if (it == needs.end())
      continue;
    for (int64_t stage : it->second)
      if (stage != physical(opStage.lookup(&op)))
        stepTransfers[{sum.getAsOpaquePointer(), stage}] = nextChannel++;
  }
  return success();
}

void PipelineSplit::findScatters() {
  MeshAttr meshAttr = mesh.getMesh();
  llvm::DenseMap<Value, uint64_t> same = sameAlongAxes(function, meshAttr);
  auto consider = [&](Value v) {
    if (scatters.count(v))
      return;
    SmallVector<StringRef> axes;
    int64_t group = 1;
    uint64_t bits = same.lookup(v);
    for (auto [i, name] : llvm::enumerate(meshAttr.getAxisNames()))
      if ((bits >> i & 1) && name != axis && meshAttr.getAxisSizes()[i] > 1) {
        axes.push_back(cast<StringAttr>(name).getValue());
        group *= meshAttr.getAxisSizes()[i];
      }
    auto type = cast<RankedTensorType>(v.getType());
    if (axes.empty())
      return;
    // The outermost dimension the group divides: blocks are contiguous.
    for (int64_t d = 0; d < type.getRank(); ++d)
      if (type.getDimSize(d) % group == 0) {
        scatters[v] = {d, axes, group};
        return;
      }
  };
  for (auto &entry : crossing)
    consider(entry.first);
  for (auto &entry : stepTransfers)
    consider(Value::getFromOpaquePointer(entry.first.first));
}

Type PipelineSplit::wireType(Value v) {
  auto type = cast<RankedTensorType>(v.getType());
  auto it = scatters.find(v);
  if (it == scatters.end())
    return type;
  SmallVector<int64_t> shape(type.getShape());
  shape[it->second.dim] /= it->second.group;
  return RankedTensorType::get(shape, type.getElementType());
}

Value PipelineSplit::toWire(OpBuilder &b, Value v, Value local) {
  return scatterOrGather(b, v, local, /*gather=*/false);
}

Value PipelineSplit::fromWire(OpBuilder &b, Value v, Value received) {
  return scatterOrGather(b, v, received, /*gather=*/true);
}

Value PipelineSplit::scatterOrGather(OpBuilder &b, Value v, Value x,
                                     bool gather) {
  auto it = scatters.find(v);
  if (it == scatters.end())
    return x;
  auto meshRef = FlatSymbolRefAttr::get(mesh.getSymNameAttr());
  ArrayAttr axes = b.getStrArrayAttr(it->second.axes);
  IntegerAttr dim = b.getI64IntegerAttr(it->second.dim);
  Operation *op =
      gather ? AllGatherOp::create(b, x.getLoc(), v.getType(), x, meshRef,
                                   axes, dim)
                   .getOperation()
             : AllSliceOp::create(b, x.getLoc(), wireType(v), x, meshRef, axes,
                                  dim)
                   .getOperation();
  op->setAttr(PartDialect::getOriginAttrName(),
              b.getStringAttr(gather ? "pipeline transfer: the blocks the "
                                       "previous stage's group sent, gathered "
                                       "(scatter/gather)"
                                     : "pipeline transfer: each device sends "
                                       "its block of a value its group holds "
                                       "whole (scatter/gather)"));
  return op->getResult(0);
}

/// The value of invariant or step value `v` in the stage function: its
/// argument, or a copy of the ops that make it.
Value PipelineSplit::materialize(OpBuilder &b, Value v, IRMapping &map) {
  if (Value mapped = map.lookupOrNull(v))
    return mapped;
  Operation *def = v.getDefiningOp();
  assert(def && "arguments are mapped up front");
  for (Value operand : def->getOperands())
    materialize(b, operand, map);
  b.clone(*def, map);
  return map.lookup(v);
}

bool PipelineSplit::completionDoesWork(Operation *op) const {
  auto reduce = cast<AllReduceOp>(op);
  return reduce.getKind() == ReductionKind::Avg ||
         llvm::any_of(reduce.getAxes(), [&](Attribute a) { return a != axis; });
}

Value PipelineSplit::completeAccumulation(OpBuilder &b, Operation *op,
                                          Value sum,
                                          FlatSymbolRefAttr meshRef) {
  MLIRContext *ctx = function.getContext();
  Location loc = function.getLoc();
  auto reduce = cast<AllReduceOp>(op);
  Value v = sum;
  if (reduce.getKind() == ReductionKind::Avg) {
    auto type = cast<RankedTensorType>(v.getType());
    auto scalarType = RankedTensorType::get({}, type.getElementType());
    Value scale = ConstantOp::create(
        b, loc, scalarType,
        DenseElementsAttr::get(
            scalarType, ArrayRef<Attribute>{FloatAttr::get(
                            type.getElementType(), 1.0 / microBatches)}));
    v = MulOp::create(b, loc, v, scale);
  }
  SmallVector<StringRef> rest;
  for (Attribute a : reduce.getAxes())
    if (a != axis)
      rest.push_back(cast<StringAttr>(a).getValue());
  if (rest.empty())
    return v;
  auto remaining = AllReduceOp::create(
      b, reduce.getLoc(), v, meshRef, b.getStrArrayAttr(rest),
      ReductionKindAttr::get(ctx, reduce.getKind()));
  // Why: the original all_reduce's reason, once per step.
  if (auto origin =
          reduce->getAttrOfType<StringAttr>(PartDialect::getOriginAttrName()))
    remaining->setAttr(PartDialect::getOriginAttrName(),
                       b.getStringAttr(origin.getValue() +
                                       " (the sum over the micro-batches, "
                                       "once per step)"));
  return remaining;
}

void PipelineSplit::useAccumulation(
    OpBuilder &b, Operation *op, Value done, IRMapping &invariants,
    SmallVectorImpl<std::tuple<int64_t, Value, int64_t>> &sends) {
  Value result = cast<AllReduceOp>(op).getResult();
  invariants.map(result, done);
  Value wire;
  for (auto &[key, channel] : stepTransfers)
    if (key.first == result.getAsOpaquePointer()) {
      if (!wire)
        wire = toWire(b, result, done);
      sends.push_back({key.second, wire, channel});
    }
}

void PipelineSplit::finalizeAccumulation(
    OpBuilder &b, Operation *op, Value sum, FlatSymbolRefAttr meshRef,
    IRMapping &invariants,
    SmallVectorImpl<std::tuple<int64_t, Value, int64_t>> &sends) {
  useAccumulation(b, op, completeAccumulation(b, op, sum, meshRef),
                  invariants, sends);
}

FailureOr<SmallVector<int64_t>>
PipelineSplit::finishStage(func::FuncOp fn, int64_t stage,
                           ArrayRef<unsigned> results,
                           const llvm::BitVector &keep) {
  MLIRContext *ctx = function.getContext();
  OpBuilder b(ctx);
  std::string meshName = (mesh.getSymName() + "_pp" + Twine(stage)).str();
  auto meshRef = FlatSymbolRefAttr::get(ctx, meshName);
  Block *entry = &fn.getBody().front();
  // Attributes: the stage's mesh instead of the step's, the micro-batch
  // axis gone from the batched arguments' sharding. (Set all at once: each
  // setArgAttrs rebuilds the array of every argument's attributes.)
  auto onStage = [&](DictionaryAttr dict) {
    NamedAttrList attrs(dict);
    if (auto s = dyn_cast_or_null<ShardingAttr>(
            attrs.get(PartDialect::getShardingAttrName())))
      attrs.set(PartDialect::getShardingAttrName(),
                withoutAxis(s, axis, meshRef));
    return attrs.getDictionary(ctx);
  };
  SmallVector<DictionaryAttr> argAttrs, resultAttrs;
  // (Arguments past the step's own are the fragments' accumulators.)
  for (unsigned i = 0; i < fn.getNumArguments(); ++i)
    argAttrs.push_back(i < function.getNumArguments()
                           ? onStage(function.getArgAttrDict(i))
                           : fn.getArgAttrDict(i));
  for (unsigned i : results)
    resultAttrs.push_back(onStage(function.getResultAttrDict(i)));
  fn.setAllArgAttrs(argAttrs);
  fn.setAllResultAttrs(resultAttrs);
  fn->setAttr(PartDialect::getSpmdAttrName(), meshRef);
  fn->setAttr("part.stage", b.getI64IntegerAttr(stage));
  std::string steps;
  for (const pl::Step &step : schedule.steps[stage])
    steps += (steps.empty() ? "" : " ") + pl::stepText(step, chunks);
  fn->setAttr("part.schedule", b.getStringAttr(steps));
  fn->setAttr("part.schedule_kind",
              b.getStringAttr(pl::scheduleName(schedule.kind)));
  // Collectives name the stage's mesh.
  fn.walk([&](Operation *op) {
    if (auto m = op->getAttrOfType<FlatSymbolRefAttr>("mesh"))
      if (m.getValue() == mesh.getSymName())
        op->setAttr("mesh", meshRef);
  });

  // Arguments the stage does not read, and the attributes that number
  // arguments renumbered.
  llvm::BitVector unused(fn.getNumArguments());
  SmallVector<int64_t> renumbered(fn.getNumArguments(), -1);
  int64_t next = 0;
  for (BlockArgument arg : entry->getArguments()) {
    if (arg.use_empty() && !keep.test(arg.getArgNumber()))
      unused.set(arg.getArgNumber());
    else
      renumbered[arg.getArgNumber()] = next++;
  }
  if (failed(fn.eraseArguments(unused)))
    return failure();
  auto renumber = [&](Attribute a) -> IntegerAttr {
    auto index = dyn_cast_or_null<IntegerAttr>(a);
    if (!index || index.getInt() < 0 ||
        index.getInt() >= int64_t(renumbered.size()) ||
        renumbered[index.getInt()] < 0)
      return {};
    return IntegerAttr::get(index.getType(), renumbered[index.getInt()]);
  };
  {
    FunctionAttrEditor attrs(fn);
    for (StringRef name : {PartDialect::getUpdatesAttrName(),
                           PartDialect::getGradOfAttrName()})
      for (unsigned i = 0; i < fn.getNumResults(); ++i)
        if (Attribute a = attrs.getResult(i, name)) {
          if (IntegerAttr now = renumber(a))
            attrs.setResult(i, name, now);
          else
            attrs.removeResult(i, name);
        }
    StringRef stateOf = PartDialect::getStateOfAttrName();
    for (unsigned i = 0; i < fn.getNumArguments(); ++i)
      if (Attribute a = attrs.getArg(i, stateOf)) {
        if (IntegerAttr now = renumber(a))
          attrs.setArg(i, stateOf, now);
        else
          attrs.removeArg(i, stateOf);
      }
    attrs.commit();
  }
  fn.walk([&](Operation *op) {
    if (Attribute a = op->getAttr(PartDialect::getGradientOfAttrName())) {
      if (IntegerAttr now = renumber(a))
        op->setAttr(PartDialect::getGradientOfAttrName(), now);
      else
        op->removeAttr(PartDialect::getGradientOfAttrName());
    }
  });
    return renumbered;
}

LogicalResult PipelineSplit::unmadeValueError(Operation *op, int64_t stage,
                                              StringRef step, Value missing) {
  return op->emitOpError()
         << "part-pipeline: in stage " << stage << ", " << step
         << " reads a value of the stage that its order has not made yet "
            "(defined by "
         << (missing.getDefiningOp()
                 ? missing.getDefiningOp()->getName().getStringRef()
                 : StringRef("an argument"))
         << ")";
}

std::map<int64_t, std::vector<std::pair<Value, int64_t>>>
PipelineSplit::incomingTransfers(int64_t stage) {
  // A direction's transfers are matched in the order issued, so a value is
  // received only after every value the same stage sent before it, which
  // are taken then and kept until read.
  std::map<int64_t, std::vector<std::pair<Value, int64_t>>> incoming;
  for (int64_t from = 0; from < stages; ++from) {
    if (from == stage)
      continue;
    for (const pl::Step &step : schedule.steps[from])
      for (auto &[v, readers] : crossing)
        if (readers.count(stage) &&
            stageOfValue(v) == virtualOf(from, step.chunk) &&
            actionOf.lookup(v.getDefiningOp()) == step.action)
          incoming[from].push_back({v, step.microBatch});
  }
  return incoming;
}

LogicalResult PipelineSplit::emitStage(int64_t stage, OpBuilder &top) {
  Location loc = function.getLoc();
  FlatSymbolRefAttr meshRef = stageMeshRef(stage);
  // The function, with every argument for now (unused ones go at the end).
  SmallVector<unsigned> results;
  func::FuncOp fn = createStageFunction(stage, top, {}, results);
  Block *entry = fn.addEntryBlock();
  OpBuilder b = OpBuilder::atBlockBegin(entry); // appends: the block's end
  // Every op says which step made it (traces and errors show it): the ops
  // appended after `before` (null: from the block's start) get `name`.
  auto lastOp = [&]() -> Operation * {
    return entry->empty() ? nullptr : &entry->back();
  };
  auto labelSince = [&](Operation *before, StringRef name) {
    auto label = b.getStringAttr(name);
    for (Operation &op : llvm::make_range(
             before ? std::next(before->getIterator()) : entry->begin(),
             entry->end()))
      op.setAttr(kStepAttrName, label);
  };

  IRMapping invariants; // invariant and step values
  for (auto [arg, copy] :
       llvm::zip(function.getArguments(), entry->getArguments()))
    if (!batched.contains(arg))
      invariants.map(arg, copy);

  // The schedule, unrolled.
  std::vector<IRMapping> perMicroBatch(microBatches);
  // Per stage sending to this one, the values it sends, in its order.
  std::map<int64_t, std::vector<std::pair<Value, int64_t>>> incoming =
      incomingTransfers(stage);
  std::map<int64_t, size_t> nextIncoming;
  llvm::MapVector<Operation *, Value> sums; // accumulation -> running sum
  llvm::DenseMap<Operation *, int64_t> added; // micro-batches added so far
  Value missing;
  auto valueIn = [&](Value v, int64_t k, IRMapping &map) -> Value {
    if (Value mapped = map.lookupOrNull(v))
      return mapped;
    if (batched.contains(v)) {
      auto local = cast<RankedTensorType>(v.getType());
      SmallVector<int64_t> offsets(local.getRank(), 0);
      offsets[0] = k * local.getDimSize(0);
      Value whole = entry->getArgument(cast<BlockArgument>(v).getArgNumber());
      Value slice = SliceOp::create(b, loc, local, whole,
                                    b.getDenseI64ArrayAttr(offsets),
                                    DenseI64ArrayAttr());
      map.map(v, slice);
      return slice;
    }
    if (valueKinds.lookup(v) == Kind::MicroBatch) {
      int64_t from = physical(stageOfValue(v));
      if (from == stage) {
        // Made later in this stage's order: the cut is inconsistent.
        missing = v;
        return v;
      }
      std::vector<std::pair<Value, int64_t>> &queue = incoming[from];
      for (size_t &next = nextIncoming[from]; next < queue.size();) {
        auto [w, j] = queue[next++];
        int64_t channel =
            int64_t(crossing.find(w) - crossing.begin()) * microBatches + j;
        perMicroBatch[j].map(
            w, fromWire(b, w,
                        RecvOp::create(b, loc, wireType(w), stageMeshRef(from),
                                       b.getI64IntegerAttr(channel))));
        if (w == v && j == k)
          break;
      }
      if (Value received = map.lookupOrNull(v))
        return received;
      missing = v; // not sent to this stage: the cut is inconsistent
      return v;
    }
    Value made = materialize(b, v, invariants);
    map.map(v, made);
    return made;
  };
  // An accumulation once every micro-batch has added to it, completed right
  // there -- during the drain, while later backward steps run -- and the
  // sum sent to the stages that update with it.
  llvm::DenseSet<Operation *> finalized;
  SmallVector<std::tuple<int64_t, Value, int64_t>> pendingSends;
  auto finalize = [&](Operation *op, Value sum) {
    finalized.insert(op);
    finalizeAccumulation(b, op, sum, meshRef, invariants, pendingSends);
  };
  for (const pl::Step &step : schedule.steps[stage]) {
    int64_t k = step.microBatch;
    IRMapping &map = perMicroBatch[k];
    Operation *before = lastOp();
    std::string name = pl::stepText(step, chunks);
    int64_t virtualStage = virtualOf(stage, step.chunk);
    const auto &ops = stageOps[virtualStage][step.action];
    // A stage receives, at the start of a step, every value of another stage
    // that the step is the first to read, and sends, at the end of the step
    // that makes a value, the value to every stage that reads it; by
    // channel. Sends do not wait for their receivers, and the simulation
    // (with these transfers) proved that every receive's value is sent.
    for (auto &[v, readers] : crossing) {
      auto it = readers.find(stage);
      if (it == readers.end() || !it->second.count({step.chunk, step.action}))
        continue;
      valueIn(v, k, map); // received in the first step that reads it
    }
    for (Operation *op : ops) {
      for (Value v : op->getOperands())
        valueIn(v, k, map);
      if (missing)
        return unmadeValueError(op, stage, name, missing);
      Operation *copy = b.clone(*op, map);
      for (auto [r, c] : llvm::zip(op->getResults(), copy->getResults())) {
        // Accumulations of this value.
        for (Operation *user : r.getUsers())
          if (kinds.lookup(user) == Kind::Accumulate) {
            Value &sum = sums[user];
            sum = sum ? AddOp::create(b, loc, sum, c).getResult() : Value(c);
            if (++added[user] == microBatches)
              finalize(user, sum);
          }
      }
    }
    sendValuesMade(b, virtualStage, step.action, map, [&](int64_t index) {
      return index * microBatches + k;
    });
    labelSince(before, name);
  }

  // After the schedule: the update ("U" in traces).
  Operation *lastStep = lastOp();
  // (Every accumulation was completed in the schedule; a stage whose steps
  // leave one incomplete would be a bug in the schedule's simulation.)
  for (auto &[op, sum] : sums)
    if (!finalized.contains(op))
      finalize(op, sum);
  // Accumulated sums other stages need (a tied table's gradient), which
  // they take after their schedules: sent after every micro-batch transfer,
  // in channel order, the order the receivers take them in (a direction's
  // transfers are matched in the order issued). The dp all_reduce that made
  // each ran during the drain.
  exchangeStepTransfers(b, stage, pendingSends, invariants);
  returnResults(b, results, invariants);
  labelSince(lastStep, "U");
  entry->back().removeAttr(kStepAttrName); // the return is no step's

  llvm::BitVector keep(fn.getNumArguments());
  if (failed(finishStage(fn, stage, results, keep)))
    return failure();
  return success();
}

LogicalResult PipelineSplit::run() {
  std::optional<int64_t> size = mesh.getMesh().getAxisSize(axis.getValue());
  if (!size)
    return mesh.emitError() << "part-pipeline: mesh @" << mesh.getSymName()
                            << " has no micro-batch axis \"" << axis.getValue()
                            << "\"";
  microBatches = *size;
  // Micro-batches accumulate a training step's loss and gradients; an
  // inference function's per-example outputs cannot be accumulated.
  bool training = false;
  for (unsigned i = 0; i < function.getNumResults(); ++i)
    training |= bool(function.getResultAttr(i, PartDialect::getUpdatesAttrName()));
  if (!training)
    return function.emitError()
           << "part-pipeline: @" << function.getName()
           << " is not a training step (no result updates a parameter): "
              "pipeline stages cut training steps (run part-autodiff and "
              "part-optimizer first); for inference, partition without pp";
  if (failed(classify()) || failed(assignStages()))
    return failure();
  findScatters();
  // The stages' meshes: the step's axes but the micro-batch one.
  MLIRContext *ctx = function.getContext();
  OpBuilder top(mesh);
  MeshAttr meshAttr = mesh.getMesh();
  SmallVector<StringAttr> names;
  SmallVector<int64_t> sizes;
  for (auto [name, n] :
       llvm::zip(meshAttr.getAxisNames(), meshAttr.getAxisSizes()))
    if (name != axis) {
      names.push_back(cast<StringAttr>(name));
      sizes.push_back(n);
    }
  for (int64_t s = 0; s < stages; ++s)
    MeshOp::create(top, mesh.getLoc(),
                   (mesh.getSymName() + "_pp" + Twine(s)).str(),
                   MeshAttr::get(ctx, names, sizes));
  OpBuilder fnBuilder(function);
  for (int64_t s = 0; s < stages; ++s)
    if (failed(unroll ? emitStage(s, fnBuilder) : emitFragments(s, fnBuilder)))
      return failure();
  function.erase();
  mesh.erase();
  return success();
}

namespace {
struct PartPipelinePass
    : public partition::part::impl::PartPipelinePassBase<PartPipelinePass> {
  using PartPipelinePassBase::PartPipelinePassBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    std::optional<pl::ScheduleKind> kind = pl::parseScheduleKind(scheduleName);
    if (!kind) {
      module.emitError() << "part-pipeline: unknown schedule \""
                         << scheduleName
                         << "\"; known: gpipe, 1f1b, interleaved-1f1b, "
                            "zero-bubble, zb-v, v-half, v-min";
      return signalPassFailure();
    }
    bool chunked = *kind == pl::ScheduleKind::Interleaved1F1B ||
                   pl::placementOf(*kind) == pl::Placement::V;
    if (virtualStages != 1 && !chunked) {
      module.emitError() << "part-pipeline: virtual-stages=" << int64_t(virtualStages)
                         << " needs schedule=interleaved-1f1b (the V "
                            "schedules zb-v, v-half and v-min run 2)";
      return signalPassFailure();
    }
    if (balance != "flops" && balance != "memory") {
      module.emitError() << "part-pipeline: balance=" << balance
                         << " is neither flops nor memory";
      return signalPassFailure();
    }
    if (gradSync != "micro-batch" && gradSync != "step") {
      module.emitError() << "part-pipeline: grad-sync=" << gradSync
                         << " is neither micro-batch nor step";
      return signalPassFailure();
    }
    if (gradSync == "step" && unroll) {
      module.emitError() << "part-pipeline: grad-sync=step reduces in the "
                            "last backward of the fragment form; unroll=true "
                            "writes the schedule out";
      return signalPassFailure();
    }
    if (balance == "memory" && !stageLayers.empty()) {
      module.emitError() << "part-pipeline: stage-layers cuts the layers by "
                            "hand and balance=memory chooses the cut; give "
                            "one of them";
      return signalPassFailure();
    }
    // stage-layers=0-11,12-23
    SmallVector<std::pair<int64_t, int64_t>> ranges;
    if (!stageLayers.empty()) {
      SmallVector<StringRef> parts;
      StringRef(stageLayers).split(parts, ',');
      for (StringRef part : parts) {
        if (part.trim() == "none") { // an end's group: no layers
          ranges.push_back({1, 0});
          continue;
        }
        auto [lo, hi] = part.trim().split('-');
        int64_t a, b;
        if (lo.getAsInteger(10, a) || (hi.empty() ? (b = a, false)
                                                  : hi.getAsInteger(10, b)) ||
            a < 0 || b < a) {
          module.emitError() << "part-pipeline: stage-layers \"" << stageLayers
                             << "\": \"" << part
                             << "\" is not a layer range such as 0-11 "
                                "(or none)";
          return signalPassFailure();
        }
        ranges.push_back({a, b});
      }
    }
    SmallVector<std::pair<func::FuncOp, MeshOp>> work;
    for (auto function : module.getOps<func::FuncOp>()) {
      FlatSymbolRefAttr meshRef = getSpmdMesh(function);
      if (!meshRef || function.isDeclaration())
        continue;
      auto mesh = lookupMesh(function, meshRef);
      if (!mesh)
        continue;
      work.push_back({function, mesh});
    }
    for (auto [function, mesh] : work) {
      std::optional<int64_t> m =
          mesh.getMesh().getAxisSize(microBatchAxis);
      if (!m) {
        function.emitError() << "part-pipeline: the mesh of @"
                             << function.getName()
                             << " has no micro-batch axis \"" << microBatchAxis
                             << "\"";
        return signalPassFailure();
      }
      std::string error;
      std::optional<pl::Schedule> schedule =
          pl::makeSchedule(*kind, stages, *m,
                           chunked ? int64_t(virtualStages) : 1,
                           &error);
      std::optional<pl::Timeline> timeline;
      if (schedule)
        timeline = pl::simulate(*schedule, &error);
      if (!timeline) {
        function.emitError() << "part-pipeline: " << error;
        return signalPassFailure();
      }
      std::optional<std::vector<int64_t>> inFlight;
      if (balance == "memory")
        inFlight = timeline->peakInFlight;
      PipelineSplit split(function, mesh,
                          StringAttr::get(&getContext(), microBatchAxis),
                          stages, *schedule, ranges, inFlight, unroll,
                          gradSync == "step");
      if (failed(split.run()))
        return signalPassFailure();
    }
  }
};
} // namespace
