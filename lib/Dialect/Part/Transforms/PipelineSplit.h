//===- PipelineSplit.h - part-pipeline's cut of a step ----------*- C++ -*-===//
//
// The state part-pipeline builds while it cuts a per-device training step
// into stages: classification and stage assignment (Pipeline.cpp), then
// each stage written either unrolled (Pipeline.cpp) or as fragments and a
// schedule table (PipelineFragments.cpp;
// docs/design/2026-12-05-pipeline-schedule-as-data.md). Private to the pass.
//
//===----------------------------------------------------------------------===//

#ifndef PARTITION_DIALECT_PART_TRANSFORMS_PIPELINESPLIT_H
#define PARTITION_DIALECT_PART_TRANSFORMS_PIPELINESPLIT_H

#include "partition/Dialect/Part/Analysis/PipelineSchedule.h"
#include "partition/Dialect/Part/Analysis/StageBalance.h"
#include "partition/Dialect/Part/IR/PartOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/BitVector.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/MapVector.h"

#include <map>
#include <optional>
#include <set>
#include <tuple>
#include <vector>

namespace partition::part::detail {

namespace pl = partition::part::pipeline;
using namespace mlir;

struct StageFragments;

/// Each op of an unrolled stage's step says which step (traces and errors
/// show it).
inline constexpr llvm::StringLiteral kStepAttrName = "part.step";

enum class Kind { Invariant, MicroBatch, Accumulate, Step };

/// `s` without `axis`, on `mesh`.
ShardingAttr withoutAxis(ShardingAttr s, StringAttr axis,
                         FlatSymbolRefAttr mesh);

/// Whether `op` is a collective over `axis` (on the function's mesh).
bool isCollectiveOver(Operation *op, StringAttr axis);

class PipelineSplit {
public:
  PipelineSplit(func::FuncOp function, MeshOp mesh, StringAttr axis,
                int64_t stages, pl::Schedule schedule,
                ArrayRef<std::pair<int64_t, int64_t>> stageLayers,
                std::optional<std::vector<int64_t>> inFlight, bool unroll,
                bool syncPerStep)
      : function(function), mesh(mesh), axis(axis), stages(stages),
        schedule(std::move(schedule)), stageLayers(stageLayers),
        inFlight(std::move(inFlight)), unroll(unroll),
        syncPerStep(syncPerStep) {
    splitBackward = pl::splitsBackward(this->schedule.kind);
    chunks = this->schedule.chunks;
  }

  LogicalResult run();

private:
  LogicalResult classify();
  /// The home stage of every micro-batch op and value, the steps each runs
  /// in, what the stages send each other and which stages return each
  /// result: the steps below in order.
  LogicalResult assignStages();
  /// What each layer of the forward program costs (FLOPs, resident and
  /// per-micro-batch bytes), with the ops before the first layer (the
  /// embedding) and after the last (the head, the loss).
  pl::LayerCosts measureLayers();
  /// The group (virtual stage) of each layer: as stage-layers says, or
  /// balanced by memory (balance=memory) or by FLOPs (StageBalance.h).
  FailureOr<pl::LayerGroups> balanceLayers(const pl::LayerCosts &costs);
  /// The home stage of each micro-batch op and accumulation: forward ops by
  /// their layer's group, a layer's backward with its forward, other ops
  /// with their operands; forward ops that read only the batch and
  /// invariants with their first user.
  void placeOps(pl::LayerGroups stageOfLayer);
  /// Moves the forward ops that read only the batch and invariants to the
  /// first group that uses them.
  void floatBatchOps();
  /// Whether `v` is a parameter or an invariant computed from one.
  bool readsParameter(Value v, llvm::DenseMap<Value, bool> &memo);
  /// The group of a backward op no layer claims.
  int64_t backwardStage(Operation &op) const;
  /// An accumulation whose terms come from two stages (a tied embedding's
  /// gradient) accumulates each term in its stage.
  void accumulateTermsInTheirStages();
  /// Per stage and step kind, its ops (zero-bubble: backward split into Bi
  /// and W); every stage has forward work.
  LogicalResult groupStageOps();
  /// The values read in another stage than their home, and the schedule
  /// with those transfers simulated.
  LogicalResult findCrossings();
  /// The stages that return each result and the accumulations sent to the
  /// stages whose step ops read them; a result returned per micro-batch is
  /// an error.
  LogicalResult placeStepValues();
  /// The stage's function with its steps unrolled (unroll=true).
  LogicalResult emitStage(int64_t stage, OpBuilder &top);
  /// The stage as fragments and a schedule table (PipelineFragments.cpp).
  LogicalResult emitFragments(int64_t stage, OpBuilder &top);
  /// Which step makes, receives and keeps each value of the stage.
  LogicalResult planFragments(StageFragments &plan);
  /// The function of kind of step `kind` (an index into plan.kinds); the
  /// final one (`part.final`, for the kind's last step) completes the
  /// accumulations it adds to.
  FailureOr<func::FuncOp> emitFragment(StageFragments &plan, size_t kind,
                                       bool final, OpBuilder &top);
  /// P: the accumulators' zeros and the values made once per step.
  func::FuncOp emitPrologue(StageFragments &plan, OpBuilder &top);
  /// The stage function: the update, once per step, after the table.
  FailureOr<func::FuncOp> emitUpdate(StageFragments &plan, OpBuilder &top,
                                     SmallVector<int64_t> &renumbered);
  std::string stageName(int64_t stage) const;
  /// The mesh stage `s` runs on (`@<mesh>_pp<s>`).
  FlatSymbolRefAttr stageMeshRef(int64_t s) const;
  /// Stage `stage`'s function, with the step's arguments (batched ones
  /// holding all of this device's micro-batches), then `extraArgs`, and the
  /// results the stage returns (their numbers in `results`).
  func::FuncOp createStageFunction(int64_t stage, OpBuilder &top,
                                   TypeRange extraArgs,
                                   SmallVector<unsigned> &results);
  /// After a stage's micro-batches: sends the completed sums other stages
  /// update with (`sends`, by channel: the order receivers take them in),
  /// then receives those this stage updates with into `invariants`.
  void exchangeStepTransfers(
      OpBuilder &b, int64_t stage,
      SmallVectorImpl<std::tuple<int64_t, Value, int64_t>> &sends,
      IRMapping &invariants);
  /// The error of a step `step` of `stage` whose op `op` reads `missing`,
  /// which the stage's order has not made yet (an inconsistent cut).
  LogicalResult unmadeValueError(Operation *op, int64_t stage, StringRef step,
                                 Value missing);
  /// Unrolled form: per stage sending to `stage`, the values it sends and
  /// their micro-batches, in the order it sends them.
  std::map<int64_t, std::vector<std::pair<Value, int64_t>>>
  incomingTransfers(int64_t stage);
  /// Returns the step's results `results`, made from `invariants`.
  void returnResults(OpBuilder &b, ArrayRef<unsigned> results,
                     IRMapping &invariants);
  /// Sends each value virtual stage `vs`'s `action` makes to every stage
  /// that reads it, as `map` has it, on `channel(value number)`.
  void sendValuesMade(OpBuilder &b, int64_t vs, pl::Action action,
                      IRMapping &map,
                      llvm::function_ref<int64_t(int64_t)> channel);
  /// The stage function's attributes and arguments once its body is
  /// written: the stage's mesh, schedule and shardings; the arguments no
  /// op reads and `keep` does not hold erased. Returns each old argument's
  /// new number (-1: erased).
  FailureOr<SmallVector<int64_t>> finishStage(func::FuncOp fn, int64_t stage,
                                              ArrayRef<unsigned> results,
                                              const llvm::BitVector &keep);
  /// Accumulation `op` (a sum over the micro-batches, an all_reduce over
  /// the micro-batch axis) whose micro-batches are all in `sum`, completed:
  /// the mean (where the all_reduce averaged), then the all_reduce over its
  /// other axes (dp) on `meshRef`.
  Value completeAccumulation(OpBuilder &b, Operation *op, Value sum,
                             FlatSymbolRefAttr meshRef);
  /// Whether completing `op` does anything (a mean, an all_reduce over
  /// other axes); otherwise the sum is complete as added.
  bool completionDoesWork(Operation *op) const;
  /// The completed accumulation `done` of `op` mapped in `invariants`; sends
  /// to the stages that update with it are appended to `sends` as (stage,
  /// wire value, channel).
  void useAccumulation(
      OpBuilder &b, Operation *op, Value done, IRMapping &invariants,
      SmallVectorImpl<std::tuple<int64_t, Value, int64_t>> &sends);
  /// completeAccumulation, then useAccumulation.
  void finalizeAccumulation(OpBuilder &b, Operation *op, Value sum,
                            FlatSymbolRefAttr meshRef, IRMapping &invariants,
                            SmallVectorImpl<std::tuple<int64_t, Value, int64_t>> &sends);
  Value materialize(OpBuilder &b, Value v, IRMapping &map);

  /// The virtual stage of `v` (-1 for none): chunk c of stage s is virtual
  /// stage c * stages + s (interleaved schedules; chunk 0 otherwise).
  int64_t stageOfValue(Value v) const {
    auto it = home.find(v);
    return it == home.end() ? -1 : it->second;
  }
  /// The stage (rank group) that runs virtual stage `vs`, and its chunk
  /// there (the schedule's placement: interleaved or a V).
  int64_t physical(int64_t vs) const {
    return vs < 0 ? vs : schedule.stageChunkOf(vs).stage;
  }
  int64_t chunkOf(int64_t vs) const { return schedule.stageChunkOf(vs).chunk; }
  /// The virtual stage of chunk `chunk` of stage `stage`.
  int64_t virtualOf(int64_t stage, int64_t chunk) const {
    return schedule.virtualStage(stage, chunk);
  }

  func::FuncOp function;
  MeshOp mesh;
  StringAttr axis;
  int64_t stages;
  int64_t chunks = 1;
  int64_t microBatches = 1;
  pl::Schedule schedule;
  ArrayRef<std::pair<int64_t, int64_t>> stageLayers;
  /// balance=memory: per stage, the most micro-batches the schedule keeps
  /// in flight on it (the cut then balances memory instead of FLOPs).
  std::optional<std::vector<int64_t>> inFlight;
  /// Write each stage's schedule unrolled (the reference form) instead of
  /// as fragments and a table.
  bool unroll = false;
  /// grad-sync=step: a gradient reduce-scattered over dp per micro-batch
  /// (ZeRO-1/2) is summed whole and reduce-scattered once per step.
  bool syncPerStep = false;

  llvm::DenseMap<Operation *, Kind> kinds;
  llvm::DenseMap<Value, Kind> valueKinds;
  llvm::DenseSet<Operation *> forward; // micro-batch ops the loss needs
  /// Zero-bubble: backward split into input (Bi) and weight (W) gradients.
  bool splitBackward = false;
  /// Home stage of each micro-batch value and accumulation.
  llvm::DenseMap<Value, int64_t> home;
  llvm::DenseMap<Operation *, int64_t> opStage;
  /// Per stage and action, its micro-batch ops in program order.
  std::vector<std::map<pl::Action, SmallVector<Operation *>>> stageOps;
  /// The action (step kind) each micro-batch op runs in.
  llvm::DenseMap<Operation *, pl::Action> actionOf;
  /// The batched arguments (split over the micro-batch axis).
  llvm::DenseSet<Value> batched;
  /// Micro-batch values read in other stages: the stages reading each, and
  /// the value's number (its channels are number * micro-batches + k).
  /// Per reading stage, the steps (chunk, kind) that read it there: it is
  /// received at the start of the first of them that runs.
  llvm::MapVector<Value, std::map<int64_t, std::set<std::pair<int64_t, pl::Action>>>>
      crossing;
  /// Per function result, the stages that return it.
  std::vector<std::set<int64_t>> resultStages;
  /// Accumulations a stage reads but another holds: (accumulation result,
  /// reading stage), with its channel.
  llvm::MapVector<std::pair<void *, int64_t>, int64_t> stepTransfers;
  int64_t nextChannel = 0;

  /// A value sent between stages that every device of some mesh axes holds
  /// whole (under tensor parallelism, the activations between layers and
  /// their gradients): each device of the group sends its block along `dim`
  /// and the receivers all-gather the blocks (Megatron's scatter/gather), so
  /// the link between stages carries 1/`group` of the value per device.
  struct Scatter {
    int64_t dim;
    SmallVector<StringRef> axes;
    int64_t group;
  };
  llvm::DenseMap<Value, Scatter> scatters;
  void findScatters();
  /// What goes on the wire for `v`: its block where it is scattered.
  Value toWire(OpBuilder &b, Value v, Value local);
  /// The value `v` from what came off the wire.
  Value fromWire(OpBuilder &b, Value v, Value received);
  /// The type a transfer of `v` carries.
  Type wireType(Value v);
  Value scatterOrGather(OpBuilder &b, Value v, Value x, bool gather);
};

} // namespace partition::part::detail

#endif // PARTITION_DIALECT_PART_TRANSFORMS_PIPELINESPLIT_H
