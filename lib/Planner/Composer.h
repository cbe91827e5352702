//===- Composer.h - a plan's step time and memory from a probe -*- C++ -*-===//
//
// Internal to the planner: the composition of one plan (tp, pp, dp, cp, ep,
// its schedule, ZeRO, recomputation) from the costs of a probe at one
// micro-batch size -- each stage's layers, the data-parallel collectives as
// the compiler places them, the pipeline by formula or by simulating its
// schedule, and each stage's memory.
//
//===----------------------------------------------------------------------===//

#ifndef PARTITION_PLANNER_COMPOSER_H
#define PARTITION_PLANNER_COMPOSER_H

#include "Probe.h"

#include "partition/Dialect/Part/Analysis/PipelineSchedule.h"

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

namespace partition::planner {

/// Seconds of one part of a step: kernels and the collectives they wait for.
struct Cost {
  double compute = 0, communication = 0;
  double total() const { return compute + communication; }
  Cost &operator+=(const Cost &o) {
    compute += o.compute;
    communication += o.communication;
    return *this;
  }
  Cost operator*(double k) const { return {compute * k, communication * k}; }
};

struct PassCost {
  Cost forward, backward;
  /// Of backward, the weight gradients' ops (zero-bubble's W).
  Cost weight;
  /// Forward and backward FLOPs: what part-pipeline cuts stages by.
  double flops = 0;
  /// Ops of forward or backward that read no micro-batch (a weight's cast
  /// or transpose): once per step, as a pipeline runs them.
  Cost once;
};

/// A probe's costs at micro-batch size b: per probed layer, outside them,
/// and the update per local parameter element.
struct ProbeCosts {
  std::vector<PassCost> layers;
  PassCost pre, post;
  double updatePerParameter = 0;
};

/// Each op of `p` costed on `cluster` at micro-batch size `microBatchSize`.
ProbeCosts costProbe(const Probe &p, double microBatchSize,
                     const runtime::Cluster &cluster);

/// The model a search plans: its summary and the probed layer each layer
/// costs as.
struct Model {
  ModelSummary summary;
  std::function<int64_t(int64_t)> probedLayerOf;
};

/// What a plan's stages run and hold, per stage.
/// The layers of each stage, and of each of its chunks.
struct StageCut {
  std::vector<std::vector<int64_t>> stages;
  std::vector<std::vector<std::vector<int64_t>>> chunks; ///< [stage][chunk]
};

struct StageCosts {
  std::vector<Cost> forward, backward; ///< one micro-batch
  /// [stage][chunk]: each chunk's share of its stage's forward and backward
  /// work (a chunk of the embedding alone does little).
  std::vector<std::vector<double>> forwardShare, backwardShare;
  std::vector<Cost> weight;            ///< of backward, weight gradients
  std::vector<double> update;          ///< once per step
  std::vector<Cost> once;              ///< once per step
  std::vector<double> parameters;      ///< local elements
  /// Of those, the experts' (reduced and sharded over dp x cp; the rest
  /// over dp x cp x ep), and their tensors.
  std::vector<double> expertParameters, expertTensors;
  std::vector<double> saved;           ///< bytes per micro-batch
  std::vector<double> tensors;         ///< parameter tensors
};

/// What the plans of one search share, made once: schedule tables by
/// (kind, stages, micro-batches, chunks) -- building V-Half for 64 stages
/// and 512 micro-batches takes a tenth of a second -- and stage cuts by
/// (probe costs, stages, chunks, placement).
struct ComposerCache {
  std::map<std::tuple<int, int64_t, int64_t, int64_t>,
           std::pair<std::optional<part::pipeline::Schedule>, std::string>>
      schedules;
  std::map<std::tuple<const void *, int64_t, int64_t, int>,
           std::optional<StageCut>>
      cuts;
};

/// Composes plans from one probe's costs; the pipeline part by formula or,
/// with `exact`, by simulating the schedule.
class Composer {
public:
  Composer(const Probe &probe, const ProbeCosts &costs, const Model &model,
           const runtime::Cluster &cluster, const Probe &modelProbe,
           int64_t globalBatch, const TrainingOptions &training,
           ComposerCache &cache)
      : probe(probe), costs(costs), model(model), cluster(cluster),
        modelProbe(modelProbe), globalBatch(globalBatch), training(training),
        cache(cache) {}

  /// `c`'s step time, its parts, each stage's costs and memory; nullopt
  /// with the reason in `pruned` when it cannot be composed (no cut of the
  /// layers, a schedule that cannot be made or simulated).
  std::optional<PlanEstimate> estimate(const PlanConfig &c, bool exact,
                                       std::string *pruned) const;

private:
  /// What one plan's composition derives once from its choices.
  struct Layout;
  /// The pipeline part of a step: its makespan, and per stage the
  /// micro-batches in flight at the peak and the idle time.
  struct PipelineTime {
    double seconds = 0;
    std::vector<int64_t> inFlight;
    std::vector<double> bubble;
    bool simulated = false;
  };

  /// The layers each of `p` stages runs, in its `V` chunks placed as
  /// `placement` places them: part-pipeline's cut (StageBalance's balance
  /// by FLOPs over p x V groups, the embedding's and the head's work on
  /// the first and last group), so that 126 layers on 16 stages run 7 on
  /// the first and last when each weighs a layer, and a head as heavy as
  /// two layers leaves its stage fewer. Made once per (p, V, placement);
  /// nullopt when the layers and the ends fill fewer groups.
  const std::optional<StageCut> &
  stageLayers(int64_t p, int64_t V, part::pipeline::Placement placement) const;

  /// makeSchedule's table (or why there is none), made once per search.
  const std::pair<std::optional<part::pipeline::Schedule>, std::string> &
  schedule(part::pipeline::ScheduleKind kind, int64_t p, int64_t m,
           int64_t V) const;

  /// Each stage's layers, the embedding on the first and the head on the
  /// last, the pipeline's transfers and the data-parallel collectives.
  StageCosts stageCosts(const PlanConfig &c, const Layout &x) const;
  /// Each chunk's share of its stage's forward and backward work.
  void addChunkShares(const Layout &x, StageCosts &s) const;
  /// Parameters whose gradients one group of devices reduces.
  struct ReduceGroup;
  /// The stage's dense parameters (reduced over dp x cp x ep) and its
  /// experts' (over dp x cp), the second only where it has experts.
  std::vector<ReduceGroup> reduceGroups(const PlanConfig &c, const Layout &x,
                                        int64_t stage,
                                        const StageCosts &s) const;
  /// Adds to `stage` of `s` the data-parallel and ZeRO collectives as the
  /// compiler places them, and the update.
  void addDataParallel(const PlanConfig &c, const Layout &x, int64_t stage,
                       StageCosts &s) const;
  /// Adds the collectives of one group's parameters to `stage` of `s`;
  /// returns its share of the update. `usedForward` and `usedBackward`:
  /// the compute earlier groups' collectives hide behind.
  double addReductions(const PlanConfig &c, const Layout &x,
                       const ReduceGroup &g, int64_t stage, StageCosts &s,
                       double &usedForward, double &usedBackward) const;
  MemoryEstimate memoryOf(const PlanConfig &c, const Layout &x,
                          const StageCosts &s, int64_t stage,
                          int64_t inFlight) const;
  /// The pipeline's time by simulating its schedule (`exact`) or by
  /// formula.
  std::optional<PipelineTime> pipelineTime(const PlanConfig &c,
                                           const Layout &x,
                                           const StageCosts &s, bool exact,
                                           std::string *pruned) const;
  PipelineTime pipelineFormula(const PlanConfig &c, const Layout &x,
                               const StageCosts &s) const;
  /// The model's FLOPs per step and what a device reaches.
  void addFlops(const PlanConfig &c, PlanEstimate &e) const;

  const Probe &probe;
  const ProbeCosts &costs;
  const Model &model;
  const runtime::Cluster &cluster;
  const Probe &modelProbe;
  int64_t globalBatch;
  const TrainingOptions &training;
  ComposerCache &cache;
};

} // namespace partition::planner

#endif // PARTITION_PLANNER_COMPOSER_H
