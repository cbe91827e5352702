//===- Planner.h - the automatic partitioner --------------------*- C++ -*-===//
//
// Chooses dp, tp, pp, cp, ep, virtual stages, micro-batch size, schedule,
// ZeRO stage, recomputation and sequence parallelism for a model on a cluster
// (docs/design/2026-12-03-cost-model.md, "Search"):
//
// - probes: the model cut to its first three layers (when its layers are
//   alike) is trained and partitioned by the real passes for each tensor
//   parallel degree, sequence parallelism and recomputation; each op of the
//   per-device program is costed once (its FLOPs, bytes, collective), by
//   whether it is forward, backward or update, and by its layer;
// - composition: a plan's stages are layer counts times a layer's costs plus
//   the embedding's and the head's, its micro-batch size scales what depends
//   on the batch, data parallelism and ZeRO add their collectives as the
//   compiler places them, the schedule's makespan comes from the pipeline
//   simulation, memory from the probe's bytes per parameter and per layer;
// - search: every combination that divides (devices, layers, batch) and the
//   probes accept, pruned by memory, ranked by step time.
//
//===----------------------------------------------------------------------===//

#ifndef PARTITION_PLANNER_PLANNER_H
#define PARTITION_PLANNER_PLANNER_H

#include "partition/Dialect/Part/Analysis/PipelineSchedule.h"
#include "partition/runtime/Cluster.h"

#include "mlir/IR/BuiltinOps.h"

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace partition::planner {

/// How the model is trained; the probes and the chosen plan use the same
/// passes.
struct TrainingOptions {
  bool train = true;
  /// part-optimizer's options ("kind=adamw lr=3e-4"); empty for its defaults.
  std::string optimizer = "kind=adamw";
  /// "bf16" (part-mixed-precision) or "f32".
  std::string precision = "bf16";
  /// The type f32 gradients are reduced in where the plan buckets them
  /// (part-grad-buckets dtype): "f32" (their own) or "bf16" (FSDP's
  /// reduce_dtype, Megatron's --grad-reduce-in-bf16: half the bytes).
  std::string gradReduce = "f32";
};

/// What backward recomputes of forward (part-recompute): nothing, each
/// layer's memory-bound ops (mode=selective: its matmul and attention
/// outputs kept), or each whole layer (mode=full: only its input kept).
enum class Recompute { None, Selective, Full };
/// "none", "selective", "full".
const char *recomputeName(Recompute r);
/// The inverse of recomputeName; nullopt for another word.
std::optional<Recompute> parseRecompute(llvm::StringRef name);

/// One plan: the choices the search makes.
struct PlanConfig {
  int64_t dp = 1, tp = 1, pp = 1;
  /// Expert parallelism: each mixture-of-experts layer's experts split over
  /// ep devices, the tokens exchanged with all-to-alls; the batch is split
  /// over dp x ep (the ep devices of a dense layer are data parallel, as in
  /// Megatron-Core and DeepSpeed-MoE).
  int64_t ep = 1;
  /// Context parallelism: each sequence split over cp devices
  /// (part-context-parallel: the balanced causal order, attention's keys
  /// and values all-gathered over cp); the batch is not split over it, but
  /// every parameter's gradient is summed over it (its devices see other
  /// tokens of the same sequences), as in Megatron-Core.
  int64_t cp = 1;
  int64_t virtualStages = 1;  ///< chunks per stage (interleaved-1f1b)
  int64_t microBatchSize = 1; ///< sequences per micro-batch per dp group
  int64_t microBatches = 1;   ///< per step
  std::string schedule = "1f1b";
  int64_t zero = 0;
  Recompute recompute = Recompute::None;
  bool sequenceParallel = false;
  /// ZeRO 1 and 2 under a pipeline: the whole gradients summed over the
  /// micro-batches and reduce-scattered once per step (part-spmd's
  /// grad-sync=step) rather than each micro-batch's.
  bool syncPerStep = false;
  /// Tensor-parallel collectives split with their matmuls into this many
  /// chunks that overlap (part-spmd tp-comm-overlap, Megatron-Core's
  /// --tp-comm-overlap); 0: not split.
  int64_t tpOverlap = 0;
  /// The gradients' reductions over dp run beside backward (true), or wait
  /// for its end (part-grad-buckets overlap=false: Megatron's DDP without
  /// --overlap-grad-reduce, as SC21's runs were made); only as fixed.
  bool dpOverlap = true;

  /// "tp=8 pp=8 dp=16 mbs=1 mb=96 schedule=1f1b zero=1 recompute=full sp=1"
  /// (" cp=16" then " ep=8" after dp where they are above 1).
  std::string text() const;
  /// tp x pp x dp x cp x ep.
  int64_t devices() const { return tp * pp * dp * cp * ep; }
  /// The devices a dense parameter's gradient is reduced over (and ZeRO
  /// shards it over): dp x cp x ep.
  int64_t dataParallel() const { return dp * cp * ep; }
  /// The devices an expert's gradient is reduced over: dp x cp (each ep
  /// device holds other experts).
  int64_t expertDataParallel() const { return dp * cp; }
  /// part-spmd's options for this plan.
  std::string spmdOptions() const;
};

/// The chunks the search tries for tp-overlap, with sequence parallelism
/// (as Megatron-Core's overlap needs it), beside 0.
constexpr int64_t kTpOverlapChunks = 4;

/// Bounds of the counts the planner takes (options, --fix, the model's
/// batch): the search's loops, schedules and sums stay within them.
/// Devices: as many as a mesh holds (runtime::Cluster::kMaxDevices).
constexpr int64_t kMaxDevices = runtime::Cluster::kMaxDevices;
/// Sequences per step (the global batch, a micro-batch).
constexpr int64_t kMaxGlobalBatch = int64_t(1) << 24;
/// Micro-batches per step: more are left out (the compiler unrolls each).
constexpr int64_t kMaxMicroBatches = 4096;
/// Steps of one pipeline schedule (stages x micro-batches x chunks) the
/// search simulates; plans with more are left out.
constexpr int64_t kMaxScheduleSteps = int64_t(1) << 20;
/// The fewest tokens of a sequence each device keeps under a cp degree the
/// search tries unasked: context parallelism is for long sequences (Llama
/// 3 ran cp 16 at 131,072 tokens, 8192 per device, and none at 8192), so a
/// search tries cp > 1 only for sequences of 16,384 tokens and more, and
/// the probes of shorter ones stay those of cp 1. `--fix cp=` is not held
/// to it.
constexpr int64_t kMinContextTokens = 8192;

/// A constraint on the search: the fields given are fixed (`--fix`).
struct PlanConstraint {
  std::optional<int64_t> dp, tp, pp, cp, ep, virtualStages, microBatchSize;
  std::optional<std::string> schedule;
  std::optional<int64_t> zero;
  std::optional<Recompute> recompute;
  std::optional<bool> sequenceParallel, syncPerStep;
  std::optional<int64_t> tpOverlap;
  std::optional<bool> dpOverlap;
  /// Parses "tp=8,pp=8,mbs=1,schedule=1f1b,zero=0,recompute=full,sp=1"
  /// (keys: dp tp pp cp ep vpp mbs schedule zero recompute sp sync tp-overlap
  /// dp-overlap, sync being step or micro-batch, tp-overlap 0 or the
  /// chunks, dp-overlap 0 or 1, each at most once; numbers at most kMaxDevices,
  /// mbs kMaxGlobalBatch); nullopt with `error` naming the bad key or value.
  static std::optional<PlanConstraint> parse(const std::string &text,
                                             std::string *error);
  bool admits(const PlanConfig &c) const;
  /// One fixed choice and the value a plan has for it.
  struct Choice {
    std::string key, fixed, actual; ///< "pp", "16", "8"
  };
  /// Each fixed choice with `c`'s value of it.
  std::vector<Choice> choices(const PlanConfig &c) const;
};

/// Bytes one device holds at its peak, by kind.
struct MemoryEstimate {
  double parameters = 0, gradients = 0, optimizerState = 0, activations = 0,
         workspace = 0;
  double total() const {
    return parameters + gradients + optimizerState + activations + workspace;
  }
};

/// A plan with its predicted step.
struct PlanEstimate {
  PlanConfig config;
  double seconds = 0; ///< one step (the global batch)
  double compute = 0, exposedCommunication = 0, bubble = 0;
  MemoryEstimate memory;  ///< the stage with the largest total
  int64_t memoryStage = 0;
  double modelFlops = 0;    ///< per step, all devices: 3 x forward
  double hardwareFlops = 0; ///< with recomputation's extra forward
  double tflopsPerDevice = 0; ///< hardware FLOPs per device per second / 1e12
  double mfu = 0;             ///< model FLOPs per device per second / peak
  bool simulated = false;     ///< the schedule simulated, not the formula
  bool fits = true;           ///< within the device's memory
  /// Per pipeline stage (one entry without a pipeline): one micro-batch's
  /// forward and backward (all its chunks, communication it does not hide
  /// included), the update once per step, and the bytes held at the peak.
  std::vector<double> stageForward, stageBackward, stageUpdate;
  /// Of each stage's backward, the weight gradients (zero-bubble's W).
  std::vector<double> stageWeight;
  /// [stage][chunk]: each chunk's share of its stage's forward and backward.
  std::vector<std::vector<double>> stageForwardShare, stageBackwardShare;
  std::vector<MemoryEstimate> stageMemory;
};

/// Where a search is, for a tool to show (SearchOptions::progress).
struct SearchProgress {
  enum class Stage {
    /// A probe compiled (or failed): `done` of `total`; `detail` names its
    /// choices ("tp=2 sp recompute").
    Probe,
    /// Combinations composed and costed: `done` of `total`.
    Evaluate,
    /// Pipeline schedules simulated for the best plans: `done`; `total` is
    /// 0 until the last report, which has `total` equal to `done`.
    Simulate,
  };
  Stage stage = Stage::Probe;
  int64_t done = 0;
  int64_t total = 0;
  std::string detail;
  double seconds = 0; ///< since the search started
};

struct SearchOptions {
  runtime::Cluster cluster;
  int64_t devices = 0;
  int64_t globalBatch = 0; ///< 0: the model's batch
  TrainingOptions training;
  PlanConstraint constraint;
  int64_t maxMicroBatchSize = 64;
  int64_t exactSchedules = 48; ///< the best this many are simulated
  /// How diagnostics name the options: as partition-plan's flags
  /// ("--devices 9"), else as part-auto-partition's options ("devices=9").
  bool flags = true;
  /// Called after each probe, each combination and each simulation; none
  /// by default. Reports of one stage come in order; the last of each stage
  /// has `done == total`.
  std::function<void(const SearchProgress &)> progress;
};

/// What the search saw of the model.
struct ModelSummary {
  int64_t layers = 0;      ///< part.layer groups
  bool layersAlike = false; ///< probed on three of them
  int64_t batch = 0;       ///< the model's own
  /// Experts of its mixture-of-experts layers (part.expert_dispatch); 0:
  /// none, and ep is 1.
  int64_t experts = 0;
  /// The sequence its attentions run over (a part.attention's query
  /// dimension 2): what cp splits; 0: no attention, and cp is 1.
  int64_t sequence = 0;
  double parameters = 0;   ///< elements
  int64_t probes = 0;      ///< partitionings compiled
};

struct SearchResult {
  ModelSummary model;
  std::vector<PlanEstimate> plans; ///< ranked, fastest first; all fit
  /// Why plans were left out, by reason, with how many.
  std::map<std::string, int64_t> pruned;
  int64_t considered = 0; ///< combinations looked at
  double seconds = 0;     ///< the search's own time
};

/// Checks the options' counts against the bounds above and the cluster's
/// size, before anything is probed; false with `error` naming the option,
/// its value and the bound.
bool checkSearchOptions(const SearchOptions &options, std::string *error);

/// Searches the plans of `model` (a forward model as partition-import writes
/// it, with or without a loss) on `options.cluster`; fails with `error` when
/// an option is out of bounds (checkSearchOptions), the model cannot be
/// probed, nothing fits (saying which choice or constraint excluded what),
/// or the cost model gives a plan a figure that is not finite.
std::optional<SearchResult> search(mlir::ModuleOp model,
                                   const SearchOptions &options,
                                   std::string *error);

/// The passes planPipeline runs before part-spmd: a loss when `model`
/// returns no scalar, mixed precision (bf16), autodiff, recomputation (but
/// with Recompute::None) and the optimizer; "" without training.
std::string trainingPipeline(mlir::ModuleOp model,
                             const TrainingOptions &training,
                             Recompute recompute);
/// The passes planPipeline runs after part-spmd: the gradients' reductions
/// over dp in buckets (as PyTorch DDP, FSDP and Megatron-Core do), ZeRO-3's
/// parameter prefetch; "" for none. With `dpOverlap` false the gradients'
/// reductions wait for the end of backward (part-grad-buckets
/// overlap=false).
std::string afterSpmdPipeline(bool train, int64_t dp, int64_t zero,
                              const std::string &gradReduce = "f32",
                              bool dpOverlap = true);

/// The passes that train `model` and partition it for `plan`, as a textual
/// pipeline for mlir::parsePassPipeline (without the builtin.module).
std::string planPipeline(mlir::ModuleOp model, const TrainingOptions &training,
                         const PlanConfig &plan);

/// Cuts a forward model whose layers (`part.layer` 0..L-1) are alike -- the
/// same ops with the same types and attributes -- to its first `keep`: the
/// ops after the layers read the last kept layer's values where they read
/// the last layer's. Returns L; `alike` says whether it cut.
int64_t truncateLayers(mlir::ModuleOp model, int64_t keep, bool *alike);

/// The composed seconds of one step of a pipeline schedule on a stage whose
/// micro-batch takes `forward` and `backward` seconds over its `chunks`
/// chunks, `weight` of that backward being its weight gradients: F a
/// chunk's forward, B its backward, W its weight gradients' share, Bi the
/// rest (half each where `weight` is not known, 0) -- the costs the search
/// simulates schedules with.
double scheduleStepSeconds(double forward, double backward, double weight,
                           int64_t chunks, part::pipeline::Action action);

/// A step of a pipeline schedule on `stage`, as the planner simulates it
/// and its report draws it: scheduleStepSeconds of the stage's work with
/// each chunk its share of the stage's forward and backward
/// (`forwardShare[chunk]`, `backwardShare[chunk]`; an even split where
/// they are empty: a chunk of the embedding alone does little), and the
/// first chunk of the first stage all weight gradients (no stage waits for
/// the gradient of its input: part-pipeline's zero-bubble split).
double chunkStepSeconds(double forward, double backward, double weight,
                        const std::vector<double> &forwardShare,
                        const std::vector<double> &backwardShare,
                        int64_t stage, int64_t chunks,
                        const part::pipeline::Step &step);

/// Registers the pass part-auto-partition.
void registerAutoPartitionPass();

} // namespace partition::planner

#endif // PARTITION_PLANNER_PLANNER_H
