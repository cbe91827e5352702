//===- CostModel.h - predicted time of a partitioned step -------*- C++ -*-===//
//
// The time model of docs/design/2026-12-03-cost-model.md, applied to
// per-device programs (`part.spmd`, pipeline stages included) on a cluster
// description (runtime/Cluster.h):
// - an op: max(FLOPs / (peak of its dtype x GEMM efficiency at its FLOPs),
//   bytes / (memory bandwidth x elementwise efficiency)); reshapes (aliases
//   in the plan) and constants cost nothing;
// - a collective: alpha-beta, latency x its ring steps (2(n-1) for an
//   all-reduce, n-1 for the others) plus the bytes a device moves
//   (collectiveCost) over the link's bandwidth x collective efficiency; the
//   link is within a node when every device of the group is, else between
//   nodes (world ranks as the plan numbers them: firstRanksOf);
// - a transfer between stages: latency plus its bytes over the link;
// - a program: its ops in order on two lanes, as the runtime runs them --
//   kernels in program order on the compute stream, collectives and
//   transfers in program order on the communication lane -- each starting
//   once its operands exist: communication overlaps the compute that does
//   not read its result, and the program takes the later lane's end --
//   plus (1 - the cluster's overlap) of the communication it hid, where
//   communication and compute share resources (Gloo on CPU cores);
// - a pipeline: each stage's steps (`part.step`) costed by that timeline
//   (from a step's first op's start to its last op's end), the schedule
//   simulated with those costs (pipeline::simulate), then the update.
//
//===----------------------------------------------------------------------===//

#ifndef PARTITION_DIALECT_PART_ANALYSIS_COSTMODEL_H
#define PARTITION_DIALECT_PART_ANALYSIS_COSTMODEL_H

#include "partition/Dialect/Part/Analysis/PipelineSchedule.h"
#include "partition/Dialect/Part/IR/PartOps.h"
#include "partition/runtime/Cluster.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/StringMap.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace partition::part {

/// Seconds of one device's work.
struct TimeEstimate {
  double compute = 0;       ///< kernels
  double communication = 0; ///< collectives and transfers
  double total() const { return compute + communication; }
  TimeEstimate &operator+=(const TimeEstimate &o) {
    compute += o.compute;
    communication += o.communication;
    return *this;
  }
};

/// One per-device program.
struct ProgramEstimate {
  std::string function;
  int64_t devices = 1;
  TimeEstimate whole; ///< every op once, summed
  /// The two lanes' timeline: when the program ends, and per `part.step`
  /// label how long from its first op's start to its last op's end.
  double seconds = 0;
  std::map<std::string, double> steps;
};

/// A whole training (or inference) step: one program, or the stages of a
/// pipeline.
struct StepEstimate {
  double seconds = 0; ///< predicted step time
  /// The busiest program's: compute, and communication compute does not
  /// hide (the step less compute and bubble).
  double compute = 0, exposedCommunication = 0;
  double bubble = 0; ///< seconds the busiest stage idles (pipelines)
  std::vector<ProgramEstimate> programs;
  /// Pipelines: the stages' schedule, its timeline under the predicted step
  /// costs (seconds), and per stage the index of its program in `programs`.
  std::optional<pipeline::Schedule> schedule;
  std::optional<pipeline::Timeline> timeline;
  std::vector<size_t> stagePrograms;
};

/// What one op computes and moves as a cluster's kernels run it.
struct KernelWork {
  double flops = 0, bytes = 0;
  runtime::KernelKind kind = runtime::KernelKind::Elementwise;
};

/// `op`'s work on `cluster`: flopsOf and memoryBytesOf (fused as the
/// cluster fuses), matmuls as GEMMs; attention (and its gradient) on a
/// fused kernel where the cluster has one (Cluster::attention): its
/// operands and results alone through memory, and only the scores a causal
/// mask (and window) keeps computed; else as the decomposition, its score
/// blocks through memory (attentionScratchBytes) and every score computed.
KernelWork kernelWorkOf(mlir::Operation *op, const runtime::Cluster &cluster);

/// The peak FLOP/s for `op` on one device of `cluster`: that of its
/// result's dtype (bf16, f16, else f32), else f32's (Cluster::peakFor; 0
/// for a cluster without f32, which a cluster file cannot be).
double peakFlopsFor(mlir::Operation *op, const runtime::Cluster &cluster);

/// World ranks as the plan numbers them: each mesh's devices follow those
/// of the meshes before it in the module. By mesh name, its first rank.
using FirstRanks = llvm::StringMap<int64_t>;
FirstRanks firstRanksOf(mlir::ModuleOp module);

/// The time of `op` on one device of `cluster`, in a program on `mesh`
/// whose device 0 is world rank `firstRank`; a transfer's peer is placed by
/// `ranks` (without, on this device's node). With `scale`, as if its FLOPs
/// and bytes (moved or sent) were `scale` times its own: the op at another
/// batch, its latencies unchanged.
TimeEstimate estimateOp(mlir::Operation *op, MeshAttr mesh, int64_t firstRank,
                        const runtime::Cluster &cluster,
                        const FirstRanks *ranks = nullptr, double scale = 1);

/// Every op of `function` once, and per `part.step` label; with `include`,
/// only the ops it selects (the others take no time, their results ready
/// at once); with `scaleOf`, each op at that scale (estimateOp).
ProgramEstimate
estimateProgram(mlir::func::FuncOp function, MeshAttr mesh, int64_t firstRank,
                const runtime::Cluster &cluster,
                const FirstRanks *ranks = nullptr,
                llvm::function_ref<bool(mlir::Operation *)> include = nullptr,
                llvm::function_ref<double(mlir::Operation *)> scaleOf = nullptr);

/// The step of `module`'s per-device programs; nullopt with `error` when it
/// has none, or stages whose schedules do not fit together.
std::optional<StepEstimate> estimateStep(mlir::ModuleOp module,
                                         const runtime::Cluster &cluster,
                                         std::string *error);

} // namespace partition::part

#endif // PARTITION_DIALECT_PART_ANALYSIS_COSTMODEL_H
