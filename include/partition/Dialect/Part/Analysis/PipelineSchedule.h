//===- PipelineSchedule.h - pipeline schedules and their simulation -*- C++ -*-===//
//
// The schedules of pipeline parallelism (docs/design/2026-12-03-pipelines.md)
// as plain lists: per stage, the ordered (action, micro-batch, chunk) steps
// it runs. Generators for GPipe, 1F1B, interleaved 1F1B, zero-bubble
// (ZB-H1) and the V schedules, whose two chunks per stage run the model
// down the stages and back up (ZB-V, V-Half, V-Min); a simulation over all
// stages that proves a schedule runs to the end (every step's inputs exist
// when it starts: no deadlock, no read before a write) or names the stages and steps that wait on each other;
// and, for a schedule that runs, its timeline under unit costs: the idle
// fraction of each stage (the bubble) and the micro-batches each stage
// holds in flight (the activations it keeps).
//
// No IR: the pipeline passes build and check the schedule they write into
// the IR with it, and its unit tests check the published figures.
//
//===----------------------------------------------------------------------===//

#ifndef PARTITION_DIALECT_PART_ANALYSIS_PIPELINESCHEDULE_H
#define PARTITION_DIALECT_PART_ANALYSIS_PIPELINESCHEDULE_H

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace partition::part::pipeline {

/// What a step runs for one micro-batch on one chunk (virtual stage).
enum class Action : uint8_t {
  Forward,        ///< F: the chunk's forward
  Backward,       ///< B: its whole backward (input and weight gradients)
  BackwardInput,  ///< B of zero-bubble: the gradient of the chunk's input
  BackwardWeight, ///< W of zero-bubble: the weights' gradients
};

/// "F", "B", "Bi", "W".
const char *actionName(Action action);

struct Step {
  Action action;
  int64_t microBatch;
  /// The stage's chunk (0 unless the schedule has several per stage); which
  /// virtual stage it is depends on the schedule's placement (see
  /// `virtualStage`).
  int64_t chunk = 0;

  bool operator==(const Step &o) const {
    return action == o.action && microBatch == o.microBatch &&
           chunk == o.chunk;
  }
};

/// "F3", "Bi3", "W3"; with chunks (interleaved) "F3.1" for chunk 1. The
/// names a stage's schedule, its ops (`part.step`) and diagnostics use.
std::string stepText(const Step &step, int64_t chunks);
/// The step `stepText` wrote; nullopt for anything else.
std::optional<Step> parseStepText(const std::string &text);

enum class ScheduleKind {
  GPipe,
  OneFOneB,
  Interleaved1F1B,
  ZeroBubbleH1,
  /// ZB-V (Qi et al., "Zero Bubble Pipeline Parallelism", ICLR 2024, §6):
  /// two chunks per stage in a V, split backwards, zero bubble under equal
  /// F, B and W costs within 1F1B's activation memory.
  ZeroBubbleV,
  /// V-Half and V-Min (Qi et al., "Pipeline Parallelism with Controllable
  /// Memory", NeurIPS 2024): a V building block repeated every micro-batch,
  /// its warm-up and cool-down reordered; they hold about a half and a third
  /// of 1F1B's activations.
  VHalf,
  VMin,
};

/// "gpipe", "1f1b", "interleaved-1f1b", "zero-bubble", "zb-v", "v-half",
/// "v-min".
const char *scheduleName(ScheduleKind kind);
std::optional<ScheduleKind> parseScheduleKind(const std::string &name);

/// A value another stage reads: for every micro-batch b, the reading step
/// (`toAction`, b, `toChunk`) of `toStage` waits for the step (`fromAction`,
/// b, `fromChunk`) of `fromStage` that makes it. The schedules' own dependencies
/// (forward from the previous stage, backward from the next) need none;
/// a program lists what else its stages send each other (a value made in
/// one stage's forward and read in another's backward, a weight gradient
/// summed in another stage) so that the simulation checks those too.
struct Transfer {
  int64_t fromStage;
  Action fromAction;
  int64_t toStage;
  Action toAction;
  int64_t fromChunk = 0; ///< with chunks: the chunks of the two steps
  int64_t toChunk = 0;
};

/// Which stage and chunk runs each virtual stage (a group of layers, in the
/// model's order: virtual stage 0 reads the batch, the last one makes the
/// loss).
enum class Placement {
  /// Chunk c of stage s is virtual stage c * stages + s (Megatron's
  /// interleaving; with one chunk, stage s is virtual stage s).
  Interleaved,
  /// Two chunks: chunk 0 of stage s is virtual stage s, chunk 1 is virtual
  /// stage 2 * stages - 1 - s, so stage 0 holds the first and the last
  /// layers (ZB-V, V-Half, V-Min).
  V,
};

/// The placement the schedules of `kind` use.
Placement placementOf(ScheduleKind kind);

/// Whether the schedules of `kind` split each backward into Bi and W
/// (ZB-H1 and the V schedules) rather than run it whole (B).
bool splitsBackward(ScheduleKind kind);

/// The virtual stage that chunk `chunk` of stage `stage` runs, and back.
int64_t virtualStage(Placement placement, int64_t stages, int64_t stage,
                     int64_t chunk);
struct StageChunk {
  int64_t stage;
  int64_t chunk;
};
StageChunk stageChunkOf(Placement placement, int64_t stages,
                        int64_t virtualStage);

struct Schedule {
  ScheduleKind kind = ScheduleKind::OneFOneB;
  Placement placement = Placement::Interleaved;
  int64_t stages = 1;
  int64_t microBatches = 1;
  int64_t chunks = 1; ///< chunks (virtual stages) per stage
  std::vector<std::vector<Step>> steps; ///< per stage, in order
  std::vector<Transfer> transfers; ///< beyond the schedule's own

  /// Stage 0: F0 F1 B0 ... (for diagnostics and --part-explain).
  std::string describe() const;

  /// `pipeline::virtualStage` and `stageChunkOf` under this schedule's
  /// placement.
  int64_t virtualStage(int64_t stage, int64_t chunk) const;
  StageChunk stageChunkOf(int64_t virtualStage) const;
};

/// The schedule of `kind` for `stages` stages and `microBatches`
/// micro-batches (`chunks` virtual stages per stage: interleaved any from
/// 2, the V schedules 2, the others 1). Fails with `error` naming the
/// constraint: at least one stage and one micro-batch; interleaved needs
/// micro-batches a multiple of the stages; ZB-V at least 2 * stages - 1
/// micro-batches (its first stage's warm-up).
std::optional<Schedule> makeSchedule(ScheduleKind kind, int64_t stages,
                                     int64_t microBatches, int64_t chunks,
                                     std::string *error);

/// How a schedule runs, under unit costs (F = 1, B = 2; with zero-bubble
/// Bi = 1 and W = 1), transfers free.
struct Timeline {
  double makespan = 0;
  /// Per stage: the fraction of the makespan it is idle.
  std::vector<double> bubble;
  /// Per stage: when its first step starts and its last step ends.
  std::vector<double> begin, end;
  /// The bubble rate of the zero-bubble papers (Qi et al. 2023, §5.3):
  /// 1 - a stage's work / the longest time any stage takes from its first
  /// step's start to its last step's end (the work of the busiest stage when
  /// stages differ). Unlike `bubble`, a stage's wait for the first
  /// micro-batch to reach it does not count.
  double bubbleRate = 0;
  /// Per stage: the most micro-batches whose forward ran and whose
  /// backward (all of it) has not, at any time: the activation sets it
  /// holds.
  std::vector<int64_t> peakInFlight;
  /// Per stage, per step: start time (the same order as Schedule::steps).
  std::vector<std::vector<double>> start;
};

/// Runs `schedule` over all stages: each stage takes its steps in order, a
/// step starting once what it reads exists (F of micro-batch b on virtual
/// stage v reads F of b on v - 1; B reads B of b on v + 1 and F of b on v;
/// W reads Bi of b on v; the schedule's placement says which stage and
/// chunk each virtual stage is). Returns the timeline, or nullopt with `error`
/// naming each stage that waits and the step it waits for (a deadlock), or
/// the steps a schedule lacks or repeats.
/// The duration of `step` on `stage` (a cost model's); unit costs when
/// empty.
using StepCost = std::function<double(int64_t stage, const Step &step)>;
std::optional<Timeline> simulate(const Schedule &schedule, std::string *error,
                                 const StepCost &stepCost = {});

} // namespace partition::part::pipeline

#endif // PARTITION_DIALECT_PART_ANALYSIS_PIPELINESCHEDULE_H
